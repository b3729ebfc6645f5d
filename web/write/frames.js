// When the writing page draws: at most once per animation frame, whatever number of tokens arrived meanwhile
// (a token only marks what changed: run.js). A frame draws the new text, the stats line, the time strip and,
// when its view changed, the heatmap; a run's start resets them and its end is drawn at once. Not what is
// drawn: result.js, steps.js and heatmap.js.

/**
 * While tokens arrive, the page draws at most once per WRITING_FRAME_MS (25 frames a second, as generate()
 * paints when it runs in the page). A frame keeps the main thread from taking tokens for its drawing (1 ms
 * here) and the browser's style, layout and paint, and the worker computes only two tokens ahead of the page
 * (worker.js, AHEAD): drawing every frame (60 a second) cost 10-20 % of the tokens/s, in the worker and in
 * the page alike (headless Chromium, 2 cores).
 */
const WRITING_FRAME_MS = 40;

/**
 * The frames of the run on show (page.run) drawn by `result`, `steps` and `heatmap` (their mount*()
 * objects). Returns { schedule(heatChanged), begin(run), end() }.
 */
export function createFrames({ page, result, steps, heatmap }) {
  let frameRequested = false;
  let heatDirty = true;
  let renderedAt = -Infinity;

  /** Draws in the next frame: at once when the view changed (`heatChanged`), else WRITING_FRAME_MS after the last. */
  function schedule(heatChanged) {
    if (heatChanged) heatDirty = true;
    if (frameRequested) return;
    frameRequested = true;
    const wait = heatChanged ? 0 : renderedAt + WRITING_FRAME_MS - performance.now();
    if (wait > 1) setTimeout(() => requestAnimationFrame(render), wait);
    else requestAnimationFrame(render);
  }

  function render() {
    frameRequested = false;
    renderedAt = performance.now();
    const r = page.run;
    if (!r) return;
    const t0 = performance.now();
    if (r.pending.length) {
      result.append(r.pending);
      r.pending = [];
      heatDirty = true;
      if (r.firstPaintAt === null) r.firstPaintAt = performance.now();
    }
    result.stats(r);
    steps.draw(r);
    if (heatDirty) heatmap.draw(r);
    heatDirty = false;
    const ms = performance.now() - t0;
    r.renders += 1;
    r.renderMs += ms;
    if (ms > r.renderMaxMs) r.renderMaxMs = ms;
  }

  /** A new run on show: the heatmap follows its newest token, and the text, stats and hover lines start over. */
  function begin(r) {
    heatmap.reset();
    steps.reset();
    result.reset(r);
    heatDirty = true;
  }

  /** The run has ended: drawn at once, not in the next frame. */
  function end() {
    heatDirty = true;
    render();
  }

  return { schedule, begin, end };
}
