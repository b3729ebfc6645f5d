// Float32 arithmetic as torch 1.13's CPU kernels do it, for generation's search (seq2seq_generate.js): expf and logf
// as Sleef's u10 functions (what ATen's Vectorized<float>::exp()/log() call), log_softmax and softmax over one row
// in the kernels' order (8 float32 lanes, then a tree: the AVX2 build, the one Debian ships and the goldens run on;
// a torch dispatching AVX-512 sums in 16 lanes and may differ in the last bit), and torch.topk's order among equal
// values (libstdc++'s partial_sort or nth_element + sort, which ATen's topk calls). Scalar JS, no allocation in the
// per-element paths. Not here: a model's own numerics (the native side).
//
// Each function states the torch source it follows; tests/js/seq2seq_generate.test.mjs checks them against torch
// itself (tests/data/make_seq2seq_search_goldens.py).

const fround = Math.fround;

/**
 * fma(a, b, c) rounded once to float32, for float32 a, b, c (what _mm256_fmadd_ps computes). a * b is exact in a
 * double (24 + 24 bits); the double sum p + c may round, and a second rounding to float32 is then wrong only when
 * that sum lands exactly halfway between two floats: the error of the sum (TwoSum) says which way the exact value lies.
 */
export function fmaf(a, b, c) {
  const p = a * b, s = p + c, r = fround(s);
  if (r === s || !Number.isFinite(s)) return r;
  const n = 2 * s - r;                       // exact (Sterbenz); a float32 only when s is a midpoint between r and n
  if (fround(n) !== n) return r;
  const bb = s - p, e = (p - (s - bb)) + (c - bb);
  if (e === 0) return r;                     // a true tie: fround already rounded half to even
  return (e > 0) === (n > r) ? n : r;
}

/**
 * Round half to even (vrint: _mm256_cvtps_epi32 under the default rounding), for |v| < 2^51: adding and taking away
 * 1.5 * 2^52 leaves the double's own round-to-nearest-even at the units place (faster than Math.round and a fix-up).
 */
const rint = (v) => (v + 6755399441055744) - 6755399441055744;

const POW2 = new Float64Array(301);          // 2^q for q in [-150, 150]: vldexp2's scale
for (let q = -150; q <= 150; q++) POW2[q + 150] = 2 ** q;

const R_LN2F = fround(1.442695040888963407359924681001892137426645954152985934135449406931);
const L2UF = fround(0.693145751953125), L2LF = fround(1.428606765330187045e-06);
const E0 = fround(0.000198527617612853646278381), E1 = fround(0.00139304355252534151077271);
const E2 = fround(0.00833336077630519866943359), E3 = fround(0.0416664853692054748535156);
const E4 = fround(0.166666671633720397949219);

/**
 * e^x in float32 as Sleef_expf8_u10 (sleefsimdsp.c xexpf, FMA build) computes it: within 1 ulp, and not always the
 * correctly rounded float (about 9 % of inputs in [-30, 0] differ from fround(Math.exp(x)) in the last bit).
 */
export function expf(d) {
  if (!(d >= -104)) return d !== d ? NaN : 0;  // Sleef masks these lanes to 0 (NaN stays NaN)
  if (d > 100) return Infinity;
  const q = rint(fround(d * R_LN2F));          // |q| <= 151
  let s = fmaf(q, -L2UF, d);
  s = fmaf(q, -L2LF, s);
  let u = E0;
  u = fmaf(u, s, E1);
  u = fmaf(u, s, E2);
  u = fmaf(u, s, E3);
  u = fmaf(u, s, E4);
  u = fmaf(u, s, 0.5);
  u = fround(1 + fmaf(fround(s * s), u, s));
  return fround(u * POW2[q + 150]);          // vldexp2: two exact scalings, one rounding (subnormal results)
}

const LN2_HI = fround(0.69314718246459960938), LN2_LO = fround(-1.904654323148236017e-09);
const L0 = fround(0.3027294874), L1 = fround(0.3996108174), L2 = fround(0.6666694880), R075 = fround(1 / 0.75);
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);

