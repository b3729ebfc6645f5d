// attnwasm: the public JavaScript API, shared by the package's entries
// (index.js: the .wasm files next to the package; inline.js: the .wasm
// embedded in a module), which each make their init() with createInit().
//
// All ergonomics live here; the embind layer (attnwasm_bindings.cpp) is thin.
// Tensors cross the API as plain objects { data, shape }: Float32Array data for
// float tensors, Uint8Array (0/1) for boolean masks. Inputs are copied into
// wasm memory for the duration of one call; outputs are fresh Float32Arrays
// owned by the caller that stay valid after later calls.
// Errors: argument-type problems throw TypeError/RangeError before entering
// wasm; everything the native side rejects throws AttnWasmError. Every thrown
// error has a stable `code` (see ErrorCode) and the module stays usable.

// The single-thread glue is imported statically: its top-level await keeps
// require('attnwasm') failing with Node's clear ESM error (README, CommonJS).
// The pthreads glue is imported by index.js in init() only when threads are used.
import createAttnwasmModule from '../dist/attnwasm_core.mjs';
import { makeModels } from './models.js';
import {
  AttnWasmError, typeError, rangeError, describe, checkOptions, checkInt, checkNumber, checkBytes,
} from './errors.js';
import { SIMD_SUPPORTED, WasmLoadFailure, compileFirst, showUrl, startGlue } from './wasm_load.js';

/** Stable error codes, by the numeric code of src/core/status.h. */
const NATIVE_CODES = [
  'OK',
  'ERR_INVALID_ARGUMENT',
  'ERR_SHAPE',
  'ERR_DTYPE',
  'ERR_STATE_DICT',
  'ERR_OUT_OF_MEMORY',
];

export { AttnWasmError };

const disposeSymbol = Symbol.dispose ?? Symbol.for('Symbol.dispose');

const isNode = typeof process === 'object' && !!process.versions && !!process.versions.node;

