// Shared helpers of the JS tests: golden decoding and error measurement.
import { readFileSync } from 'node:fs';

const DATA = new URL('../data/', import.meta.url);

const NONFINITE = { inf: Infinity, '-inf': -Infinity, nan: NaN };

/** Decodes a golden tensor {shape, dtype, data} into the API's { data, shape }. */
export function decodeTensor(t) {
  if (t === null || t === undefined) return null;
  if (t.dtype === 'bool') return { data: Uint8Array.from(t.data), shape: t.shape };
  return { data: Float32Array.from(t.data, (x) => (typeof x === 'string' ? NONFINITE[x] : x)), shape: t.shape };
}

export function loadGoldens(file) {
  return JSON.parse(readFileSync(new URL(`goldens/${file}`, DATA), 'utf8'));
}

/** max |a - b| over all elements; Infinity if shapes differ or a NaN appears. */
export function maxAbsDiff(actual, expected) {
  if (JSON.stringify(actual.shape) !== JSON.stringify(expected.shape)) return Infinity;
  let m = 0;
  for (let i = 0; i < expected.data.length; i++) {
    const d = Math.abs(actual.data[i] - expected.data[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}

/** Deterministic pseudo-random Float32Array in [-1, 1). */
export function randomData(n, seed = 1) {
  let s = seed >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    out[i] = (s / 2 ** 32) * 2 - 1;
  }
  return out;
}

export function randomTensor(shape, seed) {
  return { data: randomData(shape.reduce((a, b) => a * b, 1), seed), shape };
}