/** log(x) in float32 as Sleef_logf8_u10 (sleefsimdsp.c xlogf_u1, FMA build: double-float arithmetic inside). */
export function logf(d) {
  if (Number.isNaN(d) || d < 0) return NaN;
  if (d === 0) return -Infinity;
  if (d === Infinity) return Infinity;
  const tiny = d < 1.1754943508222875e-38;
  if (tiny) d = fround(d * 18446744073709551616);
  f32[0] = fround(d * R075);
  let e = ((u32[0] >>> 23) & 0xff) - 0x7f;   // vilogb2k
  const m = d * 2 ** -e;                     // vldexp3: exact
  if (tiny) e -= 64;
  // s = dfmul((LN2_HI, LN2_LO), e)
  let sx = fround(LN2_HI * e), sy = fmaf(LN2_LO, e, fmaf(LN2_HI, e, -sx));
  // x = dfdiv(dfadd2(-1, m), dfadd2(1, m))
  const nx = fround(m - 1), nv = fround(nx + 1), ny = fround(fround(-1 - fround(nx - nv)) + fround(m - nv));
  const dx = fround(1 + m), dv = fround(dx - 1), dy = fround(fround(1 - fround(dx - dv)) + fround(m - dv));
  const t = fround(1 / dx), qx = fround(nx * t), uu = fmaf(t, nx, -qx);
  const v = fmaf(-dy, t, fmaf(-dx, t, 1));
  const qy = fmaf(qx, v, fmaf(ny, t, uu));
  const x2 = fround(qx * qx);
  let p = fmaf(L0, x2, L1);
  p = fmaf(p, x2, L2);
  // s = dfadd(s, dfscale(x, 2)), then dfadd(s, x2 * x * p)
  let ax = fround(2 * qx), s2 = fround(sx + ax);
  sy = fround(fround(fround(fround(sx - s2) + ax) + sy) + fround(2 * qy));
  sx = s2;
  ax = fround(fround(x2 * qx) * p);
  s2 = fround(sx + ax);
  sy = fround(fround(fround(sx - s2) + ax) + sy);
  return fround(s2 + sy);
}

/**
 * The float32 sum of x[from .. from + n) in ATen's vec::reduce_all / map_reduce_all order (functional_base.h, AVX2:
 * 8 lanes): under 8 elements one after another; else 8 lane sums over whole vectors, the tail added to its first
 * lanes, then the lanes folded as VecReduceAllSIMD does (i + 4, then i + 2, then i + 1).
 */
function laneSum(x, from, n) {
  if (n < 8) {
    let s = x[from];
    for (let i = 1; i < n; i++) s = fround(s + x[from + i]);
    return s;
  }
  let a0 = x[from], a1 = x[from + 1], a2 = x[from + 2], a3 = x[from + 3];
  let a4 = x[from + 4], a5 = x[from + 5], a6 = x[from + 6], a7 = x[from + 7];
  let d = 8;
  const whole = n - (n % 8);
  for (; d < whole; d += 8) {
    const b = from + d;
    a0 = fround(a0 + x[b]); a1 = fround(a1 + x[b + 1]); a2 = fround(a2 + x[b + 2]); a3 = fround(a3 + x[b + 3]);
    a4 = fround(a4 + x[b + 4]); a5 = fround(a5 + x[b + 5]); a6 = fround(a6 + x[b + 6]); a7 = fround(a7 + x[b + 7]);
  }
  const tail = n - d, b = from + d;
  if (tail > 0) a0 = fround(a0 + x[b]);
  if (tail > 1) a1 = fround(a1 + x[b + 1]);
  if (tail > 2) a2 = fround(a2 + x[b + 2]);
  if (tail > 3) a3 = fround(a3 + x[b + 3]);
  if (tail > 4) a4 = fround(a4 + x[b + 4]);
  if (tail > 5) a5 = fround(a5 + x[b + 5]);
  if (tail > 6) a6 = fround(a6 + x[b + 6]);
  const c0 = fround(a0 + a4), c1 = fround(a1 + a5), c2 = fround(a2 + a6), c3 = fround(a3 + a7);
  return fround(fround(c0 + c2) + fround(c1 + c3));
}

