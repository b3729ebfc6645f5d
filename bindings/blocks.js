// The small-language-model blocks of the API, torch twins: RMSNorm, SiLU
// (and the function silu), RotaryPositionalEmbeddings, and torch.nn.attention.
// bias's causal masks as objects (causalUpperLeft / causalLowerRight: a
// CausalBias) that scaledDotProductAttention takes as attnMask and runs
// without materialising an (L, S) mask. makeBlocks(rt, base) binds the
// classes to one runtime, blockFunctions(rt) its functions; sdpaMask(attnMask,
// rt) reads SDPA's attnMask (a mask tensor or a CausalBias). Types only here:
// every range rule is native (src/layers/rms_norm.cpp, rotary.cpp,
// src/ops/scaled_dot_product_attention.cpp CheckCausalBias).
import { CAUSAL_BIAS } from './native_constants.js';
import { checkBool, checkInteger, checkNumber, checkOptions, checkTensor } from './checks.js';
import * as boundary from './boundary.js';

/**
 * torch.nn.attention.bias.CausalBias: a causal mask of (seqLenQ, seqLenKv)
 * described, not materialised. variant 'upperLeft': query i sees keys 0 … i
 * (torch's is_causal); 'lowerRight': keys 0 … i + seqLenKv - seqLenQ (the
 * queries are the last ones of the keys' sequence: a prefill after cached
 * tokens; rows with no key give zeros). Plain data, usable with any runtime.
 */
export class CausalBias {
  constructor(variant, seqLenQ, seqLenKv) {
    /** @readonly */ this.variant = variant;
    /** @readonly */ this.seqLenQ = seqLenQ;
    /** @readonly */ this.seqLenKv = seqLenKv;
    Object.freeze(this);
  }
}

const VARIANT_CODES = { upperLeft: CAUSAL_BIAS.UPPER_LEFT, lowerRight: CAUSAL_BIAS.LOWER_RIGHT };  // SdpaOptions::causal_bias

/**
 * scaledDotProductAttention's attnMask: null, a mask tensor, or a CausalBias.
 * Returns the tensor for the boundary (or null) and the causal-bias fields.
 */
export function sdpaMask(attnMask, rt) {
  if (attnMask instanceof CausalBias) {
    return {
      mask: null,
      causal: { causalBias: VARIANT_CODES[attnMask.variant], causalL: attnMask.seqLenQ, causalS: attnMask.seqLenKv },
    };
  }
  const mask = attnMask == null ? null : checkTensor(attnMask, 'attnMask', 'mask', rt);
  return { mask, causal: { causalBias: CAUSAL_BIAS.NONE, causalL: 0, causalS: 0 } };
}

/** The functions of the runtime: silu, causalUpperLeft, causalLowerRight. */
export function blockFunctions(rt) {
  const causal = (variant) => (L, S) => {
    checkInteger(L, 'L');
    checkInteger(S, 'S');
    boundary.rules.causalBias(rt, L, S);  // the range rule (native)
    return new CausalBias(variant, L, S);
  };
  return {
    /** torch.nn.functional.silu: x · sigmoid(x), a new tensor. */
    silu: (x) => rt._activation('silu', x),
    /** torch.nn.attention.bias.causal_upper_left(L, S): query i sees keys 0 … i. */
    causalUpperLeft: causal('upperLeft'),
    /** torch.nn.attention.bias.causal_lower_right(L, S): query i sees keys 0 … i + S - L. */
    causalLowerRight: causal('lowerRight'),
  };
}

export function makeBlocks(rt, { Module }) {

  /**
   * torch.nn.RMSNorm: y = (x · rsqrt(mean(x²) + eps)) · weight over the
   * trailing dims normalizedShape. Key: weight (normalizedShape).
   */
  class RMSNorm extends Module {
    /**
     * @param {number|number[]} normalizedShape
     * @param {{eps?: number|null, elementwiseAffine?: boolean}} [options] eps null/undefined: float32's epsilon (torch's None)
     */
    constructor(normalizedShape, options) {
      super();
      const o = checkOptions(options, ['eps', 'elementwiseAffine'], 'RMSNorm');
      const shape = Array.isArray(normalizedShape) ? normalizedShape : [normalizedShape];
      if (Array.isArray(normalizedShape)) normalizedShape.forEach((d, i) => checkInteger(d, `normalizedShape[${i}]`));
      else checkInteger(normalizedShape, 'normalizedShape');
      const eps = o.eps == null ? null : checkNumber(o.eps, 'eps');
      const elementwiseAffine = checkBool(o.elementwiseAffine, 'elementwiseAffine', true);
      this._adopt(boundary.create.rmsNorm(rt, { normalizedShape: shape, eps, elementwiseAffine }), 'RMSNorm', { normalizedShape: `[${shape}]` });
      /** @readonly */ this.normalizedShape = Array.isArray(normalizedShape) ? [...normalizedShape] : normalizedShape;
      /** @readonly */ this.eps = eps;
      /** @readonly */ this.elementwiseAffine = elementwiseAffine;
    }
    /** x (…, *normalizedShape) → the same shape */
    forward(x) {
      return boundary.forward.rmsNorm(rt, this._handle(), { x: checkTensor(x, 'input', 'float', rt) })[0];
    }
  }

  /** torch.nn.SiLU: x · sigmoid(x). */
  class SiLU {
    forward(x) { return rt.silu(x); }
  }

  /**
   * torchtune's RotaryPositionalEmbeddings; interleaved: false is Hugging
   * Face's rotate_half (Llama, Qwen2). No parameters (an empty state dict).
   */
  class RotaryPositionalEmbeddings extends Module {
    /**
     * @param {number} dim the head dim (even)
     * @param {{maxSeqLen?: number, base?: number, interleaved?: boolean}} [options]
     */
    constructor(dim, options) {
      super();
      const o = checkOptions(options, ['maxSeqLen', 'base', 'interleaved'], 'RotaryPositionalEmbeddings');
      checkInteger(dim, 'dim');
      const maxSeqLen = o.maxSeqLen === undefined ? 4096 : checkInteger(o.maxSeqLen, 'maxSeqLen');
      const base = checkNumber(o.base, 'base', 10000);
      const interleaved = checkBool(o.interleaved, 'interleaved', true);
      this._adopt(boundary.create.rotary(rt, { dim, maxSeqLen, base, interleaved }), 'RotaryPositionalEmbeddings', { dim, maxSeqLen, base });
      Object.assign(this, { dim, maxSeqLen, base, interleaved });
    }
    /**
     * x (B, S, H, dim) → the same shape. inputPos: Int32Array positions of
     * shape (B, S) or (S), each in [0, maxSeqLen); absent: 0 … S-1.
     * @param {{inputPos?: {data: Int32Array, shape: number[]}|null}} [options]
     */
    forward(x, options) {
      const o = checkOptions(options, ['inputPos'], 'RotaryPositionalEmbeddings.forward');
      return boundary.forward.rotary(rt, this._handle(), {
        x: checkTensor(x, 'input', 'float', rt),
        inputPos: o.inputPos == null ? null : checkTensor(o.inputPos, 'inputPos', 'ids', rt),
      })[0];
    }
  }

  return { RMSNorm, SiLU, RotaryPositionalEmbeddings };
}
