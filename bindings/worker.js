// 'attnwasm/worker': the runtime in a worker, driven from the page. createWorker() starts worker_main.js in
// a dedicated Web Worker (browsers) or a worker_threads Worker (Node), runs init() there, and gives the page
// a runtime whose methods return promises and whose models are proxies: every public method of the object
// in the worker, called by name (so a method the API gains works through the worker unchanged), a
// generation an async iterator across the channel. This module never loads the .wasm itself: a page that
// imports it downloads a few KB; the worker loads the runtime.
//
// What crosses, and how. Page → worker: arguments are structured-cloned (bytes are copied; a File, a Blob
// or a URL crosses as a handle and is read in the worker), with markers for what cannot be cloned: an
// AbortSignal (mirrored by an AbortController in the worker), a function (a callback the worker calls
// back, fire and forget: onProgress), a Response (its body stream moved), a FileList (its Files), a proxy
// (the object it stands for), an <img> / canvas / OffscreenCanvas / video frame (an ImageBitmap of it, moved). Worker → page: data (its ArrayBuffers moved, not copied: logits, attention),
// class instances as proxies, errors as errors of the same class with the same `code` and message.
// Messages: { op: 'init' | 'call' | 'cancel' | 'pull' | 'return' | 'abort' | 'release' | 'close', id?, … } to the
// worker; { type: 'hello' | 'reply' | 'item' | 'callback', … } back.
import { AttnWasmError, typeError, describe } from './errors.js';
import { isNode, checkOptions, checkInteger } from './checks.js';
import { HubCache } from './hub/cache.js';
import { Channel, closedError } from './worker_channel.js';
import { resolvedDependencies } from './image/deps.js';

export { AttnWasmError };

// Held in variables so that bundlers neither resolve a Node built-in for the browser nor emit a second copy
// of the worker script as an asset (the browser's literal is in startBrowserWorker).
const NODE_WORKER_THREADS = 'node:worker_threads';
const WORKER_FILE = './worker_main.js';
// The module's own URL in a constant: webpack treats `new URL(variable, import.meta.url)` as a context
// request (a warning and MODULE_NOT_FOUND at run time); a URL resolved against a constant it leaves alone.
const HERE = import.meta.url;
/** How long the worker script may take to start (its modules fetched and evaluated) before it is given up. */
const START_TIMEOUT_MS = 30000;
/** How long close() waits for the worker to free its runtime before it ends the worker anyway. */
const CLOSE_WAIT_MS = 5000;

const INIT_OPTIONS = ['threads', 'workingMemory', 'relaxedSimd', 'threadStartTimeoutMs', 'wasmUrl', 'wasmBinary'];
const OWN_OPTIONS = ['workerUrl', 'startTimeoutMs'];

class WorkerRuntime {
  constructor(ch, methods, capabilities, workerUrl) {
    Object.defineProperty(this, '_ch', { value: ch });
    /** @readonly the Worker running the runtime (a Web Worker, or Node's worker_threads Worker). */
    Object.defineProperty(this, 'worker', { value: ch.worker, enumerable: true });
    /** @readonly the URL the worker script was started from. */
    this.workerUrl = workerUrl;
    /** @readonly capabilities() as the worker reported them when it started. */
    this.startCapabilities = capabilities;
    /** The hub cache the worker's loads use (the origin's, or Node's folder): list(), delete(id), read from here. */
    this.cache = new HubCache();
    for (const name of methods) {
      Object.defineProperty(this, name, { value: (...args) => ch.call(0, name, args, { source: /^load/.test(name) }) });
    }
    Object.defineProperty(this, '_closing', { value: null, writable: true });
  }

  /**
   * Ends the worker: frees every model in it and its runtime, then terminates it (its memory goes back to
   * the system). Calls waiting for it, and every later call on the runtime or a model of it, reject with
   * ERR_CLOSED. Idempotent.
   */
  close() {
    this._closing ??= (async () => {
      const ch = this._ch;
      if (!ch.ended) {
        let timer;
        await Promise.race([
          ch.request({ op: 'close' }).catch(() => {}),
          new Promise((r) => { timer = setTimeout(r, CLOSE_WAIT_MS); }),
        ]);
        clearTimeout(timer);
      }
      ch.end(closedError());
      await ch.worker.terminate();
    })();
    return this._closing;
  }

