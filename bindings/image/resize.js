// PIL 9.4's Image.resize(size, resample) on an 8-bit RGB (or L) image, as transformers' resize calls it
// (box = the whole image, reducing_gap = None): the same size gives a copy; NEAREST is libImaging's
// ImagingScaleAffine; every other filter is the convolution of resample.js. A window of the output can be
// computed alone (each output pixel depends only on its own coefficients): the pipeline computes only the
// pixels its center crop keeps, and they equal the same pixels of the whole resize.
import { rangeError, typeError, describe } from '../errors.js';
import { FILTERS, precomputeCoeffs, resampleHorizontal, resampleVertical } from './resample.js';
import { resampleSimd, simdAvailable } from './resample_simd.js';

/** PIL's Resampling numbers, which preprocessor_config.json's "resample" holds. */
export const RESAMPLE = Object.freeze({ NEAREST: 0, LANCZOS: 1, BILINEAR: 2, BICUBIC: 3, BOX: 4, HAMMING: 5 });
const NAMES = { nearest: 0, lanczos: 1, bilinear: 2, bicubic: 3, box: 4, hamming: 5 };
let backend = 'auto';

/**
 * Which implementation of the convolution passes runs: 'auto' (the WebAssembly SIMD kernels where they load,
 * else the JS ones), 'js' or 'simd' (for tests and benchmarks: both give the same bytes). Returns the previous
 * setting.
 * @param {'auto' | 'js' | 'simd'} which
 */
export function setResampleBackend(which) {
  if (!['auto', 'js', 'simd'].includes(which)) throw rangeError(`which: expected 'auto', 'js' or 'simd', got ${JSON.stringify(which)}`);
  if (which === 'simd' && !simdAvailable()) throw rangeError("which: 'simd' is not available here (no WebAssembly SIMD)");
  const before = backend;
  backend = which;
  return before;
}

/** A resample argument (a PIL number 0 … 5 or a name such as 'bicubic') as PIL's number. */
export function resampleFilter(resample, name = 'resample') {
  if (typeof resample === 'string' && resample.toLowerCase() in NAMES) return NAMES[resample.toLowerCase()];
  if (Number.isInteger(resample) && resample >= 0 && resample <= 5) return resample;
  if (typeof resample !== 'string' && typeof resample !== 'number') throw typeError(`${name}: expected a PIL resampling number 0 … 5 or a name, got ${describe(resample)}`);
  throw rangeError(`${name}: expected 0 (nearest), 1 (lanczos), 2 (bilinear), 3 (bicubic), 4 (box) or 5 (hamming), got ${JSON.stringify(resample)}`);
}

/**
 * NEAREST as ImagingScaleAffine: source column of output x is trunc(xo) with xo starting at a0 / 2 and
 * growing by a0 = inW / outW at each step (accumulated in double, as PIL does); a position outside the image
 * leaves the pixel 0.
 */
function nearest(src, inW, inH, C, outW, outH, x0, x1, y0, y1) {
  const a0 = inW / outW, a4 = inH / outH;
  const xin = new Int32Array(x1 - x0).fill(-1);
  let xo = a0 * 0.5;
  for (let x = 0; x < x1; x++, xo += a0) {
    const xi = xo < 0.0 ? -1 : Math.trunc(xo);
    if (x >= x0 && xi >= 0 && xi < inW) xin[x - x0] = xi;
  }
  const ow = x1 - x0;
  const out = new Uint8Array((y1 - y0) * ow * C);
  let yo = a4 * 0.5;
  for (let y = 0; y < y1; y++, yo += a4) {
    if (y < y0) continue;
    const yi = yo < 0.0 ? -1 : Math.trunc(yo);
    if (yi < 0 || yi >= inH) continue;
    const row = yi * inW * C;
    let o = (y - y0) * ow * C;
    for (let x = 0; x < ow; x++, o += C) {
      if (xin[x] < 0) continue;
      const s = row + xin[x] * C;
      for (let c = 0; c < C; c++) out[o + c] = src[s + c];
    }
  }
  return out;
}

