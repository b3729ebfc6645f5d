// What ends a load before it is done: the caller's AbortSignal (loadModel's `signal` option), the runtime's
// close() (ERR_CLOSED), a stalled read (sources.js, ERR_TIMEOUT) or a failing onProgress (its error). A load
// holds one LoadScope: every read it makes gets the scope's signal, and it checks the scope after every step,
// so whichever comes first ends the load with that reason and frees what it had taken.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkInteger } from './checks.js';
import { READ_TIMEOUT_MS } from './sources.js';
import * as boundary from './boundary.js';

const isSignal = (s) => s !== null && typeof s === 'object' && typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function';

export class LoadScope {
  /**
   * @param {import('./runtime.js').AttnWasm} rt the runtime the load belongs to (close() ends it)
   * @param {{signal?: AbortSignal, readTimeoutMs?: number}} options loadModel's, checked here (readTimeoutMs:
   *   milliseconds in [1, 2^31 - 1], or Infinity for no bound)
   */
  constructor(rt, { signal, readTimeoutMs } = {}) {
    if (signal !== undefined && !isSignal(signal)) throw typeError(`signal: expected an AbortSignal, got ${describe(signal)}`);
    // Infinity: reads wait as long as they take (0 inside: no timer).
    this.readTimeoutMs = readTimeoutMs === undefined ? READ_TIMEOUT_MS : readTimeoutMs === Infinity ? 0
      : checkInteger(readTimeoutMs, 'readTimeoutMs', { min: 1, max: 2 ** 31 - 1 });
    this._controller = new AbortController();
    this._rt = rt;
    this._user = signal ?? null;
    this._onUserAbort = () => this.abort(this._user.reason);
    if (this._user?.aborted) this.abort(this._user.reason);
    else this._user?.addEventListener('abort', this._onUserAbort, { once: true });
    rt._loads.add(this);
  }

  /** The signal every read of the load takes. */
  get signal() {
    return this._controller.signal;
  }

  /** What every read takes: { signal, readTimeoutMs }. */
  get io() {
    return { signal: this._controller.signal, readTimeoutMs: this.readTimeoutMs };
  }

  /** Ends the load with `reason` (the first reason wins). */
  abort(reason) {
    if (!this._controller.signal.aborted) this._controller.abort(reason);
  }

  /** Throws the reason the load was ended with, if it was; the runtime's ERR_CLOSED once it is closed. */
  check() {
    if (this._controller.signal.aborted) throw this._controller.signal.reason;
    boundary.ensureOpen(this._rt);  // ERR_CLOSED after close()
  }

  /** Done (either way): the runtime forgets it and the caller's signal is let go. */
  end() {
    this._rt._loads.delete(this);
    this._user?.removeEventListener('abort', this._onUserAbort);
  }
}

/** The error a load gets when the runtime is closed under it. */
export const closedDuringLoad = () => new AttnWasmError('ERR_CLOSED', 'this attnwasm runtime was closed (aw.close()) during the load; call init() for a new one');