function shapeStr(shape) {
  return `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;
}

function checkBool(v, name, dflt) {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw typeError(`${name}: expected a boolean, got ${describe(v)}`);
  return v;
}

function checkProbability(v, name) {
  if (v === undefined) return 0;
  if (typeof v !== 'number') throw typeError(`${name}: expected a number, got ${describe(v)}`);
  if (!(v >= 0 && v <= 1)) throw rangeError(`${name}: expected a probability in [0, 1], got ${v}`);
  return v;
}

function checkNonNegative(v, name, dflt) {
  if (v === undefined) return dflt;
  if (typeof v !== 'number') throw typeError(`${name}: expected a number, got ${describe(v)}`);
  if (!(v >= 0) || !Number.isFinite(v)) throw rangeError(`${name}: expected a finite number >= 0, got ${v}`);
  return v;
}

function optionalMask(m, name) {
  return m == null ? null : checkTensor(m, name, 'mask');
}

const MAX_ELEMENTS = 2 ** 29;

/**
 * Validates a tensor argument. kind 'float': Float32Array data; kind 'mask':
 * Uint8Array (bool, 0/1) or Float32Array (additive). Returns
 * { data, shape, dtype } with dtype 0 = float32, 1 = bool.
 */
function checkTensor(t, name, kind) {
  if (t === null || typeof t !== 'object' || Array.isArray(t) || ArrayBuffer.isView(t)) {
    throw typeError(`${name}: expected a tensor object { data, shape }, got ${describe(t)}`);
  }
  const { data, shape } = t;
  if (!Array.isArray(shape)) throw typeError(`${name}.shape: expected an array of integers, got ${describe(shape)}`);
  let numel = 1;
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i];
    if (typeof d !== 'number' || !Number.isInteger(d)) {
      throw typeError(`${name}.shape[${i}]: expected an integer, got ${typeof d === 'number' ? d : describe(d)}`);
    }
    if (d < 0) throw rangeError(`${name}.shape: dims must be >= 0, got ${shapeStr(shape)}`);
    numel *= d;
  }
  if (numel > MAX_ELEMENTS) {
    throw rangeError(`${name}.shape: ${shapeStr(shape)} has ${numel} elements, more than the limit 2^29`);
  }
  let dtype;
  if (kind === 'ids') {
    if (!(data instanceof Int32Array)) {
      throw new AttnWasmError('ERR_DTYPE', `${name}.data: expected an Int32Array of token ids, got ${describe(data)}`);
    }
    dtype = 2;
  } else if (data instanceof Float32Array) dtype = 0;
  else if (kind === 'mask' && data instanceof Uint8Array) dtype = 1;
  else {
    const want = kind === 'mask' ? 'a Uint8Array (bool, 0/1) or Float32Array (additive)' : 'a Float32Array';
    throw new AttnWasmError('ERR_DTYPE', `${name}.data: expected ${want}, got ${describe(data)}`);
  }
  if (data.length !== numel) {
    throw new AttnWasmError(
      'ERR_SHAPE',
      `${name}: data has ${data.length} elements but shape ${shapeStr(shape)} needs ${numel}`,
    );
  }
  return { data, shape, dtype };
}

/**
 * Validates a state_dict: a plain object or Map of torch key → tensor.
 * @returns {[string, {data: Float32Array, shape: number[]}][]}
 */
function stateDictEntries(sd, name) {
  let entries;
  if (sd instanceof Map) entries = [...sd.entries()];
  else if (sd !== null && typeof sd === 'object' && !Array.isArray(sd)) entries = Object.entries(sd);
  else throw typeError(`${name}: expected an object or Map of name → { data, shape }, got ${describe(sd)}`);
  for (const [k] of entries) {
    if (typeof k !== 'string') throw typeError(`${name}: keys must be strings, got a key of type ${describe(k)}`);
  }
  return entries.map(([k, t]) => [k, checkTensor(t, `${name}['${k}']`, 'float')]);
}

/** The runtime bound to one wasm instance; create it with init(). */
class AttnWasm {
  constructor(core) {
    this._core = core;
    const rt = this;
    const classes = makeClasses(rt);
    for (const [name, cls] of Object.entries(classes)) if (name !== 'Module') this[name] = cls;
    const models = makeModels(rt, classes, { AttnWasmError, typeError, rangeError, describe, checkOptions, checkInt, checkNumber, checkBytes });
    /** Loads the translation demo model (URL, Node path or bytes). */
    this.loadTranslator = models.loadTranslator;
    /** Loads the image classifier demo model (URL, Node path or bytes). */
    this.loadClassifier = models.loadClassifier;
  }

  /**
   * Copies tensors into one freshly malloc'd block of wasm memory, runs fn
   * with their byte addresses, and frees the block (also on error).
   * Entries may be null (absent optional tensors: address 0). Entries with
   * the same data array (a self-attention's query, key and value) are
   * copied once and share an address (the native side only reads inputs).
   */
  _withInputs(tensors, fn) {
    const core = this._core;
    let total = 0;
    const seen = new Map(); // data array → offset
    const offsets = tensors.map((t) => {
      if (!t) return -1;
      if (seen.has(t.data)) return seen.get(t.data);
      const off = total;
      seen.set(t.data, off);
      total += (t.data.byteLength + 7) & ~7;
      return off;
    });
    const base = total ? core._malloc(total) : 0;
    if (total && !base) {
      throw new AttnWasmError('ERR_OUT_OF_MEMORY', `out of memory: cannot copy ${total} bytes of inputs into wasm`);
    }
    try {
      const heap = core.HEAPU8; // re-read: malloc may have grown (replaced) the buffer
      const copied = new Set();
      const ptrs = tensors.map((t, i) => {
        if (!t) return 0;
        const p = base + offsets[i];
        if (!copied.has(p)) heap.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), p);
        copied.add(p);
        return p;
      });
      return fn(ptrs);
    } finally {
      if (base) core._free(base);
    }
  }

  /**
   * Copies named tensors into wasm and calls fn with an args object whose
   * entries are { ptr, shape, dtype } (null for absent tensors), plus `extra`.
   */
  _run(tensors, extra, fn) {
    const names = Object.keys(tensors);
    return this._withInputs(names.map((k) => tensors[k]), (ptrs) => {
      const args = { ...extra };
      names.forEach((k, i) => {
        const t = tensors[k];
        args[k] = t ? { ptr: ptrs[i], shape: t.shape, dtype: t.dtype } : null;
      });
      return fn(args);
    });
  }

  /** Turns a native CallResult into output tensors (copied out) or a thrown error; deletes it. */
  _take(res) {
    try {
      const code = res.code();
      if (code !== 0) throw new AttnWasmError(NATIVE_CODES[code] ?? 'ERR_INTERNAL', res.message());
      const out = [];
      for (let i = 0; i < res.count(); i++) out.push({ data: res.data(i).slice(), shape: res.shape(i) });
      return out;
    } finally {
      res.delete();
    }
  }

  /**
   * torch.nn.functional.scaled_dot_product_attention (PyTorch 2.x semantics).
   * query (…, L, E), key (…, S, E), value (…, S, Ev) → output (…, L, Ev).
   * attnMask: bool (Uint8Array) **true = take part**, or float (added).
   * @returns {{output: Tensor, weights: Tensor|null}} weights (…, L, S) when needWeights.
   */
  scaledDotProductAttention(query, key, value, options) {
    const o = checkOptions(
      options,
      ['attnMask', 'dropoutP', 'isCausal', 'scale', 'enableGqa', 'needWeights'],
      'scaledDotProductAttention',
    );
    const q = checkTensor(query, 'query', 'float');
    const k = checkTensor(key, 'key', 'float');
    const v = checkTensor(value, 'value', 'float');
    const m = o.attnMask == null ? null : checkTensor(o.attnMask, 'attnMask', 'mask');
    const dropoutP = o.dropoutP === undefined ? 0 : o.dropoutP;
    if (typeof dropoutP !== 'number') throw typeError(`dropoutP: expected a number, got ${describe(dropoutP)}`);
    const isCausal = checkBool(o.isCausal, 'isCausal', false);
    const enableGqa = checkBool(o.enableGqa, 'enableGqa', false);
    const needWeights = checkBool(o.needWeights, 'needWeights', false);
    const scale = o.scale ?? null;
    if (scale !== null && typeof scale !== 'number') {
      throw typeError(`scale: expected a number or null, got ${describe(scale)}`);
    }
    const outs = this._withInputs([q, k, v, m], ([qp, kp, vp, mp]) =>
      this._take(
        this._core.sdpa(
          qp, q.shape, kp, k.shape, vp, v.shape,
          mp, m ? m.dtype : 0, m ? m.shape : [],
          isCausal, scale !== null, scale ?? 1, enableGqa, dropoutP, needWeights,
        ),
      ),
    );
    return { output: outs[0], weights: needWeights ? outs[1] : null };
  }

  /**
   * torch.nn.Transformer.generate_square_subsequent_mask: a float (sz, sz)
   * mask with -Infinity above the diagonal and 0 elsewhere.
   * @param {number} sz
   */
  generateSquareSubsequentMask(sz) {
    checkInt(sz, 'sz', { min: 0, max: 46340 });
    const data = new Float32Array(sz * sz);
    for (let i = 0; i < sz; i++) for (let j = i + 1; j < sz; j++) data[i * sz + j] = -Infinity;
    return { data, shape: [sz, sz] };
  }

  /**
   * Reads a safetensors file (the Hugging Face format) with strict validation.
   * Float tensors (F32, F16, BF16, F64) become Float32Arrays (converted on load),
   * BOOL and U8 become Uint8Arrays, other integers Int32Arrays.
   * @param {Uint8Array|ArrayBuffer} bytes
   * @param {{metadata?: boolean}} [options] metadata: true returns { tensors, metadata }
   * @returns a state dict usable by every loadStateDict (or { tensors, metadata })
   */
  loadSafetensors(bytes, options) {
    const o = checkOptions(options, ['metadata'], 'loadSafetensors');
    const withMetadata = checkBool(o.metadata, 'metadata', false);
    const { tensors, metadata } = this._readSafetensors(bytes, 'bytes');
    return withMetadata ? { tensors, metadata } : tensors;
  }

  /** Parses safetensors bytes; errors name the argument `name`. */
  _readSafetensors(bytes, name) {
    let u8;
    if (bytes instanceof Uint8Array) u8 = bytes;
    else if (bytes instanceof ArrayBuffer) u8 = new Uint8Array(bytes);
    else if (ArrayBuffer.isView(bytes)) u8 = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    else throw typeError(`${name}: expected a Uint8Array or ArrayBuffer, got ${describe(bytes)}`);
    return this._withInputs([{ data: u8 }], ([p]) => {
      const r = this._core.readSafetensors(p, u8.byteLength);
      try {
        if (r.code() !== 0) throw new AttnWasmError(NATIVE_CODES[r.code()] ?? 'ERR_INTERNAL', `${name}: ${r.message()}`);
        const out = {};
        for (let i = 0; i < r.count(); i++) {
          const view = r.data(i);
          const dtype = r.dtype(i);
          const data = dtype === 'BOOL' || dtype === 'U8' ? Uint8Array.from(view) : view.slice();
          out[r.name(i)] = { data, shape: r.shape(i) };
        }
        return { tensors: out, metadata: r.metadata() };
      } finally {
        r.delete();
      }
    });
  }

  /**
   * Copies safetensors bytes into wasm memory once, validates and describes
   * them natively (nothing converted), and runs fn(file, metadata) while they
   * are there: modules fill their parameters straight from them
   * (Module._loadFromFile). Errors name the argument `name`.
   */
  _withFile(bytes, name, fn) {
    const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    return this._withInputs([{ data: u8 }], ([p]) => {
      const file = this._core.parseSafetensorsFile(p, u8.byteLength);
      try {
        if (file.code() !== 0) throw new AttnWasmError(NATIVE_CODES[file.code()] ?? 'ERR_INTERNAL', `${name}: ${file.message()}`);
        return fn(file, file.metadata());
      } finally {
        file.delete();
      }
    });
  }

  /** torch.nn.functional.relu: a new tensor. */
  relu(x) {
    return this._activation(0, x);
  }

  /**
   * torch.nn.functional.gelu: exact (erf) form, or approximate: 'tanh'.
   * @param {{approximate?: 'none'|'tanh'}} [options]
   */
  gelu(x, options) {
    const o = checkOptions(options, ['approximate'], 'gelu');
    const a = o.approximate === undefined ? 'none' : o.approximate;
    if (typeof a !== 'string') throw typeError(`approximate: expected 'none' or 'tanh', got ${describe(a)}`);
    if (a !== 'none' && a !== 'tanh') throw rangeError(`approximate: expected 'none' or 'tanh', got '${a}'`);
    return this._activation(a === 'tanh' ? 2 : 1, x);
  }

  _activation(kind, x) {
    const t = checkTensor(x, 'input', 'float');
    return this._run({ x: t }, {}, (a) => this._take(this._core.activationForward(kind, a.x)))[0];
  }

  /**
   * What this runtime instance uses. `threads`: the number of threads its
   * kernels run on, or false for one; then `threadsReason` says why.
   */
  capabilities() {
    const n = this._core.numThreads();
    const plan = this._threadPlan ?? { threads: 1, reason: 'threads: 1 requested' };
    const caps = {
      // The module is built with SIMD128, so it only instantiates where SIMD
      // works; this checks it independently (a v128 function must validate).
      simd: SIMD_SUPPORTED,
      threads: n > 1 ? n : false,
      crossOriginIsolated: typeof globalThis.crossOriginIsolated === 'boolean' ? globalThis.crossOriginIsolated : false,
      sharedArrayBuffer: typeof SharedArrayBuffer === 'function',
      environment: isNode ? 'node' : typeof window === 'object' ? 'browser' : 'worker',
      build: this._core.threadsSupported() ? 'pthreads' : 'single-thread',
    };
    if (n <= 1) caps.threadsReason = plan.threads > 1 ? 'threads: 1 set' : plan.reason;
    return caps;
  }

  /**
   * Internal (tests, benchmarks): sets the thread count of a runtime loaded
   * with the pthreads build, between 1 and the count init() chose. Returns
   * the count in effect.
   */
  _setThreads(n) {
    const plan = this._threadPlan;
    checkInt(n, 'threads', { min: 1, max: plan && plan.threads > 1 ? plan.threads : 1 });
    const saved = saveWorkerGlobal();
    try {
      // Starting a thread may make the glue create a Worker (global lookup).
      if (this._core.awWorkerGlobal) globalThis.Worker = this._core.awWorkerGlobal;
      return this._core.setNumThreads(n);
    } finally {
      saved.restore();
      unrefWorkers(this._core);
    }
  }

  /**
   * Internal (bench/): median ms of `reps` packed GEMMs C(m, n) = A(m, k)·W(n, k)ᵀ + b
   * inside wasm, without JS copies (src/ops/kernel_bench.h).
   */
  _benchGemm(m, n, k, reps) {
    const ms = this._core.benchGemm(m, n, k, reps);
    if (ms < 0) throw rangeError(`_benchGemm: sizes out of range (${m}, ${n}, ${k})`);
    return ms;
  }

  /**
   * Internal (bench/): median ms of `reps` attention-core calls on `heads`
   * heads of q = k = v (L × hd), no mask (or causal), inside wasm.
   */
  _benchAttention(heads, L, hd, causal, reps) {
    const ms = this._core.benchAttention(heads, L, hd, causal, reps);
    if (ms < 0) throw rangeError(`_benchAttention: sizes out of range (${heads}, ${L}, ${hd})`);
    return ms;
  }

  /** Wasm memory figures: { heapBytes: size of wasm memory, inUseBytes: bytes malloc'd }. */
  memory() {
    return { heapBytes: this._core.HEAPU8.byteLength, inUseBytes: this._core.heapInUse() };
  }
}

function makeClasses(rt) {
  const core = rt._core;

  /**
   * Base of every layer: owns one native module (its parameters and scratch).
   * Parameters use torch's state_dict keys.
   */
  class Module {
    /** Takes ownership of a freshly created native handle, or throws its error. */
    _adopt(h, kind, args = null) {
      if (h.code() !== 0) {
        let message = h.message();
        // Name the constructor arguments when the native message cannot (e.g. a
        // parameter too large to allocate): "Linear(inFeatures=…, …): …".
        if (args && !Object.keys(args).some((k) => message.includes(k))) {
          message = `${kind}(${Object.entries(args).map(([k, v]) => `${k}=${v}`).join(', ')}): ${message}`;
        }
        const err = new AttnWasmError(NATIVE_CODES[h.code()] ?? 'ERR_INTERNAL', message);
        h.delete();
        throw err;
      }
      this._h = h;
      this._kind = kind;
    }

    _handle() {
      if (!this._h) throw new AttnWasmError('ERR_DISPOSED', `${this._kind}: used after dispose()`);
      return this._h;
    }

    /** The torch state_dict keys this module expects, with their shapes. */
    parameterShapes() {
      const h = this._handle();
      const out = {};
      for (const name of h.paramNames()) out[name] = h.paramShape(name);
      return out;
    }

    /**
     * Replaces all parameters from a torch-style state_dict (object or Map of
     * exact torch keys → { data: Float32Array, shape }). All or nothing: rejects
     * missing, unexpected and mis-shaped entries by name (ERR_STATE_DICT).
     */
    loadStateDict(stateDict) {
      const h = this._handle();
      const entries = stateDictEntries(stateDict, 'stateDict');
      rt._withInputs(
        entries.map(([, t]) => t),
        (ptrs) => rt._take(h.loadStateDict(entries.map(([k]) => k), ptrs, entries.map(([, t]) => t.shape))),
      );
    }

    /**
     * Internal: the parameters from the tensors of a file handed out by
     * rt._withFile whose names start with `prefix` (prefix removed), filled
     * natively with loadStateDict's checks and messages.
     */
    _loadFromFile(file, prefix = '') {
      rt._take(core.moduleLoadSafetensors(this._handle(), file, prefix));
    }

    /** A copy of the parameters as a torch-style state_dict object. */
    stateDict() {
      const h = this._handle();
      const out = {};
      for (const name of h.paramNames()) out[name] = { data: h.paramData(name).slice(), shape: h.paramShape(name) };
      return out;
    }

    /** Frees the native memory. Idempotent; later use throws ERR_DISPOSED. */
    dispose() {
      if (this._h) {
        this._h.delete();
        this._h = null;
      }
    }

    [disposeSymbol]() {
      this.dispose();
    }
  }

  /**
   * torch.nn.MultiheadAttention (PyTorch 2.x semantics), inference only.
   * Masks: bool (Uint8Array) **true = masked** (not allowed to attend), float = added.
   */
  class MultiheadAttention extends Module {
    /**
     * @param {number} embedDim
     * @param {number} numHeads
     * @param {{dropout?: number, bias?: boolean, addBiasKv?: boolean, addZeroAttn?: boolean,
     *          kdim?: number|null, vdim?: number|null, batchFirst?: boolean}} [options]
     */
    constructor(embedDim, numHeads, options) {
      super();
      const o = checkOptions(
        options,
        ['dropout', 'bias', 'addBiasKv', 'addZeroAttn', 'kdim', 'vdim', 'batchFirst'],
        'MultiheadAttention',
      );
      checkInt(embedDim, 'embedDim', { min: 1 });
      checkInt(numHeads, 'numHeads', { min: 1 });
      if (embedDim % numHeads !== 0) {
        throw new AttnWasmError(
          'ERR_INVALID_ARGUMENT',
          `embedDim: must be divisible by numHeads (${numHeads}), got ${embedDim}`,
        );
      }
      const kdim = o.kdim == null ? embedDim : checkInt(o.kdim, 'kdim', { min: 1 });
      const vdim = o.vdim == null ? embedDim : checkInt(o.vdim, 'vdim', { min: 1 });
      const dropout = checkProbability(o.dropout, 'dropout');
      const bias = checkBool(o.bias, 'bias', true);
      const addBiasKv = checkBool(o.addBiasKv, 'addBiasKv', false);
      const addZeroAttn = checkBool(o.addZeroAttn, 'addZeroAttn', false);
      const batchFirst = checkBool(o.batchFirst, 'batchFirst', false);
      this._adopt(
        core.createMha(embedDim, numHeads, dropout, bias, addBiasKv, addZeroAttn, kdim, vdim, batchFirst),
        'MultiheadAttention',
        { embedDim, numHeads, kdim, vdim },
      );
      /** @readonly */ this.embedDim = embedDim;
      /** @readonly */ this.numHeads = numHeads;
      /** @readonly */ this.headDim = embedDim / numHeads;
      /** @readonly */ this.kdim = kdim;
      /** @readonly */ this.vdim = vdim;
      /** @readonly */ this.dropout = dropout;
      /** @readonly */ this.bias = bias;
      /** @readonly */ this.addBiasKv = addBiasKv;
      /** @readonly */ this.addZeroAttn = addZeroAttn;
      /** @readonly */ this.batchFirst = batchFirst;
    }

    /**
     * Same arguments and defaults as torch's forward (needWeights defaults to true).
     * @returns {{output: Tensor, weights: Tensor|null}}
     */
    forward(query, key, value, options) {
      const h = this._handle();
      const o = checkOptions(
        options,
        ['keyPaddingMask', 'needWeights', 'attnMask', 'averageAttnWeights', 'isCausal'],
        'MultiheadAttention.forward',
      );
      const q = checkTensor(query, 'query', 'float');
      const k = checkTensor(key, 'key', 'float');
      const v = checkTensor(value, 'value', 'float');
      const kpm = optionalMask(o.keyPaddingMask, 'keyPaddingMask');
      const am = optionalMask(o.attnMask, 'attnMask');
      const needWeights = checkBool(o.needWeights, 'needWeights', true);
      const average = checkBool(o.averageAttnWeights, 'averageAttnWeights', true);
      const isCausal = checkBool(o.isCausal, 'isCausal', false);
      // (A self-attention's query, key and value are copied once and share an
      // address: the native side then projects them in one GEMM.)
      const outs = rt._withInputs([q, k, v, kpm, am], ([qp, kp, vp, kpmp, amp]) => rt._take(
        core.mhaForward(
          h, qp, q.shape, kp, k.shape, vp, v.shape,
          kpmp, kpm ? kpm.dtype : 0, kpm ? kpm.shape : [],
          amp, am ? am.dtype : 0, am ? am.shape : [],
          needWeights, average, isCausal,
        ),
      ));
      return { output: outs[0], weights: needWeights ? outs[1] : null };
    }
  }

  /** Runs a single-output forward of a module handle. */
  function forward1(h, fn, tensors, extra = {}) {
    return rt._run(tensors, extra, (args) => rt._take(core[fn](h, args)))[0];
  }
  function forwardX(h, fn, tensors) {
    return rt._take(rt._run(tensors, {}, (args) => core[fn](h, args.x)))[0];
  }

  /** torch.nn.Linear: y = x · weight^T + bias. Keys: weight (out, in), bias (out). */
  class Linear extends Module {
    /** @param {number} inFeatures @param {number} outFeatures @param {{bias?: boolean}} [options] */
    constructor(inFeatures, outFeatures, options) {
      super();
      const o = checkOptions(options, ['bias'], 'Linear');
      checkInt(inFeatures, 'inFeatures');
      checkInt(outFeatures, 'outFeatures');
      const bias = checkBool(o.bias, 'bias', true);
      this._adopt(core.createLinear(inFeatures, outFeatures, bias), 'Linear', { inFeatures, outFeatures });
      Object.assign(this, { inFeatures, outFeatures, bias });
    }
    /** x (…, inFeatures) → (…, outFeatures) */
    forward(x) {
      return forwardX(this._handle(), 'linearForward', { x: checkTensor(x, 'input', 'float') });
    }
  }

  /** torch.nn.LayerNorm over the last dim. Keys: weight, bias. */
  class LayerNorm extends Module {
    /**
     * @param {number} normalizedShape
     * @param {{eps?: number, elementwiseAffine?: boolean, bias?: boolean}} [options]
     */
    constructor(normalizedShape, options) {
      super();
      const o = checkOptions(options, ['eps', 'elementwiseAffine', 'bias'], 'LayerNorm');
      if (Array.isArray(normalizedShape)) {
        if (normalizedShape.length !== 1) {
          throw new AttnWasmError('ERR_INVALID_ARGUMENT', `normalizedShape: only the last dim is supported, expected one int, got [${normalizedShape}]`);
        }
        [normalizedShape] = normalizedShape;
      }
      checkInt(normalizedShape, 'normalizedShape');
      const eps = checkNonNegative(o.eps, 'eps', 1e-5);
      const elementwiseAffine = checkBool(o.elementwiseAffine, 'elementwiseAffine', true);
      const bias = checkBool(o.bias, 'bias', true);
      this._adopt(core.createLayerNorm(normalizedShape, eps, elementwiseAffine, bias), 'LayerNorm', { normalizedShape });
      Object.assign(this, { normalizedShape, eps, elementwiseAffine, bias });
    }
    forward(x) {
      return forwardX(this._handle(), 'layerNormForward', { x: checkTensor(x, 'input', 'float') });
    }
  }

  /** torch.nn.Embedding. Key: weight (numEmbeddings, embeddingDim). Ids: Int32Array. */
  class Embedding extends Module {
    /** @param {number} numEmbeddings @param {number} embeddingDim @param {{paddingIdx?: number|null}} [options] */
    constructor(numEmbeddings, embeddingDim, options) {
      super();
      const o = checkOptions(options, ['paddingIdx'], 'Embedding');
      checkInt(numEmbeddings, 'numEmbeddings');
      checkInt(embeddingDim, 'embeddingDim');
      const paddingIdx = o.paddingIdx == null ? null : checkInt(o.paddingIdx, 'paddingIdx', { min: -numEmbeddings, max: numEmbeddings - 1 });
      this._adopt(core.createEmbedding(numEmbeddings, embeddingDim, paddingIdx ?? 0, paddingIdx !== null), 'Embedding', { numEmbeddings, embeddingDim });
      Object.assign(this, { numEmbeddings, embeddingDim, paddingIdx });
    }
    /** ids (…) Int32Array → (…, embeddingDim); an id out of range throws naming its index. */
    forward(ids) {
      return forwardX(this._handle(), 'embeddingForward', { x: checkTensor(ids, 'input', 'ids') });
    }
  }

  /** torch.nn.ReLU */
  class ReLU {
    forward(x) { return rt.relu(x); }
  }

  /** torch.nn.GELU({ approximate: 'none' | 'tanh' }) */
  class GELU {
    constructor(options) {
      const o = checkOptions(options, ['approximate'], 'GELU');
      this.approximate = o.approximate === undefined ? 'none' : o.approximate;
      rt.gelu({ data: new Float32Array(0), shape: [0] }, { approximate: this.approximate });
    }
    forward(x) { return rt.gelu(x, { approximate: this.approximate }); }
  }

  /** torch.nn.Dropout: the identity at inference (returns a copy). */
  class Dropout {
    constructor(p = 0.5) {
      this.p = checkProbability(p, 'p');
    }
    forward(x) {
      const t = checkTensor(x, 'input', 'float');
      return { data: t.data.slice(), shape: [...t.shape] };
    }
  }

  const LAYER_OPTIONS = ['dimFeedforward', 'dropout', 'activation', 'layerNormEps', 'batchFirst', 'normFirst', 'bias'];

  function layerConfig(dModel, nhead, o) {
    checkInt(dModel, 'dModel');
    checkInt(nhead, 'nhead');
    if (dModel % nhead !== 0) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `dModel: must be divisible by nhead (${nhead}), got ${dModel}`);
    }
    const activation = o.activation === undefined ? 'relu' : o.activation;
    if (!['relu', 'gelu', 'gelu_tanh'].includes(activation)) {
      throw rangeError(`activation: expected 'relu', 'gelu' or 'gelu_tanh', got ${describe(activation) === 'string' ? `'${activation}'` : describe(activation)}`);
    }
    return {
      dModel,
      nhead,
      dimFeedforward: o.dimFeedforward === undefined ? 2048 : checkInt(o.dimFeedforward, 'dimFeedforward'),
      dropout: o.dropout === undefined ? 0.1 : checkProbability(o.dropout, 'dropout'),
      activation,
      layerNormEps: checkNonNegative(o.layerNormEps, 'layerNormEps', 1e-5),
      batchFirst: checkBool(o.batchFirst, 'batchFirst', false),
      normFirst: checkBool(o.normFirst, 'normFirst', false),
      bias: checkBool(o.bias, 'bias', true),
    };
  }

  /** torch.nn.TransformerEncoderLayer (inference). Keys: self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*. */
  class TransformerEncoderLayer extends Module {
    constructor(dModel, nhead, options) {
      super();
      const cfg = layerConfig(dModel, nhead, checkOptions(options, LAYER_OPTIONS, 'TransformerEncoderLayer'));
      this._adopt(core.createEncoderLayer(cfg), 'TransformerEncoderLayer', { dModel, nhead, dimFeedforward: cfg.dimFeedforward });
      /** @readonly */ this.config = cfg;
    }
    /** src (S, N, E) | (N, S, E) if batchFirst | (S, E) → same shape. */
    forward(src, options) {
      const o = checkOptions(options, ['srcMask', 'srcKeyPaddingMask', 'isCausal'], 'TransformerEncoderLayer.forward');
      return forward1(this._handle(), 'encoderLayerForward', {
        src: checkTensor(src, 'src', 'float'),
        srcMask: optionalMask(o.srcMask, 'srcMask'),
        srcKeyPaddingMask: optionalMask(o.srcKeyPaddingMask, 'srcKeyPaddingMask'),
      }, { isCausal: checkBool(o.isCausal, 'isCausal', false) });
    }
  }

  function decoderArgs(o, where) {
    return {
      tgtMask: optionalMask(o.tgtMask, 'tgtMask'),
      memoryMask: optionalMask(o.memoryMask, 'memoryMask'),
      tgtKeyPaddingMask: optionalMask(o.tgtKeyPaddingMask, 'tgtKeyPaddingMask'),
      memoryKeyPaddingMask: optionalMask(o.memoryKeyPaddingMask, 'memoryKeyPaddingMask'),
    };
  }
  function decoderFlags(o) {
    return {
      tgtIsCausal: checkBool(o.tgtIsCausal, 'tgtIsCausal', false),
      memoryIsCausal: checkBool(o.memoryIsCausal, 'memoryIsCausal', false),
    };
  }
  const DECODER_FORWARD = ['tgtMask', 'memoryMask', 'tgtKeyPaddingMask', 'memoryKeyPaddingMask', 'tgtIsCausal', 'memoryIsCausal'];

  /** torch.nn.TransformerDecoderLayer (inference). Keys: self_attn.*, multihead_attn.*, linear1/2.*, norm1-3.*. */
  class TransformerDecoderLayer extends Module {
    constructor(dModel, nhead, options) {
      super();
      const cfg = layerConfig(dModel, nhead, checkOptions(options, LAYER_OPTIONS, 'TransformerDecoderLayer'));
      this._adopt(core.createDecoderLayer(cfg), 'TransformerDecoderLayer', { dModel, nhead, dimFeedforward: cfg.dimFeedforward });
      /** @readonly */ this.config = cfg;
    }
    /** tgt (T, N, E) …, memory (S, N, E) … → like tgt. */
    forward(tgt, memory, options) {
      const o = checkOptions(options, DECODER_FORWARD, 'TransformerDecoderLayer.forward');
      return forward1(this._handle(), 'decoderLayerForward', {
        tgt: checkTensor(tgt, 'tgt', 'float'),
        memory: checkTensor(memory, 'memory', 'float'),
        ...decoderArgs(o),
      }, decoderFlags(o));
    }
  }

  /** Every layer of a new stack a copy of `layer` (torch deep-copies it), its final norm of `norm`: natively. */
  function copyIntoStack(stack, layer, norm, encoder) {
    rt._take(core.stackCopyFrom(stack._handle(), layer._handle(), norm ? norm._handle() : null, encoder));
  }

  function checkStackArgs(layer, LayerClass, numLayers, o, where) {
    if (!(layer instanceof LayerClass)) {
      throw typeError(`${where}: expected a ${LayerClass.name} as the layer to copy, got ${describe(layer)}`);
    }
    if (!layer._h) throw new AttnWasmError('ERR_DISPOSED', `${where}: the ${LayerClass.name} was disposed`);
    checkInt(numLayers, 'numLayers', { min: 0, max: 1000 });
    const norm = o.norm === undefined ? null : o.norm;
    if (norm !== null && !(norm instanceof LayerNorm)) throw typeError(`norm: expected a LayerNorm or null, got ${describe(norm)}`);
    if (norm && !norm._h) throw new AttnWasmError('ERR_DISPOSED', 'norm: the LayerNorm was disposed');
    if (norm && (norm.normalizedShape !== layer.config.dModel || !norm.elementwiseAffine)) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `norm: expected LayerNorm(${layer.config.dModel}) with elementwiseAffine, got LayerNorm(${norm.normalizedShape})`);
    }
    if (norm && norm.bias !== layer.config.bias) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `norm: bias must match the layer's bias option (${layer.config.bias})`);
    }
    return norm;
  }

  /**
   * torch.nn.TransformerEncoder: numLayers copies of `encoderLayer` (weights
   * copied, as torch's deepcopy) and an optional final LayerNorm `norm`.
   * Keys: layers.N.…, norm.….
   */
  class TransformerEncoder extends Module {
    constructor(encoderLayer, numLayers, options) {
      super();
      const o = checkOptions(options, ['norm'], 'TransformerEncoder');
      const norm = checkStackArgs(encoderLayer, TransformerEncoderLayer, numLayers, o, 'encoderLayer');
      this._adopt(core.createEncoder(encoderLayer.config, numLayers, !!norm, norm ? norm.eps : 1e-5), 'TransformerEncoder', { numLayers });
      copyIntoStack(this, encoderLayer, norm, true);
      /** @readonly */ this.config = encoderLayer.config;
      /** @readonly */ this.numLayers = numLayers;
    }
    /** src → same shape. Options as torch: mask, srcKeyPaddingMask, isCausal. */
    forward(src, options) {
      const o = checkOptions(options, ['mask', 'srcKeyPaddingMask', 'isCausal'], 'TransformerEncoder.forward');
      return forward1(this._handle(), 'encoderForward', {
        src: checkTensor(src, 'src', 'float'),
        mask: optionalMask(o.mask, 'mask'),
        srcKeyPaddingMask: optionalMask(o.srcKeyPaddingMask, 'srcKeyPaddingMask'),
      }, { isCausal: checkBool(o.isCausal, 'isCausal', false) });
    }

    /**
     * forward() that also returns each layer's self-attention weights per head,
     * (N, H, S, S) or (H, S, S) unbatched — for attention maps. Not in torch.
     * @returns {{output: Tensor, attentionWeights: Tensor[]}}
     */
    forwardWithAttention(src, options) {
      const o = checkOptions(options, ['mask', 'srcKeyPaddingMask', 'isCausal'], 'TransformerEncoder.forwardWithAttention');
      const h = this._handle();
      const outs = rt._run({
        src: checkTensor(src, 'src', 'float'),
        mask: optionalMask(o.mask, 'mask'),
        srcKeyPaddingMask: optionalMask(o.srcKeyPaddingMask, 'srcKeyPaddingMask'),
      }, { isCausal: checkBool(o.isCausal, 'isCausal', false) }, (args) => rt._take(core.encoderForwardWithAttention(h, args)));
      return { output: outs[0], attentionWeights: outs.slice(1) };
    }
  }

  /** torch.nn.TransformerDecoder: numLayers copies of `decoderLayer`, optional final `norm`. */
  class TransformerDecoder extends Module {
    constructor(decoderLayer, numLayers, options) {
      super();
      const o = checkOptions(options, ['norm'], 'TransformerDecoder');
      const norm = checkStackArgs(decoderLayer, TransformerDecoderLayer, numLayers, o, 'decoderLayer');
      this._adopt(core.createDecoder(decoderLayer.config, numLayers, !!norm, norm ? norm.eps : 1e-5), 'TransformerDecoder', { numLayers });
      copyIntoStack(this, decoderLayer, norm, false);
      /** @readonly */ this.config = decoderLayer.config;
      /** @readonly */ this.numLayers = numLayers;
    }
    forward(tgt, memory, options) {
      const o = checkOptions(options, DECODER_FORWARD, 'TransformerDecoder.forward');
      return forward1(this._handle(), 'decoderForward', {
        tgt: checkTensor(tgt, 'tgt', 'float'),
        memory: checkTensor(memory, 'memory', 'float'),
        ...decoderArgs(o),
      }, decoderFlags(o));
    }
  }

  /**
   * torch.nn.Transformer (inference): encoder and decoder stacks, each with a final LayerNorm.
   * Keys: encoder.layers.N.…, encoder.norm.…, decoder.layers.N.…, decoder.norm.….
   */
  class Transformer extends Module {
    constructor(options) {
      super();
      const o = checkOptions(options, ['dModel', 'nhead', 'numEncoderLayers', 'numDecoderLayers', ...LAYER_OPTIONS], 'Transformer');
      const cfg = layerConfig(o.dModel === undefined ? 512 : o.dModel, o.nhead === undefined ? 8 : o.nhead, o);
      const numEncoderLayers = o.numEncoderLayers === undefined ? 6 : checkInt(o.numEncoderLayers, 'numEncoderLayers', { min: 0, max: 1000 });
      const numDecoderLayers = o.numDecoderLayers === undefined ? 6 : checkInt(o.numDecoderLayers, 'numDecoderLayers', { min: 0, max: 1000 });
      this._adopt(core.createTransformer(cfg, numEncoderLayers, numDecoderLayers), 'Transformer', { dModel: cfg.dModel, nhead: cfg.nhead, dimFeedforward: cfg.dimFeedforward, numEncoderLayers, numDecoderLayers });
      /** @readonly */ this.config = { ...cfg, numEncoderLayers, numDecoderLayers };
    }
    /** src (S, N, E), tgt (T, N, E) (or batchFirst / unbatched) → like tgt. */
    forward(src, tgt, options) {
      const o = checkOptions(options, ['srcMask', 'srcKeyPaddingMask', 'srcIsCausal', ...DECODER_FORWARD], 'Transformer.forward');
      return forward1(this._handle(), 'transformerForward', {
        src: checkTensor(src, 'src', 'float'),
        tgt: checkTensor(tgt, 'tgt', 'float'),
        srcMask: optionalMask(o.srcMask, 'srcMask'),
        srcKeyPaddingMask: optionalMask(o.srcKeyPaddingMask, 'srcKeyPaddingMask'),
        ...decoderArgs(o),
      }, { srcIsCausal: checkBool(o.srcIsCausal, 'srcIsCausal', false), ...decoderFlags(o) });
    }
  }

  /**
   * Fixed sinusoidal positions ("Attention Is All You Need", the PyTorch tutorial's
   * PositionalEncoding without dropout): forward(x) = x + PE[:L]. No parameters.
   */
  class SinusoidalPositionalEncoding extends Module {
    /** @param {number} dModel @param {{maxLen?: number, batchFirst?: boolean}} [options] */
    constructor(dModel, options) {
      super();
      const o = checkOptions(options, ['maxLen', 'batchFirst'], 'SinusoidalPositionalEncoding');
      checkInt(dModel, 'dModel');
      const maxLen = o.maxLen === undefined ? 5000 : checkInt(o.maxLen, 'maxLen');
      const batchFirst = checkBool(o.batchFirst, 'batchFirst', false);
      this._adopt(core.createSinusoidalPE(dModel, maxLen, batchFirst), 'SinusoidalPositionalEncoding', { dModel, maxLen });
      Object.assign(this, { dModel, maxLen, batchFirst });
    }
    forward(x) {
      return forwardX(this._handle(), 'positionalForward', { x: checkTensor(x, 'input', 'float') });
    }
  }

  /** Learned positions (ViT's pos_embedding as an nn.Embedding over 0..L−1): x + weight[:L]. Key: weight. */
  class LearnedPositionalEmbedding extends Module {
    /** @param {number} maxLen @param {number} dModel @param {{batchFirst?: boolean}} [options] */
    constructor(maxLen, dModel, options) {
      super();
      const o = checkOptions(options, ['batchFirst'], 'LearnedPositionalEmbedding');
      checkInt(maxLen, 'maxLen');
      checkInt(dModel, 'dModel');
      const batchFirst = checkBool(o.batchFirst, 'batchFirst', false);
      this._adopt(core.createLearnedPE(maxLen, dModel, batchFirst), 'LearnedPositionalEmbedding', { maxLen, dModel });
      Object.assign(this, { dModel, maxLen, batchFirst });
    }
    forward(x) {
      return forwardX(this._handle(), 'positionalForward', { x: checkTensor(x, 'input', 'float') });
    }
  }

  /**
   * ViT stem: Conv2d(inChannels, embedDim, kernel = stride = patchSize) + flatten,
   * (B, C, H, W) → (B, H'·W' [+1], embedDim). Keys: cls_token, proj.weight, proj.bias.
   */
  class PatchEmbedding extends Module {
    /**
     * @param {number} inChannels @param {number} embedDim @param {number} patchSize
     * @param {{bias?: boolean, classToken?: boolean}} [options]
     */
    constructor(inChannels, embedDim, patchSize, options) {
      super();
      const o = checkOptions(options, ['bias', 'classToken'], 'PatchEmbedding');
      checkInt(inChannels, 'inChannels');
      checkInt(embedDim, 'embedDim');
      checkInt(patchSize, 'patchSize', { min: 1, max: 4096 });
      const bias = checkBool(o.bias, 'bias', true);
      const classToken = checkBool(o.classToken, 'classToken', false);
      this._adopt(core.createPatchEmbedding(inChannels, embedDim, patchSize, bias, classToken), 'PatchEmbedding', { inChannels, embedDim, patchSize });
      Object.assign(this, { inChannels, embedDim, patchSize, bias, classToken });
    }
    forward(images) {
      return forwardX(this._handle(), 'patchEmbeddingForward', { x: checkTensor(images, 'images', 'float') });
    }
  }

  return {
    Module, MultiheadAttention, Linear, LayerNorm, Embedding, ReLU, GELU, Dropout,
    TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder, Transformer,
    SinusoidalPositionalEncoding, LearnedPositionalEmbedding, PatchEmbedding,
  };
}

