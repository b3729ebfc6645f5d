// The boundary: the one module that calls the embind module (a runtime's wasm instance, dist/attnwasm_core*.mjs;
// its functions are registered by bindings/attnwasm_bindings.cpp). It copies inputs into wasm memory for the
// length of a call and outputs out of it, turns a native result into values or a thrown error with structured
// fields (code, message, and `at` — { arg, index, value, limit } — where the native side says where), and keeps
// the ownership of native handles (a runtime's set, freed by close()). Everything above calls the typed
// functions here and never parses a native message; nothing here knows a family or a layer's options.
// Tensors cross as { ptr, shape, dtype } objects in one argument object per call (the C++ reads them by name).
import { AttnWasmError, rangeError } from './errors.js';
import { NATIVE_CODES } from './native_constants.js';

// ---- the instance, its memory, errors ----

/** The embind module of runtime `rt`; ERR_CLOSED once it was closed. */
export function mod(rt) {
  if (!rt._coreRef) throw new AttnWasmError('ERR_CLOSED', 'this attnwasm runtime was closed (aw.close()); call init() for a new one');
  return rt._coreRef;
}

/**
 * A native failure as the error the API throws: RangeError for ERR_OUT_OF_RANGE, else AttnWasmError; `at` (where
 * in an argument, src/core/status.h StatusAt) kept as the error's `at` field.
 */
export function nativeError(code, message, at) {
  const name = NATIVE_CODES[code] ?? 'ERR_INTERNAL';
  const e = name === 'ERR_OUT_OF_RANGE' ? rangeError(message) : new AttnWasmError(name, message);
  if (at) Object.defineProperty(e, 'at', { value: Object.freeze({ ...at }), enumerable: false });
  return e;
}

/** Registers a native handle as owned by runtime `rt` (released by release() or close()). */
export function own(rt, h) {
  rt._handles.add(h);
  return h;
}

/** Deletes a handle registered with own() (after close() it is gone already). */
export function release(rt, h) {
  if (rt._handles.delete(h)) h.delete();
}

/**
 * A handle just made: returned when it holds what was asked for, else deleted and its error thrown (its message
 * through `reword(message, code name, at)`).
 */
export function checked(h, reword = (m) => m) {
  if (h.code() === 0) return h;
  const at = h.at?.();
  const e = nativeError(h.code(), reword(h.message(), NATIVE_CODES[h.code()], at), at);
  h.delete();
  throw e;
}

/**
 * A CallResult as its output tensors (copied out: fresh arrays, the caller's) or its thrown error; deleted either way.
 * `into`: an array of the first output's type and length to copy that output into instead (a decoding step's logits
 * into the search's own buffer: a fresh 1 MB array per step cost a beam step ~1.7 ms in page faults and GC).
 */
export function take(res, into = null) {
  try {
    const code = res.code();
    if (code !== 0) throw nativeError(code, res.message(), res.at());
    const out = [];
    for (let i = 0; i < res.count(); i++) {
      const view = res.data(i);
      const target = Array.isArray(into) ? (into[i] ?? null) : i === 0 ? into : null;
      const reuse = target !== null && target.constructor === view.constructor && target.length === view.length;
      if (reuse) target.set(view);
      out.push({ data: reuse ? target : view.slice(), shape: res.shape(i) });
    }
    return out;
  } finally {
    res.delete();
  }
}

/**
 * Copies tensors into one freshly malloc'd block of wasm memory, runs fn with their byte addresses, frees the
 * block (also on error). Entries may be null (address 0). Entries sharing a data array (a self-attention's query,
 * key and value) are copied once and share an address (the native side only reads inputs).
 */
