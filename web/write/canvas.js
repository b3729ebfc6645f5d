// A canvas drawn at the device pixel ratio in CSS pixels, as the writing page's time strip and heatmap are.
// Not what they draw (steps.js, heatmap.js).

/**
 * Sizes `canvas` to a CSS box of `width` × `height` at the device pixel ratio (its backing store changes
 * only when the size does: a change clears it) and returns its 2D context, scaled to draw in CSS pixels.
 */
export function fitCanvas(canvas, width, height) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(width * dpr), h = Math.round(height * dpr);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}