/** The largest of x[from .. from + n), NaN if any is NaN (vec::maximum propagates NaN). */
function rowMax(x, from, n) {
  let m = -Infinity;
  for (let i = from; i < from + n; i++) {
    const v = x[i];
    if (v !== v) return NaN;
    if (v > m) m = v;
  }
  return m;
}

/**
 * log_softmax over each row of `x` (rows of n), in place or into `out`, as torch 1.13's _vec_log_softmax_lastdim:
 * (x - max) - log(sum(exp(x - max))), float32 at every step, the sum in map_reduce_all's order.
 * @param {Float32Array} x (rows, n) @param {number} n @param {Float32Array} [out] (rows, n), default x
 * @returns {Float32Array} out
 */
export function logSoftmaxF32(x, n, out = x) {
  const e = new Float32Array(n);  // exp(x - max) of one row: the terms of the sum
  for (let from = 0; from < x.length; from += n) {
    const max = rowMax(x, from, n);
    for (let i = 0; i < n; i++) e[i] = expf(fround(x[from + i] - max));
    const ls = logf(laneSum(e, 0, n));
    for (let i = from; i < from + n; i++) out[i] = fround(fround(x[i] - max) - ls);
  }
  return out;
}

/**
 * softmax over each row as torch 1.13's _vec_softmax_lastdim: e = exp(x - max), then e * (1 / sum(e)), float32,
 * the sum in reduce_all's order.
 * @param {Float32Array} x (rows, n) @param {number} n @param {Float32Array} [out] (rows, n), default a new array
 * @returns {Float32Array} out (the caller owns it)
 */
export function softmaxF32(x, n, out = new Float32Array(x.length)) {
  for (let from = 0; from < x.length; from += n) {
    const max = rowMax(x, from, n);
    for (let i = from; i < from + n; i++) out[i] = expf(fround(x[i] - max));
    const inv = fround(1 / laneSum(out, from, n));
    for (let i = from; i < from + n; i++) out[i] = fround(out[i] * inv);
  }
  return out;
}

// ---- torch.topk(largest=True, sorted=True) on one row, with its order among equal values -------------------------
// ATen's topk_impl_loop (TopKImpl.h) fills (value, index) pairs and, when k * 64 <= n, calls std::partial_sort on
// the first k; otherwise std::nth_element at k - 1 and then std::sort of the first k - 1. Both orders compare values
// only ((isnan(a) && !isnan(b)) || a > b), so equal values come out in whatever order libstdc++'s algorithms leave
// them: these are GCC 12's bits/stl_algo.h and bits/stl_heap.h, step for step, on two parallel arrays.

const before = (a, b) => (a !== a && b === b) || a > b;

class Pairs {
  constructor(v, ix) { this.v = v; this.ix = ix; }
  swap(a, b) {
    const v = this.v, ix = this.ix;
    const tv = v[a]; v[a] = v[b]; v[b] = tv;
    const ti = ix[a]; ix[a] = ix[b]; ix[b] = ti;
  }
  move(to, from) { this.v[to] = this.v[from]; this.ix[to] = this.ix[from]; }
}

function unguardedLinearInsert(p, last) {
  const val = p.v[last], id = p.ix[last];
  let next = last - 1;
  while (before(val, p.v[next])) { p.move(last, next); last = next; next--; }
  p.v[last] = val; p.ix[last] = id;
}

function insertionSort(p, first, last) {
  if (first === last) return;
  for (let i = first + 1; i !== last; i++) {
    if (before(p.v[i], p.v[first])) {
      const val = p.v[i], id = p.ix[i];
      for (let j = i; j > first; j--) p.move(j, j - 1);
      p.v[first] = val; p.ix[first] = id;
    } else unguardedLinearInsert(p, i);
  }
}

