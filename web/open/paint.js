// Painting an attention grid into a canvas, one pixel a weight (sized by CSS): the newest token's grid
// (lm_attention.js) and a sentence token's (token_attention.js).
import { blues } from '../shared/colormap.js';

/**
 * Paints `rows` × `cols` weights into canvas `c`: row r's weights are data[base(r) + j], scaled to the row's
 * largest; row `sel` tinted.
 */
export function paintHeat(c, data, rows, cols, base, sel) {
  const img = new ImageData(cols, rows);
  for (let r = 0; r < rows; r++) {
    const b = base(r);
    let max = 0;
    for (let j = 0; j < cols; j++) max = Math.max(max, data[b + j]);
    for (let j = 0; j < cols; j++) {
      const [R, G, B] = blues(max > 0 ? data[b + j] / max : 0);
      const o = 4 * (r * cols + j);
      const mark = r === sel;
      img.data[o] = mark ? Math.min(255, R + 40) : R;
      img.data[o + 1] = mark ? G * 0.8 : G;
      img.data[o + 2] = B;
      img.data[o + 3] = 255;
    }
  }
  c.getContext('2d').putImageData(img, 0, 0);
}
