// ModernBERT's classification head (transformers' ModernBertForSequenceClassification, and per token
// ModernBertForTokenClassification: tokenLogits): the encoder's
// final-norm rows natively (the causal LM runtime's hidden rows, modernbert_family.cpp), then here, per text:
//
//   pooled = row 0 ('cls') or the mean of every row ('mean')          config.classifier_pooling (default 'cls')
//   h      = LayerNorm(GELU(head.dense · pooled + head.dense.bias))    erf GELU, no norm bias, eps norm_eps
//   logits = classifier · h + classifier.bias
//
// on the parameters the native model kept from the file (head.dense, head.norm, classifier), copied out once.
// Each text runs at its own length (no padding), which gives the padded model's numbers (its keys are masked).
import { AttnWasmError } from './errors.js';
import * as boundary from './boundary.js';
import { forEachHiddenRows } from './decoder_embedder.js';

/** erf(x), within 1.2e-7 (the Chebyshev-fitted erfc of Press et al., Numerical Recipes §6.2): far inside the goldens' 1e-4. */
function erf(x) {
  const z = Math.abs(x), t = 1 / (1 + 0.5 * z);
  const r = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? 1 - r : r - 1;
}

/** torch's erf GELU: x · ½ (1 + erf(x / √2)). */
export const gelu = (x) => 0.5 * x * (1 + erf(x * Math.SQRT1_2));

export class ModernBertHead {
  /** From a loaded ModernBERT handle with a classifier (info.numLabels > 0) and its config.json. */
  constructor(rt, handle, config, info) {
    const pooling = config?.classifier_pooling ?? 'cls';
    if (pooling !== 'cls' && pooling !== 'mean') throw new AttnWasmError('ERR_INVALID_ARGUMENT', `config.classifier_pooling: expected "cls" or "mean", got ${JSON.stringify(pooling)}`);
    const act = config?.classifier_activation ?? 'gelu';
    if (act !== 'gelu') throw new AttnWasmError('ERR_UNSUPPORTED', `config.classifier_activation: expected "gelu" (the head's activation run here), got ${JSON.stringify(act)}`);
    const names = new Set(boundary.params.names(rt, handle));
    const get = (name) => (names.has(name) ? boundary.params.data(rt, handle, name) : null);
    for (const name of ['head.dense.weight', 'head.norm.weight', 'classifier.weight']) {
      if (!names.has(name)) throw new AttnWasmError('ERR_STATE_DICT', `stateDict: ${name}: missing (a ModernBertForSequenceClassification save has head.dense, head.norm and classifier)`);
    }
    this.E = info.hiddenSize;
    this.C = info.numLabels;
    this.pooling = pooling;
    this.eps = typeof config?.norm_eps === 'number' ? config.norm_eps : 1e-5;
    this.dense = get('head.dense.weight');
    this.denseBias = get('head.dense.bias');
    this.norm = get('head.norm.weight');
    this.w = get('classifier.weight');
    this.b = get('classifier.bias');
  }

  /** batch [{ ids }] → logits (batch.length × C) in batch order; onError(e, run) words a native error (forEachHiddenRows). */
  logits(rt, h, batch, onError) {
    const { E, C } = this;
    const out = new Float32Array(batch.length * C);
    const pooled = new Float64Array(E), y = new Float64Array(E);
    forEachHiddenRows(rt, h, batch, E, (r, x, T) => {
      pooled.fill(0);
      const n = this.pooling === 'cls' ? 1 : T;
      for (let t = 0; t < n; t++) for (let k = 0; k < E; k++) pooled[k] += x[t * E + k];
      for (let k = 0; k < E; k++) pooled[k] = Math.fround(pooled[k] / n);
      this._apply(pooled, y, out.subarray(r * C, (r + 1) * C));
    }, onError);
    return out;
  }

  /** ModernBertForTokenClassification: batch [{ ids }] → each text's (T × C) logits, the head on every row. */
  tokenLogits(rt, h, batch, onError) {
    const { E, C } = this;
    const p = new Float64Array(E), y = new Float64Array(E);
    const outs = new Array(batch.length);
    forEachHiddenRows(rt, h, batch, E, (r, x, T) => {
      const out = outs[r] = new Float32Array(T * C);
      for (let t = 0; t < T; t++) {
        for (let k = 0; k < E; k++) p[k] = x[t * E + k];
        this._apply(p, y, out.subarray(t * C, (t + 1) * C));
      }
    }, onError);
    return outs;
  }

  /** dense → GELU → LayerNorm → classifier of one pooled row (float64 sums, float32 results as torch stores them). */
  _apply(p, y, out) {
    const { E, C } = this;
    let mean = 0;
    for (let o = 0; o < E; o++) {
      let s = this.denseBias ? this.denseBias[o] : 0;
      for (let k = 0; k < E; k++) s += this.dense[o * E + k] * p[k];
      y[o] = Math.fround(gelu(Math.fround(s)));
      mean += y[o];
    }
    mean /= E;
    let v = 0;
    for (let o = 0; o < E; o++) v += (y[o] - mean) ** 2;
    const rstd = 1 / Math.sqrt(v / E + this.eps);
    for (let o = 0; o < E; o++) y[o] = Math.fround((y[o] - mean) * rstd * this.norm[o]);
    for (let c = 0; c < C; c++) {
      let s = this.b ? this.b[c] : 0;
      for (let k = 0; k < E; k++) s += this.w[c * E + k] * y[k];
      out[c] = s;
    }
  }
}
