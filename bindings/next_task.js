// nextTask: a turn for the event loop between generated tokens (causal_lm.js), so that a page stays
// responsive and paints while a model writes.

/**
 * Gives the event loop a turn between tokens: scheduler.yield() in a page that
 * has it (input runs at once), setImmediate in Node, else a MessageChannel
 * message — not setTimeout, whose 4 ms clamp would cap a fast model at 250
 * tokens/s. Not scheduler.yield() in a worker: Chromium runs its continuations
 * ahead of the worker's incoming messages, so a search running there (a
 * Seq2SeqLM's beam search: one call, many steps) would not see the page's
 * abort until it ended; a MessageChannel turn is a task, queued behind them. In a page, yielded turns do not make Chromium paint
 * (its continuations run ahead of a due frame: 1 000 tokens painted 10–12
 * frames, up to 180 ms apart), so after FRAME_SHARE_MS of generating since the
 * last frame it waits for the next animation frame instead (or 100 ms, when a
 * hidden page has none): the text streams in at about 25 frames a second.
 */
const FRAME_SHARE_MS = 40;
export const nextTask = (() => {
  let turn;
  if (typeof globalThis.scheduler?.yield === 'function' && typeof document === 'object') turn = () => globalThis.scheduler.yield();
  else if (typeof setImmediate === 'function') turn = () => new Promise((r) => setImmediate(r));
  else if (typeof MessageChannel === 'function') {
    const ch = new MessageChannel();
    const waiting = [];
    ch.port1.onmessage = () => waiting.shift()();
    turn = () => new Promise((r) => { waiting.push(r); ch.port2.postMessage(0); });
  } else turn = () => new Promise((r) => setTimeout(r, 0));
  if (typeof requestAnimationFrame !== 'function' || typeof document !== 'object') return turn;
  let lastFrame = performance.now();
  const frame = () => new Promise((r) => {
    const timer = setTimeout(r, 100);
    requestAnimationFrame(() => { clearTimeout(timer); r(); });
  });
  return async () => {
    if (performance.now() - lastFrame < FRAME_SHARE_MS || document.hidden) return turn();
    await frame();
    lastFrame = performance.now();
  };
})();
