// The worker's side of 'attnwasm/worker' (worker.js starts it): one attnwasm runtime (index.js init())
// in a dedicated Web Worker or a Node worker_threads Worker, driven by messages from the page. It holds the
// models and everything made from them under numbered references, runs what the page asks by method
// name (so a method the API gains, such as a CausalLM's chat, works without a change here), reads a
// model's files itself (a URL is fetched, a File or Blob streamed, a Node path read: the page never holds
// the bytes) and streams a generation's tokens ahead of the page by a small window.
// Not here: the page's proxies and what crosses how (worker.js); the protocol is described there.
import { init } from './index.js';
import { isNode } from './checks.js';
import { setDependencyUrls } from './image/deps.js';

// Held in a variable so bundlers do not resolve a Node built-in for the browser.
const NODE_WORKER_THREADS = 'node:worker_threads';

let post;
let aw = null;
/** ref → { value, parent } : the objects the page holds proxies of (models, tokenizers, generations, …). */
const objects = new Map();
let nextRef = 1;
/** signal id → AbortController: the page's AbortSignals, mirrored. */
const signals = new Map();

const isAsyncIterator = (v) => v !== null && typeof v === 'object' && typeof v.next === 'function' && typeof v[Symbol.asyncIterator] === 'function';
const isPlain = (v) => v !== null && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
const isData = (v) => ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof Map || v instanceof Set || v instanceof Date
  || v instanceof RegExp || (typeof Blob === 'function' && v instanceof Blob);

/** The public methods of an object: functions on it and its prototypes, not _private, not constructors. */
function methodsOf(obj) {
  const names = new Set();
  for (let o = obj; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const k of Object.getOwnPropertyNames(o)) {
      if (k === 'constructor' || k.startsWith('_')) continue;
      const d = Object.getOwnPropertyDescriptor(o, k);
      if (d && typeof d.value === 'function' && !/^[A-Z]/.test(k)) names.add(k);
    }
  }
  return [...names];
}

/** Registers `value` under a new reference owned by `parent` (released with it). */
function register(value, parent) {
  const ref = nextRef++;
  objects.set(ref, { value, parent, gen: null });
  return ref;
}

/**
 * A value as it crosses to the page: data as it is (cloned; with `transfer`, its ArrayBuffers moved), class
 * instances (a model, a tokenizer, a generation) as { $ref, kind, props, methods, stream } descriptors the
 * page turns into proxies. `transfer` collects buffers to move (outputs only: props are the object's own).
 */
function wrap(value, parent, transfer, depth = 0) {
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? undefined : value;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    const buf = value instanceof ArrayBuffer ? value : value.buffer;
    if (transfer && !(typeof SharedArrayBuffer === 'function' && buf instanceof SharedArrayBuffer)) transfer.add(buf);
    return value;
  }
  if (isData(value)) return value;
  if (depth > 64) return undefined;
  if (Array.isArray(value)) return value.map((v) => wrap(v, parent, transfer, depth + 1));
  if (isPlain(value)) {
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      const w = wrap(v, parent, transfer, depth + 1);
      if (w !== undefined) out[k] = w;
    }
    return out;
  }
  // A class instance: kept here, described there.
  const ref = register(value, parent);
  const props = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('_') || typeof v === 'function') continue;
    // A generation's arrays are its own (promptIds): cloned, never moved.
    const w = wrap(v, ref, null, depth + 1);
    if (w !== undefined) props[k] = w;
  }
  const stream = isAsyncIterator(value);
  if (stream) {
    objects.get(ref).gen = { credit: 0, pumping: null, ended: false };
    Object.assign(props, snapshot(value));
  }
  const methods = methodsOf(value).filter((k) => !stream || !['next', 'return', 'throw'].includes(k));
  return { $ref: ref, kind: value.constructor?.name ?? 'Object', props, methods, stream };
}

/**
 * A stream's state as data: its own public fields and its getters' values (a ChatTurn's message), cloned;
 * objects of ours among them are left out.
 */
