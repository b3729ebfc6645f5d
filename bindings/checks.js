// Argument checks the API modules share (types, integer-ness, typed-array
// class, data length vs shape: what only JS can check), the native error
// codes by number, and small helpers. errors.js holds the error classes and
// the generic checks.
import {
  AttnWasmError, typeError, rangeError, describe, checkOptions, checkInt, checkNumber, checkArray, checkBytes,
} from './errors.js';

/** Stable error codes, by the numeric code of src/core/status.h. */
export const NATIVE_CODES = [
  'OK',
  'ERR_INVALID_ARGUMENT',
  'ERR_SHAPE',
  'ERR_DTYPE',
  'ERR_STATE_DICT',
  'ERR_OUT_OF_MEMORY',
  'ERR_OUT_OF_RANGE',
];

/**
 * The Error for a native (code, message): ERR_OUT_OF_RANGE is a RangeError,
 * as the JS-side range errors (errors.js rangeError); any other code an
 * AttnWasmError.
 */
export function nativeError(code, message) {
  const name = NATIVE_CODES[code] ?? 'ERR_INTERNAL';
  return name === 'ERR_OUT_OF_RANGE' ? rangeError(message) : new AttnWasmError(name, message);
}


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

export function checkProbability(v, name) {
  if (v === undefined) return 0;
  if (typeof v !== 'number') throw typeError(`${name}: expected a number, got ${describe(v)}`);
  if (!(v >= 0 && v <= 1)) throw rangeError(`${name}: expected a probability in [0, 1], got ${v}`);
  return v;
}

export function checkNonNegative(v, name, dflt) {
  if (v === undefined) return dflt;
  if (typeof v !== 'number') throw typeError(`${name}: expected a number, got ${describe(v)}`);
  if (!(v >= 0) || !Number.isFinite(v)) throw rangeError(`${name}: expected a finite number >= 0, got ${v}`);
  return v;
}

export function optionalMask(m, name) {
  return m == null ? null : checkTensor(m, name, 'mask');
}

export const MAX_ELEMENTS = 2 ** 29;

/**
 * Validates a tensor argument. kind 'float': Float32Array data; kind 'mask':
 * Uint8Array (bool, 0/1) or Float32Array (additive). Returns
 * { data, shape, dtype } with dtype 0 = float32, 1 = bool.
 */
export function checkTensor(t, name, kind) {
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
export function stateDictEntries(sd, name) {
  let entries;
  if (sd instanceof Map) entries = [...sd.entries()];
  else if (sd !== null && typeof sd === 'object' && !Array.isArray(sd)) entries = Object.entries(sd);
  else throw typeError(`${name}: expected an object or Map of name → { data, shape }, got ${describe(sd)}`);
  for (const [k] of entries) {
    if (typeof k !== 'string') throw typeError(`${name}: keys must be strings, got a key of type ${describe(k)}`);
  }
  return entries.map(([k, t]) => [k, checkTensor(t, `${name}['${k}']`, 'float')]);
}
