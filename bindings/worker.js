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
// (the object it stands for). Worker → page: data (its ArrayBuffers moved, not copied: logits, attention),
// class instances as proxies, errors as errors of the same class with the same `code` and message.
// Messages: { op: 'init' | 'call' | 'cancel' | 'pull' | 'return' | 'abort' | 'release' | 'close', id?, … } to the
// worker; { type: 'hello' | 'reply' | 'item' | 'callback', … } back.
import { AttnWasmError, typeError, describe } from './errors.js';
import { isNode, checkOptions, checkInteger } from './checks.js';
import { HubCache } from './hub/cache.js';
import { looksLikeHubId } from './hub/ids.js';

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
/** Tokens the worker computes ahead of the page (it grants one more for each token it takes). */
const AHEAD = 2;
/** How long close() waits for the worker to free its runtime before it ends the worker anyway. */
const CLOSE_WAIT_MS = 5000;

const INIT_OPTIONS = ['threads', 'workingMemory', 'relaxedSimd', 'threadStartTimeoutMs', 'wasmUrl', 'wasmBinary'];
const OWN_OPTIONS = ['workerUrl', 'startTimeoutMs'];

const isAbortSignal = (v) => typeof AbortSignal === 'function' && v instanceof AbortSignal;
const isPlain = (v) => v !== null && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
const closedError = () => new AttnWasmError('ERR_CLOSED', 'this attnwasm worker was closed (rt.close()); call createWorker() for a new one');

/** An error from the worker ({ name, code, message, … }) as the page's own class, code and message. */
function toError(d) {
  let e;
  if (d.name === 'AttnWasmError') e = new AttnWasmError(d.code ?? 'ERR_INVALID_ARGUMENT', d.message, { url: d.url, status: d.status });
  else if (d.name === 'TypeError') e = new TypeError(d.message);
  else if (d.name === 'RangeError') e = new RangeError(d.message);
  else {
    e = new Error(d.message);
    if (d.name) e.name = d.name;
  }
  for (const k of ['code', 'input', 'suggestion']) if (d[k] !== undefined && e[k] === undefined) e[k] = d[k];
  if (d.stack) Object.defineProperty(e, 'workerStack', { value: d.stack, enumerable: false });
  return e;
}

/**
 * The message channel to one worker: calls waiting for their replies, generations receiving tokens,
 * callbacks the worker may call, AbortSignals mirrored there. In Node the worker is ref'd only while the
 * page waits for it, so a script that forgets close() still exits.
 */
class Channel {
  constructor(worker) {
    this.worker = worker;
    this.pending = new Map();   // call id → { resolve, reject, cbs }
    this.streams = new Map();   // ref → RemoteGeneration
    this.callbacks = new Map(); // callback id → function
    this.signalIds = new WeakMap();
    this.nextId = 1;
    this.waiting = 0;           // generations whose consumer waits in next()
    this.ended = null;          // the error every call gets once the worker is gone
    this.gaveUp = new Set();    // ids of calls rejected here before the worker answered (a callback threw)
    this.registry = typeof FinalizationRegistry === 'function'
      ? new FinalizationRegistry((ref) => { if (!this.ended) this.send({ op: 'release', ref }); }) : null;
  }

  send(msg, transfer = []) {
    if (this.ended) throw this.ended;
    this.worker.postMessage(msg, transfer);
  }

  /** Node: the worker keeps the process alive only while something waits for it. */
  busy() {
    if (!isNode || this.ended) return;
    if (this.pending.size + this.waiting > 0) this.worker.ref();
    else this.worker.unref();
  }