export function withInputs(rt, tensors, fn) {
  const core = mod(rt);
  let total = 0;
  const offsetOf = new Map();
  for (const t of tensors) {
    if (!t || offsetOf.has(t.data)) continue;
    offsetOf.set(t.data, total);
    total += (t.data.byteLength + 7) & ~7;
  }
  const base = total ? core._malloc(total) >>> 0 : 0;  // unsigned: the heap may reach 4 GB
  if (total && !base) throw new AttnWasmError('ERR_OUT_OF_MEMORY', `out of memory: cannot copy ${total} bytes of inputs into wasm`);
  try {
    const heap = core.HEAPU8;  // re-read: malloc may have grown (replaced) the buffer
    for (const [d, off] of offsetOf) heap.set(new Uint8Array(d.buffer, d.byteOffset, d.byteLength), base + off);
    return fn(tensors.map((t) => (t ? base + offsetOf.get(t.data) : 0)));
  } finally {
    if (base) core._free(base);
  }
}

/** Named tensors copied in; fn gets { name: { ptr, shape, dtype } | null, …extra }. */
function withArgs(rt, tensors, extra, fn) {
  const names = Object.keys(tensors);
  return withInputs(rt, names.map((k) => tensors[k]), (ptrs) => {
    const args = { ...extra };
    names.forEach((k, i) => {
      const t = tensors[k];
      args[k] = t ? { ptr: ptrs[i], shape: t.shape, dtype: t.dtype } : null;
    });
    return fn(args);
  });
}

/** A native call of `fn(core, args)` on named tensors and options, its outputs taken. */
const call = (fn) => (rt, tensors, extra = {}) => withArgs(rt, tensors, extra, (a) => take(fn(mod(rt), a)));
/** The same on a handle: fn(core, h, args). */
const callOn = (fn) => (rt, h, tensors, extra = {}) => withArgs(rt, tensors, extra, (a) => take(fn(mod(rt), h, a)));
/** A rule's check: throws its error, or returns nothing. */
const rule = (fn) => (rt, ...args) => { take(fn(mod(rt), ...args)); };

// ---- typed calls ----

/** The functional calls: outputs [tensor, …]. */
export const ops = Object.freeze({
  sdpa: call((c, a) => c.sdpa(a)),
  activation: (rt, name, x) => withArgs(rt, { x }, {}, (a) => take(mod(rt).activationForward(name, a.x))),
});

/** The argument rules that live natively (src/core/rules.h, models/causal_lm.h): each throws its error. */
export const rules = Object.freeze({
  shape: rule((c, name, shape) => c.checkShape(name, shape)),
  causalBias: rule((c, L, S) => c.checkCausalBias(L, S)),
  attentionWindow: rule((c, w) => c.checkAttentionWindow(w)),
});

/** Making a layer's native module from its config object: a checked handle the caller adopts. */
export const create = Object.freeze({
  linear: (rt, cfg) => mod(rt).createLinear(cfg),
  layerNorm: (rt, cfg) => mod(rt).createLayerNorm(cfg),
  rmsNorm: (rt, cfg) => mod(rt).createRMSNorm(cfg),
  rotary: (rt, cfg) => mod(rt).createRotary(cfg),
  embedding: (rt, cfg) => mod(rt).createEmbedding(cfg),
  mha: (rt, cfg) => mod(rt).createMha(cfg),
  encoderLayer: (rt, cfg) => mod(rt).createEncoderLayer(cfg),
  decoderLayer: (rt, cfg) => mod(rt).createDecoderLayer(cfg),
  encoder: (rt, cfg) => mod(rt).createEncoder(cfg),
  decoder: (rt, cfg) => mod(rt).createDecoder(cfg),
  transformer: (rt, cfg) => mod(rt).createTransformer(cfg),
  sinusoidalPE: (rt, cfg) => mod(rt).createSinusoidalPE(cfg),
  learnedPE: (rt, cfg) => mod(rt).createLearnedPE(cfg),
  patchEmbedding: (rt, cfg) => mod(rt).createPatchEmbedding(cfg),
});

