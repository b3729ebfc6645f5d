// Token-level timestamps from the alignment heads' cross-attention, as transformers v4.40.2 computes them
// (models/whisper/generation_whisper.py: _extract_token_timestamps, _median_filter, _dynamic_time_warping), in its
// float32 arithmetic on torch 1.13's CPU kernels: the weights (rows, heads, T, S) cropped to numFrames // 2 encoder
// states; normalised over the tokens (torch.std with unbiased=False: Welford in double, rounded; torch.mean: the
// cascade sum below, then a float32 division); a median filter of medianFilterWidth along the states (reflect
// padding, NaN the largest); the mean over the heads; dynamic time warping on −matrix with float32 costs and numpy's
// tie rules; each token's time = the state where the path first reaches the row that predicted it, × 0.02.
// Not here: the weights themselves (the native side: WhisperLm::AlignmentWeights), words (word_timestamps.js).
import { AttnWasmError } from '../errors.js';

const fround = Math.fround;

// torch's float32 sums are done in 8 lanes (Vectorized<float> of the AVX2 build: the one Debian ships and the
// goldens run on, and torch's default dispatch on x86 and the width of its ARM build). A torch dispatching AVX-512
// (16 lanes) groups columns differently and may differ in the last bit.
const LANES = 8;

/**
 * multi_row_sum of ATen's SumKernel.cpp: `nrows` independent float32 sums over `size` steps, step i adding
 * get(i, k) to sum k, in a cascade of 4 levels (chunks of 2^max(4, ⌈log2 size⌉ / 4) steps) as torch forms it.
 */
function multiRowSum(get, size, nrows, out) {
  const power = Math.max(4, Math.floor((size > 1 ? Math.ceil(Math.log2(size)) : 0) / 4));
  const step = 2 ** power, mask = step - 1;
  const acc = [new Float64Array(nrows), new Float64Array(nrows), new Float64Array(nrows), new Float64Array(nrows)];
  let i = 0;
  while (i + step <= size) {
    for (let s = 0; s < step; s++, i++) for (let k = 0; k < nrows; k++) acc[0][k] = fround(acc[0][k] + get(i, k));
    for (let j = 1; j < 4; j++) {
      for (let k = 0; k < nrows; k++) { acc[j][k] = fround(acc[j][k] + acc[j - 1][k]); acc[j - 1][k] = 0; }
      if ((i & (mask * 2 ** (j * power))) !== 0) break;
    }
  }
  for (; i < size; i++) for (let k = 0; k < nrows; k++) acc[0][k] = fround(acc[0][k] + get(i, k));
  for (let j = 1; j < 4; j++) for (let k = 0; k < nrows; k++) acc[0][k] = fround(acc[0][k] + acc[j][k]);
  for (let k = 0; k < nrows; k++) out[k] = acc[0][k];
}

/** row_sum: one column of `size` values summed as 4 interleaved partial sums (ILP), then added in order. */
function rowSum(get, size) {
  const n4 = Math.floor(size / 4), p = new Float64Array(4);
  multiRowSum((i, k) => get(4 * i + k), n4, 4, p);
  for (let i = n4 * 4; i < size; i++) p[0] = fround(p[0] + get(i));
  return fround(fround(fround(p[0] + p[1]) + p[2]) + p[3]);
}

/**
 * torch.sum over the rows of a float32 block (R rows of C columns, row r at x[off + r·ld]): cascade_sum's outer
 * reduction. Columns contiguous in torch's tensor (`contiguous`) take vectorized_outer_sum (8 lanes × 4 at a time,
 * the rest one by one with row_sum), else — columns strided in torch's tensor, or fewer than 8 — scalar_outer_sum
 * (4 at a time, the rest with row_sum). @returns {Float32Array} the C sums
 */
export function sumRowsF32(x, off, R, C, ld, contiguous = true) {
  const out = new Float32Array(C), tmp = new Float64Array(4 * LANES);
  const block = contiguous && C >= LANES ? 4 * LANES : 4;   // columns summed together by multi_row_sum
  let j = 0;
  for (; j + block <= C; j += block) {
    const base = off + j;
    multiRowSum((i, k) => x[base + i * ld + k], R, block, tmp);
    for (let k = 0; k < block; k++) out[j + k] = tmp[k];
  }
  for (; j < C; j++) {
    const base = off + j;
    out[j] = rowSum((i) => x[base + i * ld], R);
  }
  return out;
}

/**
 * _median_filter(inputs, width) on rows of n values (x: rows·n): each value the median of the `width` around it,
 * the row reflected at its ends (torch's pad mode 'reflect'); rows of n <= width // 2 are returned as they are.
 * The median is the middle of the sorted window, NaN sorting last as in torch.sort. @returns {Float32Array} new
 */
export function medianFilter(x, rows, n, width) {
  if (!(Number.isInteger(width) && width > 0 && width % 2 === 1)) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `median_filter_width: \`filter_width\` should be an odd number, got ${width}`);
  }
  const pad = (width - 1) / 2;
  if (n <= pad) return Float32Array.from(x);
  const out = new Float32Array(rows * n), w = new Float64Array(width);
  const less = (a, b) => a < b || (b !== b && a === a);  // NaN is the largest
  for (let r = 0; r < rows; r++) {
    const row = r * n;
    for (let j = 0; j < n; j++) {
      for (let k = 0; k < width; k++) {
        let i = j - pad + k;
        if (i < 0) i = -i;
        else if (i >= n) i = 2 * (n - 1) - i;
        const v = x[row + i];
        let p = k;
        while (p > 0 && less(v, w[p - 1])) { w[p] = w[p - 1]; p--; }
        w[p] = v;
      }
      out[row + j] = w[pad];
    }
  }
  return out;
}