  [Symbol.asyncDispose]() { return this.close(); }
}

/** A URL for messages: data: URLs cut short. */
const showUrl = (u) => {
  const s = String(u);
  return s.startsWith('data:') ? `${s.slice(0, s.indexOf(',') + 1)}… (${s.length} characters)` : s;
};

/** The worker script from the package: the literal below is what Vite and webpack see and bundle. */
function startBrowserWorker(workerUrl) {
  if (workerUrl !== undefined) return new Worker(String(workerUrl), { type: 'module', name: 'attnwasm' });
  return new Worker(new URL('./worker_main.js', import.meta.url), { type: 'module', name: 'attnwasm' });
}

/** Why a browser worker script did not start, as precisely as a second request can tell. */
async function diagnose(url) {
  const s = String(url);
  if (!/^https?:/i.test(s)) return 'it failed to load or to run';
  try {
    const res = await fetch(s, { method: 'GET', credentials: 'same-origin' });
    if (!res.ok) return `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
    const type = (res.headers.get('content-type') ?? '').split(';')[0].trim();
    if (!/javascript|ecmascript/i.test(type)) return `the server answered ${res.status} with ${type || 'no Content-Type'}, not JavaScript`;
    return 'it, or a module it imports (bindings/index.js, dist/attnwasm_core*.mjs), failed to load or to run';
  } catch (e) {
    return `the request failed (${e?.message ?? e})`;
  }
}

/**
 * Starts the attnwasm runtime in a worker: a dedicated Web Worker (module worker) in a browser, a
 * worker_threads Worker in Node. Options: init()'s (threads, workingMemory, relaxedSimd,
 * threadStartTimeoutMs, wasmUrl, wasmBinary: see InitOptions), applied in the worker — without COOP/COEP a
 * page's worker has one thread, as the page would — plus `workerUrl` (where the worker script is served,
 * when a bundler did not emit it; default: bindings/worker_main.js next to this module) and
 * `startTimeoutMs` (default 30 000: how long the script may take to start). A script that does not start
 * rejects with AttnWasmError ERR_WASM_LOAD naming its URL, the cause and the fix; init() failing in the
 * worker rejects with init()'s error (ERR_WASM_LOAD naming the .wasm, …). The caller owns the runtime
 * returned and ends it with close().
 * @param {{threads?: number|'auto', workingMemory?: number, relaxedSimd?: boolean, threadStartTimeoutMs?: number,
 *   wasmUrl?: string|URL, wasmBinary?: ArrayBuffer|Uint8Array, workerUrl?: string|URL, startTimeoutMs?: number}} [options]
 * @returns {Promise<WorkerRuntime>}
 */
export async function createWorker(options) {
  const o = checkOptions(options, [...INIT_OPTIONS, ...OWN_OPTIONS], 'createWorker');
  if (o.workerUrl !== undefined && typeof o.workerUrl !== 'string' && !(o.workerUrl instanceof URL)) {
    throw typeError(`workerUrl: expected a string or URL, got ${describe(o.workerUrl)}`);
  }
  const startTimeoutMs = o.startTimeoutMs === undefined ? START_TIMEOUT_MS : checkInteger(o.startTimeoutMs, 'startTimeoutMs', { min: 1, max: 600000 });
  const initOptions = {};
  for (const k of INIT_OPTIONS) if (o[k] !== undefined) initOptions[k] = o[k] instanceof URL ? o[k].href : o[k];

  let worker, url;
  const listeners = [];
  const on = (type, fn) => {
    if (isNode) worker.on(type, fn);
    else worker.addEventListener(type, type === 'message' ? (e) => fn(e.data) : fn);
    listeners.push(type);
  };
  if (isNode) {
    const { Worker } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_WORKER_THREADS);
    url = o.workerUrl !== undefined ? o.workerUrl : new URL(WORKER_FILE, HERE);
    try {
      // The worker takes this process's flags (--experimental-wasm-relaxed-simd, …) but --input-type, which
      // only a string given with --eval may have.
      // Some flags a worker refuses (--expose-gc, …): then it starts without any (V8's, such as
      // --experimental-wasm-relaxed-simd, are the process's anyway).
      const target = url instanceof URL || /^file:/i.test(String(url)) ? new URL(String(url)) : String(url);
      const execArgv = process.execArgv.filter((a) => !/^--input-type(=|$)/.test(a));
      try {
        worker = new Worker(target, { execArgv });
      } catch (e) {
        if (e?.code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw e;
        worker = new Worker(target, { execArgv: [] });
      }
    } catch (e) {
      throw new AttnWasmError('ERR_WASM_LOAD', `the attnwasm worker script ${showUrl(url)} did not start: ${e?.message ?? e}. `
        + 'Fix: reinstall attnwasm (its bindings/worker_main.js is missing), or pass createWorker({ workerUrl }).', { url: String(url), cause: e });
    }
  } else {
    if (typeof Worker !== 'function') throw new AttnWasmError('ERR_WASM_LOAD', 'createWorker: this context has no Worker');
    try {
      worker = startBrowserWorker(o.workerUrl);
    } catch (e) {
      url = o.workerUrl ?? new URL(WORKER_FILE, HERE);
      throw new AttnWasmError('ERR_WASM_LOAD', `the attnwasm worker script ${showUrl(url)} did not start: creating the Worker failed (${e?.message ?? e}). `
        + 'Fix: allow it (a Content-Security-Policy needs worker-src for it), or pass createWorker({ workerUrl }).', { url: String(url), cause: e });
    }
    url = o.workerUrl !== undefined ? new URL(String(o.workerUrl), globalThis.location?.href) : new URL(WORKER_FILE, HERE);
  }
  const ch = new Channel(worker);

  // Started: the script says hello; then init() runs in it.
  let hello;
  const started = new Promise((resolve, reject) => { hello = { resolve, reject }; });
  let helloSeen = false;
  on('message', (m) => {
    if (m?.type === 'hello' && !helloSeen) {
      helloSeen = true;
      if (typeof m.url === 'string') url = m.url;  // the script's real URL (a bundler renames and hashes it)
      hello.resolve();
      return;
    }
    ch.onMessage(m);
  });
  const onError = (e) => {
    const message = e?.message ?? (e?.error?.message) ?? '';
    if (!helloSeen) { hello.reject(e); return; }
    ch.end(new AttnWasmError('ERR_CLOSED', `the attnwasm worker ended: ${message || 'an error it did not catch'}`));
  };
  on('error', onError);
  if (isNode) on('exit', (code) => ch.end(new AttnWasmError('ERR_CLOSED', `the attnwasm worker ended (exit code ${code})`)));
  else on('messageerror', () => {});
  let timer;
  try {
    await Promise.race([started, new Promise((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`it did not start within ${startTimeoutMs} ms`), { timeout: true })), startTimeoutMs);
    })]);
  } catch (e) {
    clearTimeout(timer);
    const cause = e?.timeout ? e.message : isNode ? (e?.message ?? String(e)) : await diagnose(url);
    await worker.terminate();
    const fix = o.workerUrl !== undefined
      ? 'Fix: createWorker({ workerUrl }) must be the URL of attnwasm\'s bindings/worker_main.js (or a bundle of it).'
      : isNode ? 'Fix: reinstall attnwasm, or pass createWorker({ workerUrl }).'
        : 'Fix: let your bundler emit it (Vite and webpack do) or bundle node_modules/attnwasm/bindings/worker_main.js as worker_main.js next to your bundle '
          + '(esbuild, Rollup: README, "Install and bundle"), or pass createWorker({ workerUrl }) with the URL where it is served.';
    throw new AttnWasmError('ERR_WASM_LOAD', `the attnwasm worker script ${showUrl(url)} did not start (${cause}). ${fix}`, { url: String(url), cause: e });
  }
  clearTimeout(timer);
  let ready;
  try {
    // The image decoders' packages as this page's import map resolves them: a module worker has no import map.
    ready = await ch.request({ op: 'init', options: initOptions, dependencies: isNode ? {} : resolvedDependencies() });
  } catch (e) {
    ch.end(closedError());
    await worker.terminate();
    throw e;
  }
  return new WorkerRuntime(ch, ready.methods, ready.capabilities, String(url));
}
