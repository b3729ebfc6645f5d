// The layers of the API (torch.nn twins) other than the Transformer blocks:
// the Module base (one native module per object; state_dict keys as torch),
// MultiheadAttention, Linear, LayerNorm, Embedding, activations, positional
// encodings and PatchEmbedding. makeLayers(rt) binds them to one runtime.
import { AttnWasmError } from './errors.js';
import * as boundary from './boundary.js';
import { checkBool, checkInteger, checkNumber, checkOptions, checkProbability, optionalMask, checkTensor } from './checks.js';
import { ParameterModule } from './native_object.js';

export function makeLayers(rt) {

  /**
   * Base of every layer: owns one native module (its parameters and scratch), bound to this runtime.
   * Parameters use torch's state_dict keys (native_object.js).
   */
  class Module extends ParameterModule {
    constructor() {
      super(rt);
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
      this._adopt(boundary.create.mha(rt, cfg), 'MultiheadAttention', { embedDim, numHeads, kdim: kdim ?? embedDim, vdim: vdim ?? embedDim });
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
      const outs = boundary.forward.mha(rt, h, tensors, flags);
      return { output: outs[0], weights: needWeights ? outs[1] : null };
    }
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
      this._adopt(boundary.create.linear(rt, { inFeatures, outFeatures, bias }), 'Linear', { inFeatures, outFeatures });
      Object.assign(this, { inFeatures, outFeatures, bias });
    }
    /** x (…, inFeatures) → (…, outFeatures) */
    forward(x) {
      return boundary.forward.linear(rt, this._handle(), { x: checkTensor(x, 'input', 'float', rt) })[0];
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
      this._adopt(boundary.create.layerNorm(rt, { normalizedShape, eps, elementwiseAffine, bias }), 'LayerNorm', { normalizedShape });
      Object.assign(this, { normalizedShape, eps, elementwiseAffine, bias });
    }
    forward(x) {
      return boundary.forward.layerNorm(rt, this._handle(), { x: checkTensor(x, 'input', 'float', rt) })[0];
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
      this._adopt(boundary.create.embedding(rt, { numEmbeddings, embeddingDim, paddingIdx }), 'Embedding', { numEmbeddings, embeddingDim });
      Object.assign(this, { numEmbeddings, embeddingDim, paddingIdx });
    }
    /** ids (…) Int32Array → (…, embeddingDim); an id out of range throws naming its index. */
    forward(ids) {
      return boundary.forward.embedding(rt, this._handle(), { x: checkTensor(ids, 'input', 'ids', rt) })[0];
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
      boundary.rules.shape(rt, 'input', t.shape);  // no native call checks it here
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
      this._adopt(boundary.create.sinusoidalPE(rt, { dModel, maxLen, batchFirst }), 'SinusoidalPositionalEncoding', { dModel, maxLen });
      Object.assign(this, { dModel, maxLen, batchFirst });
    }
    forward(x) {
      return boundary.forward.positional(rt, this._handle(), { x: checkTensor(x, 'input', 'float', rt) })[0];
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
      this._adopt(boundary.create.learnedPE(rt, { maxLen, dModel, batchFirst }), 'LearnedPositionalEmbedding', { maxLen, dModel });
      Object.assign(this, { dModel, maxLen, batchFirst });
    }
    forward(x) {
      return boundary.forward.positional(rt, this._handle(), { x: checkTensor(x, 'input', 'float', rt) })[0];
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
      this._adopt(boundary.create.patchEmbedding(rt, { inChannels, embedDim, patchSize, bias, classToken }), 'PatchEmbedding', { inChannels, embedDim, patchSize });
      Object.assign(this, { inChannels, embedDim, patchSize, bias, classToken });
    }
    forward(images) {
      return boundary.forward.patchEmbedding(rt, this._handle(), { x: checkTensor(images, 'images', 'float', rt) })[0];
    }
  }

  return {
    Module, MultiheadAttention, Linear, LayerNorm, Embedding, ReLU, GELU, Dropout,
    SinusoidalPositionalEncoding, LearnedPositionalEmbedding, PatchEmbedding,
  };
}