// ---- threads: which build init() loads ----
// Two builds of the same C++: dist/attnwasm_core (single-threaded, loads
// anywhere) and dist/attnwasm_core_mt (pthreads: needs SharedArrayBuffer,
// i.e. Node or a cross-origin-isolated page; its Web Workers run
// dist/attnwasm_core_mt.worker.js). index.js names both with literal
// specifiers so that bundlers see them; the single-thread path never loads
// the pthreads glue.
const NODE_OS = 'node:os';
/** Most threads `threads: 'auto'` picks (only 2-core machines were measured). */
const AUTO_MAX_THREADS = 4;
const MAX_THREADS = 64; // src/core/parallel.h kMaxThreads

async function logicalCores() {
  if (isNode) {
    const os = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_OS);
    return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  }
  return typeof navigator === 'object' && navigator.hardwareConcurrency > 0 ? navigator.hardwareConcurrency : 1;
}

/**
 * Decides the thread count for init(): { threads, reason } where reason says
 * why a single thread is used (null when threads > 1).
 */
async function planThreads(requested) {
  if (requested === undefined) requested = DEFAULT_THREADS;
  if (requested !== 'auto') {
    checkInt(requested, 'threads', { min: 1, max: MAX_THREADS });
    if (requested === 1) return { threads: 1, reason: 'threads: 1 requested' };
  }
  if (typeof SharedArrayBuffer !== 'function') {
    return {
      threads: 1,
      reason: isNode || globalThis.crossOriginIsolated === true
        ? 'SharedArrayBuffer unavailable'
        : 'not cross-origin isolated (COOP/COEP headers missing): SharedArrayBuffer unavailable',
    };
  }
  if (!isNode && globalThis.crossOriginIsolated !== true) {
    return { threads: 1, reason: 'not cross-origin isolated (COOP/COEP headers missing)' };
  }
  if (!isNode && typeof Worker !== 'function') return { threads: 1, reason: 'Worker unavailable in this context' };
  if (requested !== 'auto') return { threads: requested, reason: null };
  const cores = await logicalCores();
  if (cores < 2) return { threads: 1, reason: `threads: 'auto' on ${cores} logical core` };
  return { threads: Math.min(cores, AUTO_MAX_THREADS), reason: null };
}