/**
 * The pixels x0 … x1 - 1, y0 … y1 - 1 of the image `image` resized to outW × outH with PIL's filter
 * `resample` (a number of RESAMPLE). `image` = { width, height, data } with data.length / (width·height)
 * channels (3 or 1). Returns { width: x1 - x0, height: y1 - y0, data } with fresh data.
 */
export function resizeWindow(image, outW, outH, resample, x0 = 0, x1 = outW, y0 = 0, y1 = outH) {
  const { width: inW, height: inH, data } = image;
  const C = data.length / (inW * inH);
  if (inW === outW && inH === outH) { // Image.resize returns a copy
    const out = new Uint8Array((y1 - y0) * (x1 - x0) * C);
    for (let y = y0; y < y1; y++) out.set(data.subarray((y * inW + x0) * C, (y * inW + x1) * C), (y - y0) * (x1 - x0) * C);
    return { width: x1 - x0, height: y1 - y0, data: out };
  }
  if (resample === RESAMPLE.NEAREST) {
    return { width: x1 - x0, height: y1 - y0, data: nearest(data, inW, inH, C, outW, outH, x0, x1, y0, y1) };
  }
  if (!FILTERS[resample]) throw rangeError(`resample: expected 0 … 5, got ${resample}`);
  const needH = outW !== inW, needV = outH !== inH;
  const h = needH ? precomputeCoeffs(inW, 0, inW, outW, resample) : null;
  const v = needV ? precomputeCoeffs(inH, 0, inH, outH, resample) : null;
  // rows of the input the vertical pass reads for output rows y0 … y1 - 1
  const r0 = needV ? v.bounds[2 * y0] : y0;
  const r1 = needV ? v.bounds[2 * (y1 - 1)] + v.bounds[2 * (y1 - 1) + 1] : y1;
  let out, rowW;
  if (backend !== 'js' && (C === 3 || !needH) && simdAvailable()) {
    ({ data: out, rowW } = resampleSimd(data, inW, C, h, v, x0, x1, y0, y1, r0, r1));
  } else {
    let rows;
    if (needH) {
      rows = resampleHorizontal(data, inW, C, r0, r1 - r0, h, x0, x1);
      rowW = x1 - x0;
    } else {
      rows = data.subarray(r0 * inW * C, r1 * inW * C); // only read, and x0 … x1 taken below
      rowW = inW;
    }
    out = needV ? resampleVertical(rows, rowW * C, r0, v, y0, y1) : rows;
  }
  if (!needH && (x0 !== 0 || x1 !== inW)) { // keep the window's columns
    const n = out.length / (rowW * C), w = x1 - x0, cut = new Uint8Array(n * w * C);
    for (let y = 0; y < n; y++) cut.set(out.subarray((y * rowW + x0) * C, (y * rowW + x1) * C), y * w * C);
    out = cut;
  }
  return { width: x1 - x0, height: y1 - y0, data: out };
}

/**
 * Image.resize((width, height), resample) of PIL 9.4 on an 8-bit RGB image { width, height, data } (3 bytes
 * per pixel; 1 for a grey image). `resample`: a PIL number (RESAMPLE) or a name ('nearest', 'bilinear',
 * 'bicubic', 'lanczos', 'box', 'hamming'). Returns a new image; the caller owns it.
 * @param {{width: number, height: number, data: Uint8Array}} image
 * @param {{width: number, height: number}} size
 * @param {number | string} [resample]
 */
export function resize(image, size, resample = RESAMPLE.BICUBIC) {
  const f = resampleFilter(resample);
  const { width, height } = size ?? {};
  for (const [k, x] of [['width', width], ['height', height]]) {
    if (!Number.isInteger(x) || x < 1) throw rangeError(`size.${k}: expected an integer ≥ 1, got ${x}`);
  }
  return resizeWindow(image, width, height, f);
}