function snapshot(it) {
  const out = {};
  const keys = new Set(Object.keys(it).filter((k) => !k.startsWith('_')));
  for (let o = Object.getPrototypeOf(it); o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const k of Object.getOwnPropertyNames(o)) if (!k.startsWith('_') && typeof Object.getOwnPropertyDescriptor(o, k).get === 'function') keys.add(k);
  }
  for (const k of keys) {
    let v;
    try { v = it[k]; } catch { continue; }
    if (typeof v === 'function' || (v !== null && typeof v === 'object' && !isPlain(v) && !Array.isArray(v) && !isData(v))) continue;
    out[k] = wrap(v, 0, null);
  }
  return out;
}

/** An error as it crosses: its class, code and message (and the fields AttnWasmError carries). */
function errorData(e) {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e) };
  const out = { name: e.name, message: e.message };
  for (const k of ['code', 'url', 'status', 'input', 'suggestion']) if (e[k] !== undefined && typeof e[k] !== 'object') out[k] = e[k];
  if (e.stack) out.stack = e.stack;
  return out;
}

/** Arguments from the page: markers turned back into AbortSignals, callbacks, Responses and our objects. */
function unwrap(v, callbacks, depth = 0, call = null) {
  if (v === null || typeof v !== 'object' || depth > 64 || isData(v)) return v;
  if (Array.isArray(v)) return v.map((x) => unwrap(x, callbacks, depth + 1, call));
  if (!isPlain(v)) return v;
  if ('$signal' in v) {
    let c = signals.get(v.$signal);
    if (!c) { c = new AbortController(); signals.set(v.$signal, c); }
    if (v.aborted && !c.signal.aborted) c.abort();
    return c.signal;
  }
  if ('$callback' in v) {
    const cb = v.$callback;
    callbacks.push(cb);
    return (...args) => {
      if (call && cancelled.has(call.id)) throw cancelError();
      post({ type: 'callback', cb, args: wrap(args, 0, null) });
    };
  }
  if ('$response' in v) {
    const r = v.$response;
    return new Response(r.body, { status: r.status, statusText: r.statusText, headers: r.headers });
  }
  if ('$ref' in v) {
    const o = objects.get(v.$ref);
    if (!o) throw new TypeError('an object of this worker that was released (disposed) was passed');
    return o.value;
  }
  const out = {};
  for (const [k, x] of Object.entries(v)) out[k] = unwrap(x, callbacks, depth + 1, call);
  return out;
}

/** Drops a reference and those it owns; a model is disposed (its native memory freed). */
function release(ref) {
  const o = objects.get(ref);
  if (!o) return;
  objects.delete(ref);
  for (const [r, x] of objects) if (x.parent === ref) release(r);
  if (o.gen && !o.gen.ended) o.value.return?.().catch(() => {});
  else if (typeof o.value?.dispose === 'function') { try { o.value.dispose(); } catch { /* closed or disposed */ } }
}

function reply(id, value, transfer) {
  const t = transfer ? [...transfer] : [];
  try {
    post({ type: 'reply', id, value }, t);
  } catch (e) {
    // A buffer that cannot move (a Node Buffer's pool): clone it instead.
    if (t.length) post({ type: 'reply', id, value });
    else throw e;
  }
}

/**
 * Calls whose caller gave up (a callback of theirs threw on the page): id → the error. Their callbacks throw
 * it from now on, so a load stops at its next progress report, and what they make is released, not sent.
 */
const cancelled = new Map();
/** The ids of calls running now. */
const running = new Set();
const cancelError = () => Object.assign(new Error('the call was ended by its caller: a callback it passed threw on the page'), { name: 'AttnWasmError', code: 'ERR_CANCELLED' });

/** Runs `method` on the runtime (ref 0) or a referenced object with the page's arguments. */
async function call({ id, ref, method, args }) {
  const callbacks = [];
  const state = { id };
  running.add(id);
  try {
    const target = ref === 0 ? aw : objects.get(ref)?.value;
    if (!target) throw Object.assign(new Error(`${method}: this object was disposed`), { name: 'AttnWasmError', code: 'ERR_DISPOSED' });
    const fn = target[method];
    if (typeof fn !== 'function' || method.startsWith('_') || method === 'constructor') {
      throw Object.assign(new TypeError(`${method}: not a method of ${target.constructor?.name ?? 'this object'}`), { code: 'ERR_INVALID_TYPE' });
    }
    const result = await fn.apply(target, unwrap(args, callbacks, 0, state));
    if (cancelled.delete(id)) {
      if (typeof result?.dispose === 'function') { try { result.dispose(); } catch { /* closed */ } }
      return;
    }
    const transfer = new Set();
    // What a model's method makes is owned by the model (a generation, a stream decoder); what the
    // runtime makes (a model) by no one: the page releases it.
    const value = wrap(result, ref === 0 ? 0 : ref, transfer);
    if (method === 'dispose' && ref !== 0) release(ref);
    reply(id, value, transfer);
  } catch (e) {
    if (!cancelled.delete(id)) post({ type: 'reply', id, error: errorData(e) });
  } finally {
    running.delete(id);
  }
}

