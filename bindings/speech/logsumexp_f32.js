// torch 1.13's logsumexp over one contiguous float32 run, bit for bit (the CPU build Debian ships: AVX2, 8 lanes), for
// the timestamp rule of Whisper's logits processor (whisper_processors.js). at::logsumexp is
//   m = amax(x) (0 where m is ±inf);  log(sum(exp(x − m))) + m
// with exp and log as Sleef's u10 functions (torch_f32.js) and the sum as ATen's cascade_sum (SumKernel.cpp): a
// contiguous run of n >= 8 floats is summed as vectors of 8 lanes in `multi_row_sum`'s cascade of 4 levels and 4
// interleaved rows, the leftover vectors and then the scalar tail and the 8 lanes added last; under 8 floats the same
// cascade runs on single floats. Not here: other dtypes, reductions split across threads (over 32768 elements).
import { expf, logf } from '../torch_f32.js';

const fround = Math.fround;
const LEVELS = 4, ILP = 4;

const ceilLog2 = (x) => (x <= 2 ? 1 : 32 - Math.clz32(x - 1));

/**
 * ATen's row_sum of `size` elements of W lanes each (element e's lane l at x[from + e * W + l]), as 4 interleaved
 * rows summed by multi_row_sum, the leftover elements added to row 0, then rows 1..3 added to row 0.
 * @returns {Float32Array} the W lane sums (new)
 */
function rowSum(x, from, size, W) {
  const nIlp = Math.trunc(size / ILP);
  const acc = new Float32Array(LEVELS * ILP * W);          // acc[level][row][lane]
  const at = (level, row) => (level * ILP + row) * W;
  const addRow = (i) => {                                   // acc[0][k] += element i * ILP + k
    for (let k = 0; k < ILP; k++) {
      const src = from + (i * ILP + k) * W, dst = at(0, k);
      for (let l = 0; l < W; l++) acc[dst + l] = fround(acc[dst + l] + x[src + l]);
    }
  };
  const power = Math.max(4, Math.trunc(ceilLog2(nIlp) / LEVELS));
  const step = 1 << power, mask = step - 1;
  let i = 0;
  while (i + step <= nIlp) {
    for (let j = 0; j < step; j++, i++) addRow(i);
    for (let j = 1; j < LEVELS; j++) {
      for (let k = 0; k < ILP; k++) {
        const d = at(j, k), s = at(j - 1, k);
        for (let l = 0; l < W; l++) { acc[d + l] = fround(acc[d + l] + acc[s + l]); acc[s + l] = 0; }
      }
      if ((i & (mask << (j * power))) !== 0) break;
    }
  }
  for (; i < nIlp; i++) addRow(i);
  for (let j = 1; j < LEVELS; j++) {
    for (let k = 0; k < ILP; k++) {
      const d = at(0, k), s = at(j, k);
      for (let l = 0; l < W; l++) acc[d + l] = fround(acc[d + l] + acc[s + l]);
    }
  }
  const out = acc.slice(0, W);                              // row 0
  for (let e = nIlp * ILP; e < size; e++) {
    for (let l = 0; l < W; l++) out[l] = fround(out[l] + x[from + e * W + l]);
  }
  for (let k = 1; k < ILP; k++) for (let l = 0; l < W; l++) out[l] = fround(out[l] + acc[at(0, k) + l]);
  return out;
}

/**
 * torch.sum of x[from .. from + n) (float32, contiguous, one thread) as ATen's cascade_sum computes it.
 * @param {Float32Array} x @param {number} from @param {number} n @returns {number} a float32 value
 */
export function sumF32(x, from, n) {
  if (n < 8) return fround(0 + rowSum(x, from, n, 1)[0]);
  const vecs = n >> 3;
  const lanes = rowSum(x, from, vecs, 8);
  let acc = 0;
  for (let k = vecs * 8; k < n; k++) acc = fround(acc + x[from + k]);
  for (let l = 0; l < 8; l++) acc = fround(acc + lanes[l]);
  return acc;
}

/**
 * torch.logsumexp(x[from .. from + n), dim=-1) in float32 as torch 1.13's CPU kernels give it.
 * @param {Float32Array} x @param {number} from @param {number} n (>= 1) @returns {number} a float32 value
 */
export function logsumexpF32(x, from, n) {
  let m = -Infinity;
  for (let i = from; i < from + n; i++) {
    const v = x[i];
    if (v !== v) { m = NaN; break; }
    if (v > m) m = v;
  }
  if (m === Infinity || m === -Infinity) m = 0;             // masked_fill_(abs(maxes) == inf, 0)
  const e = new Float32Array(n);
  for (let i = 0; i < n; i++) e[i] = expf(fround(x[from + i] - m));
  return fround(logf(sumF32(e, 0, n)) + m);
}
