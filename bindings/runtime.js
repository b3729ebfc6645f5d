// attnwasm: the runtime bound to one wasm instance (what init() returns): its state (the instance, the native
// handles it owns, the loads under way), the functional API (SDPA, activations, safetensors, memory,
// capabilities, close) and the layer and model classes bound to it (layers.js, transformer.js, blocks.js,
// models.js). The loader (loader.js) makes it; the package entries make their init() with loader.js
// createInit(). Every call into the instance goes through boundary.js (copies in and out, errors, ownership).
// Tensors cross the API as plain objects { data, shape }: Float32Array data for float tensors, Uint8Array (0/1)
// for boolean masks; outputs are fresh arrays owned by the caller. Errors: argument-type problems throw
// TypeError before entering wasm; every range and divisibility rule is native (src/core/rules.h): a value out of
// range throws a RangeError (ERR_OUT_OF_RANGE), anything else the native side rejects an AttnWasmError. Every
// thrown error has a stable `code` (see ErrorCode) and the runtime stays usable.
import { makeModels } from './models.js';
import { cosineSimilarity } from './similarity.js';
import { makeLayers } from './layers.js';
import { makeTransformer } from './transformer.js';
import { makeBlocks, blockFunctions, sdpaMask } from './blocks.js';
import { SIMD_SUPPORTED } from './wasm_load.js';
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { isNode, checkBool, checkTensor, checkInteger, checkOptions } from './checks.js';
import * as boundary from './boundary.js';
import { saveWorkerGlobal, unrefWorkers } from './workers.js';
import { closedDuringLoad } from './load_scope.js';
import { HubCache } from './hub/cache.js';
import { inspect } from './inspect/inspect.js';

export { saveWorkerGlobal, unrefWorkers };

/** aw.inspect's options: attnwasm/inspect's, but the native provider (the runtime's own). */
const INSPECT_OPTIONS = ['config', 'probe', 'signal', 'readTimeoutMs', 'revision', 'cache', 'host'];

export { AttnWasmError };

/** Every class of the API, bound to one runtime. */
function makeClasses(rt) {
  const layers = makeLayers(rt);
  return { ...layers, ...makeTransformer(rt, layers), ...makeBlocks(rt, layers) };
}
/** The runtime bound to one wasm instance; create it with init(). */
export class AttnWasm {
  constructor(core) {
    this._coreRef = core;
    /** Every live native object (embind handle) made from this runtime: close() deletes what is left. */
    this._handles = new Set();
    /** Loads under way (load_scope.js): close() ends them with ERR_CLOSED. */
    this._loads = new Set();
    const rt = this;
    const classes = makeClasses(rt);
    for (const [name, cls] of Object.entries(classes)) if (name !== 'Module') this[name] = cls;
    Object.assign(this, blockFunctions(rt));  // silu, causalUpperLeft, causalLowerRight
    const models = makeModels(rt);
    /** The model classes, for instanceof: what loadModel returns (CausalLM, Embedder, Translator, Classifier: families.js). */
    Object.assign(this, models.faces);
    /** Loads any model attnwasm has a family for (families.js): a CausalLM, an Embedder, a Translator or a Classifier. */
    this.loadModel = models.loadModel;
    /** Loads the translation demo model (URL, Node path or bytes). */
    this.loadTranslator = models.loadTranslator;
    /** Loads the image classifier demo model (URL, Node path or bytes). */
    this.loadClassifier = models.loadClassifier;
    /** Loads a causal language model: the writing demo's, a causal_lm file, or a Hugging Face checkpoint with { config }. */
    this.loadCausalLM = models.loadCausalLM;
    /** Loads a sentence embedder: a BERT / RoBERTa / XLM-R checkpoint (a sentence-transformers folder, or { config }). */
    this.loadEmbedder = models.loadEmbedder;
    /** Loads a hub encoder–decoder translator (Marian, M2M100 / NLLB, BART, mBART, T5): a Seq2SeqLM. */
    this.loadSeq2SeqLM = models.loadSeq2SeqLM;
    /** Loads a Whisper hub folder: a SpeechRecognizer. */
    this.loadSpeechRecognizer = models.loadSpeechRecognizer;
    /** Cosine similarity of vectors (a number) or of embedding matrices (n, d) and (m, d) → (n, m) (embedder.js). */
    this.cosineSimilarity = cosineSimilarity;
    /** The models downloaded by hub id, kept for the next load: list(), delete(id) (hub/cache.js). */
    this.cache = new HubCache();
    /**
     * A checkpoint described from its headers alone, as this runtime would load it (attnwasm/inspect with the
     * native reader and a dry run of the loader: its refusals, its exact bytes per dtype; docs/inspect.md).
     */
    this.inspect = (source, options) => {
      boundary.ensureOpen(rt);
      return inspect(source, { ...checkOptions(options, INSPECT_OPTIONS, 'inspect'), native: boundary.inspector(rt) });
    };
  }

