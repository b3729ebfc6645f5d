// The layers of the API (torch.nn twins) other than the Transformer blocks:
// the Module base (one native module per object; state_dict keys as torch),
// MultiheadAttention, Linear, LayerNorm, Embedding, activations, positional
// encodings and PatchEmbedding. makeLayers(rt) binds them to one runtime.
import { AttnWasmError } from './errors.js';
import {
  disposeSymbol, checkBool, checkInteger, checkNumber, checkOptions, checkProbability, optionalMask, checkTensor,
  stateDictEntries,
} from './checks.js';

export function makeLayers(rt) {

  /**
   * Base of every layer: owns one native module (its parameters and scratch).
   * Parameters use torch's state_dict keys.
   */
  class Module {
    /** Takes ownership of a freshly created native handle, or throws its error. */
    _adopt(h, kind, args = null) {
      rt._checked(h, (message) => {
        // Name the constructor arguments when the native message cannot (e.g. a
        // parameter too large to allocate): "Linear(inFeatures=…, …): …". A
        // message that starts with an argument ("dropout: …") names it already.
        const named = /^[A-Za-z_$][\w$]*[.[:]/.test(message) || (args && Object.keys(args).some((k) => message.includes(k)));
        return args && !named ? `${kind}(${Object.entries(args).map(([k, v]) => `${k}=${v}`).join(', ')}): ${message}` : message;
      });
      this._h = h;
      this._kind = kind;
      rt._own(h);
    }

    _handle() {
      rt._core; // throws ERR_CLOSED once the runtime is closed (before ERR_DISPOSED: close() disposes everything)
      if (!this._h) throw new AttnWasmError('ERR_DISPOSED', `${this._kind}: used after dispose()`);
      return this._h;
    }

    /** The torch state_dict keys this module expects, with their shapes. */
    parameterShapes() {
      const h = this._handle();
      const out = {};
      for (const name of h.paramNames()) out[name] = h.paramShape(name);
      return out;
    }

    /**
     * Replaces all parameters from a torch-style state_dict (object or Map of
     * exact torch keys → { data: Float32Array, shape }). All or nothing: rejects
     * missing, unexpected and mis-shaped entries by name (ERR_STATE_DICT).
     */
    loadStateDict(stateDict) {
      const h = this._handle();
      const entries = stateDictEntries(stateDict, 'stateDict', rt);
      rt._withInputs(
        entries.map(([, t]) => t),
        (ptrs) => rt._take(h.loadStateDict(entries.map(([k]) => k), ptrs, entries.map(([, t]) => t.shape))),
      );
    }

    /** A copy of the parameters as a torch-style state_dict object. */
    stateDict() {
      const h = this._handle();
      const out = {};
      for (const name of h.paramNames()) out[name] = { data: h.paramData(name).slice(), shape: h.paramShape(name) };
      return out;
    }

    /** Frees the native memory. Idempotent; later use throws ERR_DISPOSED. */
    dispose() {
      if (this._h) {
        rt._release(this._h);
        this._h = null;
      }
    }

    [disposeSymbol]() {
      this.dispose();
    }
  }

  /**
   * torch.nn.MultiheadAttention (PyTorch 2.x semantics), inference only.
   * Masks: bool (Uint8Array) **true = masked** (not allowed to attend), float = added.
   */
  class MultiheadAttention extends Module {
    /**
     * @param {number} embedDim
     * @param {number} numHeads
     * @param {{dropout?: number, bias?: boolean, addBiasKv?: boolean, addZeroAttn?: boolean,
     *          kdim?: number|null, vdim?: number|null, batchFirst?: boolean}} [options]
     */
    constructor(embedDim, numHeads, options) {
      super();
      const o = checkOptions(
        options,
        ['dropout', 'bias', 'addBiasKv', 'addZeroAttn', 'kdim', 'vdim', 'batchFirst'],
        'MultiheadAttention',
      );
      checkInteger(embedDim, 'embedDim');
      checkInteger(numHeads, 'numHeads');
      const kdim = o.kdim == null ? null : checkInteger(o.kdim, 'kdim');
      const vdim = o.vdim == null ? null : checkInteger(o.vdim, 'vdim');
      const cfg = {
        embedDim,
        numHeads,
        dropout: checkNumber(o.dropout, 'dropout', 0),
        bias: checkBool(o.bias, 'bias', true),
        addBiasKv: checkBool(o.addBiasKv, 'addBiasKv', false),
        addZeroAttn: checkBool(o.addZeroAttn, 'addZeroAttn', false),
        kdim, // null: embedDim
        vdim,
        batchFirst: checkBool(o.batchFirst, 'batchFirst', false),
      };
      this._adopt(rt._core.createMha(cfg), 'MultiheadAttention', { embedDim, numHeads, kdim: kdim ?? embedDim, vdim: vdim ?? embedDim });
      const { dropout, bias, addBiasKv, addZeroAttn, batchFirst } = cfg;
      /** @readonly */ this.embedDim = embedDim;
      /** @readonly */ this.numHeads = numHeads;
      /** @readonly */ this.headDim = embedDim / numHeads;
      /** @readonly */ this.kdim = kdim ?? embedDim;
      /** @readonly */ this.vdim = vdim ?? embedDim;
      /** @readonly */ this.dropout = dropout;
      /** @readonly */ this.bias = bias;
      /** @readonly */ this.addBiasKv = addBiasKv;
      /** @readonly */ this.addZeroAttn = addZeroAttn;
      /** @readonly */ this.batchFirst = batchFirst;
    }

    /**
     * Same arguments and defaults as torch's forward (needWeights defaults to true).
     * @returns {{output: Tensor, weights: Tensor|null}}
     */
    forward(query, key, value, options) {
      const h = this._handle();
      const o = checkOptions(
        options,
        ['keyPaddingMask', 'needWeights', 'attnMask', 'averageAttnWeights', 'isCausal'],
        'MultiheadAttention.forward',
      );
      const tensors = {
        query: checkTensor(query, 'query', 'float', rt),
        key: checkTensor(key, 'key', 'float', rt),
        value: checkTensor(value, 'value', 'float', rt),
        keyPaddingMask: optionalMask(o.keyPaddingMask, 'keyPaddingMask', rt),
        attnMask: optionalMask(o.attnMask, 'attnMask', rt),
      };
      const needWeights = checkBool(o.needWeights, 'needWeights', true);
      const flags = {
        needWeights,
        averageAttnWeights: checkBool(o.averageAttnWeights, 'averageAttnWeights', true),
        isCausal: checkBool(o.isCausal, 'isCausal', false),
      };
      // (A self-attention's query, key and value are copied once and share an
      // address: the native side then projects them in one GEMM.)
      const outs = rt._run(tensors, flags, (a) => rt._take(rt._core.mhaForward(h, a)));
      return { output: outs[0], weights: needWeights ? outs[1] : null };
    }
  }

  /** Runs a single-output forward of a module handle. */
  function forward1(h, fn, tensors, extra = {}) {
    return rt._run(tensors, extra, (args) => rt._take(rt._core[fn](h, args)))[0];
  }
  function forwardX(h, fn, tensors) {
    return rt._take(rt._run(tensors, {}, (args) => rt._core[fn](h, args.x)))[0];
  }

  /** torch.nn.Linear: y = x · weight^T + bias. Keys: weight (out, in), bias (out). */
  class Linear extends Module {
    /** @param {number} inFeatures @param {number} outFeatures @param {{bias?: boolean}} [options] */
    constructor(inFeatures, outFeatures, options) {
      super();
      const o = checkOptions(options, ['bias'], 'Linear');
      checkInteger(inFeatures, 'inFeatures');
      checkInteger(outFeatures, 'outFeatures');
      const bias = checkBool(o.bias, 'bias', true);
      this._adopt(rt._core.createLinear({ inFeatures, outFeatures, bias }), 'Linear', { inFeatures, outFeatures });
      Object.assign(this, { inFeatures, outFeatures, bias });
    }
    /** x (…, inFeatures) → (…, outFeatures) */
    forward(x) {
      return forwardX(this._handle(), 'linearForward', { x: checkTensor(x, 'input', 'float', rt) });
    }
  }

  /** torch.nn.LayerNorm over the last dim. Keys: weight, bias. */
  class LayerNorm extends Module {
    /**
     * @param {number} normalizedShape
     * @param {{eps?: number, elementwiseAffine?: boolean, bias?: boolean}} [options]
     */
    constructor(normalizedShape, options) {
      super();
      const o = checkOptions(options, ['eps', 'elementwiseAffine', 'bias'], 'LayerNorm');
      if (Array.isArray(normalizedShape)) {
        if (normalizedShape.length !== 1) {
          throw new AttnWasmError('ERR_INVALID_ARGUMENT', `normalizedShape: only the last dim is supported, expected one int, got [${normalizedShape}]`);
        }
        [normalizedShape] = normalizedShape;
      }
      checkInteger(normalizedShape, 'normalizedShape');
      const eps = checkNumber(o.eps, 'eps', 1e-5);
      const elementwiseAffine = checkBool(o.elementwiseAffine, 'elementwiseAffine', true);
      const bias = checkBool(o.bias, 'bias', true);
      this._adopt(rt._core.createLayerNorm({ normalizedShape, eps, elementwiseAffine, bias }), 'LayerNorm', { normalizedShape });
      Object.assign(this, { normalizedShape, eps, elementwiseAffine, bias });
    }
    forward(x) {
      return forwardX(this._handle(), 'layerNormForward', { x: checkTensor(x, 'input', 'float', rt) });
    }
  }

  /** torch.nn.Embedding. Key: weight (numEmbeddings, embeddingDim). Ids: Int32Array. */
  class Embedding extends Module {
    /** @param {number} numEmbeddings @param {number} embeddingDim @param {{paddingIdx?: number|null}} [options] */
    constructor(numEmbeddings, embeddingDim, options) {
      super();
      const o = checkOptions(options, ['paddingIdx'], 'Embedding');
      checkInteger(numEmbeddings, 'numEmbeddings');
      checkInteger(embeddingDim, 'embeddingDim');
      const paddingIdx = o.paddingIdx == null ? null : checkInteger(o.paddingIdx, 'paddingIdx');
      this._adopt(rt._core.createEmbedding({ numEmbeddings, embeddingDim, paddingIdx }), 'Embedding', { numEmbeddings, embeddingDim });
      Object.assign(this, { numEmbeddings, embeddingDim, paddingIdx });
    }
    /** ids (…) Int32Array → (…, embeddingDim); an id out of range throws naming its index. */
    forward(ids) {
      return forwardX(this._handle(), 'embeddingForward', { x: checkTensor(ids, 'input', 'ids', rt) });
    }
  }

  /** torch.nn.ReLU */
  class ReLU {
    forward(x) { return rt.relu(x); }
  }

  /** torch.nn.GELU({ approximate: 'none' | 'tanh' }) */
  class GELU {
    constructor(options) {
      const o = checkOptions(options, ['approximate'], 'GELU');
      this.approximate = o.approximate === undefined ? 'none' : o.approximate;
      rt.gelu({ data: new Float32Array(0), shape: [0] }, { approximate: this.approximate });
    }
    forward(x) { return rt.gelu(x, { approximate: this.approximate }); }
  }

  /** torch.nn.Dropout: the identity at inference (returns a copy). */
  class Dropout {
    constructor(p = 0.5) {
      this.p = checkProbability(p, 'p');
    }
    forward(x) {
      const t = checkTensor(x, 'input', 'float', rt);
      rt._checkShape('input', t.shape);  // no native call checks it here
      return { data: t.data.slice(), shape: [...t.shape] };
    }
  }

  /**
   * Fixed sinusoidal positions ("Attention Is All You Need", the PyTorch tutorial's
   * PositionalEncoding without dropout): forward(x) = x + PE[:L]. No parameters.
   */
  class SinusoidalPositionalEncoding extends Module {
    /** @param {number} dModel @param {{maxLen?: number, batchFirst?: boolean}} [options] */
    constructor(dModel, options) {
      super();
      const o = checkOptions(options, ['maxLen', 'batchFirst'], 'SinusoidalPositionalEncoding');
      checkInteger(dModel, 'dModel');
      const maxLen = o.maxLen === undefined ? 5000 : checkInteger(o.maxLen, 'maxLen');
      const batchFirst = checkBool(o.batchFirst, 'batchFirst', false);
      this._adopt(rt._core.createSinusoidalPE({ dModel, maxLen, batchFirst }), 'SinusoidalPositionalEncoding', { dModel, maxLen });
      Object.assign(this, { dModel, maxLen, batchFirst });
    }
    forward(x) {
      return forwardX(this._handle(), 'positionalForward', { x: checkTensor(x, 'input', 'float', rt) });
    }
  }

  /** Learned positions (ViT's pos_embedding as an nn.Embedding over 0..L−1): x + weight[:L]. Key: weight. */
  class LearnedPositionalEmbedding extends Module {
    /** @param {number} maxLen @param {number} dModel @param {{batchFirst?: boolean}} [options] */
    constructor(maxLen, dModel, options) {
      super();
      const o = checkOptions(options, ['batchFirst'], 'LearnedPositionalEmbedding');
      checkInteger(maxLen, 'maxLen');
      checkInteger(dModel, 'dModel');
      const batchFirst = checkBool(o.batchFirst, 'batchFirst', false);
      this._adopt(rt._core.createLearnedPE({ maxLen, dModel, batchFirst }), 'LearnedPositionalEmbedding', { maxLen, dModel });
      Object.assign(this, { dModel, maxLen, batchFirst });
    }
    forward(x) {
      return forwardX(this._handle(), 'positionalForward', { x: checkTensor(x, 'input', 'float', rt) });
    }
  }

  /**
   * ViT stem: Conv2d(inChannels, embedDim, kernel = stride = patchSize) + flatten,
   * (B, C, H, W) → (B, H'·W' [+1], embedDim). Keys: cls_token, proj.weight, proj.bias.
   */
  class PatchEmbedding extends Module {
    /**
     * @param {number} inChannels @param {number} embedDim @param {number} patchSize
     * @param {{bias?: boolean, classToken?: boolean}} [options]
     */
    constructor(inChannels, embedDim, patchSize, options) {
      super();
      const o = checkOptions(options, ['bias', 'classToken'], 'PatchEmbedding');
      checkInteger(inChannels, 'inChannels');
      checkInteger(embedDim, 'embedDim');
      checkInteger(patchSize, 'patchSize');
      const bias = checkBool(o.bias, 'bias', true);
      const classToken = checkBool(o.classToken, 'classToken', false);
      this._adopt(rt._core.createPatchEmbedding({ inChannels, embedDim, patchSize, bias, classToken }), 'PatchEmbedding', { inChannels, embedDim, patchSize });
      Object.assign(this, { inChannels, embedDim, patchSize, bias, classToken });
    }
    forward(images) {
      return forwardX(this._handle(), 'patchEmbeddingForward', { x: checkTensor(images, 'images', 'float', rt) });
    }
  }

  return {
    Module, MultiheadAttention, Linear, LayerNorm, Embedding, ReLU, GELU, Dropout,
    SinusoidalPositionalEncoding, LearnedPositionalEmbedding, PatchEmbedding, forward1, forwardX,
  };
}