/**
 * Node keeps running while a worker_threads Worker is referenced, and the
 * Emscripten glue never unrefs its pool workers (idle threads wait in
 * Atomics.wait): unref them all, so `node script.mjs` and `node --test` exit.
 */
function unrefWorkers(core) {
  const pt = core.PThread;
  if (!isNode || !pt) return;
  for (const w of [...pt.unusedWorkers, ...pt.runningWorkers]) if (typeof w.unref === 'function') w.unref();
}

/**
 * In Node the pthreads glue sets globalThis.Worker (worker_threads.Worker) for
 * its own use; the user's process should not see it. Saves the global's state
 * so restore() can put it back.
 */
function saveWorkerGlobal() {
  const desc = Object.getOwnPropertyDescriptor(globalThis, 'Worker');
  return {
    restore() {
      if (!isNode) return;
      if (desc) Object.defineProperty(globalThis, 'Worker', desc);
      else delete globalThis.Worker;
    },
  };
}

/**
 * The thread count init() uses when `threads` is not given: 'auto'. Measured
 * on 2 cores (bench/README.md): in Node 2 threads ran the S3/S4 MHA and
 * encoder layers 1.5–1.9× faster than one, and small shapes no slower; in
 * Chromium 1.2–1.4×. Browsers only get threads on cross-origin-isolated pages,
 * so elsewhere 'auto' quietly means one thread (capabilities() says why).
 */
