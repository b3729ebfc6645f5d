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
  | 'ERR_DISPOSED';

/** Thrown for anything the runtime rejects; `code` is stable across versions. */
export class AttnWasmError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string);
}

/** A torch-style state_dict: exact torch key → tensor. */
export type StateDict = Record<string, Tensor> | Map<string, Tensor>;

export interface AttentionResult {
  /** The attention output; a fresh array owned by the caller. */
  output: Tensor;
  /** The attention weights, or null when not requested. */
  weights: Tensor | null;
}

export interface SdpaOptions {
  /** Broadcastable to (…, L, S). Bool: true = take part. Float: added. Default null. */
  attnMask?: MaskTensor | null;
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

export interface Capabilities {
  simd: boolean;
  threads: boolean;
  /** Why threads are off, when they are. */
  threadsReason: string;
  crossOriginIsolated: boolean;
  environment: 'node' | 'browser' | 'worker';
}

/** The runtime bound to one wasm instance. */
export interface AttnWasm {
  /** torch.nn.MultiheadAttention bound to this instance. */
  MultiheadAttention: typeof MultiheadAttention;
  /** torch.nn.functional.scaled_dot_product_attention (PyTorch 2.x semantics). */
  scaledDotProductAttention(query: Tensor, key: Tensor, value: Tensor, options?: SdpaOptions): AttentionResult;
  /** torch.nn.Transformer.generate_square_subsequent_mask: -Infinity above the diagonal. */
  generateSquareSubsequentMask(sz: number): Tensor;
  capabilities(): Capabilities;
  /** heapBytes: size of the wasm memory; inUseBytes: bytes currently malloc'd. */
  memory(): { heapBytes: number; inUseBytes: number };
}

export interface InitOptions {
  /** Where to fetch the .wasm from (CDNs); default: next to the package's JS. */
  wasmUrl?: string | URL;
  /** The .wasm bytes, if you already have them. */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

/** Loads the wasm module (Node 20 and browsers, no flags needed). */
export function init(options?: InitOptions): Promise<AttnWasm>;
