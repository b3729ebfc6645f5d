// PIL 9.4's convolution resampling of 8-bit images (libImaging/Resample.c, ImagingResample), re-derived for
// attnwasm/image: the same filters, the same double-precision coefficients, the same 22-bit fixed point, the
// same rounding and clipping, so every output byte equals PIL's. Box, bilinear, hamming, bicubic (a = -0.5)
// and lanczos (a = 3); NEAREST is not a convolution (resize.js). Images here are interleaved 8-bit with C
// channels (C = 3 for RGB, 1 for L); PIL's RGBA/LA path (premultiplied alpha) is not reproduced.
//
// The arithmetic, per axis (precomputeCoeffs):
//   scale = (in1 - in0) / outSize (in1 - in0 in float32, then double), filterscale = max(scale, 1)
//   support = filter.support · filterscale, ksize = ceil(support)·2 + 1
//   output pixel xx: center = in0 + (xx + 0.5)·scale, taps x in [xmin, xmax) with
//     xmin = max(0, trunc(center - support + 0.5)), xmax = min(inSize, trunc(center + support + 0.5))
//   weight w(x) = filter((x - center + 0.5) / filterscale), divided by their sum (when the sum is not 0)
//   fixed point: k = trunc(w·2^22 ± 0.5) (the sign of w); a pixel = clip(((1 << 21) + Σ p·k) >> 22, 0, 255)
// The horizontal pass runs first, on the rows the vertical pass reads; a pass whose size does not change is
// skipped (PIL skips it too). Sums are int32 as in PIL (JS: ToInt32 on store / shift, the same wrap-around).

const PRECISION_BITS = 22;
const HALF = 1 << (PRECISION_BITS - 1);
const ONE = 1 << PRECISION_BITS;
const F054 = Math.fround(0.54), F046 = Math.fround(0.46); // C float literals 0.54f, 0.46f in PIL's hamming

function sinc(x) {
  if (x === 0.0) return 1.0;
  x *= Math.PI;
  return Math.sin(x) / x;
}

/** The filters of Resample.c (support, function), by PIL's Resampling number. */
export const FILTERS = {
  1: { name: 'lanczos', support: 3.0, fn: (x) => (x >= -3.0 && x < 3.0 ? sinc(x) * sinc(x / 3) : 0.0) },
  2: { name: 'bilinear', support: 1.0, fn: (x) => { if (x < 0.0) x = -x; return x < 1.0 ? 1.0 - x : 0.0; } },
  3: {
    name: 'bicubic',
    support: 2.0,
    fn: (x) => {
      const a = -0.5;
      if (x < 0.0) x = -x;
      if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
      if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
      return 0.0;
    },
  },
  4: { name: 'box', support: 0.5, fn: (x) => (x > -0.5 && x <= 0.5 ? 1.0 : 0.0) },
  5: {
    name: 'hamming',
    support: 1.0,
    fn: (x) => {
      if (x < 0.0) x = -x;
      if (x === 0.0) return 1.0;
      if (x >= 1.0) return 0.0;
      x *= Math.PI;
      return (Math.sin(x) / x) * (F054 + F046 * Math.cos(x));
    },
  },
};

/**
 * PIL's precompute_coeffs + normalize_coeffs_8bpc for one axis: { ksize, bounds: Int32Array [xmin, count] per
 * output pixel, kk: Int32Array of outSize·ksize fixed-point weights }. The caller owns the arrays.
 * @param {number} inSize @param {number} in0 @param {number} in1 @param {number} outSize @param {number} filter
 */