  /** Sends { op, … } and resolves to the reply's value (turned into proxies) or rejects with its error. */
  request(msg, transfer = [], cbs = []) {
    if (this.ended) {
      for (const cb of cbs) this.callbacks.delete(cb);
      return Promise.reject(this.ended);
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, cbs });
      try {
        this.send({ ...msg, id }, transfer);
      } catch (e) {
        this.pending.delete(id);
        reject(e instanceof Error && e.name === 'DataCloneError'
          ? typeError(`an argument cannot be sent to the worker: ${e.message}`) : e);
      }
      this.busy();
    });
  }

  onMessage(m) {
    switch (m.type) {
      case 'reply': {
        const p = this.pending.get(m.id);
        if (!p) {
          // The reply of a call its caller gave up (a callback threw) after the worker had answered: what it
          // made is released there.
          if (this.gaveUp.delete(m.id)) this.releaseAll(m.value);
          return;
        }
        this.pending.delete(m.id);
        this.busy();
        if (m.error) {
          for (const cb of p.cbs) this.callbacks.delete(cb);
          p.reject(toError(m.error));
          return;
        }
        const value = this.fromWorker(m.value, null, p.cbs);
        // A call's callbacks live as long as the call, or as the generation it started.
        if (!(value instanceof RemoteGeneration)) for (const cb of p.cbs) this.callbacks.delete(cb);
        p.resolve(value);
        return;
      }
      case 'item': this.streams.get(m.ref)?._arrive(m); return;
      case 'callback': {
        const fn = this.callbacks.get(m.cb);
        if (fn) {
          try {
            fn(...this.fromWorker(m.args, null, []));
          } catch (e) {
            // A callback that throws (onProgress) ends its call with that error, as in the page: the caller's
            // promise rejects now and the worker drops the call's result (a model it makes is disposed).
            const id = [...this.pending].find(([, p]) => p.cbs.includes(m.cb))?.[0];
            if (id === undefined) {
              setTimeout(() => { throw e; });
              return;
            }
            const p = this.pending.get(id);
            this.pending.delete(id);
            for (const cb of p.cbs) this.callbacks.delete(cb);
            this.busy();
            if (!this.ended) this.send({ op: 'cancel', id });
            this.gaveUp.add(id);
            p.reject(e);
          }
        }
        return;
      }
      default:
    }
  }

  /** Sends a release for every object of the worker's that `v` (a reply's value) describes. */
  releaseAll(v, depth = 0) {
    if (v === null || typeof v !== 'object' || depth > 64 || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return;
    if (typeof v.$ref === 'number' && typeof v.kind === 'string') {
      if (!this.ended) this.send({ op: 'release', ref: v.$ref });
      return;
    }
    for (const x of Array.isArray(v) ? v : Object.values(v)) this.releaseAll(x, depth + 1);
  }

  /** The worker is gone (closed, crashed, terminated): everything waiting gets `error`. */
  end(error) {
    if (this.ended) return;
    this.ended = error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
    for (const s of this.streams.values()) s._arrive({ error, end: null, local: true });
    this.streams.clear();
    this.callbacks.clear();
  }

  /** An argument as it crosses to the worker (see the file header); `cbs` collects the callbacks made. */
  toWorker(v, transfer, cbs, depth = 0) {
    if (typeof v === 'function') {
      const cb = this.nextId++;
      this.callbacks.set(cb, v);
      cbs.push(cb);
      return { $callback: cb };
    }
    if (v === null || typeof v !== 'object') return v;
    if (isAbortSignal(v)) {
      let sid = this.signalIds.get(v);
      if (sid === undefined) {
        sid = this.nextId++;
        this.signalIds.set(v, sid);
        if (!v.aborted) v.addEventListener('abort', () => { if (!this.ended) this.send({ op: 'abort', signal: sid }); }, { once: true });
      }
      return { $signal: sid, aborted: v.aborted };
    }
    if (v instanceof RemoteObject) return { $ref: v._ref };
    if (typeof FileList === 'function' && v instanceof FileList) return Array.from(v);
    if (typeof Response === 'function' && v instanceof Response) {
      if (v.body) transfer.push(v.body);
      return { $response: { status: v.status, statusText: v.statusText, headers: [...v.headers], body: v.body } };
    }
    if (typeof ReadableStream === 'function' && v instanceof ReadableStream) {
      transfer.push(v);
      return v;
    }
    if (depth > 64 || ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof Map || v instanceof Set
      || (typeof Blob === 'function' && v instanceof Blob) || v instanceof Date || v instanceof RegExp) return v;
    if (Array.isArray(v)) return v.map((x) => this.toWorker(x, transfer, cbs, depth + 1));
    if (isPlain(v)) {
      const out = {};
      for (const [k, x] of Object.entries(v)) out[k] = this.toWorker(x, transfer, cbs, depth + 1);
      return out;
    }
    // ImageData and other platform objects clone; an object of attnwasm's own (a Tokenizer) does not.
    if (typeof ImageData === 'function' && v instanceof ImageData) return v;
    throw typeError(`an argument cannot be sent to the worker: a ${describe(v)} (pass its data: a tokenizer.json rather than a Tokenizer)`);
  }

  /** A value from the worker: { $ref } descriptors become proxies, the rest is as it came. */
  fromWorker(v, parent, cbs, depth = 0) {
    if (v === null || typeof v !== 'object' || depth > 64 || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return v;
    if (Array.isArray(v)) return v.map((x) => this.fromWorker(x, parent, cbs, depth + 1));
    if (!isPlain(v)) return v;
    if (typeof v.$ref === 'number' && typeof v.kind === 'string') {
      if (v.stream) return new RemoteGeneration(this, v, cbs);
      return new RemoteObject(this, v, parent);
    }
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = this.fromWorker(x, parent, cbs, depth + 1);
    return out;
  }

  /** Calls `method` on the worker's object `ref` (0: the runtime). */
  call(ref, method, args, { source = false } = {}) {
    const transfer = [];
    const cbs = [];
    let sent;
    try {
      sent = args.map((a, i) => this.toWorker(i === 0 && source ? resolveSource(a) : a, transfer, cbs));
    } catch (e) {
      for (const cb of cbs) this.callbacks.delete(cb);
      return new RemoteCall(Promise.reject(e));
    }
    const signal = args.find((a) => isPlain(a) && isAbortSignal(a.signal))?.signal ?? null;
    return new RemoteCall(this.request({ op: 'call', ref, method, args: sent }, transfer, cbs), signal);
  }
}

/**
 * A model's source as the worker should see it: in a page, a relative URL made absolute (the worker's base is
 * its script); a hub id ('org/name') stays one.
 */
function resolveSource(s) {
  if (isNode || !(typeof s === 'string' || s instanceof URL) || looksLikeHubId(s)) return s;
  try {
    return new URL(String(s), globalThis.location?.href).href;
  } catch {
    return s;
  }
}

/**
 * What every method of a proxy returns: a promise of the result that is also the result's async iterator
 * when the result is one (a generation), so both `await lm.encode(text)` and
 * `for await (const t of lm.generate(prompt))` read as they do in the page, and the generation's
 * stopReason, text, ids, promptIds and seed are read from it afterwards.
 */
class RemoteCall {
  constructor(promise, signal = null) {
    this._promise = promise;
    this._gen = null;
    // (Also marks the promise handled: a call nobody awaits, dispose() say, never reports a rejection.)
    promise.then((v) => {
      if (v instanceof RemoteGeneration) {
        v._signal = signal;
        this._gen = v;
      }
    }, () => {});
    // Any other property is the generation's (stopReason, text, a chat turn's message, …) once it has started.
    return new Proxy(this, {
      get(target, k) {
        if (k in target) return target[k];
        const g = target._gen;
        if (!g) return k === 'ids' ? [] : k === 'text' ? '' : k === 'stopReason' ? null : undefined;
        const v = g[k];
        return typeof v === 'function' ? v.bind(g) : v;
      },
    });
  }

  then(onFulfilled, onRejected) { return this._promise.then(onFulfilled, onRejected); }
  catch(onRejected) { return this._promise.catch(onRejected); }
  finally(onFinally) { return this._promise.finally(onFinally); }

  [Symbol.asyncIterator]() { return this; }

  async next() {
    const v = await this._promise;
    if (!(v instanceof RemoteGeneration)) throw typeError('next: this call\'s result is not an async iterator');
    return v.next();
  }

  async return() {
    let v;
    try { v = await this._promise; } catch { return { done: true, value: undefined }; }
    return v instanceof RemoteGeneration ? v.return() : { done: true, value: undefined };
  }
}

/**
 * A proxy of an object in the worker (a model, its tokenizer, …): its data properties copied when it was
 * made, its methods forwarded by name (each returns a RemoteCall). Models hold native memory in the
 * worker: dispose() frees it (a proxy the garbage collector takes frees it too).
 */
class RemoteObject {
  constructor(ch, desc, parent) {
    Object.defineProperty(this, '_ch', { value: ch });
    Object.defineProperty(this, '_ref', { value: desc.$ref });
    Object.defineProperty(this, '_disposed', { value: false, writable: true });
    /** The class of the object in the worker: 'CausalLM', 'Translator', 'Classifier', 'Tokenizer', … */
    Object.defineProperty(this, 'kind', { value: desc.kind, enumerable: false });
    for (const [k, v] of Object.entries(desc.props)) {
      Object.defineProperty(this, k, { value: ch.fromWorker(v, this, []), enumerable: true });
    }
    for (const name of desc.methods) {
      if (name === 'dispose') continue;
      Object.defineProperty(this, name, {
        value: (...args) => (this._disposed
          ? new RemoteCall(Promise.reject(new AttnWasmError('ERR_DISPOSED', `${desc.kind}: used after dispose()`)))
          : ch.call(this._ref, name, args)),
      });
    }
    if (desc.methods.includes('dispose')) {
      Object.defineProperty(this, 'dispose', { value: () => this._dispose() });
    }
    ch.registry?.register(this, desc.$ref, this);
    // A child (a model's tokenizer) keeps its parent alive.
    if (parent) Object.defineProperty(this, '_parent', { value: parent });
  }

  /** Frees the object in the worker; idempotent. Resolves once the worker has. */
  async _dispose() {
    if (this._disposed || this._ch.ended) return;
    this._disposed = true;
    this._ch.registry?.unregister(this);
    await this._ch.request({ op: 'call', ref: this._ref, method: 'dispose', args: [] }).catch(() => {});
  }

  [Symbol.dispose]() { this._dispose(); }
  [Symbol.asyncDispose]() { return this._dispose(); }
}

/**
 * A generation running in the worker, as an async iterator of its tokens (CausalLM#generate, #chat, …).
 * The worker computes up to AHEAD tokens before the page takes them. An AbortSignal ends it within one
 * token, as in the page (tokens already computed are dropped); return() (what `break` calls) ends it in
 * the worker after the token being computed and frees its cache. Its fields (promptIds, seed, ids, text,
 * stopReason, and any other the object in the worker has, such as a chat turn's message) are copied as
 * it starts, kept up to date as tokens are taken, and set from the worker's object when it ends; its
 * other methods (a chat turn's finalMessage) take the tokens left, then run in the worker.
 */
class RemoteGeneration {
  constructor(ch, desc, cbs) {
    for (const [k, v] of Object.entries(desc.props)) this[k] = ch.fromWorker(v, null, []);
    Object.defineProperties(this, {
      _ch: { value: ch },
      _ref: { value: desc.$ref },
      _cbs: { value: cbs },
      _queue: { value: [] },
      _wake: { value: null, writable: true },
      _started: { value: false, writable: true },
      _finished: { value: false, writable: true },
      _chain: { value: Promise.resolve(), writable: true },
      _signal: { value: null, writable: true },
      _workerEnd: { value: null, writable: true },
      _endWaiters: { value: [] },
      _doneValue: { value: undefined, writable: true },
      /** The class of the object in the worker ('Generation', 'ChatTurn', …). */
      kind: { value: desc.kind },
    });
    /** @readonly the ids taken so far */ this.ids = [];
    /** @readonly the text taken so far */ if (typeof this.text === 'string' || this.text === undefined) this.text = '';
    /** 'stop' | 'length' | 'context' | 'aborted' | 'error', or null while running */
    this.stopReason = null;
    for (const name of desc.methods) {
      Object.defineProperty(this, name, {
        value: async (...args) => {
          while (!(await this.next()).done);
          return ch.call(this._ref, name, args);
        },
      });
    }
    ch.streams.set(this._ref, this);
    ch.registry?.register(this, desc.$ref);
  }

  [Symbol.asyncIterator]() { return this; }

  _arrive(m) {
    if (m.end !== undefined || m.error) this._noteEnd(m.end ?? null);
    if (this._finished) return;
    if (m.local) this._queue.length = 0;  // the worker is gone: tokens not taken go with it
    this._queue.push(m);
    const w = this._wake;
    this._wake = null;
    w?.();
  }

  /** The worker's own end of the generation ({ stopReason, produced, … }), once it has one. */
  _noteEnd(end) {
    if (this._workerEnd) return;
    this._workerEnd = end ?? {};
    for (const r of this._endWaiters) r(this._workerEnd);
  }

  /** Internal (tests): resolves to the worker's end state: { stopReason, produced } (tokens it computed). */
  _ended() {
    return this._workerEnd ? Promise.resolve(this._workerEnd) : new Promise((r) => this._endWaiters.push(r));
  }

  _finish(reason) {
    if (!this._finished) {
      this._finished = true;
      this._ch.streams.delete(this._ref);
      if (!this.stopReason) this.stopReason = reason;
      if (this.message && typeof this.message === 'object' && typeof this.message.content === 'string') {
        this.message = { ...this.message, content: this.text };
        this._doneValue ??= this.message;  // a chat turn ends with its message
      }
      for (const cb of this._cbs) this._ch.callbacks.delete(cb);
    }
    return { done: true, value: this._doneValue };
  }

  next() {
    const step = this._chain.then(() => this._next());
    this._chain = step.catch(() => {});
    return step;
  }

  async _next() {
    if (this._finished) return { done: true, value: this._doneValue };
    if (this._signal?.aborted) return this._abort();
    if (!this._started) {
      this._started = true;
      try { this._ch.send({ op: 'pull', ref: this._ref, n: AHEAD }); } catch (e) { this._finish('error'); throw e; }
    }
    if (!this._queue.length) {
      this._ch.waiting++;
      this._ch.busy();
      try {
        await new Promise((r) => { this._wake = r; });
      } finally {
        this._ch.waiting--;
        this._ch.busy();
      }
    }
    const m = this._queue.shift();
    if (m.error) {
      if (m.end) Object.assign(this, this._ch.fromWorker(m.end, null, []), { ids: this.ids, text: this.text });
      this.stopReason = 'error';
      this._finish('error');
      throw m.local ? m.error : toError(m.error);
    }
    if (m.done) {
      // The natural end: every token was taken, so the worker's state is the page's.
      const { produced, ...end } = this._ch.fromWorker(m.end ?? {}, null, []);
      Object.assign(this, end);
      this._doneValue = this._ch.fromWorker(m.value, null, []);
      return this._finish(this.stopReason);
    }
    if (this._signal?.aborted) return this._abort();
    const value = this._ch.fromWorker(m.value, null, []);
    this.ids.push(value.id);
    if (typeof value.text === 'string') this.text += value.text;
    if (!this._ch.ended) this._ch.send({ op: 'pull', ref: this._ref, n: 1 });
    return { done: false, value };
  }

  _abort() {
    this._finish('aborted');
    this._stop();
    return { done: true, value: this._doneValue };
  }

  /** Asks the worker to end the generation (after the token it is computing) and free its cache. */
  _stop() {
    if (this._workerEnd || this._ch.ended) return Promise.resolve();
    return this._ch.request({ op: 'return', ref: this._ref }).then((r) => this._noteEnd(r?.end ?? null), () => {});
  }

  /** Ends it now (what `break` in a for-await loop calls): the worker stops and frees its cache. */
  async return() {
    if (!this._finished) {
      this._finish('aborted');
      await this._stop();
    }
    return { done: true, value: this._doneValue };
  }
}

/**
 * The runtime in a worker (what createWorker resolves to): the API of init()'s runtime that does not hold
 * native objects in the page — loadModel, loadCausalLM, loadTranslator, loadClassifier, memory(),
 * capabilities(), resetPeakMemory() and the functional API (scaledDotProductAttention, …) — each returning
 * a promise; models come back as proxies. close() ends the worker.
 */
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
    ready = await ch.request({ op: 'init', options: initOptions });
  } catch (e) {
    ch.end(closedError());
    await worker.terminate();
    throw e;
  }
  return new WorkerRuntime(ch, ready.methods, ready.capabilities, String(url));
}
