// The writing page's time per token (#steps): one bar per token, each 1/maxNewTokens of the strip wide so that
// the strip fills as the run goes, the first token's (with the prompt's prefill) in orange, scaled to the
// slowest later step; hovering names a bar's token and its time (#steps-hover). Not the stats line (result.js).
import { formatMs } from '../shared/panel.js';
import { fitCanvas } from './canvas.js';
import { charLabel } from './vocabulary.js';

const HEIGHT = 48;  // px, as #steps is in write.css

/**
 * Mounts the strip on `canvas` with its `hover` line. `page.run` and `page.vocab` are the run on show and
 * the vocabulary; `schedule(true)` redraws when the strip's width changes. Returns { draw(run), reset() }.
 */
export function mountSteps({ canvas, hover, page, schedule }) {
  // The width, read when it changes rather than in every frame (a read forces a layout).
  let width = 600;
  new ResizeObserver((entries) => {
    for (const e of entries) width = Math.floor(e.contentRect.width);
    schedule(true);
  }).observe(canvas.parentElement);

  /** One bar per token of run `r`. */
  function draw(r) {
    const height = HEIGHT;
    const ctx = fitCanvas(canvas, width, height);
    ctx.clearRect(0, 0, width, height);
    ctx.fillStyle = '#eef0f4';
    ctx.fillRect(0, height - 1, width, 1);
    const bw = width / r.options.maxNewTokens;
    const scale = Math.max(r.maxStepMs, r.n === 1 ? r.ms[0] : 0, 1e-3);
    for (let i = 0; i < r.n; i++) {
      const h = Math.max(1, Math.min(1, r.ms[i] / scale) * (height - 2));
      ctx.fillStyle = i === 0 ? '#f2a65a' : '#9fb3ef';
      ctx.fillRect(i * bw, height - 1 - h, Math.max(1, bw - (bw > 3 ? 1 : 0)), h);
    }
    r.stepsGeometry = { bw, width };
  }

  function reset() {
    hover.innerHTML = '&nbsp;';
  }

  canvas.addEventListener('mousemove', (e) => {
    const r = page.run;
    if (!r?.stepsGeometry) return;
    const i = Math.floor((e.clientX - canvas.getBoundingClientRect().left) / r.stepsGeometry.bw);
    hover.textContent = i >= 0 && i < r.n
      ? `token ${i + 1} ${charLabel(page.vocab, r.ids[r.P0 + i])}: ${formatMs(r.ms[i])}${i === 0 ? ' (with the prompt\'s prefill)' : ''}`
      : '\u00a0';
  });
  canvas.addEventListener('mouseleave', reset);
  return { draw, reset };
}
