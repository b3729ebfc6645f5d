// The worker's proxies ('attnwasm/worker', worker.js): a call's result (RemoteCall: a promise that is also a generation's
// async iterator), an object in the worker (RemoteObject: its properties copied, its methods forwarded by name)
// and a generation streamed across the channel (RemoteGeneration), the worker computing AHEAD tokens before the
// page takes them.
import { AttnWasmError, typeError } from './errors.js';

/** Tokens the worker computes ahead of the page (it grants one more for each token it takes). */
const AHEAD = 2;

/**
 * What every method of a proxy returns: a promise of the result that is also the result's async iterator
 * when the result is one (a generation), so both `await lm.encode(text)` and
 * `for await (const t of lm.generate(prompt))` read as they do in the page, and the generation's
 * stopReason, text, ids, promptIds and seed are read from it afterwards.
 */
export class RemoteCall {
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
export class RemoteObject {
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
export class RemoteGeneration {
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
