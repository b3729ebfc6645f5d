// MNIST-style preprocessing of a drawing, as LeCun et al. did for MNIST:
// take the ink's bounding box, scale it to fit a 20×20 box keeping the aspect
// ratio (area-averaged, so anti-aliased), and place it in a 28×28 image so
// that its centre of mass is at the centre. Pure functions, no DOM.
import { rangeError } from '../errors.js';
import { checkArray, checkInteger, checkFinite, checkOptions } from '../checks.js';

/** Largest image side these helpers accept (and at most 2^26 pixels). */
const MAX_SIDE = 1 << 14;

function checkSize(w, h, wName, hName) {
  checkInteger(w, wName, { min: 1, max: MAX_SIDE });
  checkInteger(h, hName, { min: 1, max: MAX_SIDE });
  if (w * h > 1 << 26) throw rangeError(`${wName}×${hName}: expected at most 2^26 pixels, got ${w}×${h}`);
}

/**
 * Ink of an RGBA image: light strokes on a dark background → 1 = ink.
 * @param {Uint8ClampedArray} rgba (h, w, 4)
 * @returns {Float32Array} (h, w) in [0, 1]
 */
export function inkFromRgba(rgba, w, h) {
  checkSize(w, h, 'w', 'h');
  checkArray(rgba, 'rgba', [Uint8ClampedArray, Uint8Array], 4 * w * h);
  const ink = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) {
    const lum = (0.299 * rgba[4 * i] + 0.587 * rgba[4 * i + 1] + 0.114 * rgba[4 * i + 2]) / 255;
    ink[i] = lum * (rgba[4 * i + 3] / 255);
  }
  return ink;
}

/**
 * 1-D area-averaging weights: output cell k covers source [k/scale, (k+1)/scale).
 * @returns {{src: Int32Array, wt: Float32Array, start: Int32Array}} CSR-style taps per output cell
 */
function areaTaps(inLen, outLen) {
  const scale = outLen / inLen;
  const src = [], wt = [], start = [0];
  for (let k = 0; k < outLen; k++) {
    const a = k / scale, b = (k + 1) / scale;
    for (let i = Math.floor(a); i < Math.min(inLen, Math.ceil(b)); i++) {
      const cover = Math.min(b, i + 1) - Math.max(a, i);
      if (cover > 1e-9) { src.push(i); wt.push(cover * scale); }
    }
    start.push(src.length);
  }
  return { src: Int32Array.from(src), wt: Float32Array.from(wt), start: Int32Array.from(start) };
}

/** Resamples a (h, w) image to (oh, ow) by exact area averaging (separable box filter). */
export function resizeArea(img, w, h, ow, oh) {
  checkSize(w, h, 'w', 'h');
  checkSize(ow, oh, 'ow', 'oh');
  checkArray(img, 'img', [Float32Array], w * h);
  const tx = areaTaps(w, ow), ty = areaTaps(h, oh);
  const tmp = new Float32Array(h * ow);  // (h, ow): rows resampled horizontally
  for (let y = 0; y < h; y++) {
    for (let k = 0; k < ow; k++) {
      let s = 0;
      for (let t = tx.start[k]; t < tx.start[k + 1]; t++) s += img[y * w + tx.src[t]] * tx.wt[t];
      tmp[y * ow + k] = s;
    }
  }
  const out = new Float32Array(oh * ow);
  for (let k = 0; k < oh; k++) {
    for (let t = ty.start[k]; t < ty.start[k + 1]; t++) {
      const y = ty.src[t], wgt = ty.wt[t];
      for (let x = 0; x < ow; x++) out[k * ow + x] += tmp[y * ow + x] * wgt;
    }
  }
  return out;
}

/**
 * A drawing's ink → the model's 28×28 input.
 * @param {Float32Array} ink (h, w) in [0, 1]
 * @param {{size?: number, box?: number, threshold?: number}} [options] output size 28, fit box 20
 * @returns {Float32Array|null} (size, size) ink in [0, 1], or null if there is no ink
 */
export function mnistPreprocess(ink, w, h, options) {
  const o = checkOptions(options, ['size', 'box', 'threshold'], 'mnistPreprocess');
  const size = o.size === undefined ? 28 : checkInteger(o.size, 'size', { min: 1, max: 4096 });
  const box = o.box === undefined ? 20 : checkInteger(o.box, 'box', { min: 1, max: size });
  const threshold = o.threshold === undefined ? 0.1 : checkFinite(o.threshold, 'threshold');
  checkSize(w, h, 'w', 'h');
  checkArray(ink, 'ink', [Float32Array], w * h);
  let x0 = w, y0 = h, x1 = -1, y1 = -1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (ink[y * w + x] > threshold) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  if (x1 < 0) return null;
  const bw = x1 - x0 + 1, bh = y1 - y0 + 1;
  const crop = new Float32Array(bw * bh);
  for (let y = 0; y < bh; y++) crop.set(ink.subarray((y0 + y) * w + x0, (y0 + y) * w + x0 + bw), y * bw);

  const scale = box / Math.max(bw, bh);
  const ow = Math.max(1, Math.round(bw * scale)), oh = Math.max(1, Math.round(bh * scale));
  const small = resizeArea(crop, bw, bh, ow, oh);

  // Centre of mass of the scaled digit, in pixel-centre coordinates.
  let m = 0, mx = 0, my = 0;
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) {
      const v = small[y * ow + x];
      m += v; mx += v * (x + 0.5); my += v * (y + 0.5);
    }
  }
  const cx = m > 0 ? mx / m : ow / 2, cy = m > 0 ? my / m : oh / 2;
  // Integer shift putting the centre of mass at the image centre, kept inside the frame.
  const clamp = (v, lo, hi) => Math.min(hi, Math.max(lo, v));
  const ox = clamp(Math.round(size / 2 - cx), 0, size - ow);
  const oy = clamp(Math.round(size / 2 - cy), 0, size - oh);

  const out = new Float32Array(size * size);
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) out[(oy + y) * size + ox + x] = Math.min(1, Math.max(0, small[y * ow + x]));
  }
  return out;
}