function moveMedianToFirst(p, result, a, b, c) {
  const v = p.v;
  if (before(v[a], v[b])) {
    if (before(v[b], v[c])) p.swap(result, b);
    else if (before(v[a], v[c])) p.swap(result, c);
    else p.swap(result, a);
  } else if (before(v[a], v[c])) p.swap(result, a);
  else if (before(v[b], v[c])) p.swap(result, c);
  else p.swap(result, b);
}

function unguardedPartition(p, first, last, pivot) {
  const v = p.v;
  for (;;) {
    while (before(v[first], v[pivot])) first++;
    last--;
    while (before(v[pivot], v[last])) last--;
    if (!(first < last)) return first;
    p.swap(first, last);
    first++;
  }
}

function unguardedPartitionPivot(p, first, last) {
  const mid = first + Math.trunc((last - first) / 2);
  moveMedianToFirst(p, first, first + 1, mid, last - 1);
  return unguardedPartition(p, first + 1, last, first);
}

function pushHeap(p, first, hole, top, val, id) {
  let parent = Math.trunc((hole - 1) / 2);
  while (hole > top && before(p.v[first + parent], val)) {
    p.move(first + hole, first + parent);
    hole = parent;
    parent = Math.trunc((hole - 1) / 2);
  }
  p.v[first + hole] = val; p.ix[first + hole] = id;
}

function adjustHeap(p, first, hole, len, val, id) {
  const top = hole;
  let second = hole;
  while (second < Math.trunc((len - 1) / 2)) {
    second = 2 * (second + 1);
    if (before(p.v[first + second], p.v[first + second - 1])) second--;
    p.move(first + hole, first + second);
    hole = second;
  }
  if ((len & 1) === 0 && second === Math.trunc((len - 2) / 2)) {
    second = 2 * (second + 1);
    p.move(first + hole, first + second - 1);
    hole = second - 1;
  }
  pushHeap(p, first, hole, top, val, id);
}

function makeHeap(p, first, last) {
  const len = last - first;
  if (len < 2) return;
  for (let parent = Math.trunc((len - 2) / 2); ; parent--) {
    adjustHeap(p, first, parent, len, p.v[first + parent], p.ix[first + parent]);
    if (parent === 0) return;
  }
}

/** __pop_heap(first, last, result) with *result given as (val, id): the top goes to result, (val, id) sifts in. */
function popHeapInto(p, first, last, val, id) {
  adjustHeap(p, first, 0, last - first, val, id);
}

function sortHeap(p, first, last) {
  while (last - first > 1) {
    last--;
    const val = p.v[last], id = p.ix[last];
    p.move(last, first);
    popHeapInto(p, first, last, val, id);
  }
}

function heapSelect(p, first, middle, last) {
  makeHeap(p, first, middle);
  for (let i = middle; i < last; i++) {
    if (before(p.v[i], p.v[first])) {
      const val = p.v[i], id = p.ix[i];
      p.move(i, first);
      popHeapInto(p, first, middle, val, id);
    }
  }
}

function introsortLoop(p, first, last, depth) {
  while (last - first > 16) {
    if (depth === 0) {
      heapSelect(p, first, last, last);
      sortHeap(p, first, last);
      return;
    }
    depth--;
    const cut = unguardedPartitionPivot(p, first, last);
    introsortLoop(p, cut, last, depth);
    last = cut;
  }
}

const lg = (n) => 31 - Math.clz32(n);

function stdSort(p, first, last) {
  if (first === last) return;
  introsortLoop(p, first, last, lg(last - first) * 2);
  if (last - first > 16) {
    insertionSort(p, first, first + 16);
    for (let i = first + 16; i !== last; i++) unguardedLinearInsert(p, i);
  } else insertionSort(p, first, last);
}

function nthElement(p, first, nth, last) {
  if (first === last || nth === last) return;
  let depth = lg(last - first) * 2;
  while (last - first > 3) {
    if (depth === 0) {
      heapSelect(p, first, nth + 1, last);
      p.swap(first, nth);
      return;
    }
    depth--;
    const cut = unguardedPartitionPivot(p, first, last);
    if (cut <= nth) first = cut;
    else last = cut;
  }
  insertionSort(p, first, last);
}

