// The Transformer blocks of the API: TransformerEncoderLayer,
// TransformerDecoderLayer, the stacks (their layer copied natively) and
// Transformer. makeTransformer(rt, base) binds them to one runtime, on the
// Module base and helpers of layers.js.
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkBool, checkInteger, checkNumber, checkOptions, optionalMask, checkTensor } from './checks.js';
import * as boundary from './boundary.js';

export function makeTransformer(rt, { Module, LayerNorm }) {

  const LAYER_OPTIONS = ['dimFeedforward', 'dropout', 'activation', 'layerNormEps', 'batchFirst', 'normFirst', 'bias'];

  // Types only: the ranges (and the activation's names) are the native
  // layer's rules (CheckLayerConfig, ParseActivation).
  function layerConfig(dModel, nhead, o) {
    checkInteger(dModel, 'dModel');
    checkInteger(nhead, 'nhead');
    const activation = o.activation === undefined ? 'relu' : o.activation;
    if (typeof activation !== 'string') {
      // A RangeError, as ever for this option; which names exist is ParseActivation's rule.
      throw rangeError(`activation: expected the name of an activation (a string), got ${describe(activation)}`);
    }
    return {
      dModel,
      nhead,
      dimFeedforward: o.dimFeedforward === undefined ? 2048 : checkInteger(o.dimFeedforward, 'dimFeedforward'),
      dropout: checkNumber(o.dropout, 'dropout', 0.1),
      activation,
      layerNormEps: checkNumber(o.layerNormEps, 'layerNormEps', 1e-5),
      batchFirst: checkBool(o.batchFirst, 'batchFirst', false),
      normFirst: checkBool(o.normFirst, 'normFirst', false),
      bias: checkBool(o.bias, 'bias', true),
    };
  }

  /** torch.nn.TransformerEncoderLayer (inference). Keys: self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*. */
  class TransformerEncoderLayer extends Module {
    constructor(dModel, nhead, options) {
      super();
      const cfg = layerConfig(dModel, nhead, checkOptions(options, LAYER_OPTIONS, 'TransformerEncoderLayer'));
      this._adopt(boundary.create.encoderLayer(rt, cfg), 'TransformerEncoderLayer', { dModel, nhead, dimFeedforward: cfg.dimFeedforward });
      /** @readonly */ this.config = cfg;
    }
    /** src (S, N, E) | (N, S, E) if batchFirst | (S, E) → same shape. */
    forward(src, options) {
      const o = checkOptions(options, ['srcMask', 'srcKeyPaddingMask', 'isCausal'], 'TransformerEncoderLayer.forward');
      return boundary.forward.encoderLayer(rt, this._handle(), {
        src: checkTensor(src, 'src', 'float', rt),
        srcMask: optionalMask(o.srcMask, 'srcMask', rt),
        srcKeyPaddingMask: optionalMask(o.srcKeyPaddingMask, 'srcKeyPaddingMask', rt),
      }, { isCausal: checkBool(o.isCausal, 'isCausal', false) })[0];
    }
  }

  function decoderArgs(o, where) {
    return {
      tgtMask: optionalMask(o.tgtMask, 'tgtMask', rt),
      memoryMask: optionalMask(o.memoryMask, 'memoryMask', rt),
      tgtKeyPaddingMask: optionalMask(o.tgtKeyPaddingMask, 'tgtKeyPaddingMask', rt),
      memoryKeyPaddingMask: optionalMask(o.memoryKeyPaddingMask, 'memoryKeyPaddingMask', rt),
    };
  }
  function decoderFlags(o) {
    return {
      tgtIsCausal: checkBool(o.tgtIsCausal, 'tgtIsCausal', false),
      memoryIsCausal: checkBool(o.memoryIsCausal, 'memoryIsCausal', false),
    };
  }
  const DECODER_FORWARD = ['tgtMask', 'memoryMask', 'tgtKeyPaddingMask', 'memoryKeyPaddingMask', 'tgtIsCausal', 'memoryIsCausal'];

  /** torch.nn.TransformerDecoderLayer (inference). Keys: self_attn.*, multihead_attn.*, linear1/2.*, norm1-3.*. */
  class TransformerDecoderLayer extends Module {
    constructor(dModel, nhead, options) {
      super();
      const cfg = layerConfig(dModel, nhead, checkOptions(options, LAYER_OPTIONS, 'TransformerDecoderLayer'));
      this._adopt(boundary.create.decoderLayer(rt, cfg), 'TransformerDecoderLayer', { dModel, nhead, dimFeedforward: cfg.dimFeedforward });
      /** @readonly */ this.config = cfg;
    }
    /** tgt (T, N, E) …, memory (S, N, E) … → like tgt. */
    forward(tgt, memory, options) {
      const o = checkOptions(options, DECODER_FORWARD, 'TransformerDecoderLayer.forward');
      return boundary.forward.decoderLayer(rt, this._handle(), {
        tgt: checkTensor(tgt, 'tgt', 'float', rt),
        memory: checkTensor(memory, 'memory', 'float', rt),
        ...decoderArgs(o),
      }, decoderFlags(o))[0];
    }
  }

  /**
   * Every layer of a new stack a copy of `layer` (torch deep-copies it), its
   * final norm of `norm`: natively, which also checks that `norm` fits the
   * layer (LayerNorm(dModel), elementwiseAffine, the layer's bias). On error
   * the stack is disposed.
   */
  function copyIntoStack(stack, layer, norm, encoder) {
    try {
      boundary.params.copyStack(rt, stack._handle(), layer._handle(), norm ? norm._handle() : null, encoder);
    } catch (e) {
      stack.dispose();
      throw e;
    }
  }

  function checkStackArgs(layer, LayerClass, numLayers, o, where) {
    if (!(layer instanceof LayerClass)) {
      throw typeError(`${where}: expected a ${LayerClass.name} as the layer to copy, got ${describe(layer)}`);
    }
    if (!layer._h) throw new AttnWasmError('ERR_DISPOSED', `${where}: the ${LayerClass.name} was disposed`);
    checkInteger(numLayers, 'numLayers');
    const norm = o.norm === undefined ? null : o.norm;
    if (norm !== null && !(norm instanceof LayerNorm)) throw typeError(`norm: expected a LayerNorm or null, got ${describe(norm)}`);
    if (norm && !norm._h) throw new AttnWasmError('ERR_DISPOSED', 'norm: the LayerNorm was disposed');
    return norm;
  }

  /**
   * torch.nn.TransformerEncoder: numLayers copies of `encoderLayer` (weights
   * copied, as torch's deepcopy) and an optional final LayerNorm `norm`.
   * Keys: layers.N.…, norm.….
   */
  class TransformerEncoder extends Module {
    constructor(encoderLayer, numLayers, options) {
      super();
      const o = checkOptions(options, ['norm'], 'TransformerEncoder');
      const norm = checkStackArgs(encoderLayer, TransformerEncoderLayer, numLayers, o, 'encoderLayer');
      this._adopt(boundary.create.encoder(rt, { layer: encoderLayer.config, numLayers, norm: !!norm, normEps: norm ? norm.eps : 1e-5 }), 'TransformerEncoder', { numLayers });
      copyIntoStack(this, encoderLayer, norm, true);
      /** @readonly */ this.config = encoderLayer.config;
      /** @readonly */ this.numLayers = numLayers;
    }
    /** src → same shape. Options as torch: mask, srcKeyPaddingMask, isCausal. */
    forward(src, options) {
      const o = checkOptions(options, ['mask', 'srcKeyPaddingMask', 'isCausal'], 'TransformerEncoder.forward');
      return boundary.forward.encoder(rt, this._handle(), {
        src: checkTensor(src, 'src', 'float', rt),
        mask: optionalMask(o.mask, 'mask', rt),
        srcKeyPaddingMask: optionalMask(o.srcKeyPaddingMask, 'srcKeyPaddingMask', rt),
      }, { isCausal: checkBool(o.isCausal, 'isCausal', false) })[0];
    }

    /**
     * forward() that also returns each layer's self-attention weights per head,
     * (N, H, S, S) or (H, S, S) unbatched — for attention maps. Not in torch.
     * @returns {{output: Tensor, attentionWeights: Tensor[]}}
     */
    forwardWithAttention(src, options) {
      const o = checkOptions(options, ['mask', 'srcKeyPaddingMask', 'isCausal'], 'TransformerEncoder.forwardWithAttention');
      const h = this._handle();
      const outs = boundary.forward.encoderWithAttention(rt, h, {
        src: checkTensor(src, 'src', 'float', rt),
        mask: optionalMask(o.mask, 'mask', rt),
        srcKeyPaddingMask: optionalMask(o.srcKeyPaddingMask, 'srcKeyPaddingMask', rt),
      }, { isCausal: checkBool(o.isCausal, 'isCausal', false) });
      return { output: outs[0], attentionWeights: outs.slice(1) };
    }
  }

  /** torch.nn.TransformerDecoder: numLayers copies of `decoderLayer`, optional final `norm`. */
  class TransformerDecoder extends Module {
    constructor(decoderLayer, numLayers, options) {
      super();
      const o = checkOptions(options, ['norm'], 'TransformerDecoder');
      const norm = checkStackArgs(decoderLayer, TransformerDecoderLayer, numLayers, o, 'decoderLayer');
      this._adopt(boundary.create.decoder(rt, { layer: decoderLayer.config, numLayers, norm: !!norm, normEps: norm ? norm.eps : 1e-5 }), 'TransformerDecoder', { numLayers });
      copyIntoStack(this, decoderLayer, norm, false);
      /** @readonly */ this.config = decoderLayer.config;
      /** @readonly */ this.numLayers = numLayers;
    }
    forward(tgt, memory, options) {
      const o = checkOptions(options, DECODER_FORWARD, 'TransformerDecoder.forward');
      return boundary.forward.decoder(rt, this._handle(), {
        tgt: checkTensor(tgt, 'tgt', 'float', rt),
        memory: checkTensor(memory, 'memory', 'float', rt),
        ...decoderArgs(o),
      }, decoderFlags(o))[0];
    }
  }

  /**
   * torch.nn.Transformer (inference): encoder and decoder stacks, each with a final LayerNorm.
   * Keys: encoder.layers.N.…, encoder.norm.…, decoder.layers.N.…, decoder.norm.….
   */
  class Transformer extends Module {
    constructor(options) {
      super();
      const o = checkOptions(options, ['dModel', 'nhead', 'numEncoderLayers', 'numDecoderLayers', ...LAYER_OPTIONS], 'Transformer');
      const cfg = layerConfig(o.dModel === undefined ? 512 : o.dModel, o.nhead === undefined ? 8 : o.nhead, o);
      const numEncoderLayers = o.numEncoderLayers === undefined ? 6 : checkInteger(o.numEncoderLayers, 'numEncoderLayers');
      const numDecoderLayers = o.numDecoderLayers === undefined ? 6 : checkInteger(o.numDecoderLayers, 'numDecoderLayers');
      this._adopt(boundary.create.transformer(rt, { layer: cfg, numEncoderLayers, numDecoderLayers }), 'Transformer', { dModel: cfg.dModel, nhead: cfg.nhead, dimFeedforward: cfg.dimFeedforward, numEncoderLayers, numDecoderLayers });
      /** @readonly */ this.config = { ...cfg, numEncoderLayers, numDecoderLayers };
    }
    /** src (S, N, E), tgt (T, N, E) (or batchFirst / unbatched) → like tgt. */
    forward(src, tgt, options) {
      const o = checkOptions(options, ['srcMask', 'srcKeyPaddingMask', 'srcIsCausal', ...DECODER_FORWARD], 'Transformer.forward');
      return boundary.forward.transformer(rt, this._handle(), {
        src: checkTensor(src, 'src', 'float', rt),
        tgt: checkTensor(tgt, 'tgt', 'float', rt),
        srcMask: optionalMask(o.srcMask, 'srcMask', rt),
        srcKeyPaddingMask: optionalMask(o.srcKeyPaddingMask, 'srcKeyPaddingMask', rt),
        ...decoderArgs(o),
      }, { srcIsCausal: checkBool(o.srcIsCausal, 'srcIsCausal', false), ...decoderFlags(o) })[0];
    }
  }

  return { TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder, Transformer };
}
