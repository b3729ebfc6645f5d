// Painting an attention grid into a canvas, one pixel a weight (sized by CSS): the newest token's grid
// (lm_attention.js) and a sentence token's (token_attention.js); and a patch's attention tinted over its image, a
// cell a patch (patch_attention.js).
import { blues } from '../shared/colormap.js';

/**
 * blues() at LEVELS evenly spaced values, as RGB bytes: a pixel is a table lookup. Calling blues() per pixel (an
 * array and a closure each) made the newest token's grid, 270 rows × up to 256 columns at SmolLM2's shape, a
 * 25–33 ms script on the first token, and with the frame's layout a long task (> 50 ms) on a 2-core EPYC; a
 * color from the table is within one unit of blues()'s in each channel.
 */
const LEVELS = 1024;
const LUT = new Uint8Array(LEVELS * 3);
for (let i = 0; i < LEVELS; i++) LUT.set(blues(i / (LEVELS - 1)), 3 * i);

/**
 * Paints `rows` × `cols` weights into canvas `c`: row r's weights are data[base(r) + j], scaled to the row's
 * largest; row `sel` tinted.
 */
export function paintHeat(c, data, rows, cols, base, sel) {
  const img = new ImageData(cols, rows);
  const px = img.data;
  for (let r = 0; r < rows; r++) {
    const b = base(r);
    let max = 0;
    for (let j = 0; j < cols; j++) max = Math.max(max, data[b + j]);
    const mark = r === sel;
    for (let j = 0; j < cols; j++) {
      const t = max > 0 ? data[b + j] / max : 0;
      const l = 3 * (t > 0 ? Math.round(Math.min(1, t) * (LEVELS - 1)) : 0);  // NaN and t ≤ 0: the lightest
      const o = 4 * (r * cols + j);
      px[o] = mark ? Math.min(255, LUT[l] + 40) : LUT[l];
      px[o + 1] = mark ? LUT[l + 1] * 0.8 : LUT[l + 1];
      px[o + 2] = LUT[l + 2];
      px[o + 3] = 255;
    }
  }
  c.getContext('2d').putImageData(img, 0, 0);
}

/**
 * Paints a weight per patch over an image drawn in `ctx` (a grid of gridH × gridW cells of cellW × cellH pixels):
 * each cell tinted by blues() at its weight scaled to the largest, more opaque the more weight — the image shows
 * where little attention goes. Returns the largest weight.
 */
export function paintPatches(ctx, weights, gridH, gridW, cellW, cellH) {
  let max = 0;
  for (let j = 0; j < gridH * gridW; j++) max = Math.max(max, weights[j]);
  for (let r = 0; r < gridH; r++) {
    for (let c = 0; c < gridW; c++) {
      const t = max > 0 ? Math.min(1, weights[r * gridW + c] / max) : 0;
      if (!(t > 0)) continue;  // NaN and 0: the image as it is
      const l = 3 * Math.round(t * (LEVELS - 1));
      ctx.fillStyle = `rgba(${LUT[l]}, ${LUT[l + 1]}, ${LUT[l + 2]}, ${(0.75 * t).toFixed(3)})`;
      ctx.fillRect(c * cellW, r * cellH, cellW, cellH);
    }
  }
  return max;
}
