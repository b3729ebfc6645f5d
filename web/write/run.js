// A run of the writing page: one generation and everything the page draws from it, in arrays sized for the
// whole run up front. A token does only bookkeeping here (its id, time, text and a copy of its attention's
// window): the model writes about 2 000 tokens/s in the worker here (headless Chromium, 2 cores, drawing
// included; 1 600-1 700 in the page), and frames.js draws whatever arrived meanwhile. Also the run's figures
// as window.writeDemo.state reports them. Not the Write loop (writer.js) nor any drawing.

let runs = 0;

/**
 * A new run, numbered from 1 in the page: generation `g` (generate()'s, for its promptIds and seed) after
 * `prompt` with generate()'s `options`, Write pressed at `t0` (performance.now()'s clock), by model `lm`
 * (numLayers, numHeads, attentionWindow). Plain typed arrays, owned by the page; nothing to dispose.
 */
export function newRun(g, prompt, options, t0, lm) {
  runs += 1;
  const P0 = g.promptIds.length;
  const L = lm.numLayers, H = lm.numHeads;
  const cap = P0 + options.maxNewTokens;
  const W = Math.min(lm.attentionWindow ?? cap, cap);
  const r = {
    number: runs,
    prompt,
    options,
    seed: g.seed,
    t0,
    P0,
    L,
    H,
    W,
    ids: new Int32Array(cap),        // the context: prompt ids (with the leading <eos>), then generated ids
    ms: new Float32Array(options.maxNewTokens),  // each token's step time
    n: 0,                            // tokens so far
    // The attention that chose token i: (L, H, W) floats at i·L·H·W, over positions
    // start(i) … start(i) + W − 1 where start(i) = max(0, P0 + i − W); the weights
    // outside the model's window are zeros, so nothing is lost.
    att: new Float32Array(options.maxNewTokens * L * H * W),
    pending: [],                     // text pieces not yet in the DOM: strings, or null for an <eos>
    firstAt: null,
    lastAt: null,
    firstPaintAt: null,
    maxStepMs: 0,                    // the slowest step after the first (the strip's scale)
    stopReason: null,
    error: null,
    shown: null,                     // the token whose attention is on show (null: follow the newest)
    layout: null,                    // heatmap.js layoutCells(): where each position's cell is
    heatGeometry: null,              // what the heatmap shows (for hovering and clicking)
    stepsGeometry: null,             // the per-token strip's bar width (for hovering)
    linkWritten: false,
    renders: 0,                      // frames drawn, their total and largest time (ms)
    renderMs: 0,
    renderMaxMs: 0,
  };
  r.ids.set(g.promptIds);
  return r;
}

/** Token `t` (generate()'s: index, id, ms, text, attention) into run `r`: bookkeeping only; `vocab` tells an <eos>. */
export function addToken(r, t, vocab) {
  const now = performance.now();
  const i = t.index;
  r.ids[r.P0 + i] = t.id;
  r.ms[i] = t.ms;
  if (i > 0 && t.ms > r.maxStepMs) r.maxStepMs = t.ms;
  r.n = i + 1;
  if (r.firstAt === null) r.firstAt = now;
  r.lastAt = now;
  r.pending.push(vocab.special[t.id] ? null : t.text);
  const { layers, heads, positions, data } = t.attention;
  const w = Math.min(positions, r.W);
  const base = i * r.L * r.H * r.W;
  for (let lh = 0; lh < layers * heads; lh++) {
    r.att.set(data.subarray(lh * positions + positions - w, (lh + 1) * positions), base + lh * r.W);
  }
}

/** Run `r`'s figures for tests and the console (a new plain object); `text` is the written text as the page shows it. */
export function runFigures(r, text) {
  return {
    run: r.number,
    prompt: r.prompt,
    promptIds: r.P0,
    tokens: r.n,
    text,
    seed: r.seed,
    stopReason: r.stopReason,
    firstTokenMs: r.firstAt === null ? null : r.firstAt - r.t0,
    firstPaintMs: r.firstPaintAt === null ? null : r.firstPaintAt - r.t0,
    tokensPerSecond: r.n >= 2 ? (r.n - 1) / ((r.lastAt - r.firstAt) / 1000) : null,
    writingMs: r.lastAt === null ? null : r.lastAt - r.t0,
    stepMs: Array.from(r.ms.subarray(0, r.n)),
    frames: r.renders,
    renderMeanMs: r.renders ? r.renderMs / r.renders : null,
    renderMaxMs: r.renderMaxMs,
  };
}
