// Type declarations of the attnwasm public API (bindings/index.js).

/** A float tensor: dense, row-major. `data.length` equals the product of `shape`. */
export interface Tensor {
  data: Float32Array;
  shape: number[];
}

/**
 * A mask: a boolean mask as a Uint8Array of 0/1, or an additive float mask.
 * The meaning of `true` differs: scaledDotProductAttention — true = take part;
 * MultiheadAttention — true = masked (not allowed to attend). Float masks are
 * added to the scores in both.
 */
export interface MaskTensor {
  data: Uint8Array | Float32Array;
  shape: number[];
}

/** Stable codes of every error the API throws. */
export type ErrorCode =
  | 'ERR_INVALID_TYPE'
  | 'ERR_OUT_OF_RANGE'
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_SHAPE'
  | 'ERR_DTYPE'
  | 'ERR_STATE_DICT'
  | 'ERR_OUT_OF_MEMORY'
  | 'ERR_DISPOSED'
  /** Any call on a runtime after aw.close(), or on an object made from it. */
  | 'ERR_CLOSED'
  /** init(): a .wasm that could not be fetched, read, compiled or linked; the message names the URL and the fix. */
  | 'ERR_WASM_LOAD'
  /** Translator input that is not one English number in 0 … 999 999 ("twenty twenty", "fourty"). */
  | 'ERR_NOT_A_NUMBER'
  /** A valid input of a kind attnwasm does not run: a tokenizer.json model, normalizer or pre-tokenizer of another kind, a model family it does not have (the message names the field and the type). */
  | 'ERR_UNSUPPORTED'
  /** A file named relative to a checkpoint's folder that leaves it: '..', an absolute path, a URL, percent-encoded forms (a shard index's weight_map, modules.json). */
  | 'ERR_UNSAFE_PATH'
  /** A read that waited longer than loadModel's readTimeoutMs for its next bytes. */
  | 'ERR_TIMEOUT'
  /** A chat template that went past its step budget or made a string or list over its limit (docs/chat.md). */
  | 'ERR_TEMPLATE_LIMIT'
  /** attnwasm/audio: a file that is not a whole, consistent audio file (corrupt, truncated, unknown); the message says what is wrong. */
  | 'ERR_AUDIO_DECODE'
  /** attnwasm/audio: more samples or feature values than one buffer may hold; the message names the sizes and the limit. */
  | 'ERR_AUDIO_TOO_LONG'
  /** A hub id's download that failed: no network, a host that does not answer, an HTTP error (the message names the URL and the status). */
  | 'ERR_NETWORK'
  /** A hub file whose bytes do not match what the hub says of them (size, sha256), downloaded or cached; a cached copy is dropped and fetched again. */
  | 'ERR_INTEGRITY'
  /** attnwasm/worker: a call the worker ended because a callback it passed threw on the page. */
  | 'ERR_CANCELLED'
  /** A native failure with no code of its own: a defect of attnwasm (please report it with the message). */
  | 'ERR_INTERNAL';

/** Thrown for anything the runtime rejects; `code` is stable across versions. */
export class AttnWasmError extends Error {
  readonly code: ErrorCode;
  /** ERR_WASM_LOAD: the .wasm URL (or path) tried first; absent for wasmBinary and attnwasm/inline. */
  readonly url?: string;
  /** ERR_WASM_LOAD: the HTTP status of that attempt, when the server answered with an error. */
  readonly status?: number;
  /** ERR_NOT_A_NUMBER: the text that was refused. */
  readonly input?: string;
  /** ERR_NOT_A_NUMBER: a corrected input when one is close ("fourty two" → "forty two"). */
  readonly suggestion?: string;
  /**
   * Where in an argument the native side found the problem, when it says: the argument ('ids', 'lengths'), the
   * flat index in it, the value found there and the limit it broke (an Embedder's "texts[17]: 600 tokens, more
   * than the model's 512" is made from it).
   */
  readonly at?: { readonly arg: string; readonly index: number; readonly value: number; readonly limit: number };
  constructor(code: ErrorCode, message: string, details?: { url?: string; status?: number; cause?: unknown });
}

/** Token ids (Embedding input): an Int32Array. */
export interface IdsTensor {
  data: Int32Array;
  shape: number[];
}

/** A tensor as loadSafetensors returns it (float, integer or bool data). */
export interface AnyTensor {
  data: Float32Array | Int32Array | Uint8Array;
  shape: number[];
}

/**
 * A torch-style state_dict: exact torch key → tensor. Values must be float
 * (Float32Array) at run time; anything else throws ERR_DTYPE naming the key.
 */
export type StateDict = Record<string, Tensor | AnyTensor> | Map<string, Tensor | AnyTensor>;

export interface AttentionResult {
  /** The attention output; a fresh array owned by the caller. */
  output: Tensor;
  /** The attention weights, or null when not requested. */
  weights: Tensor | null;
}

/**
 * torch.nn.attention.bias's CausalBias: a causal mask of (seqLenQ, seqLenKv) described, not materialised
 * (aw.causalUpperLeft / aw.causalLowerRight). Plain frozen data, usable with any runtime.
 */
export class CausalBias {
  private constructor();
  /** 'upperLeft': query i sees keys 0 … i. 'lowerRight': keys 0 … i + seqLenKv − seqLenQ (rows with none give zeros). */
  readonly variant: 'upperLeft' | 'lowerRight';
  /** L, the queries. */
  readonly seqLenQ: number;
  /** S, the keys. */
  readonly seqLenKv: number;
}

export interface SdpaOptions {
  /**
   * Broadcastable to (…, L, S). Bool: true = take part. Float: added. Or a causal mask object
   * (aw.causalUpperLeft(L, S) / aw.causalLowerRight(L, S)) of the call's L and S, run without an
   * (L, S) mask: the key chunks it masks for a whole block of queries are skipped. Default null.
   */
  attnMask?: MaskTensor | CausalBias | null;
  /** Must be 0 (inference runtime). Default 0. */
  dropoutP?: number;
  /** Causal mask aligned to the upper left (keeps j <= i). Excludes attnMask. Default false. */
  isCausal?: boolean;
  /** Score scale; null = 1/sqrt(E). Default null. */
  scale?: number | null;
  /** Grouped-query attention: key/value heads (dim -3) repeated up to query's. Default false. */
  enableGqa?: boolean;
  /** Also return the softmax weights (…, L, S). Default false. */
  needWeights?: boolean;
}

export interface MultiheadAttentionOptions {
  /** Accepted for torch compatibility; ignored (inference = eval mode). Default 0. */
  dropout?: number;
  /** in_proj_bias and out_proj.bias. Default true. */
  bias?: boolean;
  /** bias_k / bias_v appended to key/value. Default false. */
  addBiasKv?: boolean;
  /** A zero key/value row appended. Default false. */
  addZeroAttn?: boolean;
  /** Key feature dim; null = embedDim. */
  kdim?: number | null;
  /** Value feature dim; null = embedDim. */
  vdim?: number | null;
  /** Inputs (N, L, E) instead of (L, N, E). Default false. */
  batchFirst?: boolean;
}

export interface MultiheadAttentionForwardOptions {
  /** (N, S) or (S) unbatched. Bool: true = ignore that key. Float: added. */
  keyPaddingMask?: MaskTensor | null;
  /** Return attention weights. Default true (as torch). */
  needWeights?: boolean;
  /** (L, S) or (N·numHeads, L, S). Bool: true = not allowed to attend. Float: added. */
  attnMask?: MaskTensor | null;
  /** Average the weights over heads (N, L, S) instead of per head (N, H, L, S). Default true. */
  averageAttnWeights?: boolean;
  /** A hint that attnMask is the causal mask (torch 2.x); requires attnMask. Default false. */
  isCausal?: boolean;
}