/** A layer's forward on its handle: outputs [tensor, …]. The one-tensor forwards take { x }. */
export const forward = Object.freeze({
  linear: callOn((c, h, a) => c.linearForward(h, a.x)),
  layerNorm: callOn((c, h, a) => c.layerNormForward(h, a.x)),
  rmsNorm: callOn((c, h, a) => c.rmsNormForward(h, a.x)),
  rotary: callOn((c, h, a) => c.rotaryForward(h, a)),
  embedding: callOn((c, h, a) => c.embeddingForward(h, a.x)),
  positional: callOn((c, h, a) => c.positionalForward(h, a.x)),
  patchEmbedding: callOn((c, h, a) => c.patchEmbeddingForward(h, a.x)),
  mha: callOn((c, h, a) => c.mhaForward(h, a)),
  encoderLayer: callOn((c, h, a) => c.encoderLayerForward(h, a)),
  decoderLayer: callOn((c, h, a) => c.decoderLayerForward(h, a)),
  encoder: callOn((c, h, a) => c.encoderForward(h, a)),
  encoderWithAttention: callOn((c, h, a) => c.encoderForwardWithAttention(h, a)),
  decoder: callOn((c, h, a) => c.decoderForward(h, a)),
  transformer: callOn((c, h, a) => c.transformerForward(h, a)),
});

/** A module handle's parameters and state. */
export const params = Object.freeze({
  names: (rt, h) => { mod(rt); return h.paramNames(); },
  shape: (rt, h, name) => h.paramShape(name),
  /** A copy of the parameter's data (a fresh Float32Array). */
  data: (rt, h, name) => h.paramData(name).slice(),
  load: (rt, h, entries) => withInputs(rt, entries.map(([, t]) => t),
    (ptrs) => take(h.loadStateDict(entries.map(([k]) => k), ptrs, entries.map(([, t]) => t.shape)))),
  /** A stack's layers copied from a layer (and its final norm): TransformerEncoder / Decoder. */
  copyStack: (rt, stack, layer, norm, encoder) => { take(mod(rt).stackCopyFrom(stack, layer, norm, encoder)); },
  /** A loaded model's resolved config, its family's kind first (models/families.h FamilyInfoJson); {} for a layer. */
  info: (h) => JSON.parse(h.info()),
});

