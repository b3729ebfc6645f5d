// DecoderEmbedder: a decoder-only checkpoint (the causal LM family: Qwen3-Embedding is a Qwen3 model) run as a
// sentence embedder, as sentence-transformers runs it: text (with its instruction prompt) → tokens (the
// tokenizer's template: Qwen3-Embedding's appends <|endoftext|>) → the decoder's layers and final norm, causal,
// natively (CausalLm::Forward with hidden rows, no head) → pooling here (lasttoken for Qwen3-Embedding; the
// folder's Pooling config says) → Dense modules → L2 normalization. Each text runs at its own length, so the
// left padding sentence-transformers asks of the tokenizer changes nothing. EmbeddingGemma (gemma3_text with
// use_bidirectional_attention) runs the same way, its attention bidirectional natively (every key, or a sliding
// layer's |i − j| < window): mean pooling, its 2_Dense and 3_Dense. Everything else — prompts, batches,
// truncation, the options — is the Embedder's (embedder.js).
import { AttnWasmError, rangeError } from './errors.js';
import { Embedder, reword } from './embedder.js';
import { applyDense, normalizeRows } from './st_dense.js';
import * as boundary from './boundary.js';

export class DecoderEmbedder extends Embedder {
  /**
   * Internal: built by loadModel (families.js: the causal LM row for a sentence-transformers folder or task
   * 'embed'; the ModernBERT row, whose encoder runs on the same bidirectional rows, with what 'a ModernBERT embedder').
   */
  constructor(rt, handle, { hfConfig, tokenizer, st, what = 'a decoder embedder' }, fileBytes) {
    super(rt, handle, { hfConfig, tokenizer, st }, fileBytes);
    const info = this._info;
    this._kind = 'DecoderEmbedder';
    this._what = what;
    /** @readonly a decoder has no token types */ this.typeVocabSize = 0;
    /** @readonly */ this.hasPooler = false;
    /** @readonly the query's key/value heads (grouped-query attention) */ this.numKeyValueHeads = info.numKeyValueHeads;
    const fromTokenizer = typeof tokenizer?.config?.model_max_length === 'number' ? tokenizer.config.model_max_length : Infinity;
    /** @readonly tokens a text is cut to, special tokens included: max_seq_length, else model_max_length, at most the positions */
    this.maxTokens = Math.min(info.maxPositions, st.maxSeqLength ?? fromTokenizer);
  }

  /** The padded batch forward of an encoder: not a decoder embedder's (its tokenizer pads on the left, and a causal model needs no padding here). */
  forward() {
    this._handle();
    throw new AttnWasmError('ERR_UNSUPPORTED', `forward: ${this._what} has no padded-batch forward; embed(texts) or embedIds(idsList) give the sentence embeddings`);
  }

  /** As forward(): the padded batch is not a decoder embedder's input. */
  tokenize() {
    this._handle();
    throw new AttnWasmError('ERR_UNSUPPORTED', `tokenize: ${this._what} takes no padded batch; embed(texts) tokenizes each text itself (tokenizer.encodeInputs gives one text's ids)`);
  }

  /** rows [{ i, ids, skip }] (sorted by length) → (rows, dimension): one native call per run of one length, pooled here. */
  _embedBatch(h, rows, normalize, what) {
    const E = this.hiddenSize;
    const modes = this.pooling.split('+');
    const width = E * modes.length;
    const pooled = new Float32Array(rows.length * width);
    for (const r of rows) {
      const T = r.ids.length;
      if (T === 0 || T > this._info.maxPositions) {
        throw rangeError(`${what}[${r.i}]: ${T === 0 ? 'no tokens (a sequence needs at least one)' : `${T} tokens, more than the model's ${this._info.maxPositions} positions`}`);
      }
    }
    forEachHiddenRows(this._rt, h, rows, E, (k, x, T) => {
      modes.forEach((mode, m) => poolRows(mode, x, T, E, rows[k].skip, pooled.subarray(k * width + m * E, k * width + (m + 1) * E)));
    }, (e, run) => reword(e, run, what, this.tokenizer));
    const out = this._dense.length ? applyDense(this._dense, pooled, rows.length) : pooled;
    return normalize ? normalizeRows(out, rows.length, this.dimension) : out;
  }
}

/**
 * sentence-transformers' Pooling of one text's rows x (T, E), every token attended (each text runs alone), the
 * first `skip` (a prompt left out with include_prompt false) masked as it masks them, into out (E).
 */
function poolRows(mode, x, T, E, skip, out) {
  const from = Math.min(skip, T);
  if (mode === 'cls') {
    out.set(x.subarray(0, E));
    return;
  }
  if (mode === 'lasttoken') {
    out.set(x.subarray((T - 1) * E, T * E));
    return;
  }
  if (mode === 'max') {
    for (let e = 0; e < E; e++) {
      let m = from < T ? -Infinity : -1e9;  // every token masked: sentence-transformers' -1e9 fill
      for (let t = from; t < T; t++) m = Math.max(m, x[t * E + e]);
      out[e] = m;
    }
    return;
  }
  // mean, mean_sqrt_len, weightedmean: float64 sums, divided as sentence-transformers divides (its clamp at 1e-9)
  const sum = new Float64Array(E);
  let weight = 0;
  for (let t = from; t < T; t++) {
    const w = mode === 'weightedmean' ? t + 1 : 1;
    weight += w;
    for (let e = 0; e < E; e++) sum[e] += w * x[t * E + e];
  }
  const div = mode === 'mean_sqrt_len' ? Math.sqrt(Math.max(weight, 1e-9)) : Math.max(weight, 1e-9);
  for (let e = 0; e < E; e++) out[e] = sum[e] / div;
}

/**
 * The stack's final-norm rows of each row [{ ids }] (CausalLm::Forward's hidden rows): one native call per run of
 * rows of one length, fn(k, x (T × E), T) for the k-th row; a native error is thrown as onError(e, the run's rows)
 * words it (its place is an index into the run's ids). The decoder embedders and ModernBERT's heads read rows so.
 */
export function forEachHiddenRows(rt, h, rows, E, fn, onError) {
  for (let a = 0; a < rows.length;) {
    let b = a + 1;
    while (b < rows.length && rows[b].ids.length === rows[a].ids.length) b++;
    const T = rows[a].ids.length;
    const ids = new Int32Array((b - a) * T);
    for (let r = a; r < b; r++) ids.set(rows[r].ids, (r - a) * T);
    let hidden;
    try {
      hidden = boundary.models.lmForward(rt, h, { ids: { data: ids, shape: [b - a, T] } }, { hidden: true })[0].data;
    } catch (e) {
      throw onError(e, rows.slice(a, b));
    }
    for (let r = a; r < b; r++) fn(r, hidden.subarray((r - a) * T * E, (r - a + 1) * T * E), T);
    a = b;
  }
}