  /** Internal (tests): the wasm module (Emscripten's Module); ERR_CLOSED after close(). Only boundary.js calls it. */
  get _core() {
    return boundary.mod(this);
  }

  /**
   * Ends this runtime: ends its pthread workers, frees every native object
   * made from it (layers, models), and drops its references to the wasm
   * instance and its memory, so the garbage collector can take them (the
   * memory is returned when nothing else — an object of yours — holds it).
   * A load under way rejects with ERR_CLOSED (its reads are ended).
   * Afterwards every call on the runtime or on an object made from it throws
   * AttnWasmError ERR_CLOSED; init() gives a new runtime. Idempotent.
   * @returns {Promise<void>} resolved once the workers have ended
   */
  async close() {
    const core = this._coreRef;
    if (!core) return;
    this._coreRef = null;
    for (const load of this._loads) load.abort(closedDuringLoad());
    for (const h of this._handles) {
      try { h.delete(); } catch { /* already deleted */ }
    }
    this._handles.clear();
    const pt = core.PThread;
    if (pt) {
      const workers = [...pt.unusedWorkers, ...pt.runningWorkers];
      pt.terminateAllThreads();
      // Node's Worker.terminate() returns a promise; a browser's returns nothing.
      await Promise.all(workers.map((w) => w.terminate()));
    }
  }

  /**
   * torch.nn.functional.scaled_dot_product_attention (PyTorch 2.x semantics).
   * query (…, L, E), key (…, S, E), value (…, S, Ev) → output (…, L, Ev).
   * attnMask: bool (Uint8Array) **true = take part**, float (added), or a
   * causal mask object (aw.causalUpperLeft(L, S) / causalLowerRight(L, S)).
   * @returns {{output: Tensor, weights: Tensor|null}} weights (…, L, S) when needWeights.
   */
  scaledDotProductAttention(query, key, value, options) {
    const o = checkOptions(
      options,
      ['attnMask', 'dropoutP', 'isCausal', 'scale', 'enableGqa', 'needWeights'],
      'scaledDotProductAttention',
    );
    const q = checkTensor(query, 'query', 'float', this);
    const k = checkTensor(key, 'key', 'float', this);
    const v = checkTensor(value, 'value', 'float', this);
    const { mask: m, causal } = sdpaMask(o.attnMask, this);  // a mask tensor, or aw.causalLowerRight(L, S) …
    const dropoutP = o.dropoutP === undefined ? 0 : o.dropoutP;
    if (typeof dropoutP !== 'number') throw typeError(`dropoutP: expected a number, got ${describe(dropoutP)}`);
    const isCausal = checkBool(o.isCausal, 'isCausal', false);
    const enableGqa = checkBool(o.enableGqa, 'enableGqa', false);
    const needWeights = checkBool(o.needWeights, 'needWeights', false);
    const scale = o.scale ?? null;
    if (scale !== null && typeof scale !== 'number') {
      throw typeError(`scale: expected a number or null, got ${describe(scale)}`);
    }
    const outs = boundary.ops.sdpa(this, { query: q, key: k, value: v, attnMask: m },
      { isCausal, hasScale: scale !== null, scale: scale ?? 1, enableGqa, dropoutP, needWeights, ...causal });
    return { output: outs[0], weights: needWeights ? outs[1] : null };
  }

  /**
   * torch.nn.Transformer.generate_square_subsequent_mask: a float (sz, sz)
   * mask with -Infinity above the diagonal and 0 elsewhere.
   * @param {number} sz
   */
  generateSquareSubsequentMask(sz) {
    checkInteger(sz, 'sz');
    boundary.rules.shape(this, 'sz', [sz, sz]);  // the shape rule: sz >= 0, sz² <= 2^29
    const data = new Float32Array(sz * sz);
    for (let i = 0; i < sz; i++) for (let j = i + 1; j < sz; j++) data[i * sz + j] = -Infinity;
    return { data, shape: [sz, sz] };
  }

  /**
   * Reads a safetensors file (the Hugging Face format) with strict validation.
   * Float tensors (F32, F16, BF16, F64) become Float32Arrays (converted on load),
   * BOOL and U8 become Uint8Arrays, other integers Int32Arrays.
   * @param {Uint8Array|ArrayBuffer} bytes
   * @param {{metadata?: boolean}} [options] metadata: true returns { tensors, metadata }
   * @returns a state dict usable by every loadStateDict (or { tensors, metadata })
   */
  loadSafetensors(bytes, options) {
    const o = checkOptions(options, ['metadata'], 'loadSafetensors');
    const withMetadata = checkBool(o.metadata, 'metadata', false);
    const { tensors, metadata } = this._readSafetensors(bytes, 'bytes');
    return withMetadata ? { tensors, metadata } : tensors;
  }

