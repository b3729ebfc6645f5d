// The writing page's Write loop: one generation at a time. Write (or Ctrl+Enter, or an example) stops the run
// that is writing and waits for it to end; of several pressed meanwhile only the last writes. A Write checks the
// prompt, reads the settings, starts generate() with the attention and takes its tokens until the end or Stop.
// Also the warm-up after the load. Not the drawing (frames.js) nor the prompt's check (prompt_check.js).
import { newRun, addToken } from './run.js';
import { readOptions } from './options.js';

/**
 * Warms the model up: the first calls of each wasm function run baseline code (V8's Liftoff)
 * until the optimised code is ready, so a prompt's prefill and a few hundred steps here make
 * the first Write as fast as the next ones (measured in headless Chromium, 20-character
 * prompt: first token 43-101 ms after a cold page's first Write, 3-5 ms after this warm-up).
 */
export async function warmUp(lm) {
  const g = lm.generate('Computers are the best of friends', {
    maxNewTokens: 300, temperature: 0.8, topP: 0.95, seed: 1, stopTokens: [], attention: true,
  });
  for await (const token of g) void token;  // only the time it takes
}

/**
 * The Write loop over `page` ({ lm, vocab, run }: it sets page.run to each new run). `promptCheck` is
 * prompt_check.js's, `inputs` the settings' controls, `frames` frames.js's. Returns { start(t0), stop() }.
 */
export function createWriter({ page, promptInput, promptCheck, inputs, stopButton, resultCard, frames }) {
  /** The Write being handled now: { controller }, or null. */
  let active = null;
  /** Each Write waits for the one before it to end (never two at once). */
  let writes = Promise.resolve();
  let writeRequests = 0;

  /**
   * Write pressed (or Ctrl+Enter, or an example) at time `t0` (the event's
   * timeStamp, on performance.now()'s clock). Stops the Write being handled
   * first and waits for it to end: never two at once; of several pressed
   * meanwhile, only the last writes.
   */
  function start(t0) {
    if (!page.lm) return;
    const request = ++writeRequests;
    active?.controller.abort();
    const next = writes.then(() => (request === writeRequests ? write(t0) : undefined));
    writes = next.catch(() => {});  // (an error still reaches the console through `next`)
  }

  /** One Write: check the prompt, start the generation, take its tokens until it ends or `active` is aborted. */
  async function write(t0) {
    const controller = new AbortController();
    active = { controller };
    try {
      const text = promptInput.value;
      // The prompt as typed was checked already (unless a check is on its way): no round trip to the worker.
      const known = promptCheck.answered(text);
      if (!(known ? known.ids : await promptCheck.check())) {
        promptInput.focus();
        return;
      }
      if (controller.signal.aborted) return;
      let options;
      let g;
      try {
        options = readOptions(inputs);
        // In the worker: the options are checked there, and a bad one rejects here with the API's message.
        g = await page.lm.generate(text, { ...options, signal: controller.signal, attention: true });
      } catch (e) {
        promptCheck.showError(e.message);  // a setting out of range: the API's message names it
        return;
      }
      promptCheck.hideError();
      const run = newRun(g, text, options, t0, page.lm);
      page.run = run;
      frames.begin(run);
      writing(true);
      try {
        // Each token arrives as a message from the worker (a task of its own), so the page paints
        // between them; in the page, generate() waits for a frame after ~40 ms of writing.
        for await (const t of g) {
          addToken(run, t, page.vocab);
          frames.schedule(false);
        }
      } catch (e) {
        run.error = e;
      }
      run.stopReason = g.stopReason;
      // Draw the end now, so that when the page says "done" the whole text is on it.
      frames.end();
      writing(false);
    } finally {
      active = null;
    }
  }

  function writing(on) {
    stopButton.disabled = !on;
    resultCard.dataset.state = on ? 'writing' : page.run?.error ? 'error' : 'done';
    resultCard.classList.toggle('is-writing', on);
  }

  return { start, stop: () => active?.controller.abort() };
}