/**
 * A generation's tokens, ahead of the page by its credit (the page grants one per token it takes, so the
 * model computes while the page handles the last token): each { type: 'item', ref, done, value } with the
 * token's buffers moved, the last with the generation's end state.
 */
function pump(ref) {
  const o = objects.get(ref);
  const g = o?.gen;
  if (!g || g.pumping || g.ended) return;
  g.pumping = (async () => {
    const it = o.value;
    while (g.credit > 0 && !g.ended && objects.has(ref)) {
      g.credit--;
      let r;
      try {
        r = await it.next();
      } catch (e) {
        g.ended = true;
        post({ type: 'item', ref, error: errorData(e), end: endState(it) });
        break;
      }
      const transfer = new Set();
      const value = wrap(r.value, ref, transfer);
      if (r.done) g.ended = true;
      const msg = { type: 'item', ref, done: !!r.done, value, end: r.done ? endState(it) : undefined };
      try {
        post(msg, [...transfer]);
      } catch {
        post(msg);
      }
    }
    g.pumping = null;
  })();
}

/** A stream's end as the page sees it: its snapshot, and how many tokens the worker computed. */
const endState = (it) => ({ ...snapshot(it), produced: Array.isArray(it.ids) ? it.ids.length : undefined });

async function onMessage(m) {
  switch (m.op) {
    case 'init': {
      try {
        setDependencyUrls(m.dependencies);
        aw = await init(m.options);
        const own = Object.keys(aw).filter((k) => typeof aw[k] === 'function' && !k.startsWith('_') && !/^[A-Z]/.test(k));
        reply(m.id, { capabilities: aw.capabilities(), methods: [...new Set([...own, ...methodsOf(aw)])].filter((k) => k !== 'close') });
      } catch (e) {
        post({ type: 'reply', id: m.id, error: errorData(e) });
      }
      return;
    }
    case 'call': return call(m);
    case 'cancel': if (running.has(m.id)) cancelled.set(m.id, true); return;
    case 'pull': {
      const g = objects.get(m.ref)?.gen;
      if (!g) return;
      g.credit += m.n;
      pump(m.ref);
      return;
    }
    case 'return': {
      // Ends a generation after the token being computed, then frees its cache.
      const o = objects.get(m.ref);
      const g = o?.gen;
      let value;
      if (g) {
        g.credit = 0;
        await g.pumping;
        if (!g.ended) {
          g.ended = true;
          value = wrap((await o.value.return().catch(() => ({})))?.value, m.ref, null);
        }
      }
      post({ type: 'reply', id: m.id, value: o ? { end: endState(o.value), value } : null });
      return;
    }
    case 'abort': {
      let c = signals.get(m.signal);
      if (!c) { c = new AbortController(); signals.set(m.signal, c); }
      c.abort();
      return;
    }
    case 'forget-signal': signals.delete(m.signal); return;
    case 'release': release(m.ref); return;
    case 'close': {
      for (const ref of [...objects.keys()]) objects.delete(ref);
      try { await aw?.close(); } catch { /* ended anyway */ }
      aw = null;
      post({ type: 'reply', id: m.id, value: null });
      return;
    }
    default:
      post({ type: 'reply', id: m.id, error: { name: 'TypeError', message: `attnwasm worker: unknown operation ${m.op}` } });
  }
}

if (isNode) {
  const { parentPort } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_WORKER_THREADS);
  post = (msg, transfer) => parentPort.postMessage(msg, transfer);
  parentPort.on('message', (m) => { onMessage(m); });
} else {
  post = (msg, transfer) => self.postMessage(msg, transfer);
  self.addEventListener('message', (e) => { onMessage(e.data); });
}
post({ type: 'hello', url: isNode ? undefined : self.location.href });