/** The model families' native calls, on a loaded model's handle. */
export const models = Object.freeze({
  lmForward: callOn((c, h, a) => c.lmForward(h, a)),
  /** A KV cache for `batch` sequences of `capacity` positions: an owned handle (release() it). */
  lmBegin: (rt, h, batch, capacity) => own(rt, checked(mod(rt).lmBegin(h, batch, capacity))),
  lmAppend: (rt, h, cache, tensors, extra, into = null) => withArgs(rt, tensors, extra, (a) => take(mod(rt).lmAppend(h, cache, a), into)),
  embedderForward: callOn((c, h, a) => c.embedderForward(h, a)),
  embedderEmbed: callOn((c, h, a) => c.embedderEmbed(h, a)),
  translatorDecode: callOn((c, h, a) => c.translatorDecode(h, a)),
  translatorForward: callOn((c, h, a) => c.translatorForwardFull(h, a)),
  classifierClassify: callOn((c, h, a) => c.classifierClassify(h, a)),
  visionForward: callOn((c, h, a) => c.visionForward(h, a)),
  clipImageEmbeds: callOn((c, h, a) => c.clipImageEmbeds(h, a)),
  clipTextEmbeds: callOn((c, h, a) => c.clipTextEmbeds(h, a)),
  /** → { data: [exp(logit_scale), logit_bias] } */
  clipLogitScale: (rt, h) => take(mod(rt).clipLogitScale(h))[0],
  /** The encoder run on { ids, mask? } into a decoding state of { beams, capacity } (a handle the caller deletes). */
  seq2seqBegin: (rt, h, tensors, extra) => withArgs(rt, tensors, extra, (a) => own(rt, checked(mod(rt).seq2seqBegin(h, a)))),
  /**
   * { tokens (rows, T) } with { all, logSoftmax } → [logits] (copied into `into` when it fits: take()); with
   * { bounded: true } (T = 1, a bounded head) → [lower, upper] bounds of the logits (into: [lower, upper]); or
   * { exact (n) int32 } with { row } after a bounded step → [that row's exact logits at those ids].
   */
  seq2seqStep: (rt, h, state, tensors, extra = {}, into = null) =>
    withArgs(rt, tensors, extra, (a) => take(mod(rt).seq2seqStep(h, state, a), into)),
  /** { x (rows, n) float32 } → [each row's log_softmax] (copied into `into` when it fits: take()). */
  logSoftmaxRows: (rt, tensors, into = null) => withArgs(rt, tensors, {}, (a) => take(mod(rt).logSoftmaxRows(a), into)),
  /** { parents (rows) }; or { sources (n) }: the state keeps those sources only (ascending indices of its current ones). */
  seq2seqReorder: (rt, h, state, tensors) => withArgs(rt, tensors, {}, (a) => take(mod(rt).seq2seqReorder(h, state, a))),
  /** { ids, mask?, dec } → [logits, encoderLastHiddenState]. */
  seq2seqForward: callOn((c, h, a) => c.seq2seqForward(h, a)),
  /** Whisper's encoder on { features (B, n_mels, frames) } into a decoding state of { beams, capacity } (seq2seq's). */
  speechBegin: (rt, h, tensors, extra) => withArgs(rt, tensors, extra, (a) => own(rt, checked(mod(rt).speechBegin(h, a)))),
  /** { features, dec } → [logits, encoderLastHiddenState]. */
  speechForward: callOn((c, h, a) => c.speechForward(h, a)),
  /** { tokens (rows, T), heads (n, 2) int32 } on a decoding state → [alignment weights (rows, n, T, S)]. */
  speechAlignment: (rt, h, state, tensors) => withArgs(rt, tensors, {}, (a) => take(mod(rt).speechAlignment(h, state, a))),
});

// ---- files ----

/** A safetensors file's bytes read whole: { tensors: { name: { data, shape, dtype } }, metadata }; errors through `reword`. */
export function readSafetensors(rt, u8, reword) {
  return withInputs(rt, [{ data: u8 }], ([p]) => {
    const r = checked(mod(rt).readSafetensors(p, u8.byteLength), reword);
    try {
      const tensors = {};
      for (let i = 0; i < r.count(); i++) {
        const view = r.data(i);  // a view of wasm memory: copied out now
        const dtype = r.dtype(i);
        tensors[r.name(i)] = { data: dtype === 'BOOL' || dtype === 'U8' ? Uint8Array.from(view) : view.slice(), shape: r.shape(i) };
      }
      return { tensors, metadata: r.metadata() };
    } finally {
      r.delete();
    }
  });
}

/**
 * The native loader of one load (src/models/load_model.h), wrapped: header(bytes, size) → the header's length,
 * addFile, begin, feed from a staging block of wasm memory, finish → the model's handle (owned by the caller),
 * free() (idempotent: what it holds goes back, the loader and the staging block).
 */
export function loader(rt, stagingBytes) {
  const core = mod(rt);
  let l = core.createLoader();
  let staging = 0;
  return {
    /** The header's length N from a file's first 8 bytes (size: the file's, or -1): throws the header's error. */
    headerLength(first, size, name) {
      const { code, message, n } = withInputs(rt, [{ data: first }], ([p]) => core.safetensorsHeaderLength(p, first.byteLength, size));
      if (code !== 0) throw nativeError(code, `source: ${name}: ${message}`);
      return n;
    },
    addFile(name, head, size) { withInputs(rt, [{ data: head }], ([p]) => take(l.addFile(name, p, head.byteLength, size))); },
    metadata: () => l.metadata(),
    /** boundedHead: a float32 head keeps a q8 copy for its bounds (a seq2seq family's; ignored by the others). */
    begin(expected, config, index, dtype, boundedHead = false) {
      if (boundedHead) l.boundedHead();
      take(l.begin(expected, config, index, dtype));
    },
    /** Copies `bytes` into the staging block at `at` (the block taken on first use). */
    stage(bytes, at) {
      mod(rt);  // ERR_CLOSED
      if (!staging) {
        staging = core._malloc(stagingBytes) >>> 0;
        if (!staging) throw new AttnWasmError('ERR_OUT_OF_MEMORY', `out of memory: cannot take ${stagingBytes} bytes to load the weights through`);
      }
      core.HEAPU8.set(bytes, staging + at);  // re-read: memory may have grown
    },
    feed(file, offset, n) { take(l.feed(file, offset, staging, n)); },
    finish: () => checked(l.finish()),
    free() {
      if (staging) core._free(staging);
      staging = 0;
      l?.delete();
      l = null;
    },
  };
}

