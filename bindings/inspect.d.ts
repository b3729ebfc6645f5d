// Typings of 'attnwasm/inspect' (bindings/inspect/index.js): a checkpoint described without reading its tensor
// data, with no WebAssembly. A runtime's aw.inspect() answers the same shape with the native reader's checks and
// the loader's exact bytes (through a NativeInspector). docs/inspect.md.

/** What a file of a checkpoint's folder is for. */
export type FileRole = 'weights' | 'index' | 'config' | 'tokenizer' | 'tokenizer_config' | 'generation_config' | 'chat_template'
  | 'preprocessor_config' | 'sentence-transformers' | 'other';

/** The roles a file may have, in this order. */
export declare const ROLES: readonly FileRole[];

/** One file of the checkpoint. */
export interface InspectedFile {
  /** Its path in the checkpoint's folder ('1_Pooling/config.json'), or a single file's own name. */
  name: string;
  role: FileRole;
  /** Its size, when known without reading it (a download's is the server's word); null when not said. */
  bytes: number | null;
}

/** A model family of the runtime's registry. */
export interface InspectedFamily {
  /** 'causal_lm', 'encoder', 'translator', 'vit': what a loaded model's info() calls it. */
  kind: string;
  /** The class loadModel returns: 'CausalLM', 'Embedder', 'Translator', 'Classifier'. */
  className: string;
  /** In prose: 'a causal LM'. */
  noun: string;
}

/** One tensor of a weight file, as its header describes it. */
export interface InspectedTensor {
  name: string;
  /** The safetensors dtype: 'F64', 'F32', 'F16', 'BF16', 'I64', 'I32', 'I16', 'I8', 'U8' or 'BOOL'. */
  dtype: string;
  shape: number[];
  /** The weight file that holds it. */
  file: string;
}

/** A model's weights in memory: a loaded model's weightBytes and weightTypes. */
export interface WeightMemory {
  weightBytes: number;
  /** Bytes by the type they are kept as ('f32', 'bf16', 'f16', 'q8', 'q4'), the types held only. */
  weightTypes: Partial<Record<'f32' | 'bf16' | 'f16' | 'q8' | 'q4', number>>;
}

/** The weights' bytes for each dtype a load may ask for ('stored': no dtype, the weights as stored). */
export interface MemoryByDtype {
  stored: WeightMemory | null;
  f32: WeightMemory | null;
  bf16: WeightMemory | null;
  f16: WeightMemory | null;
  q8: WeightMemory | null;
  q4: WeightMemory | null;
}

/** The side files found, each by its file name, or null when the checkpoint has none. */
export interface SideFiles {
  tokenizer: string | null;
  tokenizerConfig: string | null;
  /** Where the chat template the loader uses comes from: 'chat_template.jinja', 'chat_template.json' or 'tokenizer_config.json'. */
  chatTemplate: string | null;
  generationConfig: string | null;
  preprocessorConfig: string | null;
  /** sentence-transformers' modules.json. */
  sentenceTransformers: string | null;
}

/** What inspect() says of a checkpoint. */
export interface CheckpointReport {
  /** What the source was: a Node 'folder', 'files' (a File list or a map), an 'index' path, a base 'url', an 'index-url', one 'file', or a 'hub' id. */
  source: 'folder' | 'files' | 'index' | 'url' | 'index-url' | 'file' | 'hub';
  files: InspectedFile[];
  /** The family that runs it; null when none does (then `refused` says why) or it could not be told. */
  family: InspectedFamily | null;
  /** config.json's model_type (or, for a file of attnwasm's own, its config's hf_config.model_type); null when none. */
  modelType: string | null;
  /** Why the runtime would refuse it: the loader's code and words; null when nothing refuses it before its data is read. */
  refused: { code: string; message: string } | null;
  /** Every tensor of the weight files read (up to a refused header), in file and header order. */
  tensors: InspectedTensor[];
  /** The elements of the float tensors; null when a header was refused. */
  parameters: number | null;
  /**
   * The weights' bytes once loaded, per dtype; null when a header was refused or (with a runtime) the checkpoint is.
   * Standalone an estimate (memoryExact false: a 2-D float tensor kept in the dtype asked for, anything else
   * float32; docs/inspect.md says by how much it can differ); with a runtime the loader's exact bytes.
   */
  memory: MemoryByDtype | null;
  memoryExact: boolean;
  /** The side files; null when not asked (a base URL with probe: false) or not a folder (one file, an index). */
  side: SideFiles | null;
  /** The config the family was read from: config.json, or a file's own attnwasm.config; null when none. */
  config: Record<string, unknown> | null;
  /** The first weight file's "__metadata__"; null when no header was read. */
  metadata: Record<string, string> | null;
}