export function precomputeCoeffs(inSize, in0, in1, outSize, filter) {
  const { support: fsupport, fn } = FILTERS[filter];
  const scale = Math.fround(Math.fround(in1) - Math.fround(in0)) / outSize;
  const filterscale = scale < 1.0 ? 1.0 : scale;
  const support = fsupport * filterscale;
  const ksize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const kk = new Int32Array(outSize * ksize);
  const w = new Float64Array(ksize);
  const ss = 1.0 / filterscale;
  const start = Math.fround(in0);
  for (let xx = 0; xx < outSize; xx++) {
    const center = start + (xx + 0.5) * scale;
    let xmin = Math.trunc(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    let xmax = Math.trunc(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    let ww = 0.0;
    for (let x = 0; x < xmax; x++) {
      const v = fn((x + xmin - center + 0.5) * ss);
      w[x] = v;
      ww += v;
    }
    const o = xx * ksize;
    for (let x = 0; x < xmax; x++) {
      const v = ww !== 0.0 ? w[x] / ww : w[x];
      kk[o + x] = v < 0 ? Math.trunc(-0.5 + v * ONE) : Math.trunc(0.5 + v * ONE);
    }
    bounds[2 * xx] = xmin;
    bounds[2 * xx + 1] = xmax;
  }
  return { ksize, bounds, kk };
}

function clip8(ss) {
  const v = ss >> PRECISION_BITS; // ToInt32 then an arithmetic shift: C's int and >> on PIL's sums
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/**
 * The horizontal pass (ImagingResampleHorizontal_8bpc) on rows y0 … y0 + rows - 1 of `src` (inW pixels of C
 * channels per row), for output columns x0 … x1 - 1 of the coefficients `h`. Returns a new
 * rows × (x1 - x0) × C Uint8Array. RGB rows go two at a time (one coefficient load for six sums).
 */
export function resampleHorizontal(src, inW, C, y0, rows, h, x0, x1) {
  const { ksize, bounds, kk } = h;
  const ow = x1 - x0, rs = inW * C, os = ow * C;
  const out = new Uint8Array(rows * os);
  let y = 0;
  if (C === 3) {
    for (; y + 1 < rows; y += 2) {
      const row = (y0 + y) * rs;
      for (let xx = x0, o = y * os; xx < x1; xx++, o += 3) {
        const n = bounds[2 * xx + 1], ko = xx * ksize;
        let s0 = HALF, s1 = HALF, s2 = HALF, t0 = HALF, t1 = HALF, t2 = HALF;
        for (let x = 0, p = row + bounds[2 * xx] * 3; x < n; x++, p += 3) {
          const k = kk[ko + x];
          s0 += src[p] * k; s1 += src[p + 1] * k; s2 += src[p + 2] * k;
          t0 += src[p + rs] * k; t1 += src[p + rs + 1] * k; t2 += src[p + rs + 2] * k;
        }
        out[o] = clip8(s0); out[o + 1] = clip8(s1); out[o + 2] = clip8(s2);
        out[o + os] = clip8(t0); out[o + os + 1] = clip8(t1); out[o + os + 2] = clip8(t2);
      }
    }
  }
  for (; y < rows; y++) {
    const row = (y0 + y) * rs;
    for (let xx = x0, o = y * os; xx < x1; xx++) {
      const n = bounds[2 * xx + 1], ko = xx * ksize, p0 = row + bounds[2 * xx] * C;
      for (let c = 0; c < C; c++, o++) {
        let s = HALF;
        for (let x = 0, p = p0 + c; x < n; x++, p += C) s += src[p] * kk[ko + x];
        out[o] = clip8(s);
      }
    }
  }
  return out;
}

/**
 * The vertical pass (ImagingResampleVertical_8bpc): `src` holds rows of rowLen = width·C bytes, its row 0
 * being input row `rowOffset`; output rows y0 … y1 - 1 of the coefficients `v`. Returns a new
 * (y1 - y0) × rowLen Uint8Array. Each output row is accumulated tap by tap over whole rows (the same
 * integer sums as PIL's pixel-by-pixel loop: integer addition does not depend on the order).
 */
export function resampleVertical(src, rowLen, rowOffset, v, y0, y1) {
  const { ksize, bounds, kk } = v;
  const out = new Uint8Array((y1 - y0) * rowLen);
  const acc = new Int32Array(rowLen);
  for (let yy = y0; yy < y1; yy++) {
    acc.fill(HALF);
    const n = bounds[2 * yy + 1], ko = yy * ksize;
    for (let y = 0; y < n; y++) {
      const k = kk[ko + y];
      if (k === 0) continue;
      const s = (bounds[2 * yy] + y - rowOffset) * rowLen;
      for (let i = 0; i < rowLen; i++) acc[i] = (acc[i] + Math.imul(src[s + i], k)) | 0; // int32 wrap, as C's int
    }
    const o = (yy - y0) * rowLen;
    for (let i = 0; i < rowLen; i++) out[o + i] = clip8(acc[i]);
  }
  return out;
}