/**
 * _dynamic_time_warping(matrix): the cheapest path through an (N, M) cost matrix (float64 values) from its first
 * cell to its last, with cumulative costs in float32 (numpy's float32 arrays) and numpy's choice among the three
 * predecessors (diagonal only when strictly cheapest, then up, else left). @returns {{text: Int32Array, time:
 * Int32Array}} the path's row and column indices, in order
 */
export function dynamicTimeWarping(matrix, N, M) {
  const W = M + 1;
  const cost = new Float32Array((N + 1) * W).fill(Infinity), trace = new Int8Array((N + 1) * W).fill(-1);
  cost[0] = 0;
  for (let j = 1; j <= M; j++) {
    for (let i = 1; i <= N; i++) {
      const c0 = cost[(i - 1) * W + j - 1], c1 = cost[(i - 1) * W + j], c2 = cost[i * W + j - 1];
      let c, t;
      if (c0 < c1 && c0 < c2) { c = c0; t = 0; } else if (c1 < c0 && c1 < c2) { c = c1; t = 1; } else { c = c2; t = 2; }
      cost[i * W + j] = matrix[(i - 1) * M + j - 1] + c;  // the float64 sum stored as float32
      trace[i * W + j] = t;
    }
  }
  for (let j = 0; j <= M; j++) trace[j] = 2;
  for (let i = 0; i <= N; i++) trace[i * W] = 1;
  const text = [], time = [];
  let i = N, j = M;
  while (i > 0 || j > 0) {
    text.push(i - 1);
    time.push(j - 1);
    const t = trace[i * W + j];
    if (t === 0) { i--; j--; } else if (t === 1) i--; else if (t === 2) j--;
    else throw new AttnWasmError('ERR_INTERNAL', `Internal error in dynamic time warping. Unexpected trace[${i}, ${j}]`);
  }
  return { text: Int32Array.from(text.reverse()), time: Int32Array.from(time.reverse()) };
}

/**
 * The matrix _extract_token_timestamps warps for one row: the row's weights cropped to numFrames // 2 states,
 * normalised over the tokens, median-filtered along the states, averaged over the heads, negated.
 * @param {Float32Array} weights (rows, heads, T, S) @param {{heads: number, T: number, S: number}} shape
 * @param {number} r the row @param {{numFrames?: number | null, medianFilterWidth?: number}} [o]
 * @returns {{matrix: Float64Array, cols: number}} new: matrix (T, cols), float32 values as numpy's float64
 */
export function alignmentMatrix(weights, { heads, T, S }, r, o = {}) {
  const width = o.medianFilterWidth ?? 7;
  const Sc = o.numFrames == null ? S : Math.min(S, Math.floor(o.numFrames / 2));
  // Normalised over the tokens, per head and state: (w − mean) / std, float32 as torch's elementwise ops.
  const norm = new Float32Array(heads * T * Sc);
  for (let h = 0; h < heads; h++) {
    const base = (r * heads + h) * T * S;
    const mean = sumRowsF32(weights, base, T, Sc, S);
    for (let s = 0; s < Sc; s++) {
      const mu = fround(mean[s] / T);
      let m = 0, m2 = 0;   // torch.std(unbiased=False): WelfordOps in double
      for (let t = 0; t < T; t++) {
        const v = weights[base + t * S + s], d = v - m;
        m += d / (t + 1);
        m2 += d * (v - m);
      }
      const std = fround(Math.sqrt(m2 / T));
      for (let t = 0; t < T; t++) norm[(h * T + t) * Sc + s] = fround(fround(weights[base + t * S + s] - mu) / std);
    }
  }
  const filtered = medianFilter(norm, heads * T, Sc, width);
  // The mean over the heads. torch's median filter returns a strided view (a sorted window's middle, every
  // `width` floats), unless it returned its input (rows no longer than width // 2): then it is contiguous.
  const sum = sumRowsF32(filtered, 0, heads, T * Sc, T * Sc, Sc <= (width - 1) / 2);
  const matrix = new Float64Array(T * Sc);
  for (let k = 0; k < matrix.length; k++) matrix[k] = -fround(sum[k] / heads);
  return { matrix, cols: Sc };
}

/**
 * _extract_token_timestamps: per row, the time of each token of its sequence (T + 1 tokens: the rows' weights are
 * the cross-attention of positions 0 … T − 1, which predict tokens 1 … T; token 0's time is 0).
 * @param {Float32Array} weights (rows, heads, T, S) float32 probabilities (WhisperLm::AlignmentWeights)
 * @param {{rows: number, heads: number, T: number, S: number}} shape
 * @param {{numFrames?: number | null, medianFilterWidth?: number, timePrecision?: number}} [o] numFrames: the
 *   input's mel frames (the pipeline's chunk samples // hop_length): the states past numFrames // 2 are cut
 * @returns {Float32Array[]} new: per row, T + 1 times in seconds (float32 values, as transformers' tensor holds them)
 */
export function extractTokenTimestamps(weights, shape, o = {}) {
  const tp = o.timePrecision ?? 0.02, T = shape.T, out = [];
  for (let r = 0; r < shape.rows; r++) {
    const { matrix, cols } = alignmentMatrix(weights, shape, r, o);
    const { text, time } = dynamicTimeWarping(matrix, T, cols);
    const ts = new Float32Array(T + 1);
    let n = 1;
    for (let k = 0; k < text.length; k++) if (k === 0 || text[k] !== text[k - 1]) ts[n++] = time[k] * tp;
    out.push(ts);
  }
  return out;
}
