// Type declarations of 'attnwasm/worker' (bindings/worker.js): the runtime in a Web Worker or a Node
// worker_threads Worker, its models as proxies whose methods return promises.
import type {
  AttnWasm, AttnWasmError, Capabilities, CausalLM, Classifier, Embedder, GeneratedToken, InitOptions, LoadOptions,
  MemoryFigures, ModelSource, Translator,
} from './index.js';

export { AttnWasmError } from './index.js';

/** createWorker options: init()'s (applied in the worker), and where the worker script is. */
export interface WorkerOptions extends InitOptions {
  /**
   * Where the worker script (attnwasm's bindings/worker_main.js, or your bundle of it) is served. Default: next to
   * this module, as `new URL('./worker_main.js', import.meta.url)` (which Vite and webpack emit). In Node a path
   * or file: URL.
   */
  workerUrl?: string | URL;
  /** How long (ms) the worker script may take to start before createWorker rejects with ERR_WASM_LOAD. Default 30 000. */
  startTimeoutMs?: number;
}

/** Options that cross to the worker: as in the page, with an AbortSignal mirrored and callbacks called back. */
type Remoted<A extends unknown[]> = A;

/**
 * A generation running in the worker (CausalLM#generate, #chat): an async iterator of its tokens, and the
 * fields of the object in the worker (a chat turn's prompt and message too), kept up to date as tokens are
 * taken. `break` / return() end it in the worker; an AbortSignal ends it within one token.
 */
export interface RemoteGeneration<T = GeneratedToken, G = object> extends AsyncIterableIterator<T> {
  /** The class of the object in the worker: 'Generation', 'ChatTurn'. */
  readonly kind: string;
  readonly promptIds: Int32Array | null;
  readonly ids: number[];
  readonly text: string;
  readonly seed: number | null;
  readonly stopReason: 'stop' | 'length' | 'context' | 'aborted' | 'error' | null;
  return(): Promise<IteratorResult<T>>;
}

/**
 * What a proxy's method returns when the method in the worker returns a generation: a promise of it that is
 * also the generation itself, so `for await (const t of lm.generate(p))` and `g.stopReason` read as in the
 * page. The options are checked in the worker: an error rejects the first next().
 */
export type RemoteGenerationCall<T, G> = RemoteGeneration<T, G> & PromiseLike<RemoteGeneration<T, G> & Omit<G, keyof AsyncIterableIterator<T>>>
  & Omit<Partial<G>, 'next' | 'return' | 'throw' | typeof Symbol.asyncIterator>;

/** A method of an object in the worker, as its proxy offers it. */
type RemoteMethod<F> = F extends (...args: infer A) => infer R
  ? R extends AsyncIterator<infer T> ? (...args: Remoted<A>) => RemoteGenerationCall<T, R>
    : (...args: Remoted<A>) => Promise<RemoteValue<Awaited<R>>>
  : never;

/** A value as it comes back from the worker: objects of attnwasm's as proxies, data as it is. */
export type RemoteValue<T> = T extends CausalLM ? RemoteCausalLM
  : T extends Translator ? Remote<Translator>
    : T extends Classifier ? Remote<Classifier>
      : T extends Embedder ? Remote<Embedder>
        : T;

type FunctionKeys<T> = { [K in keyof T]: T[K] extends (...args: never[]) => unknown ? K : never }[keyof T];

/**
 * A proxy of an object in the worker: its data fields (copied when it crossed), and each of its methods
 * returning a promise (dispose() frees the object in the worker).
 */
export type Remote<T> = {
  readonly [K in Exclude<keyof T, FunctionKeys<T>>]: T[K] extends object | null ? RemoteValue<T[K]> : T[K];
} & {
  readonly [K in Exclude<FunctionKeys<T>, 'dispose' | typeof Symbol.dispose>]: RemoteMethod<T[K]>;
} & {
  /** The class of the object in the worker: 'CausalLM', 'Translator', 'Classifier', 'Tokenizer', … */
  readonly kind: string;
  /** Frees the object in the worker (its native memory); idempotent. */
  dispose(): Promise<void>;
  [Symbol.dispose](): void;
  [Symbol.asyncDispose](): Promise<void>;
};

