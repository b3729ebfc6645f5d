// Colour maps for the attention heatmaps: t in [0, 1] → [r, g, b] (0..255).

function ramp(stops) {
  const n = stops.length - 1;
  return (t) => {
    const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * n;
    const i = Math.min(n - 1, Math.floor(x));
    const f = x - i;
    const a = stops[i], b = stops[i + 1];
    return [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * f));
  };
}

/** Light to dark blue (ColorBrewer "Blues"): for heatmaps on a white page. */
export const blues = ramp([
  [247, 251, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107],
]);

/** Black through purple and orange to light yellow (matplotlib "magma", 6 stops): for maps under a white overlay. */
export const magma = ramp([
  [0, 0, 4], [59, 15, 112], [140, 41, 129], [222, 73, 104], [254, 159, 109], [252, 253, 191],
]);

/** CSS colour string for a map value. */
export function css([r, g, b], alpha = 1) {
  return alpha === 1 ? `rgb(${r}, ${g}, ${b})` : `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

/** Text colour readable on top of a cell of colour rgb. */
export function textOn([r, g, b]) {
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#1d2330' : '#ffffff';
}