const DEFAULT_THREADS = 'auto';

/**
 * How long init() waits, by default, for the pthreads build's workers to
 * start before it falls back to the single-thread build. Measured start-up:
 * ~0.1 s in Node and headless Chromium on 2 cores; the bound is for a worker
 * script that never arrives (a stalled request), not a slow device.
 */
const THREAD_START_TIMEOUT_MS = 10000;

/**
 * The URL a pool worker starts from. Vite inlines small assets, the worker
 * script among them, as data: URLs; a worker started from a data: URL runs at
 * an opaque origin and cannot import the glue, so it starts from a blob: URL
 * of the same script (the page's origin) instead. Node's Worker takes a file:
 * URL object, a browser's the URL string.
 */
function workerScript(url) {
  if (isNode) return url;
  const s = String(url);
  if (!s.startsWith('data:')) return s;
  const comma = s.indexOf(',');
  const body = s.slice(comma + 1);
  const script = s.slice(0, comma).endsWith(';base64')
    ? Uint8Array.from(atob(body), (c) => c.charCodeAt(0))
    : decodeURIComponent(body);
  return URL.createObjectURL(new Blob([script], { type: 'text/javascript' }));
}

/**
 * Starts the pthreads build — glue factory `createMt`, its compiled
 * `wasmModule` (from `wasmWhere`), `files` { mtWorker, mtGlue } — with
 * `threads - 1` pool workers. Resolves to { core } once every worker has
 * loaded; to { cause } (and stops the workers) when one cannot start: its
 * script fails to load or is refused (a blocked URL, a
 * Content-Security-Policy, a 404), `new Worker` throws, or the workers are
 * not all up within `timeoutMs`; to { failure } (a WasmLoadFailure) when the
 * module does not link with the glue. Never hangs, never rejects.
 */