/** A CausalLM in the worker; its tokenizer is a proxy too (methods return promises). */
export type RemoteCausalLM = Omit<Remote<CausalLM>, 'tokenizer'> & {
  readonly tokenizer: Remote<NonNullable<CausalLM['tokenizer']>> | null;
};

/** LoadOptions as they cross: onProgress is called back on the page as bytes arrive in the worker. */
export type WorkerLoadOptions = LoadOptions;

/** The functional API of the runtime, each call returning a promise. */
type RuntimeFunctions = {
  [K in 'scaledDotProductAttention' | 'generateSquareSubsequentMask' | 'relu' | 'gelu' | 'silu' | 'loadSafetensors' | 'resetPeakMemory']:
  AttnWasm[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : never;
};

/** What the runtime's `worker` is in Node: a worker_threads Worker (typed here without @types/node). */
export interface NodeWorker {
  readonly threadId: number;
  terminate(): Promise<number>;
  on(event: string, listener: (...args: any[]) => void): this;
  once(event: string, listener: (...args: any[]) => void): this;
}

/** The runtime running in a worker (createWorker). */
export interface WorkerRuntime extends RuntimeFunctions {
  /** The Worker running it: a Web Worker, or Node's worker_threads Worker. */
  readonly worker: Worker | NodeWorker;
  /** The URL the worker script started from. */
  readonly workerUrl: string;
  /** capabilities() as the worker reported them at start (environment: 'worker' in browsers, 'node' in Node). */
  readonly startCapabilities: Capabilities;
  /** The hub cache the worker's loads use (the origin's, or Node's default folder): list(), delete(id). */
  readonly cache: import('./hub.js').HubCache;
  /**
   * Loads a model in the worker. A URL, a Node path, a File or a Blob is read by the worker (the bytes never
   * pass through the page); bytes are copied to it; a FileList / File[] / Map of Files crosses as handles.
   */
  loadModel(source: ModelSource, options: WorkerLoadOptions & ({ pooling: LoadOptions['pooling'] } | { normalize: boolean })): Promise<Remote<Embedder>>;
  loadModel(source: ModelSource, options: WorkerLoadOptions & { config: LoadOptions['config'] }): Promise<RemoteCausalLM | Remote<Embedder>>;
  loadModel(source: ModelSource, options?: WorkerLoadOptions): Promise<RemoteCausalLM | Remote<Embedder> | Remote<Translator> | Remote<Classifier>>;
  loadCausalLM(source: ModelSource, options?: WorkerLoadOptions): Promise<RemoteCausalLM>;
  loadEmbedder(source: ModelSource, options?: WorkerLoadOptions): Promise<Remote<Embedder>>;
  loadTranslator(source: ModelSource, options?: WorkerLoadOptions): Promise<Remote<Translator>>;
  loadClassifier(source: ModelSource, options?: WorkerLoadOptions): Promise<Remote<Classifier>>;
  capabilities(): Promise<Capabilities>;
  memory(): Promise<MemoryFigures>;
  /**
   * Ends the worker: frees every model in it and its runtime, then terminates it (its memory goes back).
   * Calls waiting, and every later call on the runtime or its models, reject with ERR_CLOSED. Idempotent.
   */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Starts the attnwasm runtime in a worker (a module Web Worker in browsers, a worker_threads Worker in Node)
 * and resolves once init() has run there. A worker script that does not start rejects with AttnWasmError
 * ERR_WASM_LOAD naming its URL and the fix; init()'s own errors reject as init() would.
 */
export function createWorker(options?: WorkerOptions): Promise<WorkerRuntime>;
