// Cosine similarity of embeddings (aw.cosineSimilarity, also exported by the package): plain JS on results,
// in float64.
import { AttnWasmError, typeError, describe } from './errors.js';
import { shapeStr } from './checks.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A vector or matrix argument of cosineSimilarity → { data, n, d, matrix }. */
function rowsOf(x, name) {
  if (Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView))) {
    if (Array.isArray(x)) {
      x.forEach((v, i) => {
        if (typeof v !== 'number') throw typeError(`${name}[${i}]: expected a number, got ${describe(v)}`);
      });
    } else if (x instanceof BigInt64Array || x instanceof BigUint64Array) {
      throw typeError(`${name}: expected a Float32Array, Float64Array or array of numbers, got ${describe(x)}`);
    }
    return { data: x, n: 1, d: x.length, matrix: false };
  }
  if (!isObject(x) || !Array.isArray(x.shape) || !(x.data instanceof Float32Array || x.data instanceof Float64Array)) {
    throw typeError(`${name}: expected a vector (Float32Array, Float64Array, array of numbers) or a tensor { data: Float32Array, shape: [n, d] }, got ${describe(x)}`);
  }
  const { data, shape } = x;
  if (shape.length < 1 || shape.length > 2 || !shape.every((s) => Number.isInteger(s) && s >= 0)) {
    throw new AttnWasmError('ERR_SHAPE', `${name}.shape: expected [d] or [n, d], got ${JSON.stringify(shape)}`);
  }
  const [n, d] = shape.length === 1 ? [1, shape[0]] : shape;
  if (data.length !== n * d) throw new AttnWasmError('ERR_SHAPE', `${name}: data has ${data.length} elements but shape ${shapeStr(shape)} needs ${n * d}`);
  return { data, n, d, matrix: shape.length === 2 };
}

/**
 * Cosine similarity, in float64: a·b / (‖a‖ ‖b‖), 0 where a norm is 0 (sentence-transformers' cos_sim divides
 * by max(‖x‖, 1e-12) in float32). Two vectors (Float32Array, Float64Array, arrays of numbers or { data, shape:
 * [d] }) → a number; a matrix { data, shape: [n, d] } (embed()'s result) and a matrix [m, d] → { data:
 * Float32Array, shape: [n, m] } (a vector with a matrix counts as one row). Owned by the caller.
 */
export function cosineSimilarity(a, b) {
  const x = rowsOf(a, 'a'), y = rowsOf(b, 'b');
  if (x.d !== y.d) throw new AttnWasmError('ERR_SHAPE', `b: expected vectors of a's length ${x.d}, got ${y.d}`);
  if (x.d === 0) throw new AttnWasmError('ERR_SHAPE', 'a: expected vectors of at least one element, got 0');
  const norms = (m) => Float64Array.from({ length: m.n }, (_, r) => {
    let s = 0;
    for (let j = r * m.d; j < (r + 1) * m.d; j++) s += m.data[j] * m.data[j];
    return Math.sqrt(s);
  });
  const nx = norms(x), ny = norms(y), d = x.d;
  const cos = (r, c) => {
    if (nx[r] === 0 || ny[c] === 0) return 0;
    let s = 0;
    for (let j = 0; j < d; j++) s += x.data[r * d + j] * y.data[c * d + j];
    return s / (nx[r] * ny[c]);
  };
  if (!x.matrix && !y.matrix) return cos(0, 0);
  const out = new Float32Array(x.n * y.n);
  for (let r = 0; r < x.n; r++) for (let c = 0; c < y.n; c++) out[r * y.n + c] = cos(r, c);
  return { data: out, shape: [x.n, y.n] };
}
