// CrossEncoder: a reranker (ms-marco-MiniLM, bge-reranker, …) as sentence-transformers' CrossEncoder runs it: a
// sequence-classification checkpoint (TextClassifier) fed (query, document) pairs, its logits through the
// activation the config names, and rank() ordering documents by score. Which activation: config.json's
// "sentence_transformers".activation_fn, else the older "sbert_ce_default_activation_function", else Sigmoid for
// one label and Identity otherwise (CrossEncoder 4.x's get_default_activation_fn); only torch's own modules are
// run, as CrossEncoder imports only those without trust_remote_code.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkBool, checkInteger, checkOptions } from './checks.js';
import { TextClassifier, oneOf } from './text_classifier.js';

/** The activations CrossEncoder may name, by their import path → the function on one logit. */
const ACTIVATIONS = Object.freeze({
  'torch.nn.modules.activation.Sigmoid': (x) => 1 / (1 + Math.exp(-x)),
  'torch.nn.modules.linear.Identity': (x) => x,
  'torch.nn.modules.activation.Tanh': (x) => Math.tanh(x),
  'torch.nn.modules.activation.ReLU': (x) => Math.max(x, 0),
});
const SHORT = { sigmoid: 'torch.nn.modules.activation.Sigmoid', identity: 'torch.nn.modules.linear.Identity', tanh: 'torch.nn.modules.activation.Tanh', relu: 'torch.nn.modules.activation.ReLU' };

/** The activation path a config.json names for CrossEncoder, or its default; ERR_UNSUPPORTED for one not run here. */
export function crossEncoderActivation(config, numLabels) {
  const st = config?.sentence_transformers;
  const [key, path] = st && typeof st === 'object' && st.activation_fn != null ? ['sentence_transformers.activation_fn', st.activation_fn]
    : config?.sbert_ce_default_activation_function != null ? ['sbert_ce_default_activation_function', config.sbert_ce_default_activation_function]
      : [null, numLabels === 1 ? SHORT.sigmoid : SHORT.identity];
  if (!Object.hasOwn(ACTIVATIONS, path)) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `config.json ${key}: expected one of ${Object.keys(ACTIVATIONS).map((a) => `'${a}'`).join(', ')}, got ${typeof path === 'string' ? `'${path}'` : describe(path)}`);
  }
  return path;
}

/**
 * A cross-encoder (reranker): loaded by aw.loadModel from a sequence-classification folder with sentence-
 * transformers' CrossEncoder config, or one label, or any sequence classifier with { task: 'rerank' }.
 */
export class CrossEncoder extends TextClassifier {
  /** Internal: built by loadModel (families.js). */
  constructor(rt, handle, ctx, fileBytes) {
    super(rt, handle, ctx, fileBytes, 'CrossEncoder');
    /** @readonly the activation predict() and rank() apply, as its torch import path */
    this.activation = crossEncoderActivation(ctx.hfConfig, this.numLabels);
  }

  /**
   * Scores of (query, document) pairs, as CrossEncoder.predict(pairs): the logits through `activation`
   * (option: 'sigmoid', 'identity', 'tanh', 'relu' or a torch path; default the model's), then softmax over the
   * labels with applySoftmax (several labels only). One label: a Float32Array of n scores; several: { data,
   * shape: [n, numLabels] }. Pairs longer than maxTokens lose tokens from the document (truncation 'only_second',
   * the default) or as `truncation` says ('longest_first' is what sentence-transformers' tokenizer call does).
   * @param {[string, string][]} pairs
   */
  async predict(pairs, options) {
    const o = checkOptions(options, ['activation', 'applySoftmax', 'truncation', 'batchSize', 'onProgress'], 'predict');
    if (!Array.isArray(pairs)) throw typeError(`pairs: expected an Array of [query, document] arrays of two strings, got ${describe(pairs)}`);
    pairs.forEach((p, i) => {
      if (!Array.isArray(p)) throw typeError(`pairs[${i}]: expected a [query, document] array of two strings, got ${describe(p)}`);
    });
    const path = o.activation === undefined ? this.activation : SHORT[o.activation] ?? oneOf(o.activation, Object.keys(ACTIVATIONS), 'activation');
    const softmax = checkBool(o.applySoftmax, 'applySoftmax', false);
    const { data, shape } = await this.logits(pairs, { truncation: o.truncation, batchSize: o.batchSize, onProgress: o.onProgress });
    const f = ACTIVATIONS[path];
    const C = this.numLabels;
    const out = data.map(f);
    if (softmax && C > 1) {
      for (let i = 0; i < shape[0]; ++i) {
        const row = out.subarray(i * C, (i + 1) * C);
        let max = -Infinity;
        for (const x of row) max = Math.max(max, x);
        let sum = 0;
        for (let k = 0; k < C; ++k) sum += (row[k] = Math.exp(row[k] - max));
        for (let k = 0; k < C; ++k) row[k] /= sum;
      }
    }
    return C === 1 ? out : { data: out, shape };
  }

  /**
   * Documents ranked for a query, as CrossEncoder.rank: [{ corpusId, score, text? }], best first (equal scores
   * keep the documents' order), topK of them (default all), text with returnDocuments. The model must have one
   * label (a relevance score). Other options as predict().
   * @param {string} query @param {string[]} documents
   */
  async rank(query, documents, options) {
    const o = checkOptions(options, ['topK', 'returnDocuments', 'activation', 'truncation', 'batchSize', 'onProgress'], 'rank');
    if (typeof query !== 'string') throw typeError(`query: expected a string, got ${describe(query)}`);
    if (!Array.isArray(documents)) throw typeError(`documents: expected an Array of strings, got ${describe(documents)}`);
    if (documents.length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'documents: expected at least one document, got an empty Array');
    documents.forEach((d, i) => {
      if (typeof d !== 'string') throw typeError(`documents[${i}]: expected a string, got ${describe(d)}`);
    });
    if (this.numLabels !== 1) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `rank: needs a model with one label (a relevance score); this one has ${this.numLabels} (${this.labels.join(', ')}): use predict() or classify()`);
    const topK = o.topK === undefined || o.topK === null ? documents.length : checkInteger(o.topK, 'topK', { min: 1, max: 2 ** 31 - 1 });
    const withText = checkBool(o.returnDocuments, 'returnDocuments', false);
    const scores = await this.predict(documents.map((d) => [query, d]), { activation: o.activation, truncation: o.truncation, batchSize: o.batchSize, onProgress: o.onProgress });
    const ranked = Array.from(scores, (score, corpusId) => ({ corpusId, score }));
    ranked.sort((a, b) => b.score - a.score || a.corpusId - b.corpusId);
    return ranked.slice(0, topK).map((r) => (withText ? { ...r, text: documents[r.corpusId] } : r));
  }
}