async function startPthreads(createMt, wasmModule, wasmWhere, files, threads, timeoutMs) {
  const workerName = showUrl(files.mtWorker);
  const workerUrl = workerScript(files.mtWorker);
  const moduleArg = {
    awPoolSize: threads - 1,
    // Each worker imports the glue by this URL (a string: it is posted to the
    // worker), not relative to itself, so a bundler may move the files.
    mainScriptUrlOrBlob: String(files.mtGlue),
    locateFile: (path, dir) => (path.endsWith('.worker.js') ? workerUrl : dir + path),
  };
  const saved = saveWorkerGlobal();
  let ready;
  try {
    // The glue creates the pool workers synchronously inside this call.
    ready = startGlue(createMt, moduleArg, wasmModule, wasmWhere);
  } catch (e) {
    saved.restore();
    return { cause: `creating a Web Worker for ${workerName} failed: ${e && e.message ? e.message : e}` };
  }
  const workers = [...(moduleArg.PThread?.unusedWorkers ?? [])];
  const stopWorkers = () => { for (const w of workers) try { w.terminate(); } catch { /* already gone */ } };
  let timer;
  const failed = new Promise((resolve) => {
    const fail = (cause) => resolve({ cause });
    for (const w of workers) {
      const onError = (e) => fail(`the worker script ${workerName} failed to load${e && e.message ? `: ${e.message}` : ''}`);
      if (typeof w.addEventListener === 'function') w.addEventListener('error', onError);
      else w.on('error', onError);
      if (isNode) {
        // The glue's own handler rethrows from inside an EventEmitter
        // listener, which would end the Node process: keep it, minus the throw.
        let glueOnError = null;
        Object.defineProperty(w, 'onerror', {
          configurable: true,
          get: () => glueOnError,
          set: (fn) => { glueOnError = (e) => { try { fn(e); } catch { /* reported by onError */ } }; },
        });
      }
    }
    timer = setTimeout(() => fail(`the pthread workers did not start within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    const outcome = await Promise.race([ready.then((core) => ({ core }), (failure) => ({ failure })), failed]);
    if (!outcome.core) {
      stopWorkers();
      // A module that comes up after all must not keep its workers either.
      ready.then((late) => { for (const w of [...late.PThread.unusedWorkers, ...late.PThread.runningWorkers]) w.terminate(); }, () => {});
      return outcome;
    }
    outcome.core.setNumThreads(threads);
    // The Worker global the glue uses for later threads (Node: worker_threads).
    outcome.core.awWorkerGlobal = globalThis.Worker;
    return outcome;
  } finally {
    clearTimeout(timer);
    saved.restore();
  }
}

// ---- init(): which .wasm, from where; what a failure says ----

const ST_WASM = 'attnwasm_core.wasm';
const MT_WASM = 'attnwasm_core_mt.wasm';

/**
 * The one-sentence fix of an ERR_WASM_LOAD for `file`, by where the .wasm
 * came from (`origin`: 'wasmUrl', 'wasmBinary', 'embedded', 'installed' — the
 * package's own file in Node — or 'bundled' — the package's file as a page
 * or a bundle locates it).
 */
function loadFix(file, origin, failure) {
  if (failure.kind === 'no-simd') {
    return 'Fix: run it on an engine with WebAssembly SIMD (Chrome/Edge 91+, Firefox 89+, Safari 16.4+, Node 16.4+).';
  }
  switch (origin) {
    case 'wasmUrl':
      return `Fix: init({ wasmUrl }) must be the URL of ${file} itself, of this attnwasm version (node_modules/attnwasm/dist/${file}).`;
    case 'wasmBinary':
      return `Fix: init({ wasmBinary }) must hold the bytes of ${file} of this attnwasm version (node_modules/attnwasm/dist/${file}).`;
    case 'embedded':
      return 'Fix: reinstall attnwasm (its dist/attnwasm_inline.mjs is damaged).';
    case 'installed':
      return `Fix: reinstall attnwasm (its dist/${file} is missing or damaged), or pass init({ wasmBinary }).`;
    default:
      return `Fix: copy node_modules/attnwasm/dist/*.wasm next to your bundle, or pass init({ wasmUrl }) with the URL where ${file} is served (README, "Install and bundle").`;
  }
}

/** AttnWasmError ERR_WASM_LOAD from the failed attempts (WasmLoadFailure) to load `file`. */
function wasmLoadError(file, failures, origin) {
  const [first] = failures;
  const tried = failures.length === 1
    ? `from ${first.where}: ${first.problem}`
    : failures.map((f) => `from ${f.where} (${f.problem})`).join(' nor ');
  return new AttnWasmError('ERR_WASM_LOAD', `${file} did not load ${tried}. ${loadFix(file, origin, first)}`, {
    url: origin === 'wasmBinary' || origin === 'embedded' ? undefined : first.where,
    status: first.status,
    cause: first,
  });
}

/**
 * Compiles the first source that loads and starts `factory`'s glue with it
 * (single-thread build). Throws ERR_WASM_LOAD naming every attempt.
 */
async function startSingleThread(factory, sources, origin) {
  let compiled;
  try {
    compiled = await compileFirst(sources);
  } catch (e) {
    if (!e.failures) throw e;
    throw wasmLoadError(ST_WASM, e.failures, origin);
  }
  try {
    return await startGlue(factory, {}, compiled.module, compiled.where);
  } catch (e) {
    if (e instanceof WasmLoadFailure) throw wasmLoadError(ST_WASM, [e], origin);
    throw e;
  }
}

/**
 * Starts the pthreads build: { core }, or { cause } when it cannot and the
 * single-thread build should take over. A .wasm the caller named (`custom`)
 * that does not load throws ERR_WASM_LOAD instead of falling back.
 */
async function startThreaded(entry, custom, threads, timeoutMs) {
  let createMt;
  try {
    ({ default: createMt } = await entry.importPthreads());
  } catch (e) {
    return { cause: `the pthreads glue did not load (${e && e.message ? e.message : e})` };
  }
  const { sets } = entry.locations();
  const sources = custom ? [custom.source] : sets.map((s) => ({ url: s.mtWasm }));
  let compiled;
  try {
    compiled = await compileFirst(sources);
  } catch (e) {
    if (!e.failures) throw e;
    if (custom) throw wasmLoadError(MT_WASM, e.failures, custom.origin);
    return { cause: `${MT_WASM} did not load (${e.failures.map((f) => `${f.where}: ${f.problem}`).join('; ')})` };
  }
  const files = sets[custom ? 0 : compiled.index];
  const started = await startPthreads(createMt, compiled.module, compiled.where, files, threads, timeoutMs);
  if (started.failure) {
    if (custom) throw wasmLoadError(MT_WASM, [started.failure], custom.origin);
    return { cause: `${MT_WASM} from ${started.failure.where}: ${started.failure.problem}` };
  }
  return started;
}
/** The caller's wasmUrl / wasmBinary: { source, origin, build } or null; `build` is the one `threads` asks for. */
function customWasm(options, requested) {
  const build = requested === undefined || requested === 1 ? 'single-thread' : 'pthreads';
  if (options.wasmBinary !== undefined) {
    return { source: { bytes: checkBytes(options.wasmBinary, 'wasmBinary'), where: 'init({ wasmBinary })' }, origin: 'wasmBinary', build };
  }
  if (options.wasmUrl !== undefined) {
    if (typeof options.wasmUrl !== 'string' && !(options.wasmUrl instanceof URL)) {
      throw typeError(`wasmUrl: expected a string or a URL, got ${describe(options.wasmUrl)}`);
    }
    return { source: { url: options.wasmUrl }, origin: 'wasmUrl', build };
  }
  return null;
}

/**
 * Makes the init() of a package entry. `entry`:
 *   name              its import specifier, for messages ('attnwasm', 'attnwasm/inline')
 *   locations()       index.js: { sets, moved }: the dist/ files' URLs { wasm, mtWasm,
 *                     mtWorker, mtGlue }, candidate sets tried in order, and whether a
 *                     bundler moved this code away from them
 *   importPthreads()  index.js: import() of the pthreads glue
 *   embedded()        inline.js, instead of the two above: a promise of the
 *                     single-thread build's .wasm bytes
 */
export function createInit(entry) {
  const optionNames = entry.embedded ? ['threads'] : ['wasmUrl', 'wasmBinary', 'threads', 'threadStartTimeoutMs'];
  return async function init(options = {}) {
    checkOptions(options, optionNames, 'init');
    const requested = options.threads;
    if (requested !== undefined && requested !== 'auto' && typeof requested !== 'number') {
      throw typeError(`threads: expected an integer or 'auto', got ${describe(requested)}`);
    }
    const timeoutMs = options.threadStartTimeoutMs === undefined
      ? THREAD_START_TIMEOUT_MS
      : checkInt(options.threadStartTimeoutMs, 'threadStartTimeoutMs', { min: 1, max: 600000 });
    const custom = customWasm(options, requested);
    let plan = requested === undefined && custom
      ? { threads: 1, reason: 'wasmUrl/wasmBinary given without threads (single-thread build)' }
      : await planThreads(requested);
    if (entry.embedded && plan.threads > 1) {
      plan = { threads: 1, reason: `${entry.name} embeds the single-thread build only (import 'attnwasm' for threads)` };
    }
    let core;
    if (plan.threads > 1) {
      const started = await startThreaded(entry, custom?.build === 'pthreads' ? custom : null, plan.threads, timeoutMs);
      if (started.core) {
        core = started.core;
        unrefWorkers(core);
      } else {
        plan = { threads: 1, reason: `${started.cause}; running the single-thread build` };
      }
    }
    if (!core) {
      // A wasmUrl/wasmBinary given with threads > 1 names the pthreads build's
      // .wasm: the single-thread one then comes from the package.
      if (custom?.build === 'single-thread') {
        core = await startSingleThread(createAttnwasmModule, [custom.source], custom.origin);
      } else if (entry.embedded) {
        core = await startSingleThread(createAttnwasmModule, [{ bytes: await entry.embedded(), where: `the .wasm embedded in ${entry.name}` }], 'embedded');
      } else {
        const { sets, moved } = entry.locations();
        core = await startSingleThread(createAttnwasmModule, sets.map((s) => ({ url: s.wasm })), isNode && !moved ? 'installed' : 'bundled');
      }
    }
    const rt = new AttnWasm(core);
    rt._threadPlan = plan;
    return rt;
  };
}