/**
 * torch.topk(x, k, largest=True, sorted=True) of one row on the CPU, ties in torch's order (see above).
 * @param {ArrayLike<number>} x the row (n values) @param {number} k 0 <= k <= n
 * @returns {{values: Float64Array, indices: Int32Array}} new arrays of k (the caller owns them)
 */
export function topkLargest(x, k) {
  const n = x.length;
  if (!(Number.isInteger(k) && k >= 0 && k <= n)) throw new RangeError(`topk: k must be an integer in [0, ${n}], got ${k}`);
  if (k === 0) return { values: new Float64Array(0), indices: new Int32Array(0) };
  if (k * 64 <= n) {
    // std::partial_sort(first, first + k, last): __heap_select over the row, then __sort_heap of the k. Positions
    // past k are only read once each, in order, before being overwritten, so they are read from x directly.
    const p = new Pairs(new Float64Array(k), new Int32Array(k));
    for (let i = 0; i < k; i++) { p.v[i] = x[i]; p.ix[i] = i; }
    makeHeap(p, 0, k);
    const v = p.v;
    let top = v[0];  // the heap's root: the k-th largest so far (before(), inlined: NaN first)
    for (let i = k; i < n; i++) {
      const xi = x[i];
      if (xi > top || (xi !== xi && top === top)) {
        popHeapInto(p, 0, k, xi, i);
        top = v[0];
      }
    }
    sortHeap(p, 0, k);
    return { values: p.v, indices: p.ix };
  }
  const p = new Pairs(Float64Array.from(x), new Int32Array(n));
  for (let i = 0; i < n; i++) p.ix[i] = i;
  nthElement(p, 0, k - 1, n);
  stdSort(p, 0, k - 1);
  return { values: p.v.slice(0, k), indices: p.ix.slice(0, k) };
}

/**
 * topkLargest(y, k) of y[i] = fround(x[i] + add[row of i]), x being rows of rowLen values, without writing y: beam
 * search's `next_token_scores + beam_scores[:, None]` then topk over a source's beams, in one pass (the scan reads
 * the same values in the same order as topkLargest over y, so values, indices and ties are the same).
 * @param {Float32Array} x @param {number} rowLen @param {ArrayLike<number>} add one per row @param {number} k
 */
export function topkLargestShifted(x, rowLen, add, k) {
  const n = x.length, at = (i) => Math.fround(x[i] + add[Math.floor(i / rowLen)]);
  if (!(Number.isInteger(k) && k >= 1 && k * 64 <= n)) return topkLargest(Float32Array.from({ length: n }, (_, i) => at(i)), k);
  const p = new Pairs(new Float64Array(k), new Int32Array(k));
  for (let i = 0; i < k; i++) { p.v[i] = at(i); p.ix[i] = i; }
  makeHeap(p, 0, k);
  const v = p.v;
  let top = v[0];
  // fround is monotonic and top a float32, so fround(x + a) > top only if x + a > top: x <= t (a bound a little
  // below top − a, for the double subtraction's rounding) skips the exact test. NaN fails x <= t, and t is NaN (no
  // skipping) when top is NaN or a is infinite or NaN (∓inf + ±inf is NaN).
  const below = (a) => (Number.isFinite(a) ? top - a - (Math.abs(top) + Math.abs(a)) * 2 ** -40 : NaN);
  for (let r = Math.floor(k / rowLen), i = k; i < n; r++) {
    const a = add[r], end = Math.min(n, (r + 1) * rowLen);
    let t = below(a);
    for (; i < end; i++) {
      if (x[i] <= t) continue;
      const xi = Math.fround(x[i] + a);
      if (xi > top || (xi !== xi && top === top)) {
        popHeapInto(p, 0, k, xi, i);
        top = v[0];
        t = below(a);
      }
    }
  }
  sortHeap(p, 0, k);
  return { values: p.v, indices: p.ix };
}
