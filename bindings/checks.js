// Every argument check of the package's JS (types, integer-ness, typed-array
// class, data length vs shape: what only JS can check; and the ranges of the
// few arguments that never reach wasm: threads, the helpers' options) and
// small helpers. errors.js holds the error
// classes. Every range and divisibility rule of the layers and functions
// lives once, natively (src/core/rules.h, src/core/limits.h and the
// Init/Forward that apply them); its errors come back through boundary.js.
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { NATIVE_CODES, DTYPE } from './native_constants.js';
import * as boundary from './boundary.js';

export { NATIVE_CODES, DTYPE };

export const disposeSymbol = Symbol.dispose ?? Symbol.for('Symbol.dispose');

export const isNode = typeof process === 'object' && !!process.versions && !!process.versions.node;

export function shapeStr(shape) {
  return `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;
}

export function checkBool(v, name, dflt) {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw typeError(`${name}: expected a boolean, got ${describe(v)}`);
  return v;
}

/** A number (its range is the native side's rule), or dflt when undefined. */
export function checkNumber(v, name, dflt) {
  if (v === undefined) return dflt;
  if (typeof v !== 'number') throw typeError(`${name}: expected a number, got ${describe(v)}`);
  return v;
}

/**
 * An integer that crosses into wasm exactly: a safe integer (|v| <= 2^53 - 1),
 * whose range is the native side's rule; or, with { min, max }, an argument
 * that never reaches wasm (threads, the helpers' sizes), in that range.
 */
export function checkInteger(v, name, range = null) {
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw typeError(`${name}: expected an integer, got ${typeof v === 'number' ? v : describe(v)}`);
  }
  if (range && (v < range.min || v > range.max)) throw rangeError(`${name}: expected an integer in [${range.min}, ${range.max}], got ${v}`);
  if (!Number.isSafeInteger(v)) throw rangeError(`${name}: expected a safe integer (at most 2^53 - 1 in size), got ${v}`);
  return v;
}

/** A probability in [0, 1] (the JS-only Dropout layer's p, which has no native twin). */
export function checkProbability(v, name) {
  if (v === undefined) return 0;
  if (typeof v !== 'number') throw typeError(`${name}: expected a number, got ${describe(v)}`);
  if (!(v >= 0 && v <= 1)) throw rangeError(`${name}: expected a probability in [0, 1], got ${v}`);
  return v;
}

export function optionalMask(m, name, rt) {
  return m == null ? null : checkTensor(m, name, 'mask', rt);
}


/**
 * Validates a tensor argument. kind 'float': Float32Array data; kind 'mask':
 * Uint8Array (bool, 0/1) or Float32Array (additive); kind 'ids': Int32Array.
 * Returns { data, shape, dtype } with dtype one of DTYPE.
 * The shape's range rule (dims >= 0, at most 2^29 elements) is native
 * (src/core/rules.h CheckShape), applied by every call that takes the
 * tensor; when data and shape disagree, the native shape rule is asked first, so a
 * shape it refuses is reported as such rather than as a length mismatch.
 */
export function checkTensor(t, name, kind, rt) {
  if (t === null || typeof t !== 'object' || Array.isArray(t) || ArrayBuffer.isView(t)) {
    throw typeError(`${name}: expected a tensor object { data, shape }, got ${describe(t)}`);
  }
  const { data, shape } = t;
  if (!Array.isArray(shape)) throw typeError(`${name}.shape: expected an array of integers, got ${describe(shape)}`);
  let numel = 1;
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i];
    checkInteger(d, `${name}.shape[${i}]`);
    numel *= d;
  }
  let dtype;
  if (kind === 'ids') {
    if (!(data instanceof Int32Array)) {
      throw new AttnWasmError('ERR_DTYPE', `${name}.data: expected an Int32Array of token ids, got ${describe(data)}`);
    }
    dtype = DTYPE.I32;
  } else if (data instanceof Float32Array) dtype = DTYPE.F32;
  else if (kind === 'mask' && data instanceof Uint8Array) dtype = DTYPE.BOOL;
  else {
    const want = kind === 'mask' ? 'a Uint8Array (bool, 0/1) or Float32Array (additive)' : 'a Float32Array';
    throw new AttnWasmError('ERR_DTYPE', `${name}.data: expected ${want}, got ${describe(data)}`);
  }
  if (data.length !== numel) {
    boundary.rules.shape(rt, name, shape);
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
export function stateDictEntries(sd, name, rt) {
  let entries;
  if (sd instanceof Map) entries = [...sd.entries()];
  else if (sd !== null && typeof sd === 'object' && !Array.isArray(sd)) entries = Object.entries(sd);
  else throw typeError(`${name}: expected an object or Map of name → { data, shape }, got ${describe(sd)}`);
  for (const [k] of entries) {
    if (typeof k !== 'string') throw typeError(`${name}: keys must be strings, got a key of type ${describe(k)}`);
  }
  return entries.map(([k, t]) => [k, checkTensor(t, `${name}['${k}']`, 'float', rt)]);
}

export function checkOptions(options, allowed, where) {
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

/** A finite number (any sign unless min is given): for JS-only arguments (the helpers' options). */
export function checkFinite(v, name, { min = -Infinity, exclusiveMin = false } = {}) {
  if (typeof v !== 'number') throw typeError(`${name}: expected a number, got ${describe(v)}`);
  if (!Number.isFinite(v) || v < min || (exclusiveMin && v === min)) {
    const range = min === -Infinity ? 'a finite number' : `a finite number ${exclusiveMin ? '>' : '>='} ${min}`;
    throw rangeError(`${name}: expected ${range}, got ${v}`);
  }
  return v;
}

/** A typed array of a given class (or one of several) with at least `minLength` elements. */
export function checkArray(v, name, classes, minLength) {
  if (!classes.some((C) => v instanceof C)) {
    throw typeError(`${name}: expected ${classes.map((C) => `a ${C.name}`).join(' or ')}, got ${describe(v)}`);
  }
  if (v.length < minLength) {
    throw new AttnWasmError('ERR_SHAPE', `${name}: expected at least ${minLength} elements, got ${v.length}`);
  }
  return v;
}

/** Bytes argument: Uint8Array (incl. Node Buffer) or ArrayBuffer → Uint8Array. */
export function checkBytes(v, name) {
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  throw typeError(`${name}: expected bytes (a Uint8Array or ArrayBuffer), got ${describe(v)}`);
}
