// Where the writing page's model runs: in a Web Worker ('attnwasm/worker', the default; the page only draws)
// or, with ?runtime=page, in the page itself (init() from 'attnwasm'), to compare. The rest of the page is the
// same either way: it awaits every call of the model (a worker's proxies return promises; awaiting the page's
// own values is a no-op). Not the model's load (startDemo in ../shared/panel.js) nor anything drawn but the
// "runs in" line.
import { createWorker } from 'attnwasm/worker';

/** Where the model runs: 'worker' (the default) or 'page' (?runtime=page). */
export const RUNTIME = new URLSearchParams(location.search).get('runtime') === 'page' ? 'page' : 'worker';

/**
 * The runtime, for startDemo: createWorker() (the runtime in a Web Worker; in a page
 * without COOP/COEP it runs one thread, as the page would), or init() in the page
 * with ?runtime=page. `capabilities()` as startDemo reads it. In the worker the first
 * token shows one frame later than in the page (15 ms after Write here, against 2 ms):
 * Chromium runs the frame that follows a click before any message, and a token is a message.
 */
export async function startRuntime() {
  if (RUNTIME === 'page') {
    const { init } = await import('attnwasm');
    const runtime = await init();
    return { runtime, capabilities: () => runtime.capabilities() };
  }
  const runtime = await createWorker();
  return { runtime, capabilities: () => runtime.startCapabilities };
}

/** Says in `el` (#runs-in: a <span> and an <a>) where the model runs, and links to this page running it in the other. */
export function showRunsIn(el) {
  el.querySelector('span').textContent = RUNTIME === 'page'
    ? 'The model runs in this page, on its main thread, between the frames it draws.'
    : 'The model runs in a Web Worker; this page only draws what it writes.';
  const other = el.querySelector('a');
  const q = new URLSearchParams(location.search);
  if (RUNTIME === 'page') q.delete('runtime');
  else q.set('runtime', 'page');
  other.href = `?${q}`;
  other.textContent = RUNTIME === 'page' ? 'run it in a worker' : 'run it in the page instead';
}
