// The base of every object of the API that owns one native object (a layer's module, a loaded model): its
// runtime and its handle (owned: released by dispose() or the runtime's close()). Models (model.js) extend it;
// layers (layers.js) extend ParameterModule, which adds torch's state_dict: keys, shapes, copies in and out.
// Every native call goes through boundary.js.
import { AttnWasmError } from './errors.js';
import { disposeSymbol, stateDictEntries } from './checks.js';
import * as boundary from './boundary.js';

export class NativeObject {
  /** @param {import('./runtime.js').AttnWasm} rt the runtime it belongs to */
  constructor(rt) {
    Object.defineProperty(this, '_rt', { value: rt });
  }

  /**
   * Takes ownership of a freshly made native handle, or throws its error. An allocation that failed names the
   * constructor's arguments `args`, which its native message cannot ("Linear(inFeatures=…, …): out of memory: …");
   * every other native refusal names its argument itself ("dropout: …").
   */
  _adopt(h, kind, args = null) {
    boundary.checked(h, (message, code, at) => (args && (code === 'ERR_OUT_OF_MEMORY' || at?.arg === 'parameters')
      ? `${kind}(${Object.entries(args).map(([k, v]) => `${k}=${v}`).join(', ')}): ${message}` : message));
    this._h = h;
    this._kind = kind;
    boundary.own(this._rt, h);
  }

  /** The handle: ERR_CLOSED once the runtime is closed (first: close() disposes everything), ERR_DISPOSED after dispose(). */
  _handle() {
    boundary.ensureOpen(this._rt);
    if (!this._h) throw new AttnWasmError('ERR_DISPOSED', `${this._kind}: used after dispose()`);
    return this._h;
  }

  /** Frees the native memory. Idempotent; later use throws ERR_DISPOSED. */
  dispose() {
    if (this._h) {
      boundary.release(this._rt, this._h);
      this._h = null;
    }
  }

  [disposeSymbol]() {
    this.dispose();
  }
}

/** A layer (layers.js, transformer.js, blocks.js): a native module whose parameters are torch's state_dict. */
export class ParameterModule extends NativeObject {
  /** The torch state_dict keys this module expects, with their shapes. */
  parameterShapes() {
    const h = this._handle();
    const out = {};
    for (const name of boundary.params.names(this._rt, h)) out[name] = boundary.params.shape(this._rt, h, name);
    return out;
  }

  /**
   * Replaces all parameters from a torch-style state_dict (object or Map of exact torch keys → { data:
   * Float32Array, shape }). All or nothing: rejects missing, unexpected and mis-shaped entries by name
   * (ERR_STATE_DICT).
   */
  loadStateDict(stateDict) {
    const h = this._handle();
    boundary.params.load(this._rt, h, stateDictEntries(stateDict, 'stateDict', this._rt));
  }

  /** A copy of the parameters as a torch-style state_dict object (new arrays, the caller's). */
  stateDict() {
    const h = this._handle();
    const out = {};
    for (const name of boundary.params.names(this._rt, h)) {
      out[name] = { data: boundary.params.data(this._rt, h, name), shape: boundary.params.shape(this._rt, h, name) };
    }
    return out;
  }
}
