// attnwasm: the public JavaScript API (package entry).
//
// All ergonomics live here; the embind layer (attnwasm_bindings.cpp) is thin.
// Tensors cross the API as plain objects { data, shape }: Float32Array data for
// float tensors, Uint8Array (0/1) for boolean masks. Inputs are copied into
// wasm memory for the duration of one call; outputs are fresh Float32Arrays
// owned by the caller that stay valid after later calls.
// Errors: argument-type problems throw TypeError/RangeError before entering
// wasm; everything the native side rejects throws AttnWasmError. Every thrown
// error has a stable `code` (see ErrorCode) and the module stays usable.

import createAttnwasmModule from '../dist/attnwasm_core.mjs';

/** Stable error codes, by the numeric code of src/core/status.h. */
const NATIVE_CODES = [
  'OK',
  'ERR_INVALID_ARGUMENT',
  'ERR_SHAPE',
  'ERR_DTYPE',
  'ERR_STATE_DICT',
  'ERR_OUT_OF_MEMORY',
];

/**
 * Error thrown for anything the runtime rejects. `code` is stable across
 * versions: ERR_INVALID_ARGUMENT, ERR_SHAPE, ERR_DTYPE, ERR_STATE_DICT,
 * ERR_OUT_OF_MEMORY, ERR_DISPOSED.
 */
export class AttnWasmError extends Error {
  /** @param {string} code @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = 'AttnWasmError';
    this.code = code;
  }
}

function typeError(message) {
  const e = new TypeError(message);
  e.code = 'ERR_INVALID_TYPE';
  return e;
}
function rangeError(message) {
  const e = new RangeError(message);
  e.code = 'ERR_OUT_OF_RANGE';
  return e;
}

const disposeSymbol = Symbol.dispose ?? Symbol.for('Symbol.dispose');
const isNode = typeof process === 'object' && !!process.versions && !!process.versions.node;

function describe(x) {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'Array';
  if (ArrayBuffer.isView(x)) return x.constructor.name;
  if (typeof x === 'object') return x.constructor ? x.constructor.name : 'object';
  return typeof x;
}

function shapeStr(shape) {
  return `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;
}

function checkOptions(options, allowed, where) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw typeError(`${where} options: expected an object, got ${describe(options)}`);
  }
  for (const k of Object.keys(options)) {
    if (!allowed.includes(k)) {
      throw typeError(`${where} options: unknown option '${k}' (expected one of ${allowed.join(', ')})`);
    }
  }
  return options;
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

function optionalMask(m, name) {
  return m == null ? null : checkTensor(m, name, 'mask');
}

function checkInt(v, name, { min = 1, max = 2 ** 31 - 1 } = {}) {
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw typeError(`${name}: expected an integer, got ${typeof v === 'number' ? v : describe(v)}`);
  }
  if (v < min || v > max) throw rangeError(`${name}: expected an integer in [${min}, ${max}], got ${v}`);
  return v;
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
  if (data instanceof Float32Array) dtype = 0;
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
  return entries.map(([k, t]) => [k, checkTensor(t, `${name}['${k}']`, 'float')]);
}

/** The runtime bound to one wasm instance; create it with init(). */
class AttnWasm {
  constructor(core) {
    this._core = core;
    const rt = this;
    const classes = makeClasses(rt);
    /** @type {typeof classes.MultiheadAttention} */
    this.MultiheadAttention = classes.MultiheadAttention;
  }

  /**
   * Copies tensors into one freshly malloc'd block of wasm memory, runs fn
   * with their byte addresses, and frees the block (also on error).
   * Entries may be null (absent optional tensors: address 0).
   */
  _withInputs(tensors, fn) {
    const core = this._core;
    let total = 0;
    const offsets = tensors.map((t) => {
      if (!t) return -1;
      const off = total;
      total += (t.data.byteLength + 7) & ~7;
      return off;
    });
    const base = total ? core._malloc(total) : 0;
    if (total && !base) {
      throw new AttnWasmError('ERR_OUT_OF_MEMORY', `out of memory: cannot copy ${total} bytes of inputs into wasm`);
    }
    try {
      const heap = core.HEAPU8; // re-read: malloc may have grown (replaced) the buffer
      const ptrs = tensors.map((t, i) => {
        if (!t) return 0;
        const p = base + offsets[i];
        heap.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), p);
        return p;
      });
      return fn(ptrs);
    } finally {
      if (base) core._free(base);
    }
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
    const dropoutP = o.dropoutP ?? 0;
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

  /** What this runtime instance uses. */
  capabilities() {
    return {
      simd: true,
      threads: false,
      threadsReason: 'this build is single-threaded',
      crossOriginIsolated: typeof globalThis.crossOriginIsolated === 'boolean' ? globalThis.crossOriginIsolated : false,
      environment: isNode ? 'node' : typeof window === 'object' ? 'browser' : 'worker',
    };
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
    _adopt(h, kind) {
      if (h.code() !== 0) {
        const err = new AttnWasmError(NATIVE_CODES[h.code()] ?? 'ERR_INTERNAL', h.message());
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
      // Self-attention passes the same tensor three times: copy it once.
      const kIn = key === query ? null : k;
      const vIn = value === query || value === key ? null : v;
      const outs = rt._withInputs([q, kIn, vIn, kpm, am], ([qp, kp, vp, kpmp, amp]) => {
        const kAddr = kIn ? kp : qp;
        const vAddr = vIn ? vp : value === query ? qp : kAddr;
        return rt._take(
          core.mhaForward(
            h, qp, q.shape, kAddr, k.shape, vAddr, v.shape,
            kpmp, kpm ? kpm.dtype : 0, kpm ? kpm.shape : [],
            amp, am ? am.dtype : 0, am ? am.shape : [],
            needWeights, average, isCausal,
          ),
        );
      });
      return { output: outs[0], weights: needWeights ? outs[1] : null };
    }
  }

  return { Module, MultiheadAttention };
}

/**
 * Loads the wasm module and returns the runtime.
 * In Node the .wasm is read from the package folder; in browsers it is fetched
 * from next to this module (new URL(…, import.meta.url)), or from `wasmUrl`.
 * @param {{wasmUrl?: string|URL, wasmBinary?: ArrayBuffer|Uint8Array}} [options]
 * @returns {Promise<AttnWasm>}
 */
export async function init(options = {}) {
  checkOptions(options, ['wasmUrl', 'wasmBinary'], 'init');
  const moduleArg = {};
  const wasmUrl = options.wasmUrl ?? new URL('../dist/attnwasm_core.wasm', import.meta.url);
  if (options.wasmBinary) {
    moduleArg.wasmBinary = options.wasmBinary;
  } else if (isNode && String(wasmUrl).startsWith('file:')) {
    const { readFile } = await import('node:fs/promises');
    moduleArg.wasmBinary = await readFile(wasmUrl);
  } else {
    moduleArg.locateFile = (path) => (path.endsWith('.wasm') ? String(wasmUrl) : path);
  }
  const core = await createAttnwasmModule(moduleArg);
  return new AttnWasm(core);
}


