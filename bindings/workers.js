// The pthreads glue's workers as a Node process and a page see them: unref'd so that Node exits, and the
// global Worker the glue sets for itself hidden from the user's process (loader.js, runtime.js).
import { isNode } from './checks.js';

/**
 * Node keeps running while a worker_threads Worker is referenced, and the
 * Emscripten glue never unrefs its pool workers (idle threads wait in
 * Atomics.wait): unref them all, so `node script.mjs` and `node --test` exit.
 */
export function unrefWorkers(core) {
  const pt = core.PThread;
  if (!isNode || !pt) return;
  for (const w of [...pt.unusedWorkers, ...pt.runningWorkers]) if (typeof w.unref === 'function') w.unref();
}

/**
 * In Node the pthreads glue sets globalThis.Worker (worker_threads.Worker) for
 * its own use; the user's process should not see it. Saves the global's state
 * so restore() can put it back.
 */
export function saveWorkerGlobal() {
  const desc = Object.getOwnPropertyDescriptor(globalThis, 'Worker');
  return {
    restore() {
      if (!isNode) return;
      if (desc) Object.defineProperty(globalThis, 'Worker', desc);
      else delete globalThis.Worker;
    },
  };
}