/**
 * attnwasm/inspect's NativeInspector on runtime `rt` (bindings/inspect.d.ts): header() the native reader's check of
 * one header, plan() a dry run of the loader's Begin (src/models/load_model.h PlanOnly), allocating no weight.
 * Codes as names (null: accepted).
 */
export function inspector(rt) {
  const codeName = (c) => (c ? NATIVE_CODES[c] ?? 'ERR_INTERNAL' : null);
  return {
    header(bytes, size) {
      const r = withInputs(rt, [{ data: bytes }], ([p]) => mod(rt).inspectHeader(p, bytes.byteLength, size ?? -1));
      return { code: codeName(r.code), message: r.message, tensors: r.tensors, metadata: r.metadata };
    },
    plan(config, headers, index, dtype) {
      const l = mod(rt).createLoader();
      try {
        for (const h of headers) {
          const res = withInputs(rt, [{ data: h.bytes }], ([p]) => l.addFile(h.name, p, h.bytes.byteLength, h.size ?? -1));
          try {
            if (res.code()) return { code: codeName(res.code()), message: res.message(), family: null, bytes: { weightBytes: 0, weightTypes: {} } };
          } finally {
            res.delete();
          }
        }
        const r = l.plan('', config, index, dtype);
        return { code: codeName(r.code), message: r.message, family: r.family, bytes: { weightBytes: r.weightBytes, weightTypes: r.weightTypes }, parameters: r.parameters };
      } finally {
        l.delete();
      }
    },
  };
}

/** Throws ERR_CLOSED once runtime `rt` was closed. */
export const ensureOpen = (rt) => { mod(rt); };

/** The registry's rows as the runtime has them (tests compare them with native_constants.js FAMILIES). */
export const families = (rt) => JSON.parse(mod(rt).families());

/** A config checked as the loader would, nothing built: the family's kind, or its refusal thrown. */
export function checkConfig(rt, text, own, expected = '') {
  const r = mod(rt).checkConfig(text, own, expected);
  try {
    if (r.code() !== 0) throw nativeError(r.code(), r.message(), r.at());
    return r.message();
  } finally {
    r.delete();
  }
}

// ---- the runtime itself ----

/** The heap's figures and the working-memory budget (aw.memory()). */
export function memory(rt) {
  const c = mod(rt);
  return { heapBytes: c.HEAPU8.byteLength, heapLimitBytes: c.heapMax(), inUseBytes: c.heapInUse(), peakInUseBytes: c.heapPeak(), workingMemoryBytes: c.workBudget() };
}
export const resetPeak = (rt) => { mod(rt).resetHeapPeak(); };
export const setWorkBudget = (rt, bytes) => { take(mod(rt).setWorkBudget(bytes)); };
/** What the instance runs: { threads (in use), threadsSupported (the pthreads build), relaxedSimd }. */
export function build(rt) {
  const c = mod(rt);
  return { threads: c.numThreads(), threadsSupported: c.threadsSupported(), relaxedSimd: c.relaxedSimd() };
}
/** Sets the threads of a pthreads build's instance (`core` before a runtime exists): the count in effect. */
export const setThreads = (core, n) => core.setNumThreads(n);
