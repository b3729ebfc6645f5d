// The worker's channel ('attnwasm/worker', worker.js): the message channel to one worker — calls waiting for their replies,
// generations receiving tokens, callbacks the worker may call back, AbortSignals mirrored there — and how values
// cross it (worker.js's header says what crosses and how). The proxies it makes are worker_remote.js's.
import { AttnWasmError, typeError, describe } from './errors.js';
import { isNode } from './checks.js';
import { looksLikeHubId } from './hub/ids.js';
import { RemoteCall, RemoteObject, RemoteGeneration } from './worker_remote.js';

export const closedError = () => new AttnWasmError('ERR_CLOSED', 'this attnwasm worker was closed (rt.close()); call createWorker() for a new one');

export const isAbortSignal = (v) => typeof AbortSignal === 'function' && v instanceof AbortSignal;
/** Image sources that cannot cross to a worker as they are: drawn there from an ImageBitmap made here. */
const ELEMENTS = ['HTMLImageElement', 'HTMLCanvasElement', 'HTMLVideoElement', 'SVGImageElement', 'OffscreenCanvas', 'VideoFrame'];
const isElement = (v) => ELEMENTS.some((k) => typeof globalThis[k] === 'function' && v instanceof globalThis[k]);
const isBitmap = (v) => typeof ImageBitmap === 'function' && v instanceof ImageBitmap;

export const isPlain = (v) => v !== null && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

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
export class Channel {
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
    // ImageData and an ImageBitmap clone (the caller keeps theirs); an <img>, a canvas, a video frame cannot cross:
    // call() sends an ImageBitmap of each, made here (off the main thread's work: createImageBitmap) and moved
    // (transferred), which the worker draws as it would draw the element. An object of attnwasm's own (a
    // Tokenizer) does not cross.
    if ((typeof ImageData === 'function' && v instanceof ImageData) || isBitmap(v)) return v;
    if (isElement(v) && this._elements) {
      this._elements.push(v);
      return { $element: this._elements.length - 1 };
    }
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
    const elements = [];
    let sent;
    try {
      this._elements = elements;
      sent = args.map((a, i) => this.toWorker(i === 0 && source ? resolveSource(a) : a, transfer, cbs));
    } catch (e) {
      for (const cb of cbs) this.callbacks.delete(cb);
      return new RemoteCall(Promise.reject(e));
    } finally {
      this._elements = null;
    }
    const signal = args.find((a) => isPlain(a) && isAbortSignal(a.signal))?.signal ?? null;
    if (elements.length === 0) return new RemoteCall(this.request({ op: 'call', ref, method, args: sent }, transfer, cbs), signal);
    // <img>, canvases, videos: an ImageBitmap of each (the <img> decoded first, as the library itself would), then the call.
    const ready = Promise.all(elements.map(async (el) => {
      if (typeof HTMLImageElement === 'function' && el instanceof HTMLImageElement && !(el.complete && el.naturalWidth > 0)) await el.decode();
      return createImageBitmap(el);
    })).then((bitmaps) => {
      transfer.push(...bitmaps);
      return this.request({ op: 'call', ref, method, args: withBitmaps(sent, bitmaps) }, transfer, cbs);
    }, (e) => {
      for (const cb of cbs) this.callbacks.delete(cb);
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `an image element could not be read for the worker (${e?.name ?? 'Error'}: ${e?.message ?? e}); pass its bytes, URL or ImageData`, { cause: e });
    });
    return new RemoteCall(ready, signal);
  }
}

/** `v` with each { $element: i } placeholder (toWorker's) replaced by bitmaps[i]. */
function withBitmaps(v, bitmaps, depth = 0) {
  if (v === null || typeof v !== 'object' || depth > 64) return v;
  if (Array.isArray(v)) return v.map((x) => withBitmaps(x, bitmaps, depth + 1));
  if (!isPlain(v)) return v;
  if (typeof v.$element === 'number' && Object.keys(v).length === 1) return bitmaps[v.$element];
  const out = {};
  for (const [k, x] of Object.entries(v)) out[k] = withBitmaps(x, bitmaps, depth + 1);
  return out;
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