  /** Parses safetensors bytes; errors name the argument `name`. */
  _readSafetensors(bytes, name) {
    let u8;
    if (bytes instanceof Uint8Array) u8 = bytes;
    else if (bytes instanceof ArrayBuffer) u8 = new Uint8Array(bytes);
    else if (ArrayBuffer.isView(bytes)) u8 = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    else throw typeError(`${name}: expected a Uint8Array or ArrayBuffer, got ${describe(bytes)}`);
    return boundary.readSafetensors(this, u8, (m) => `${name}: ${m}`);
  }

  /** torch.nn.functional.relu: a new tensor. */
  relu(x) {
    return this._activation('relu', x);
  }

  /**
   * torch.nn.functional.gelu: exact (erf) form, or approximate: 'tanh'.
   * @param {{approximate?: 'none'|'tanh'}} [options]
   */
  gelu(x, options) {
    const o = checkOptions(options, ['approximate'], 'gelu');
    const a = o.approximate === undefined ? 'none' : o.approximate;
    if (typeof a !== 'string') throw typeError(`approximate: expected 'none' or 'tanh', got ${describe(a)}`);
    if (a !== 'none' && a !== 'tanh') throw rangeError(`approximate: expected 'none' or 'tanh', got '${a}'`);
    return this._activation(a === 'tanh' ? 'gelu_tanh' : 'gelu', x);
  }

  /** activation: 'relu' | 'gelu' | 'gelu_tanh' | 'silu' (the native ParseActivation's names). */
  _activation(activation, x) {
    const t = checkTensor(x, 'input', 'float', this);
    return boundary.ops.activation(this, activation, t)[0];
  }

  /**
   * What this runtime instance uses. `threads`: the number of threads its
   * kernels run on, or false for one; then `threadsReason` says why.
   * `relaxedSimd`: whether it runs a relaxed-SIMD build; when not,
   * `relaxedSimdReason` says why.
   */
  capabilities() {
    const b = boundary.build(this);
    const n = b.threads;
    const plan = this._threadPlan ?? { threads: 1, reason: 'threads: 1 requested' };
    const relaxedSimd = b.relaxedSimd;
    const caps = {
      // The module is built with SIMD128, so it only instantiates where SIMD
      // works; this checks it independently (a v128 function must validate).
      simd: SIMD_SUPPORTED,
      threads: n > 1 ? n : false,
      crossOriginIsolated: typeof globalThis.crossOriginIsolated === 'boolean' ? globalThis.crossOriginIsolated : false,
      sharedArrayBuffer: typeof SharedArrayBuffer === 'function',
      environment: isNode ? 'node' : typeof window === 'object' ? 'browser' : 'worker',
      build: b.threadsSupported ? 'pthreads' : 'single-thread',
      relaxedSimd,
    };
    if (n <= 1) caps.threadsReason = plan.threads > 1 ? 'threads: 1 set' : plan.reason;
    if (!relaxedSimd) caps.relaxedSimdReason = this._relaxedPlan?.reason ?? 'relaxedSimd: false requested';
    return caps;
  }

  /**
   * Internal (tests, benchmarks): sets the thread count of a runtime loaded
   * with the pthreads build, between 1 and the count init() chose. Returns
   * the count in effect.
   */
  _setThreads(n) {
    const plan = this._threadPlan;
    checkInteger(n, 'threads', { min: 1, max: plan && plan.threads > 1 ? plan.threads : 1 });
    const saved = saveWorkerGlobal();
    try {
      // Starting a thread may make the glue create a Worker (global lookup).
      const core = boundary.mod(this);
      if (core.awWorkerGlobal) globalThis.Worker = core.awWorkerGlobal;
      return boundary.setThreads(core, n);
    } finally {
      saved.restore();
      unrefWorkers(this._coreRef);
    }
  }

  /**
   * Wasm memory figures, in bytes: heapBytes (the wasm memory's size: it
   * grows on demand and never shrinks), heapLimitBytes (what it may grow
   * to), inUseBytes (allocated now), peakInUseBytes (the most allocated at
   * once since init() or resetPeakMemory()), workingMemoryBytes (the
   * working-memory budget: scratch one call may use; docs/memory.md).
   */
  memory() {
    return boundary.memory(this);
  }

  /** Starts a new peak for memory().peakInUseBytes (at the bytes in use now). */
  resetPeakMemory() {
    boundary.resetPeak(this);
  }
}