/** torch.nn.MultiheadAttention, inference only. Owns native memory: call dispose(). */
export class MultiheadAttention {
  constructor(embedDim: number, numHeads: number, options?: MultiheadAttentionOptions);
  readonly embedDim: number;
  readonly numHeads: number;
  readonly headDim: number;
  readonly kdim: number;
  readonly vdim: number;
  readonly dropout: number;
  readonly bias: boolean;
  readonly addBiasKv: boolean;
  readonly addZeroAttn: boolean;
  readonly batchFirst: boolean;
  /** The torch state_dict keys this module expects, with their shapes. */
  parameterShapes(): Record<string, number[]>;
  /** Replaces all parameters; all or nothing. Throws ERR_STATE_DICT naming bad keys. */
  loadStateDict(stateDict: StateDict): void;
  /** A copy of the parameters, keyed like torch's state_dict(). */
  stateDict(): Record<string, Tensor>;
  /**
   * query (L, N, E) | (N, L, E) if batchFirst | (L, E); key (S, N, kdim) …; value (S, N, vdim) ….
   * Returns output shaped like query and weights (N, L, S') or (N, H, L, S').
   */
  forward(query: Tensor, key: Tensor, value: Tensor, options?: MultiheadAttentionForwardOptions): AttentionResult;
  /** Frees native memory. Idempotent; later calls throw ERR_DISPOSED. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** What every layer shares: torch state_dict keys, ownership of native memory. */
export class Module {
  /** The torch state_dict keys this module expects, with their shapes. */
  parameterShapes(): Record<string, number[]>;
  /** Replaces all parameters; all or nothing. Throws ERR_STATE_DICT naming bad keys. */
  loadStateDict(stateDict: StateDict): void;
  /** A copy of the parameters, keyed like torch's state_dict(). */
  stateDict(): Record<string, Tensor>;
  /** Frees native memory. Idempotent; later calls throw ERR_DISPOSED. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** torch.nn.Linear. Keys: weight (out, in), bias (out). */
export class Linear extends Module {
  constructor(inFeatures: number, outFeatures: number, options?: { bias?: boolean });
  readonly inFeatures: number;
  readonly outFeatures: number;
  /** x (…, inFeatures) → (…, outFeatures) */
  forward(x: Tensor): Tensor;
}

/** torch.nn.LayerNorm over the last dim. Keys: weight, bias. */
export class LayerNorm extends Module {
  constructor(normalizedShape: number | [number], options?: { eps?: number; elementwiseAffine?: boolean; bias?: boolean });
  readonly normalizedShape: number;
  readonly eps: number;
  forward(x: Tensor): Tensor;
}

/** torch.nn.Embedding. Key: weight (numEmbeddings, embeddingDim). */
export class Embedding extends Module {
  constructor(numEmbeddings: number, embeddingDim: number, options?: { paddingIdx?: number | null });
  /** ids (…) → (…, embeddingDim); an id out of range throws naming its index. */
  forward(ids: IdsTensor): Tensor;
}

/** torch.nn.ReLU */
export class ReLU {
  forward(x: Tensor): Tensor;
}

/** torch.nn.GELU: exact erf form, or approximate 'tanh'. */
export class GELU {
  constructor(options?: { approximate?: 'none' | 'tanh' });
  forward(x: Tensor): Tensor;
}

/** torch.nn.SiLU: x · sigmoid(x). */
export class SiLU {
  forward(x: Tensor): Tensor;
}

/**
 * torch.nn.RMSNorm: y = (x · rsqrt(mean(x²) + eps)) · weight over the trailing dims normalizedShape,
 * in torch's float32 order. Key: weight (normalizedShape), ones at init.
 */
export class RMSNorm extends Module {
  /** eps null or absent: float32's machine epsilon 2^-23 (torch's None). elementwiseAffine default true. */
  constructor(normalizedShape: number | number[], options?: { eps?: number | null; elementwiseAffine?: boolean });
  readonly normalizedShape: number | number[];
  readonly eps: number | null;
  readonly elementwiseAffine: boolean;
  /** x (…, *normalizedShape) → the same shape. */
  forward(x: Tensor): Tensor;
}

export interface RotaryPositionalEmbeddingsOptions {
  /** Positions must lie in [0, maxSeqLen). Default 4096. */
  maxSeqLen?: number;
  /** theta_i = 1 / base^(2i / dim). Default 10000. */
  base?: number;
  /** true (default): torchtune's adjacent pairs (2i, 2i + 1); false: Hugging Face's rotate_half, pairs (i, i + dim/2). */
  interleaved?: boolean;
}

/**
 * torchtune's RotaryPositionalEmbeddings (and Hugging Face's rotate_half with interleaved: false); angles
 * float32(position · theta) as torch forms them. No parameters: stateDict() is {}.
 */
export class RotaryPositionalEmbeddings extends Module {
  constructor(dim: number, options?: RotaryPositionalEmbeddingsOptions);
  readonly dim: number;
  readonly maxSeqLen: number;
  readonly base: number;
  readonly interleaved: boolean;
  /**
   * x (B, S, H, dim) → the same shape. inputPos: Int32Array positions of shape (B, S) or (S) in
   * [0, maxSeqLen) (else a RangeError naming inputPos and the index); absent: 0 … S − 1.
   */
  forward(x: Tensor, options?: { inputPos?: IdsTensor | null }): Tensor;
}

/** torch.nn.Dropout: the identity at inference. */
export class Dropout {
  constructor(p?: number);
  forward(x: Tensor): Tensor;
}

/** torch.nn.TransformerEncoderLayer / DecoderLayer constructor options (torch defaults). */
export interface TransformerLayerOptions {
  /** Default 2048. */
  dimFeedforward?: number;
  /** Accepted, ignored at inference. Default 0.1. */
  dropout?: number;
  /** 'relu' (default), 'gelu' (erf), 'gelu_tanh' (nn.GELU(approximate='tanh')) or 'silu' (F.silu). */
  activation?: 'relu' | 'gelu' | 'gelu_tanh' | 'silu';
  /** Default 1e-5. */
  layerNormEps?: number;
  /** (N, S, E) inputs instead of (S, N, E). Default false. */
  batchFirst?: boolean;
  /** Pre-norm. Default false (post-norm). */
  normFirst?: boolean;
  /** Linear and LayerNorm biases. Default true. */
  bias?: boolean;
}

export interface TransformerLayerConfig extends Required<TransformerLayerOptions> {
  dModel: number;
  nhead: number;
}

/** torch.nn.TransformerEncoderLayer. Keys: self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*. */
export class TransformerEncoderLayer extends Module {
  constructor(dModel: number, nhead: number, options?: TransformerLayerOptions);
  readonly config: TransformerLayerConfig;
  /** Masks as MultiheadAttention (bool true = masked). isCausal is torch's hint and needs srcMask. */
  forward(src: Tensor, options?: { srcMask?: MaskTensor | null; srcKeyPaddingMask?: MaskTensor | null; isCausal?: boolean }): Tensor;
}

export interface DecoderForwardOptions {
  tgtMask?: MaskTensor | null;
  memoryMask?: MaskTensor | null;
  tgtKeyPaddingMask?: MaskTensor | null;
  memoryKeyPaddingMask?: MaskTensor | null;
  tgtIsCausal?: boolean;
  memoryIsCausal?: boolean;
}

/** torch.nn.TransformerDecoderLayer. Keys: self_attn.*, multihead_attn.*, linear1/2.*, norm1-3.*. */
export class TransformerDecoderLayer extends Module {
  constructor(dModel: number, nhead: number, options?: TransformerLayerOptions);
  readonly config: TransformerLayerConfig;
  forward(tgt: Tensor, memory: Tensor, options?: DecoderForwardOptions): Tensor;
}

/** torch.nn.TransformerEncoder: numLayers copies of a layer (weights copied) and an optional final norm. */
export class TransformerEncoder extends Module {
  constructor(encoderLayer: TransformerEncoderLayer, numLayers: number, options?: { norm?: LayerNorm | null });
  readonly config: TransformerLayerConfig;
  readonly numLayers: number;
  forward(src: Tensor, options?: { mask?: MaskTensor | null; srcKeyPaddingMask?: MaskTensor | null; isCausal?: boolean }): Tensor;
  /** forward() plus each layer's self-attention weights per head, (N, H, S, S) or (H, S, S). Not in torch. */
  forwardWithAttention(src: Tensor, options?: { mask?: MaskTensor | null; srcKeyPaddingMask?: MaskTensor | null; isCausal?: boolean }): { output: Tensor; attentionWeights: Tensor[] };
}

/** torch.nn.TransformerDecoder. */
export class TransformerDecoder extends Module {
  constructor(decoderLayer: TransformerDecoderLayer, numLayers: number, options?: { norm?: LayerNorm | null });
  readonly config: TransformerLayerConfig;
  readonly numLayers: number;
  forward(tgt: Tensor, memory: Tensor, options?: DecoderForwardOptions): Tensor;
}

export interface TransformerOptions extends TransformerLayerOptions {
  /** Default 512. */
  dModel?: number;
  /** Default 8. */
  nhead?: number;
  /** Default 6. */
  numEncoderLayers?: number;
  /** Default 6. */
  numDecoderLayers?: number;
}

/** torch.nn.Transformer. Keys: encoder.layers.N.…, encoder.norm.…, decoder.layers.N.…, decoder.norm.…. */
export class Transformer extends Module {
  constructor(options?: TransformerOptions);
  readonly config: TransformerLayerConfig & { numEncoderLayers: number; numDecoderLayers: number };
  forward(src: Tensor, tgt: Tensor, options?: DecoderForwardOptions & { srcMask?: MaskTensor | null; srcKeyPaddingMask?: MaskTensor | null; srcIsCausal?: boolean }): Tensor;
}

/** Fixed sinusoidal positions (the PyTorch tutorial's PositionalEncoding): x + PE[:L]. */
export class SinusoidalPositionalEncoding extends Module {
  constructor(dModel: number, options?: { maxLen?: number; batchFirst?: boolean });
  forward(x: Tensor): Tensor;
}

/** Learned positions: x + weight[:L]. Key: weight (maxLen, dModel). */
export class LearnedPositionalEmbedding extends Module {
  constructor(maxLen: number, dModel: number, options?: { batchFirst?: boolean });
  forward(x: Tensor): Tensor;
}

/** ViT stem: Conv2d(kernel = stride = patchSize) + flatten (+ class token). Keys: cls_token, proj.weight, proj.bias. */
export class PatchEmbedding extends Module {
  constructor(inChannels: number, embedDim: number, patchSize: number, options?: { bias?: boolean; classToken?: boolean });
  /** images (B, C, H, W) or (C, H, W) → (B, H'·W' [+1], embedDim) */
  forward(images: Tensor): Tensor;
}

/**
 * How weights are kept in memory: float32, the checkpoint's 16-bit floats, or quantized in groups of 32. 'q4' and
 * 'q4a16' keep the same 4-bit weights; their products quantize the activations to int8 per group of 32 ('q4') or
 * to int16 per row ('q4a16', as 'q8' does): see docs/weights.md.
 */
export type WeightType = 'f32' | 'bf16' | 'f16' | 'q8' | 'q4' | 'q4a16';

/**
 * Where a model's files come from. One file: a Node path, a URL (http(s):, file:, blob:, data:), bytes, a
 * Blob/File, a fetch Response or a ReadableStream of bytes. A checkpoint folder (its model.safetensors or the
 * shards its model.safetensors.index.json names, and config.json, tokenizer.json, tokenizer_config.json beside
 * them; for an encoder also sentence-transformers' modules.json, 1_Pooling/config.json, sentence_bert_config.json,
 * config_sentence_transformers.json): a Node folder path, a base URL ending in '/', a page's folder pick (a
 * FileList or File[]: each File by its webkitRelativePath below the folder picked), or a map of paths in the
 * folder ('config.json', '1_Pooling/config.json') to any of the single-file sources. A hub id 'organisation/name'
 * (a string that is not a URL, not an existing Node path and not a file name): its files downloaded once into
 * the cache (LoadOptions revision, cache, host; 'attnwasm/hub'). Files are streamed: never whole in memory.
 */
export type ModelSource =
  | string | URL | Uint8Array | ArrayBuffer | Blob | Response | ReadableStream<Uint8Array>
  | FileList | File[] | Map<string, ModelFileSource> | Record<string, ModelFileSource>;
export type ModelFileSource = string | URL | Uint8Array | ArrayBuffer | Blob | Response | ReadableStream<Uint8Array>;

export interface LoadOptions {
  /**
   * Called as bytes arrive: loaded and total bytes so far (total null when a stream does not say), and the file
   * being read; for a hub id also the bytes read from the cache and those downloaded so far, and why a file was
   * not kept in the cache (quota, a full disk) if one was not. If it throws, the load stops and rejects with that
   * error (through attnwasm/worker too).
   */
  onProgress?: (p: { loaded: number; total: number | null; file: string; cached?: number; downloaded?: number; cacheError?: string }) => void;
  /** A hub id's branch, tag or commit (default 'main'). A commit already cached loads with no request at all. */
  revision?: string;
  /**
   * A hub id's cache: the default (Node: ATTNWASM_CACHE or ~/.cache/attnwasm/hub; a browser: the origin
   * private file system), a Node folder path, a HubCache of 'attnwasm/hub', or false (download, keep nothing).
   */
  cache?: false | string | import('./hub.js').HubCache;
  /** The hub to ask for a hub id: a mirror, a local server (default: HF_ENDPOINT in Node, else https://huggingface.co). */
  host?: string;
  /**
   * Ends the load when it aborts: the downloads are cancelled, what was reserved is freed, and the load rejects
   * with the signal's reason (an AbortError DOMException unless abort() was given one). aw.close() during a load
   * rejects it with ERR_CLOSED.
   */
  signal?: AbortSignal;
  /**
   * How long one read may wait for its next bytes (a file, a stream, a server's answer) before the load fails
   * with ERR_TIMEOUT naming the source: milliseconds, default 60 000; Infinity: as long as it takes.
   */
  readTimeoutMs?: number;
  /**
   * How to keep the weight matrices: as stored (the default: a BF16 checkpoint stays BF16, and its products
   * give the bits of the same weights widened to float32), or converted to `dtype` while loading. 'q8' / 'q4'
   * quantize to 8 / 4 bits in groups of 32, 'q4a16' to 4 bits with int16 activations (see docs/weights.md). Every weight matrix (projections, MLP,
   * embedding, LM head) is kept so; norms and biases stay float32.
   */
  dtype?: WeightType;
  /**
   * An encoder–decoder (Seq2SeqLM) with a float32 head only: the head also keeps a q8 copy of itself (1.125
   * bytes a weight more: Marian's opus-mt 4.25 → 4.7 bytes a parameter). Greedy steps (one sentence or a batch)
   * then read the copy alone, bound every logit and compute exactly only the ids that can still win: the same
   * tokens, faster per step (the head is 57 % of a Marian step's bytes; on a batch the copy's int16 products
   * take fewer operations than float32's). Every exact product of the head — beam search, forward(), a
   * forced token's step — is the float32 one, as fast as without. Default false.
   */
  boundedHead?: boolean;
  /** A tokenizer_config.json (parsed, text or bytes) for `tokenizer`: its added tokens, chat template and special tokens. */
  tokenizerConfig?: Record<string, unknown> | string | Uint8Array | ArrayBuffer;
  /**
   * A generation_config.json (parsed, text or bytes); a folder's own is read when this is absent. Its
   * eos_token_id (an id or a list) becomes the causal LM's eosTokenIds, as transformers' generate() stops at it;
   * its sampling settings are kept as `generationConfig` and not applied (generate()'s options say how to sample).
   */
  generationConfig?: Record<string, unknown> | string | Uint8Array | ArrayBuffer;
  /**
   * A Hugging Face checkpoint's config.json (parsed, its text or its bytes): the file is then a causal LM
   * (Llama, Qwen2, … by model_type) or an encoder (model_type 'bert', 'roberta', 'xlm-roberta': an Embedder)
   * of that config, its tensors named as Hugging Face names them. Keys the family cannot run exactly
   * (rope_scaling, another hidden_act, sliding windows, relative positions, …) are refused naming the key.
   */
  config?: Record<string, unknown> | string | Uint8Array | ArrayBuffer;
  /**
   * The tokenizer.json (parsed, text or bytes) or a Tokenizer of 'attnwasm/tokenizer' of a causal LM
   * (generate() then takes and gives text) or of an encoder (embed() takes text).
   */
  tokenizer?: Record<string, unknown> | string | Uint8Array | ArrayBuffer | Tokenizer;
  /**
   * An encoder's pooling, instead of its folder's 1_Pooling/config.json (default there; else 'mean'): one
   * mode, or several joined by '+' ('cls+max+mean'), concatenated as sentence-transformers does. Another
   * family: ERR_INVALID_ARGUMENT.
   */
  pooling?: PoolingMode | (string & {});
  /** An encoder's L2 normalization of embed()'s vectors, instead of its folder's Normalize module (default there; else false). */
  normalize?: boolean;
  /**
   * What an encoder checkpoint loads as: 'embed' (an Embedder, the head left unused), 'classify' (a
   * TextClassifier) or 'rerank' (a CrossEncoder). Default: its config.json's architectures — a
   * *ForSequenceClassification class is a TextClassifier, or a CrossEncoder when it has one label or
   * sentence-transformers' CrossEncoder config; *ForTokenClassification a TokenClassifier; other classes an Embedder.
   * A causal LM checkpoint (Qwen3) with task 'embed', or in a sentence-transformers folder (modules.json:
   * Qwen3-Embedding), loads as a DecoderEmbedder (loadCausalLM gives the folder's CausalLM).
   */
  task?: 'embed' | 'classify' | 'rerank';
}

export interface Translation {
  text: string;
  /**
   * The words the model translated: the input normalised (lower case, single
   * spaces, digits as words, no comma after "thousand"): "42" → "forty-two",
   * "Forty  Two" → "forty two", "One thousand, and six" → "one thousand and six".
   */
  input: string;
  /** The number the input names, 0 … 999 999 (read by the input check, not by the model); english-numbers models only. */
  value?: number;
  /** Target tokens (without the end token). */
  tokens: string[];
  tokenIds: number[];
  sourceTokens: string[];
  /** data (layers, heads, targetLength, sourceLength): each output token's weights over the source tokens. */
  crossAttention: { layers: number; heads: number; targetLength: number; sourceLength: number; data: Float32Array };
  /** Summed log probability of the output tokens (the end token included), before any length penalty. */
  score: number;
  /** Milliseconds per decoding step (timed natively). */
  stepMs: number[];
  totalMs: number;
}

/**
 * An encoder–decoder model: the translation demo (English number words → French / German), or
 * any nn.Transformer exported with tools/export_safetensors.py export_seq2seq.
 */
export interface Translator {
  readonly languages: string[];
  /** How text becomes source tokens: the demo's typed English numbers, or whitespace-split words. */
  readonly sourceText: 'english-numbers' | 'words';
  /** Bytes read from the model's files. */
  readonly fileBytes: number;
  /** Bytes the weights take in memory: as stored, or in the `dtype` the load asked for. */
  readonly weightBytes: number;
  /** weightBytes by how the weights are kept (types held only): { bf16: 493 M, f32: 0.2 M }. */
  readonly weightTypes: Partial<Record<WeightType, number>>;
  readonly config: Record<string, unknown>;
  /** Source tokens of the normalised input; throws ERR_NOT_A_NUMBER like translate(). */
  tokenize(text: string): string[];
  detokenize(ids: number[], lang: string): string;
  /**
   * Translates English number words (0 … 999 999) as people type them: "forty two", "Forty-Two",
   * "one hundred and five", "a thousand", "eleven hundred", "1,234". Anything else throws
   * AttnWasmError ERR_NOT_A_NUMBER (with `suggestion` when one is close) and is never translated.
   */
  translate(text: string, options?: { to?: string; beamSize?: number; lengthPenalty?: number; maxLength?: number }): Translation;
  /** Logits (T, V) of a whole target (starting with the language token) without the KV cache. */
  scoreFull(text: string, targetIds: number[]): Tensor;
  dispose(): void;
  [Symbol.dispose](): void;
}

export interface Classification {
  label: string;
  index: number;
  probabilities: Float32Array;
  logits: Float32Array;
  /** data (layers, heads, grid·grid): the class token's attention to each patch. */
  attention: { layers: number; heads: number; grid: number; data: Float32Array };
  /** Attention rollout over the patches, scaled to max 1. */
  rollout: Float32Array;
  totalMs: number;
}

/** ImageData-like input of classify(). */
export interface ImageLike {
  data: Uint8ClampedArray | Uint8Array;
  width: number;
  height: number;
}

/** A ViT-style image classifier: the digit demo model, or one exported with export_vit. */
export interface Classifier {
  readonly labels: string[];
  readonly grid: number;
  /** Bytes read from the model's files. */
  readonly fileBytes: number;
  /** Bytes the weights take in memory: as stored, or in the `dtype` the load asked for. */
  readonly weightBytes: number;
  /** weightBytes by how the weights are kept (types held only): { bf16: 493 M, f32: 0.2 M }. */
  readonly weightTypes: Partial<Record<WeightType, number>>;
  readonly config: Record<string, unknown>;
  /**
   * inChannels×imageSize×imageSize values (the digit model: 28×28 ink in [0, 1]), or an ImageData
   * (one channel: dark ink on light; three: RGB / 255).
   */
  classify(image: Float32Array | ImageLike): Classification;
  dispose(): void;
  [Symbol.dispose](): void;
}

/** CausalLM#generate options. */
export interface GenerateOptions {
  /** Tokens to generate at most (default 64); generation also ends at the model's maxPositions. */
  maxNewTokens?: number;
  /** 0 = greedy, the first largest logit (the default, as Hugging Face's generate); > 0 samples from softmax(logits / temperature). */
  temperature?: number;
  /** Keep the k most likely tokens before sampling (ties at the k-th kept); 0 = all (the default). */
  topK?: number;
  /** Keep the most likely tokens whose probabilities sum to at least p (after topK); 1 = all (the default). */
  topP?: number;
  /** Sampling seed (any safe integer): the same seed, prompt and options give the same tokens. Default: a random one (Generation#seed). */
  seed?: number;
  /** Ids that end the generation (not yielded). Default: the model's eosTokenIds. */
  stopTokens?: number[] | Int32Array;
  /** Ends the generation within one token (stopReason 'aborted'); the KV cache is freed. */
  signal?: AbortSignal;
  /** Keys each query attends to (itself and those before it); null = all. Default: the model's attentionWindow. */
  attentionWindow?: number | null;
  /** Give each token the attention that chose it (GeneratedToken#attention). Default false. */
  attention?: boolean;
}

/** One generated token. */
export interface GeneratedToken {
  id: number;
  /** The text this token completes (with a tokenizer; '' for special tokens and for an unfinished UTF-8 sequence). */
  text?: string;
  /** Time of the step that chose it (the first token: the prompt's prefill), in ms. */
  ms: number;
  /** 0, 1, … */
  index: number;
  /**
   * With `attention: true`: the softmax weights of the last position fed (the one whose logits chose this
   * token) over every position so far, data (layers, heads, positions); zeros outside the window.
   */
  attention?: { layers: number; heads: number; positions: number; data: Float32Array };
}

/** A running generation (CausalLM#generate): an async iterator of tokens. */
export interface Generation extends AsyncIterableIterator<GeneratedToken> {
  /** The prompt's ids. */
  readonly promptIds: Int32Array;
  /** The ids generated so far (stop tokens not included). */
  readonly ids: number[];
  /** The text generated so far (with a tokenizer). */
  readonly text: string;
  /** The sampling seed used. */
  readonly seed: number;
  /** Why it ended: a stop token, maxNewTokens, maxPositions, the signal / break, an error; null while running. */
  readonly stopReason: 'stop' | 'length' | 'context' | 'aborted' | 'error' | null;
  /** Ends it now and frees its KV cache (what `break` in for-await calls). */
  return(): Promise<IteratorResult<GeneratedToken>>;
}

/** One message of a conversation, as chat templates read it (OpenAI's and transformers' form). */
export interface ChatMessage {
  /** 'system', 'user', 'assistant', 'tool', … (what the template knows). */
  role: string;
  /** The text, or parts ({ type: 'text', text } / { type: 'image' }, …) where the template reads them; null beside tool_calls. */
  content: string | ChatContentPart[] | null;
  /** Passed to the template as given: tool_calls, tool_call_id, name, reasoning_content, … (JSON data). */
  [field: string]: unknown;
}

/** A part of a message's content: { type: 'text', text: 'Hi' }, { type: 'image' }, … */
export interface ChatContentPart {
  type: string;
  [field: string]: unknown;
}

/** What a chat template renders besides the messages (Tokenizer#applyChatTemplate, CausalLM#chat). */
export interface ChatTemplateSources {
  /** Tool definitions (JSON schemas); the template sees None when absent. Picks the 'tool_use' template when there is one. */
  tools?: Record<string, unknown>[] | null;
  /** Documents for retrieval-augmented templates ({ title, text }); None when absent. */
  documents?: Record<string, unknown>[] | null;
  /**
   * A name of tokenizer_config.json's templates ('default', 'tool_use', 'rag'; letters, digits, '_', '.', '-'),
   * or a template's text (a repo's chat_template.jinja). Default: tokenizer_config.json's chat_template.
   */
  chatTemplate?: string;
  /** The time strftime_now formats (Llama 3.1's "Today Date"). Default: the time of the call. */
  now?: Date;
}

/**
 * Tokenizer#applyChatTemplate options. Every key not listed is a template variable (enable_thinking,
 * date_string, bos_token, …; JSON data), as transformers' **kwargs.
 */
export interface ApplyChatTemplateOptions extends ChatTemplateSources {
  /** End with the assistant's header, for the model to write its turn. Default false. */
  addGenerationPrompt?: boolean;
  /** true (the default): the ids (encoded without the post-processor's tokens, as transformers); false: the text. */
  tokenize?: boolean;
  [variable: string]: unknown;
}

/** CausalLM#chat options: generate()'s, and what the template renders. */
export interface ChatOptions extends GenerateOptions, ChatTemplateSources {
  /** Template variables: { enable_thinking: false } for Qwen3, { date_string: '26 Jul 2024' } for Llama 3.1, … (JSON data). */
  chatTemplateKwargs?: Record<string, unknown>;
  /**
   * Ids that end the turn (not yielded). Default: the model's eosTokenIds and its tokenizer's chatStopTokens()
   * (tokenizer_config.json's eos_token, the template's end-of-turn tokens: <|eot_id|>, <|im_end|>, <end_of_turn>, …).
   */
  stopTokens?: number[] | Int32Array;
}

/** An assistant's message (ChatTurn#message): what a conversation appends. */
export interface AssistantMessage extends ChatMessage {
  role: 'assistant';
  content: string;
}

/**
 * An assistant's turn (CausalLM#chat): an async iterator of the tokens generate() gives; when it is done its
 * value is the assistant's message.
 */
export interface ChatTurn extends AsyncIterableIterator<GeneratedToken, AssistantMessage> {
  /** The prompt as the chat template rendered it (the text the model was given). */
  readonly prompt: string;
  /** The prompt's ids. */
  readonly promptIds: Int32Array;
  /** The ids that end the turn. */
  readonly stopTokens: number[];
  /** The ids generated so far (stop tokens not included). */
  readonly ids: number[];
  /** The assistant's text so far (special tokens left out). */
  readonly text: string;
  /** The sampling seed used. */
  readonly seed: number;
  /** Why it ended ('stop': an end-of-turn token); null while running. */
  readonly stopReason: Generation['stopReason'];
  /** { role: 'assistant', content: text } so far (a new object each time). */
  readonly message: AssistantMessage;
  /** Runs the turn to its end and resolves to the message. */
  finalMessage(): Promise<AssistantMessage>;
  /** Ends it now and frees its KV cache (what `break` in for-await calls). */
  return(): Promise<IteratorResult<GeneratedToken, AssistantMessage>>;
}

/** A text ↔ ids tokenizer as CausalLM#tokenizer holds it: a Tokenizer of 'attnwasm/tokenizer' or a file's character vocabulary. */
export interface TextTokenizer {
  readonly vocabSize: number;
  encode(text: string, options?: TokenizerEncodeOptions): Int32Array;
  decode(ids: ArrayLike<number>, options?: TokenizerDecodeOptions): string;
  streamDecoder(options?: TokenizerDecodeOptions): StreamDecoder;
  tokenToId(token: string): number | undefined;
  idToToken(id: number): string | undefined;
  isSpecial(id: number): boolean;
}

/**
 * A decoder-only language model (Hugging Face's LlamaForCausalLM / Qwen2ForCausalLM): the writing demo's
 * model, a file exported with export_causal_lm, or a Hugging Face checkpoint loaded with its config.json.
 */
export interface CausalLM {
  /** The Hugging Face config (config.json's keys). */
  readonly config: Record<string, unknown>;
  readonly modelType: 'llama' | 'qwen2' | 'qwen3' | 'mistral' | 'gemma3_text' | 'phi3' | 'smollm3';
  readonly vocabSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  /** Positions a sequence may reach: max_position_embeddings. */
  readonly maxPositions: number;
  /** generate()'s default attention window (the file's attentionWindow), or null: every key. */
  readonly attentionWindow: number | null;
  /** The model's tokenizer, or null (ids in, ids out). */
  readonly tokenizer: TextTokenizer | null;
  /** The ids generate() stops at by default: generation_config.json's eos_token_id when the load had one, else config.json's. */
  readonly eosTokenIds: number[];
  /** generation_config.json as the load read it (frozen), or null. */
  readonly generationConfig: Readonly<Record<string, unknown>> | null;
  /** Bytes read from the model's files. */
  readonly fileBytes: number;
  /** Bytes the weights take in memory: as stored, or in the `dtype` the load asked for. */
  readonly weightBytes: number;
  /** weightBytes by how the weights are kept (types held only): { bf16: 493 M, f32: 0.2 M }. */
  readonly weightTypes: Partial<Record<WeightType, number>>;
  /** ids (B, T) → logits (B, T, vocab), every position, no cache: the parity path. */
  forward(ids: IdsTensor): { logits: Tensor };
  /** Text → ids with the model's tokenizer. */
  encode(text: string, options?: TokenizerEncodeOptions): Int32Array;
  /** Ids → text with the model's tokenizer. */
  decode(ids: ArrayLike<number>, options?: TokenizerDecodeOptions): string;
  /**
   * Tokens after a prompt (text with a tokenizer, or ids), one per iteration: see GenerateOptions. The prompt and
   * options are checked now (each error's message starts with the option's name); nothing runs until the first next().
   */
  generate(prompt: string | number[] | Int32Array, options?: GenerateOptions): Generation;
  /**
   * The assistant's next turn of a conversation, streamed: the tokenizer's chat template rendered with the
   * generation prompt (Tokenizer#applyChatTemplate), generated as generate() does, ending at an end-of-turn
   * token. Needs a tokenizer.json with its tokenizer_config.json (or options.chatTemplate). The template is
   * rendered and the options checked now; nothing runs until the first next(). Append `turn.message` to the
   * conversation for the next turn.
   */
  chat(messages: ChatMessage[], options?: ChatOptions): ChatTurn;
  dispose(): void;
  [Symbol.dispose](): void;
}

/** Tokenizer#encode options. */
export interface TokenizerEncodeOptions {
  /** Add the post-processor's special tokens (Llama 3's <|begin_of_text|>). Default true, as Hugging Face's encode. */
  addSpecialTokens?: boolean;
}

/** Tokenizer#encode(text, { returnOffsets: true }): the ids and each token's span of the text. */
export interface TokenOffsets {
  ids: Int32Array;
  /** [start, end) per token in UTF-16 units of the text, as the Rust tokenizers' offsets (which count code points). */
  offsets: [number, number][];
}

/** Tokenizer#decode and Tokenizer#streamDecoder options. */
export interface TokenizerDecodeOptions {
  /** Leave out special added tokens (<|endoftext|>, <|eot_id|>, …). Default false. */
  skipSpecialTokens?: boolean;
}

/** A streaming decoder for generation (Tokenizer#streamDecoder). */
export interface StreamDecoder {
  /**
   * The text that became complete with this token; an incomplete UTF-8 sequence (an emoji split
   * across byte tokens) is held back until its last byte arrives, never printed as U+FFFD halves.
   */
  push(id: number): string;
  /** The text held back ('' after whole characters, U+FFFD for an incomplete sequence); the decoder can be reused. */
  end(): string;
}

/**
 * A tokenizer read from a Hugging Face tokenizer.json — byte-level BPE (GPT-2, Llama 3, SmolLM, Qwen2),
 * SentencePiece-style BPE (Llama 2, Gemma), WordPiece (BERT), Unigram (XLM-R) — giving the ids Hugging
 * Face's `tokenizers` gives; tokenizer.d.ts adds its batch methods. Pure JS: `Tokenizer.fromJSON` of 'attnwasm/tokenizer'
 * (tokenizer.d.ts), no init() needed. Holds no native memory.
 */
export interface Tokenizer {
  /** Number of ids: the vocabulary plus the added tokens not in it. */
  readonly vocabSize: number;
  /**
   * Text → ids and each token's [start, end) in `text`: UTF-16 indices (text.slice(start, end)), the Rust
   * library's offsets; the post-processor's tokens [0, 0].
   */
  encode(text: string, options: TokenizerEncodeOptions & { returnOffsets: true }): TokenOffsets;
  /** Text → ids (a new Int32Array). */
  encode(text: string, options?: TokenizerEncodeOptions & { returnOffsets?: false }): Int32Array;
  /** Ids → text; an id outside the vocabulary throws RangeError. */
  decode(ids: ArrayLike<number>, options?: TokenizerDecodeOptions): string;
  /** A decoder fed one id at a time; the pushed texts joined with end()'s equal decode(ids). */
  streamDecoder(options?: TokenizerDecodeOptions): StreamDecoder;
  /** The pre-tokenizer's pieces of text (byte-level files: in byte symbols, 'Ġworld'). */
  preTokenize(text: string): string[];
  /** The id of a vocabulary entry (in byte symbols, 'Ġthe') or of an added token's content; undefined otherwise. */
  tokenToId(token: string): number | undefined;
  /** The token of an id; undefined outside the vocabulary. */
  idToToken(id: number): string | undefined;
  /** Whether an id is a special added token. */
  isSpecial(id: number): boolean;
  /**
   * A conversation as the model's prompt, as transformers' apply_chat_template gives it: the chat template
   * (tokenizer_config.json's, or options.chatTemplate) rendered with transformers' Jinja environment, then
   * encoded without the post-processor's tokens (the template writes BOS itself). No template: AttnWasmError
   * ERR_INVALID_ARGUMENT naming what is missing; the template's raise_exception(text): ERR_INVALID_ARGUMENT
   * with message text; @huggingface/jinja not loadable (an import map without it): ERR_UNSUPPORTED.
   */
  applyChatTemplate(messages: ChatMessage[], options?: ApplyChatTemplateOptions & { tokenize?: true }): Int32Array;
  applyChatTemplate(messages: ChatMessage[], options: ApplyChatTemplateOptions & { tokenize: false }): string;
  applyChatTemplate(messages: ChatMessage[], options?: ApplyChatTemplateOptions): Int32Array | string;
  /**
   * The ids that end an assistant's turn, ascending: tokenizer_config.json's eos_token; <|eot_id|>, <|eom_id|>,
   * <|im_end|>, <end_of_turn>, <|end|> where the template writes them; <|endoftext|>, <|end_of_text|>, </s>,
   * <eos> — each when it is a special token of this vocabulary.
   */
  chatStopTokens(options?: Pick<ChatTemplateSources, 'chatTemplate' | 'tools'>): number[];
}

/** sentence-transformers' pooling modes (Pooling.py); several may be joined by '+'. */
export type PoolingMode = 'mean' | 'cls' | 'max' | 'mean_sqrt_len' | 'weightedmean' | 'lasttoken';

/** Embeddings: one row per text, in the order given. */
export interface Embeddings {
  /** (n, dimension), row-major. */
  data: Float32Array;
  shape: [number, number];
}

/** Embedder#embedIds options. */
export interface EmbedIdsOptions {
  /** Texts per native call (1 … 2^20; default 32); the event loop gets a turn between calls. */
  batchSize?: number;
  /** L2-normalize each vector. Default: the embedder's `normalize`. */
  normalize?: boolean;
  /** Called after each batch: texts done and in all. */
  onProgress?: (p: { done: number; total: number }) => void;
}

/** Embedder#embed options. */
export interface EmbedOptions extends EmbedIdsOptions {
  /**
   * Text put before every text ('query: ', as sentence-transformers' encode(prompt=…)); with the Pooling
   * config's include_prompt false its tokens are left out of the pooling. Default: the defaultPromptName's.
   */
  prompt?: string;
  /** One of the embedder's `prompts` (config_sentence_transformers.json), instead of `prompt`. */
  promptName?: string;
}

/** Embedder#forward inputs: a padded batch (B, T), as Hugging Face's model(input_ids, attention_mask, token_type_ids). */
export interface EmbedderInputs {
  inputIds: IdsTensor;
  /** (B, T) of 0/1 (padded positions 0). Default: all ones. */
  attentionMask?: IdsTensor | { data: Uint8Array; shape: number[] };
  /** (B, T). Default: zeros. */
  tokenTypeIds?: IdsTensor;
  /** Also give `attentions` (B, layers, heads, T, T): each layer's softmax weights (HF's output_attentions). */
  outputAttentions?: boolean;
}

/**
 * A sentence embedder: a BERT-family encoder (Hugging Face's BertModel, RobertaModel, XLMRobertaModel —
 * all-MiniLM, bge, e5, gte, multilingual-e5, paraphrase-multilingual-MiniLM) with sentence-transformers'
 * pooling and normalization, loaded from a hub folder (aw.loadModel / aw.loadEmbedder). Owns native memory:
 * call dispose().
 */
export interface Embedder {
  /** The Hugging Face config (config.json's keys, as given). */
  readonly config: Record<string, unknown>;
  /** A DecoderEmbedder's is its causal LM family's ('qwen3'). */
  readonly modelType: 'bert' | 'roberta' | 'xlm-roberta' | 'distilbert' | 'modernbert' | CausalLM['modelType'];
  readonly vocabSize: number;
  /** hidden_size: a token's vector. */
  readonly hiddenSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  /** max_position_embeddings. */
  readonly maxPositions: number;
  readonly typeVocabSize: number;
  readonly padTokenId: number;
  /** Whether the checkpoint has BERT's pooler (forward()'s poolerOutput). */
  readonly hasPooler: boolean;
  /** The tokenizer (an 'attnwasm/tokenizer' Tokenizer), or null: embedIds and forward only. */
  readonly tokenizer: Tokenizer | null;
  /** embed()'s pooling: one mode, or several joined by '+' in sentence-transformers' order ('cls+max+mean'). */
  readonly pooling: string;
  /** Whether embed() L2-normalizes by default. */
  readonly normalize: boolean;
  /** Whether a prompt's tokens take part in the pooling (the Pooling config's include_prompt). */
  readonly includePrompt: boolean;
  /** Whether texts are lowercased before tokenizing (sentence_bert_config.json's do_lower_case). */
  readonly doLowerCase: boolean;
  /** Named prompts (config_sentence_transformers.json). */
  readonly prompts: Readonly<Record<string, string>>;
  /** The prompt embed() uses when given none, or null. */
  readonly defaultPromptName: string | null;
  /** sentence-transformers' Dense modules after the pooling (2_Dense, …), in order; empty when there are none. */
  readonly dense: readonly { inFeatures: number; outFeatures: number; activation: string }[];
  /** The length of embed()'s vectors: hiddenSize per pooling mode, or the last Dense module's outFeatures. */
  readonly dimension: number;
  /**
   * Tokens a text is truncated to, special tokens included: max_seq_length (sentence_bert_config.json), else
   * tokenizer_config.json's model_max_length, at most what the model's positions hold.
   */
  readonly maxTokens: number;
  /** Bytes read from the model's files. */
  readonly fileBytes: number;
  /** Bytes the weights take in memory: as stored, or in the `dtype` the load asked for. */
  readonly weightBytes: number;
  /** weightBytes by how the weights are kept (types held only). */
  readonly weightTypes: Partial<Record<WeightType, number>>;
  /**
   * Sentence embeddings, as sentence-transformers' encode() gives them: each text stripped (and lowercased with
   * do_lower_case), tokenized with the tokenizer's special tokens, truncated to maxTokens; run in batches of
   * similar length, each sentence at its own length. A string is one text. Argument errors: TypeError /
   * RangeError naming the argument.
   */
  embed(texts: string[] | string, options?: EmbedOptions): Promise<Embeddings>;
  /** Embeddings of tokenized texts (special tokens included, at most maxTokens each: a longer one is an error naming it). */
  embedIds(idsList: (Int32Array | number[])[], options?: EmbedIdsOptions): Promise<Embeddings>;
  /**
   * The encoder's outputs on a padded batch: lastHiddenState (B, T, hiddenSize) at every position, and
   * poolerOutput (B, hiddenSize) when the checkpoint has a pooler (else null).
   */
  forward(inputs: EmbedderInputs): { lastHiddenState: Tensor; poolerOutput: Tensor | null; attentions?: Tensor };
  /** Texts as forward()'s padded batch, tokenized as embed() tokenizes them. */
  tokenize(texts: string[], options?: { prompt?: string; promptName?: string }): { inputIds: IdsTensor; attentionMask: IdsTensor; tokenTypeIds: IdsTensor };
  dispose(): void;
  [Symbol.dispose](): void;
}

/** TextClassifier#classify options. */
export interface ClassifyTextOptions extends TextInputOptions {
  /** Labels per input, best first (default 1; null: all). */
  topK?: number | null;
  /** Default: sigmoid for one label or problem_type multi_label_classification, softmax otherwise (transformers' pipeline). */
  functionToApply?: 'softmax' | 'sigmoid' | 'none';
}
/** How a TextClassifier runs its inputs. */
export interface TextInputOptions {
  /** How a pair longer than maxTokens is cut (default 'only_second': the second text loses its last tokens). */
  truncation?: 'only_second' | 'only_first' | 'longest_first';
  /** Inputs per native call (default 32); the event loop gets a turn between calls. */
  batchSize?: number;
  onProgress?: (p: { done: number; total: number }) => void;
}
/** A text, or a pair [text, second text] (NLI's premise and hypothesis; a query and a passage). */
export type TextInput = string | [string, string];

/**
 * A text classifier: a BERT / RoBERTa / XLM-R checkpoint with its sequence-classification head
 * (*ForSequenceClassification), as transformers' text-classification pipeline runs it. Owns native memory.
 */
/** What TextClassifier and TokenClassifier share: an encoder checkpoint with a classification head. */
export interface EncoderHeadModel {
  /** The Hugging Face config (config.json's keys, as given). */
  readonly config: Record<string, unknown>;
  readonly modelType: 'bert' | 'roberta' | 'xlm-roberta' | 'distilbert' | 'modernbert';
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly numLayers: number;
  /** The head's outputs. */
  readonly numLabels: number;
  /** id2label in id order (LABEL_i where config.json names none). */
  readonly labels: readonly string[];
  /** The tokenizer (tokenizer.json, or the slow tokenizer's files), or null. */
  readonly tokenizer: Tokenizer | null;
  /** Tokens an input is cut to, special tokens included: model_max_length, at most what the positions hold. */
  readonly maxTokens: number;
  readonly fileBytes: number;
  readonly weightBytes: number;
  readonly weightTypes: Partial<Record<WeightType, number>>;
  dispose(): void;
  [Symbol.dispose](): void;
}

export interface TextClassifier extends EncoderHeadModel {
  /** config.json's problem_type, or null. */
  readonly problemType: string | null;
  /** Each input's labels best first, with the pipeline's scores. */
  classify(inputs: TextInput | TextInput[], options?: ClassifyTextOptions): Promise<{ label: string; score: number }[][]>;
  /** The head's logits (n, numLabels), in the inputs' order. */
  logits(inputs: TextInput | TextInput[], options?: TextInputOptions): Promise<Embeddings>;
  /** Logits of tokenized inputs (special tokens included), with their token type ids or null. */
  logitsOfIds(idsList: (Int32Array | number[])[], typesList?: (Int32Array | number[] | null)[] | null, options?: Omit<TextInputOptions, 'truncation'>): Promise<Embeddings>;
}

/**
 * A decoder-only checkpoint as a sentence embedder (Qwen3-Embedding: a Qwen3 model with sentence-transformers'
 * last-token pooling, instruction prompts and Normalize): embed(texts, { promptName: 'query' }) as
 * sentence-transformers' encode gives it. Each text runs alone, causal, at its own length. forward() and
 * tokenize() (an encoder's padded batch) throw ERR_UNSUPPORTED. Owns native memory.
 */
export interface DecoderEmbedder extends Embedder {
  /** Key/value heads (grouped-query attention). */
  readonly numKeyValueHeads: number;
}

/** An entity of TokenClassifier#classify: one token ('none'), or a group of them (the other strategies). */
export interface TokenEntity {
  /** The tag ('B-PER'), with aggregationStrategy 'none'. */
  entity?: string;
  /** The tag without its B-/I- prefix ('PER'), with the other strategies. */
  entity_group?: string;
  score: number;
  /** The token's index in the encoded text (special tokens counted), with 'none'. */
  index?: number;
  /** The token, or the tokens joined as the tokenizer's decoder joins them. */
  word: string;
  /**
   * The entity's [start, end) in the text as UTF-16 indices: text.slice(start, end) is its text. transformers
   * counts code points: the same numbers unless the text has characters beyond U+FFFF (emoji) before it.
   */
  start: number;
  end: number;
}

/**
 * A token classifier (named entities): an encoder with its *ForTokenClassification head, as transformers'
 * token-classification pipeline runs it. Needs the folder's tokenizer.json, or a BERT vocab.txt (offsets of the fast
 * tokenizer transformers converts it to). Owns native memory.
 */
export interface TokenClassifier extends EncoderHeadModel {
  /** Per text, its entities in order (tags in ignoreLabels, default ['O'], left out). */
  classify(texts: string | string[], options?: { aggregationStrategy?: 'none' | 'simple' | 'first' | 'average' | 'max'; ignoreLabels?: string[]; batchSize?: number }): Promise<TokenEntity[][]>;
}

/** A float32 tensor of a vision model's call. */
export interface VisionTensor { data: Float32Array; shape: number[] }

/**
 * A vision encoder from a hub folder: ViTModel, DeiTModel or Dinov2Model (config.json model_type vit, deit,
 * dinov2), run natively; images through the folder's preprocessor_config.json (attnwasm/image). Owns native memory.
 */
export interface VisionModel {
  /** The Hugging Face config (config.json's keys, as given). */
  readonly config: Record<string, unknown>;
  readonly modelType: 'vit' | 'deit' | 'dinov2';
  readonly hiddenSize: number;
  readonly numLayers: number;
  /** The side the positions were trained at (config.image_size). */
  readonly imageSize: number;
  readonly patchSize: number;
  readonly numChannels: number;
  /** Tokens before the patches: the class token, and DeiT's distillation token. */
  readonly extraTokens: number;
  /** Whether inputs of any size are taken (DINOv2 resizes its positions); else imageSize × imageSize only. */
  readonly anySize: boolean;
  /** What embed() returns: 'pooler' (tanh(pooler.dense(x[:, 0]))) or 'cls' (x[:, 0] after the final LayerNorm). */
  readonly pooling: 'pooler' | 'cls';
  /** The parsed preprocessor_config.json, or null. */
  readonly preprocessorConfig: Record<string, unknown> | null;
  readonly fileBytes: number;
  readonly weightBytes: number;
  readonly weightTypes: Partial<Record<WeightType, number>>;
  /** pixel_values as the folder's image processor computes them: [n, 3, H, W]. */
  preprocess(images: unknown, options?: { exifOrientation?: boolean }): Promise<VisionTensor>;
  /** The model on pixel_values (B, C, H, W): lastHiddenState (B, T, E), poolerOutput (B, E) or null (and an ImageClassifier's logits). */
  forward(inputs: { pixelValues: VisionTensor; interpolatePosEncoding?: boolean; outputAttentions?: boolean }): { lastHiddenState: VisionTensor; poolerOutput: VisionTensor | null; logits?: VisionTensor; attentions?: VisionTensor };
  /** One vector per image, as `pooling` says: [n, hiddenSize]. */
  embed(images: unknown, options?: { batchSize?: number; normalize?: boolean; onProgress?: (p: { done: number; total: number }) => void }): Promise<VisionTensor>;
  dispose(): void;
  [Symbol.dispose](): void;
}

/** An image classifier: ViT / DeiT[WithTeacher] / DINOv2 *ForImageClassification, as the image-classification pipeline scores. */
export interface ImageClassifier extends VisionModel {
  readonly numLabels: number;
  /** id2label in id order (LABEL_i where config.json names none). */
  readonly labels: readonly string[];
  readonly problemType: string | null;
  /** Per image, its labels best first: topK (default 5; null: all). */
  classify(images: unknown, options?: { topK?: number | null; functionToApply?: 'softmax' | 'sigmoid' | 'none'; batchSize?: number; onProgress?: (p: { done: number; total: number }) => void }): Promise<{ label: string; score: number }[][]>;
  /** The head's logits: [n, numLabels]. */
  logits(images: unknown, options?: { batchSize?: number; onProgress?: (p: { done: number; total: number }) => void }): Promise<VisionTensor>;
}

/**
 * CLIPModel / SiglipModel (or one tower of them) from a hub folder: images and texts in one embedding space, as
 * transformers' models and its zero-shot-image-classification pipeline.
 */
export interface CLIPModel {
  readonly config: Record<string, unknown>;
  /** clip, siglip, clip_text_model, clip_vision_model, siglip_text_model or siglip_vision_model */
  readonly modelType: string;
  /** SigLIP: sigmoid scores and logit_bias. */
  readonly siglip: boolean;
  readonly hasText: boolean;
  readonly hasVision: boolean;
  readonly imageEmbedDim: number | null;
  readonly textEmbedDim: number | null;
  /** Tokens a text may have (the text tower's max_position_embeddings). */
  readonly maxPositions: number | null;
  readonly imageSize: number | null;
  readonly patchSize: number | null;
  /** Tokens before the patches in the vision tower: CLIP's class token (1), none for SigLIP (0). */
  readonly extraTokens: number | null;
  readonly visionNumLayers: number | null;
  readonly visionNumHeads: number | null;
  /** exp(logit_scale), and logit_bias (0 for CLIP). */
  readonly logitScale: number;
  readonly logitBias: number;
  readonly preprocessorConfig: Record<string, unknown> | null;
  readonly tokenizer: Tokenizer | null;
  readonly fileBytes: number;
  readonly weightBytes: number;
  readonly weightTypes: Partial<Record<WeightType, number>>;
  /** pixel_values as the folder's image processor computes them: [n, 3, H, W]. */
  preprocess(images: unknown, options?: { exifOrientation?: boolean }): Promise<VisionTensor>;
  /** Texts as the processor pads them (CLIP: to the longest; SigLIP: to maxPositions), truncated to maxPositions. */
  tokenize(texts: string | string[]): { inputIds: { data: Int32Array; shape: number[] }; attentionMask: { data: Int32Array; shape: number[] } };
  /** CLIPModel.forward: logits both ways and the normalized embeddings (a one-tower model: its embeddings only). */
  forward(inputs: { inputIds?: { data: Int32Array; shape: number[] }; attentionMask?: { data: Int32Array | Uint8Array; shape: number[] }; pixelValues?: VisionTensor; interpolatePosEncoding?: boolean }): { logitsPerImage?: VisionTensor; logitsPerText?: VisionTensor; imageEmbeds?: VisionTensor; textEmbeds?: VisionTensor };
  /** The vision tower's outputs: image embeddings (not normalized), last hidden state, and with outputAttentions every layer's weights [B, layers, heads, T, T]. */
  visionForward(inputs: { pixelValues: VisionTensor; interpolatePosEncoding?: boolean; outputAttentions?: boolean }): { imageEmbeds: VisionTensor; lastHiddenState: VisionTensor; attentions?: VisionTensor };
  /** get_image_features (not normalized): [B, imageEmbedDim]. */
  imageFeatures(inputs: { pixelValues: VisionTensor; interpolatePosEncoding?: boolean }): VisionTensor;
  /** get_text_features (not normalized): [B, textEmbedDim]. */
  textFeatures(inputs: { inputIds: { data: Int32Array; shape: number[] }; attentionMask?: { data: Int32Array | Uint8Array; shape: number[] } }): VisionTensor;
  /** One vector per image, L2-normalized unless normalize: false: [n, imageEmbedDim]. */
  embedImages(images: unknown, options?: { batchSize?: number; normalize?: boolean; onProgress?: (p: { done: number; total: number }) => void }): Promise<VisionTensor>;
  /** One vector per text, L2-normalized unless normalize: false: [n, textEmbedDim]. */
  embedTexts(texts: string | string[], options?: { batchSize?: number; normalize?: boolean }): Promise<VisionTensor>;
  /** Per image, the labels best first: softmax over labels (CLIP) or sigmoid per label (SigLIP). */
  zeroShot(images: unknown, labels: string[], options?: { hypothesisTemplate?: string; topK?: number | null; batchSize?: number }): Promise<{ label: string; score: number }[][]>;
  dispose(): void;
  [Symbol.dispose](): void;
}

/** Ids for Seq2SeqLM: a tensor [batch, tokens], one row (an Int32Array or number[]), or rows of one length. */
export type Seq2SeqIds = { data: Int32Array; shape: number[] } | Int32Array | number[] | (Int32Array | number[])[];

/** Seq2SeqLM#generate's and #translate's options: transformers' generate() names in camelCase (docs/seq2seq.md). */
export interface Seq2SeqGenerateOptions {
  maxLength?: number;
  maxNewTokens?: number;
  minLength?: number;
  minNewTokens?: number;
  numBeams?: number;
  lengthPenalty?: number;
  earlyStopping?: boolean | 'never';
  numReturnSequences?: number;
  noRepeatNgramSize?: number;
  repetitionPenalty?: number;
  badWordsIds?: number[][];
  forcedBosTokenId?: number | null;
  forcedEosTokenId?: number | number[] | null;
  decoderStartTokenId?: number;
  eosTokenId?: number | number[] | null;
  padTokenId?: number | null;
  doSample?: boolean;
  temperature?: number;
  topK?: number | null;
  topP?: number;
  seed?: number;
  signal?: AbortSignal;
  /** The source language (M2M100 / NLLB: its language token) */
  srcLang?: string;
  /** The target language (M2M100 / NLLB / mBART: the forced first token; Marian: the >>xx<< token) */
  tgtLang?: string;
}

/** One source's greedy or sampled generation, token by token. */
export interface Seq2SeqStream extends AsyncIterableIterator<{ id: number; index: number; text?: string }> {
  readonly ids: number[];
  /** transformers' sequences row so far: the start token first, the eos when it stopped on one. */
  readonly sequence: Int32Array;
  readonly text: string;
  readonly seed: number;
  readonly stopReason: 'stop' | 'length' | 'aborted' | 'error' | null;
  /** Runs it to the end: the text. */
  finalText(): Promise<string>;
}

/**
 * An encoder–decoder from a hub folder (Marian opus-mt, M2M100 / NLLB-200, BART, mBART, T5 / Flan-T5 / mT5), run as
 * transformers' …ForConditionalGeneration with generate()'s search (docs/seq2seq.md).
 */
export interface Seq2SeqLM {
  readonly config: Record<string, unknown>;
  readonly generationConfig: Record<string, unknown> | null;
  readonly tokenizer: import('./tokenizer.js').Tokenizer | import('./tokenizer.js').SlowTokenizer | null;
  /** marian, bart, mbart, m2m_100, t5 or mt5 */
  readonly modelType: string;
  readonly vocabSize: number;
  /** The logits' width. */
  readonly outputVocabSize: number;
  readonly dModel: number;
  readonly encoderLayers: number;
  readonly decoderLayers: number;
  /** Tokens a source or a target may have. */
  readonly maxPositions: number;
  /** Tokens tokenize() cuts a source to: config.json's max_position_embeddings, at most maxPositions. */
  readonly maxSourceLength: number;
  readonly padTokenId: number | null;
  readonly eosTokenId: number | null;
  readonly decoderStartTokenId: number | null;
  /** Whether the head keeps a q8 copy for bounds (loadModel's `boundedHead` with a float32 head): greedy steps' bounded pass. */
  readonly boundedHead: boolean;
  readonly fileBytes: number;
  readonly weightBytes: number;
  /** Sources as the tokenizer prepares them, right-padded, truncated to maxSourceLength. */
  tokenize(texts: string | string[], options?: { srcLang?: string; tgtLang?: string }): { inputIds: { data: Int32Array; shape: number[] }; attentionMask: { data: Int32Array; shape: number[] } };
  /** Teacher forcing: logits [B, T, V] and the encoder's states [B, S, dModel]. */
  forward(inputs: { inputIds: Seq2SeqIds; attentionMask?: Seq2SeqIds; decoderInputIds: Seq2SeqIds }): { logits: Tensor; encoderLastHiddenState: Tensor };
  /**
   * One source with greedy search or sampling: a stream of tokens; beam search or several sources: a Promise of
   * transformers' sequences and sequences_scores (beams), with their texts.
   */
  generate(input: string | string[] | Seq2SeqIds | { inputIds: Seq2SeqIds; attentionMask?: Seq2SeqIds }, options?: Seq2SeqGenerateOptions & { decoderInputIds?: number[] }): Seq2SeqStream | Promise<{ sequences: Int32Array[]; scores: Float32Array | null; texts: string[] | null }>;
  /** Each text's translation (the best sequence, special tokens skipped). */
  translate(texts: string, options?: Seq2SeqGenerateOptions): Promise<string>;
  translate(texts: string[], options?: Seq2SeqGenerateOptions): Promise<string[]>;
  dispose(): void;
  [Symbol.dispose](): void;
}

/** Audio for SpeechRecognizer: mono samples at 16 kHz, or samples at another rate (mixed to mono, resampled). */
export type SpeechAudio = Float32Array | { data: Float32Array | Float32Array[]; samplingRate: number } | { channels: Float32Array[]; samplingRate: number };
/** Audio or a file for transcribe() and stream(): also a path or URL, bytes or a Blob (WAV, FLAC; in a page what the browser decodes). */
export type SpeechInput = SpeechAudio | string | URL | Uint8Array | ArrayBuffer | Blob;
/** Whisper's input features: [batch, numMelBins, 3000]. */
export type SpeechFeatures = { data: Float32Array; shape: number[] };

/** SpeechRecognizer#generate's options: transformers' WhisperForConditionalGeneration.generate names in camelCase (docs/speech.md). */
export interface SpeechGenerateOptions extends Omit<Seq2SeqGenerateOptions, 'srcLang' | 'tgtLang' | 'decoderStartTokenId'> {
  /** The spoken language: a code ('en'), a name ('english') or a token ('<|en|>'); detected when not given (multilingual models). */
  language?: string;
  /** 'transcribe' (default) or 'translate' (to English). */
  task?: 'transcribe' | 'translate';
  /**
   * Timestamp tokens (WhisperTimeStampLogitsProcessor). 'word' as the ASR pipeline passes it for word timestamps:
   * no <|notimestamps|> in the prompt, but no timestamp rule either (short form).
   */
  returnTimestamps?: boolean | 'word';
  /** Previous text as <|startofprev|> … ids (getPromptIds). */
  promptIds?: number[] | Int32Array;
  isMultilingual?: boolean;
}

/** SpeechRecognizer#generate's options: SpeechGenerateOptions and the token times. */
export interface SpeechGenerateCallOptions extends SpeechGenerateOptions {
  /**
   * transformers' return_token_timestamps: each token's time in seconds from the cross-attention alignment heads
   * (generation_config.json alignment_heads; without them refused, ERR_UNSUPPORTED).
   */
  returnTokenTimestamps?: boolean;
  /** The input's mel frames (with returnTokenTimestamps): the encoder states past numFrames / 2 are not looked at. */
  numFrames?: number;
}

/** SpeechRecognizer#transcribe's and #stream's options: generate()'s and the ASR pipeline's. */
export interface TranscribeOptions extends SpeechGenerateOptions {
  /**
   * true: segments with [start, end]; 'word': one chunk per word, its times from the cross-attention alignment heads
   * (generation_config.json alignment_heads; without them refused, ERR_UNSUPPORTED; transcribe only).
   */
  returnTimestamps?: boolean | 'word';
  returnLanguage?: boolean;
  /** The pipeline's chunked mode: chunks of this many seconds (transcribe only). */
  chunkLengthS?: number;
  /** Their overlap each side (default chunkLengthS / 6), or [left, right]. */
  strideLengthS?: number | [number, number];
  onProgress?: (p: { done: number; total: number | null; seconds: number }) => void;
}

/** A transcription as transformers' ASR pipeline returns it. */
export interface Transcription {
  text: string;
  /**
   * With returnTimestamps (segments' [start, end] in seconds; null where a chunk ends without one) or returnLanguage;
   * with returnTimestamps 'word', one per word: { text, timestamp }.
   */
  chunks?: { text: string; timestamp?: [number | null, number | null]; language?: string | null }[];
}

/** A language's probability (detectLanguage). */
export interface LanguageProbability { language: string; name: string; token: string; id: number; probability: number }

/**
 * Whisper from a hub folder (tiny, base, small, medium, large-v3, distil-whisper), run as transformers'
 * WhisperForConditionalGeneration with its generate() and the automatic-speech-recognition pipeline (docs/speech.md).
 */
export interface SpeechRecognizer {
  readonly config: Record<string, unknown>;
  readonly generationConfig: Record<string, unknown> | null;
  readonly tokenizer: import('./tokenizer.js').Tokenizer | null;
  readonly featureExtractor: import('./audio/index.js').WhisperFeatureExtractor;
  /** whisper */
  readonly modelType: string;
  readonly vocabSize: number;
  readonly dModel: number;
  readonly encoderLayers: number;
  readonly decoderLayers: number;
  /** 80, or 128 (large-v3). */
  readonly numMelBins: number;
  /** Frames of one window: 3000 (30 s). */
  readonly frames: number;
  readonly maxSourcePositions: number;
  readonly maxTargetPositions: number;
  readonly eosTokenId: number | null;
  readonly decoderStartTokenId: number | null;
  readonly fileBytes: number;
  readonly weightBytes: number;
  /** The log-mel input features of audio (padded or trimmed to 30 s): [1, numMelBins, 3000]. */
  features(audio: SpeechAudio, options?: { padding?: 'max_length' | 'longest'; truncation?: boolean }): SpeechFeatures;
  /** Teacher forcing: logits [B, T, V] and the encoder's states [B, 1500, dModel]. */
  forward(inputs: { inputFeatures?: SpeechFeatures; audio?: SpeechAudio; decoderInputIds: Seq2SeqIds }): { logits: Tensor; encoderLastHiddenState: Tensor };
  /**
   * Whisper's short-form generate: the decoder prompt and tokens, sequences_scores with beams, the texts; with
   * returnTokenTimestamps each token's time in seconds (a row per sequence). One window: audio over 30 s is refused
   * (ERR_AUDIO_TOO_LONG; transcribe() runs it).
   */
  generate(input: SpeechAudio | SpeechFeatures | { inputFeatures: SpeechFeatures }, options?: SpeechGenerateCallOptions): Promise<{ sequences: Int32Array[]; scores: Float32Array | null; texts: string[] | null; language: string | null; tokenTimestamps?: Float32Array[] }>;
  /** The spoken language's probabilities, most likely first (a batch of features: one list each; audio over 30 s: its
   * first 30 s). */
  detectLanguage(input: SpeechAudio | SpeechFeatures | { inputFeatures: SpeechFeatures }): LanguageProbability[] | LanguageProbability[][];
  /** Text (and timestamped chunks) as the ASR pipeline gives it; long audio by long-form generation or in chunks. */
  transcribe(audio: SpeechInput, options?: TranscribeOptions): Promise<Transcription>;
  /** The segments as they are decoded (with returnLanguage, each with its window's language, as the pipeline names a chunk's: 'english', or null). */
  stream(audio: SpeechInput, options?: Omit<TranscribeOptions, 'chunkLengthS' | 'strideLengthS' | 'returnTimestamps'> & { returnTimestamps?: boolean | 'word' }): AsyncIterableIterator<{ timestamp: [number, number]; text: string; language?: string | null }>;
  /** <|startofprev|> and the text's ids, for promptIds. */
  getPromptIds(text: string): number[];
  dispose(): void;
  [Symbol.dispose](): void;
}

/** A reranked document. */
export interface RankedDocument {
  /** The document's index in the list given. */
  corpusId: number;
  score: number;
  /** The document, with returnDocuments. */
  text?: string;
}

/**
 * A cross-encoder (reranker: ms-marco-MiniLM, bge-reranker) as sentence-transformers' CrossEncoder runs it: a
 * TextClassifier scoring (query, document) pairs through the activation its config names.
 */
export interface CrossEncoder extends TextClassifier {
  /** The activation predict() and rank() apply, as its torch import path ('torch.nn.modules.activation.Sigmoid'). */
  readonly activation: string;
  /** One score per pair (one label), or (n, numLabels) scores. */
  predict(pairs: [string, string][], options?: TextInputOptions & { activation?: 'sigmoid' | 'identity' | 'tanh' | 'relu' | (string & {}); applySoftmax?: boolean }): Promise<Float32Array | Embeddings>;
  /** Documents best first for the query (one-label models). */
  rank(query: string, documents: string[], options?: TextInputOptions & { topK?: number | null; returnDocuments?: boolean; activation?: string }): Promise<RankedDocument[]>;
}

/**
 * Cosine similarity in float64 (0 where a vector is zero): two vectors → a number; a matrix (n, d) — embed()'s
 * result — and a matrix (m, d) → (n, m) (a vector with a matrix counts as one row).
 */
export interface CosineSimilarity {
  (a: SimilarityMatrix, b: SimilarityMatrix | SimilarityVector): Tensor;
  (a: SimilarityVector, b: SimilarityMatrix): Tensor;
  (a: SimilarityVector, b: SimilarityVector): number;
}
/** A vector of cosineSimilarity: numbers, or a tensor of shape [d]. */
export type SimilarityVector = ArrayLike<number> | { data: Float32Array | Float64Array; shape: [number] };
/** A matrix of cosineSimilarity: rows of d numbers (embed()'s result). */
export interface SimilarityMatrix {
  data: Float32Array | Float64Array;
  shape: [number, number];
}

export interface Capabilities {
  simd: boolean;
  /** Number of threads the kernels run on, or false for one. */
  threads: number | false;
  /**
   * Why threads are off, when they are (e.g. "not cross-origin isolated (COOP/COEP headers
   * missing)", "SharedArrayBuffer unavailable", "threads: 1 requested", "the worker script … failed
   * to load; running the single-thread build"); absent otherwise.
   */
  threadsReason?: string;
  /** globalThis.crossOriginIsolated (false in Node, where threads need no isolation). */
  crossOriginIsolated: boolean;
  /** Whether this context has SharedArrayBuffer (needed by the pthreads build). */
  sharedArrayBuffer: boolean;
  environment: 'node' | 'browser' | 'worker';
  /**
   * The build this instance runs: single-thread (attnwasm_core, or attnwasm_core_rs with relaxed
   * SIMD) or pthreads (attnwasm_core_mt, attnwasm_core_mt_rs).
   */
  build: 'single-thread' | 'pthreads';
  /**
   * Whether this instance runs a relaxed-SIMD build (attnwasm_core_rs / attnwasm_core_mt_rs: the
   * matrix multiplies use f32x4.relaxed_madd, a fused multiply-add where the CPU has one). Its
   * results may differ from the baseline build's in the last bits; never between thread counts.
   */
  relaxedSimd: boolean;
  /**
   * Why the baseline build runs, when it does (e.g. "relaxedSimd: false requested", "this engine
   * does not run WebAssembly relaxed SIMD (Node: run it with --experimental-wasm-relaxed-simd)",
   * "attnwasm_core_rs.wasm did not load (…); running the baseline build"); absent otherwise.
   */
  relaxedSimdReason?: string;
}

/** The runtime bound to one wasm instance. */
export interface AttnWasm {
  /** torch.nn.MultiheadAttention bound to this instance. */
  MultiheadAttention: typeof MultiheadAttention;
  Linear: typeof Linear;
  LayerNorm: typeof LayerNorm;
  Embedding: typeof Embedding;
  ReLU: typeof ReLU;
  GELU: typeof GELU;
  Dropout: typeof Dropout;
  TransformerEncoderLayer: typeof TransformerEncoderLayer;
  TransformerDecoderLayer: typeof TransformerDecoderLayer;
  TransformerEncoder: typeof TransformerEncoder;
  TransformerDecoder: typeof TransformerDecoder;
  Transformer: typeof Transformer;
  SinusoidalPositionalEncoding: typeof SinusoidalPositionalEncoding;
  LearnedPositionalEmbedding: typeof LearnedPositionalEmbedding;
  PatchEmbedding: typeof PatchEmbedding;
  RMSNorm: typeof RMSNorm;
  SiLU: typeof SiLU;
  RotaryPositionalEmbeddings: typeof RotaryPositionalEmbeddings;
  /** torch.nn.functional.relu */
  relu(x: Tensor): Tensor;
  /** torch.nn.functional.gelu */
  gelu(x: Tensor, options?: { approximate?: 'none' | 'tanh' }): Tensor;
  /** torch.nn.functional.silu: x · sigmoid(x). */
  silu(x: Tensor): Tensor;
  /** torch.nn.attention.bias.causal_upper_left(L, S): query i sees keys 0 … i. An attnMask of scaledDotProductAttention. */
  causalUpperLeft(L: number, S: number): CausalBias;
  /** torch.nn.attention.bias.causal_lower_right(L, S): query i sees keys 0 … i + S − L. An attnMask of scaledDotProductAttention. */
  causalLowerRight(L: number, S: number): CausalBias;
  /**
   * Reads a safetensors file (strict). Float dtypes (F32/F16/BF16/F64) become Float32Arrays,
   * BOOL/U8 Uint8Arrays, other integers Int32Arrays.
   */
  loadSafetensors(bytes: Uint8Array | ArrayBuffer, options?: { metadata?: false }): Record<string, AnyTensor>;
  loadSafetensors(bytes: Uint8Array | ArrayBuffer, options: { metadata: true }): { tensors: Record<string, AnyTensor>; metadata: Record<string, string> };
  /**
   * Loads any model file with an "attnwasm.config" (a Translator, a Classifier or a CausalLM, by the file's
   * "model"), or a Hugging Face checkpoint with its config.json (a folder's, or `config`): a CausalLM, or for
   * model_type 'bert' / 'roberta' / 'xlm-roberta' an Embedder (also with `pooling` or `normalize`), or with a
   * sequence-classification head a TextClassifier or a CrossEncoder (`task` decides otherwise).
   */
  loadModel(source: ModelSource, options: LoadOptions & ({ pooling: LoadOptions['pooling'] } | { normalize: boolean })): Promise<Embedder>;
  loadModel(source: ModelSource, options?: LoadOptions & { config: LoadOptions['config'] }): Promise<CausalLM | Embedder>;
  loadModel(source: ModelSource, options: LoadOptions & { task: 'rerank' }): Promise<CrossEncoder>;
  loadModel(source: ModelSource, options: LoadOptions & { task: 'classify' }): Promise<TextClassifier>;
  loadModel(source: ModelSource, options?: LoadOptions): Promise<Translator | Classifier | CausalLM | Embedder | DecoderEmbedder | TextClassifier | CrossEncoder | TokenClassifier | VisionModel | ImageClassifier | CLIPModel | Seq2SeqLM | SpeechRecognizer>;
  /** Loads the translation demo model from a URL, a Node path or bytes. */
  loadTranslator(source: ModelSource, options?: LoadOptions): Promise<Translator>;
  /** A hub encoder-decoder (Marian, M2M100 / NLLB, BART, mBART, T5, mT5); another family is ERR_INVALID_ARGUMENT. */
  loadSeq2SeqLM(source: ModelSource, options?: LoadOptions): Promise<Seq2SeqLM>;
  /** A Whisper hub folder; another family is ERR_INVALID_ARGUMENT. */
  loadSpeechRecognizer(source: ModelSource, options?: LoadOptions): Promise<SpeechRecognizer>;
  /** Loads the digit classifier demo model from a URL, a Node path or bytes. */
  loadClassifier(source: ModelSource, options?: LoadOptions): Promise<Classifier>;
  /** Loads a causal LM: a "causal_lm" file, or a Hugging Face checkpoint with `config` (and `tokenizer`); another kind is ERR_INVALID_ARGUMENT. */
  loadCausalLM(source: ModelSource, options?: LoadOptions): Promise<CausalLM>;
  /**
   * Loads a sentence embedder: a BERT / RoBERTa / XLM-R checkpoint with its config.json — a hub folder (with
   * sentence-transformers' files: their pooling, Normalize, max_seq_length), or model.safetensors with `config`,
   * `tokenizer`, `pooling`, `normalize`; another kind is ERR_INVALID_ARGUMENT.
   */
  loadEmbedder(source: ModelSource, options?: LoadOptions): Promise<Embedder>;
  /** Cosine similarity of vectors (a number) or of embedding matrices (n, d) and (m, d) → (n, m); also exported by the package. */
  cosineSimilarity: CosineSimilarity;
  /** The models downloaded by hub id, kept for the next load: list(), delete(id). */
  readonly cache: import('./hub.js').HubCache;
  /**
   * A checkpoint described from its headers alone (no tensor data read), as this runtime would load it: the
   * native reader checks each header and a dry run of the loader gives the family, the loader's refusal and the
   * exact bytes per dtype (memoryExact true). The same as 'attnwasm/inspect' with this runtime's provider
   * (docs/inspect.md).
   */
  inspect(source: ModelSource | string, options?: Omit<import('./inspect.js').InspectOptions, 'native'>): Promise<import('./inspect.js').CheckpointReport>;
  /** The model classes, for instanceof checks on what loadModel returns (not constructible: use the loaders). */
  readonly Translator: abstract new (...args: never[]) => Translator;
  readonly Classifier: abstract new (...args: never[]) => Classifier;
  readonly CausalLM: abstract new (...args: never[]) => CausalLM;
  readonly Embedder: abstract new (...args: never[]) => Embedder;
  readonly TextClassifier: abstract new (...args: never[]) => TextClassifier;
  readonly CrossEncoder: abstract new (...args: never[]) => CrossEncoder;
  readonly TokenClassifier: abstract new (...args: never[]) => TokenClassifier;
  readonly DecoderEmbedder: abstract new (...args: never[]) => DecoderEmbedder;
  readonly VisionModel: abstract new (...args: never[]) => VisionModel;
  readonly ImageClassifier: abstract new (...args: never[]) => ImageClassifier;
  readonly CLIPModel: abstract new (...args: never[]) => CLIPModel;
  readonly Seq2SeqLM: abstract new (...args: never[]) => Seq2SeqLM;
  readonly SpeechRecognizer: abstract new (...args: never[]) => SpeechRecognizer;
  /** torch.nn.functional.scaled_dot_product_attention (PyTorch 2.x semantics). */
  scaledDotProductAttention(query: Tensor, key: Tensor, value: Tensor, options?: SdpaOptions): AttentionResult;
  /** torch.nn.Transformer.generate_square_subsequent_mask: -Infinity above the diagonal. */
  generateSquareSubsequentMask(sz: number): Tensor;
  capabilities(): Capabilities;
  /** The wasm heap and the working-memory budget, in bytes (docs/memory.md). */
  memory(): MemoryFigures;
  /** Starts a new peak for memory().peakInUseBytes, at the bytes in use now. */
  resetPeakMemory(): void;
  /**
   * Ends this runtime: ends its pthread workers, frees every native object made from it, and
   * drops its references to the wasm instance and its memory so the garbage collector can take
   * them. Afterwards every call on it, or on an object made from it, throws AttnWasmError
   * ERR_CLOSED; init() gives a new runtime. Idempotent.
   */
  close(): Promise<void>;
}

export interface MemoryFigures {
  /** Size of the wasm memory: it grows on demand and never shrinks (close() gives it back). */
  heapBytes: number;
  /** What the heap may grow to: 4 GiB where the engine allows. */
  heapLimitBytes: number;
  /** Bytes allocated now: parameters, models, and at most a small scratch kept between calls. */
  inUseBytes: number;
  /** The most bytes allocated at once since init() or resetPeakMemory(). */
  peakInUseBytes: number;
  /** The working-memory budget: scratch one call may use (bigger batches run in pieces). */
  workingMemoryBytes: number;
}

export interface InitOptions {
  /**
   * Where to fetch the .wasm from (CDNs, bundlers that do not emit it); default: next to the
   * package's JS (when esbuild or Rollup moved that JS into a bundle: next to the bundle first).
   * It must be the loaded build's own file: attnwasm_core.wasm, or attnwasm_core_mt.wasm when
   * `threads` > 1. In Node also a file: URL or a path. One that does not load rejects with
   * ERR_WASM_LOAD.
   */
  wasmUrl?: string | URL;
  /** The .wasm bytes, if you already have them (the same rule as wasmUrl). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /**
   * Threads for the kernels: 1, 2, … (at most 64) or 'auto' (the logical cores, at most 4).
   * More than one loads the pthreads build (attnwasm_core_mt + its .worker.js), which needs
   * SharedArrayBuffer: Node, or a cross-origin-isolated page (COOP/COEP headers). Elsewhere
   * init() falls back to one thread and capabilities().threadsReason says why. Default: 'auto',
   * or 1 when wasmUrl/wasmBinary is given.
   */
  threads?: number | 'auto';
  /**
   * With threads > 1: how long (ms) init() waits for the pthreads build's workers to start before
   * it falls back to the single-thread build (capabilities().threadsReason then says why). A worker
   * script that fails to load (blocked URL, 404, Content-Security-Policy) falls back at once.
   * Default 10 000; an integer in [1, 600 000].
   */
  threadStartTimeoutMs?: number;
  /**
   * The working-memory budget in bytes: the scratch one call may use on top of its inputs and
   * outputs; a batch that would need more runs in pieces of whole batch entries, with the same
   * results bit for bit. Default 32 MiB; an integer in [65 536, 1 073 741 824].
   */
  workingMemory?: number;
  /**
   * Load the relaxed-SIMD build (attnwasm_core_rs, attnwasm_core_mt_rs) where the engine runs
   * WebAssembly relaxed SIMD: Chromium ≥ 114, Firefox ≥ 146, Node with
   * --experimental-wasm-relaxed-simd (not Safari). false: the baseline build everywhere. A relaxed
   * build that does not load falls back to the baseline one (capabilities().relaxedSimdReason says
   * why). wasmUrl/wasmBinary always name a baseline build. Default true.
   */
  relaxedSimd?: boolean;
}

/**
 * Loads the wasm module (Node 20 and browsers, no flags needed). Rejects with AttnWasmError
 * ERR_WASM_LOAD when the .wasm cannot be loaded; a later init() with a correct `wasmUrl` works.
 */
export function init(options?: InitOptions): Promise<AttnWasm>;

/** Cosine similarity (as AttnWasm#cosineSimilarity; plain JS, no init() needed). */
export const cosineSimilarity: CosineSimilarity;