/** One weight file's header bytes, as inspect hands them to a NativeInspector. */
export interface HeaderBytes {
  /** The file's name: 'model.safetensors', a shard's name, or 'source' for a single file. */
  name: string;
  /** Its first 8 + N bytes. */
  bytes: Uint8Array;
  /** Its size in bytes when known for sure, else null (a download). */
  size: number | null;
}

/**
 * What a runtime gives inspect to answer as the runtime itself would (aw.inspect passes one). `code`: null when
 * accepted, else the error code the loader would throw ('ERR_INVALID_ARGUMENT', 'ERR_STATE_DICT', 'ERR_DTYPE', …),
 * `message` then its words (header(): without the "source: <file>: " prefix, which inspect adds).
 */
export interface NativeInspector {
  /** The native reader's check of one header (src/io/safetensors.h ParseSafetensorsHeader). */
  header(bytes: Uint8Array, size: number | null): {
    code: string | null; message: string;
    tensors: { name: string; dtype: string; shape: number[] }[];
    metadata: Record<string, string>;
  };
  /**
   * A dry run of the loader's Begin for one dtype ('' as stored, or a weight type), allocating nothing: config.json's
   * text or '' (the first file's attnwasm.config), the headers, the shard index's text or ''. `family` is the kind
   * found (also when a later check refuses), `bytes` what the weights would take, `parameters` the model's own
   * parameter elements (optional).
   */
  plan(config: string, headers: HeaderBytes[], index: string, dtype: string): {
    code: string | null; message: string; family: string | null;
    bytes: WeightMemory; parameters?: number;
  };
}

/** inspect()'s options. */
export interface InspectOptions {
  /** A config.json (an object, its text or its bytes) instead of the folder's, as loadModel's `config`. */
  config?: object | string | Uint8Array | ArrayBuffer;
  /** A runtime's checks and exact bytes (aw.inspect passes its own). */
  native?: NativeInspector;
  /**
   * A base URL lists nothing: whether to ask it for each side file (default true; an absent one is a 404 in the
   * server's log and a browser's console). false: only the weights and config.json, and `side` is null.
   */
  probe?: boolean;
  signal?: AbortSignal;
  /** How long a read may wait for bytes (default 60 000 ms; Infinity: no bound), as loadModel's. */
  readTimeoutMs?: number;
  /** A hub id's branch, tag or commit (default 'main'). */
  revision?: string;
  /** A hub id's cache: a folder (Node), false (none), or the default. */
  cache?: string | false;
  /** A hub id's hub (a mirror). */
  host?: string;
}

/** A folder of files, as loadModel takes one. */
type FileMap = Record<string, string | URL | Uint8Array | ArrayBuffer | Blob> | Map<string, string | URL | Uint8Array | ArrayBuffer | Blob>;

/**
 * Describes a checkpoint without reading its tensor data: of each weight file only its first 8 + N bytes are read.
 * Rejects only when the source cannot be read (a missing file or shard, a name outside the folder:
 * ERR_UNSAFE_PATH, an abort, ERR_TIMEOUT) or an argument is wrong (TypeError); a checkpoint the runtime would
 * refuse resolves with `refused`.
 */
export declare function inspect(
  source: string | URL | Uint8Array | ArrayBuffer | Blob | Response | ReadableStream<Uint8Array> | FileList | File[] | FileMap,
  options?: InspectOptions,
): Promise<CheckpointReport>;

/** A safetensors file's header from its first 8 + N bytes: its tensors (offsets absolute), metadata, data start and size. Throws ERR_INVALID_ARGUMENT as the runtime's reader. */
export declare function readHeader(head: Uint8Array, size: number | null): {
  tensors: { name: string; dtype: string; shape: number[]; begin: number; end: number }[];
  metadata: Record<string, string>;
  dataStart: number;
  dataSize: number;
};

/** The header length N from a file's first 8 bytes, checked against the 100 MB limit and the file's size (null: unknown). */
export declare function headerLength(first: Uint8Array, size: number | null): number;
