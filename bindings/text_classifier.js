// TextClassifier: an encoder checkpoint with a sequence-classification head (BertForSequenceClassification,
// RobertaForSequenceClassification, XLMRobertaForSequenceClassification; src/models/encoder.h EncoderHead) as
// transformers' text-classification pipeline runs it: text (or a text pair) → tokens → the encoder and its head,
// natively, each input at its own length (no padding) → logits → scores (softmax, sigmoid or none, as the
// config's problem_type and num_labels choose) → labels from id2label, best first. CrossEncoder
// (cross_encoder.js) is this with sentence-transformers' predict / rank on top.
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkInteger, checkOptions } from './checks.js';
import { nextTask } from './next_task.js';
import { Model } from './model.js';
import { reword } from './embedder.js';
import * as boundary from './boundary.js';

const MAX_BATCH = 1 << 20;
const FUNCTIONS = ['softmax', 'sigmoid', 'none'];
const TRUNCATIONS = ['only_second', 'only_first', 'longest_first'];

/**
 * A text classifier: an encoder of the BERT family with its sequence-classification head, loaded by aw.loadModel
 * from a hub folder whose config.json names a *ForSequenceClassification class. Owns native memory: dispose().
 */
export class TextClassifier extends Model {
  /** Internal: built by loadModel (families.js) from a handle of the native loader. */
  constructor(rt, handle, { hfConfig, tokenizer }, fileBytes, className = 'TextClassifier') {
    super(rt, handle, className, fileBytes);
    const info = this._info;
    /** @readonly the Hugging Face config (config.json's keys, as given). */ this.config = hfConfig;
    /** @readonly 'bert' | 'roberta' | 'xlm-roberta' | 'distilbert' | 'modernbert' */ this.modelType = info.modelType;
    /** @readonly */ this.vocabSize = info.vocabSize;
    /** @readonly */ this.hiddenSize = info.hiddenSize;
    /** @readonly */ this.numLayers = info.numLayers;
    /** @readonly the head's outputs */ this.numLabels = info.numLabels;
    /** @readonly id2label in id order (LABEL_i where config.json names none, as transformers) */
    this.labels = Object.freeze(labelsOf(hfConfig, info.numLabels));
    /** @readonly config.json's problem_type, or null */
    this.problemType = typeof hfConfig?.problem_type === 'string' ? hfConfig.problem_type : null;
    /** @readonly an 'attnwasm/tokenizer' Tokenizer, or null (logitsOfIds only) */ this.tokenizer = tokenizer ?? null;
    const fromTokenizer = typeof tokenizer?.config?.model_max_length === 'number' ? tokenizer.config.model_max_length : Infinity;
    /** @readonly tokens an input is truncated to, special tokens included: model_max_length, at most the model's positions */
    this.maxTokens = Math.min(info.maxTokens, fromTokenizer);
  }

  /**
   * Labels and scores, as transformers' pipeline('text-classification') gives them:
   *
   *   await clf.classify(['I loved it', 'meh'])          // [[{ label: 'positive', score: 0.98 }], [...]]
   *   await clf.classify([['A man eats.', 'Someone eats.']], { topK: null })   // a pair: every label
   *
   * Per input, its labels best first: topK of them (default 1; null: all). functionToApply: 'softmax',
   * 'sigmoid' or 'none' (default: sigmoid for one label or problem_type multi_label_classification, softmax
   * otherwise). A pair longer than maxTokens is cut as `truncation` says (default 'only_second').
   * @param {string | (string | [string, string])[]} inputs
   * @returns {Promise<{ label: string, score: number }[][]>}
   */
  async classify(inputs, options) {
    const o = checkOptions(options, ['topK', 'functionToApply', 'truncation', 'batchSize', 'onProgress'], 'classify');
    const topK = o.topK === null ? this.numLabels : o.topK === undefined ? 1 : checkInteger(o.topK, 'topK', { min: 1, max: MAX_BATCH });
    const fn = o.functionToApply === undefined ? this._defaultFunction() : oneOf(o.functionToApply, FUNCTIONS, 'functionToApply');
    const { data } = await this.logits(inputs, { truncation: o.truncation, batchSize: o.batchSize, onProgress: o.onProgress });
    return rankedLabels(data, this.labels, fn, topK);
  }

  /**
   * The head's logits of texts or [text, pair]s: { data, shape: [n, numLabels] }, in the inputs' order.
   * Options: truncation ('only_second' default, 'only_first', 'longest_first'), batchSize (default 32), onProgress.
   */
  async logits(inputs, options) {
    this._handle();
    const list = typeof inputs === 'string' ? [inputs] : inputs;
    if (!Array.isArray(list)) throw typeError(`inputs: expected an Array of strings or [text, pair] arrays, got ${describe(inputs)}`);
    list.forEach((t, i) => checkInput(t, `inputs[${i}]`));
    const o = this._runOptions(options, 'logits');
    const truncation = o.truncation === undefined ? 'only_second' : oneOf(o.truncation, TRUNCATIONS, 'truncation');
    const tok = this._tokenizer('logits');
    return this._run(list.length, o, 'inputs', (i) => {
      const [text, pair] = typeof list[i] === 'string' ? [list[i], undefined] : list[i];
      let r;
      try {
        r = tok.encodeInputs(text, { pair, maxLength: this.maxTokens, truncation });
      } catch (e) {
        if (e instanceof RangeError) throw rangeError(`inputs[${i}]: ${e.message}`);
        throw e;
      }
      return { ids: r.inputIds, types: this.modelType === 'bert' && r.tokenTypeIds.some((x) => x !== 0) ? r.tokenTypeIds : null };
    });
  }

  /**
   * Logits of inputs already tokenized (special tokens included, at most maxTokens each), with their token
   * type ids or null: { data, shape: [n, numLabels] }.
   * @param {(Int32Array|number[])[]} idsList @param {(Int32Array|number[]|null)[]} [typesList]
   */
  async logitsOfIds(idsList, typesList, options) {
    this._handle();
    if (!Array.isArray(idsList)) throw typeError(`idsList: expected an Array of Int32Arrays or arrays of token ids, got ${describe(idsList)}`);
    if (typesList != null && (!Array.isArray(typesList) || typesList.length !== idsList.length)) throw typeError(`typesList: expected an Array of ${idsList.length} entries (or null), got ${describe(typesList)}`);
    const o = this._runOptions(options, 'logitsOfIds');
    const ids = idsList.map((x, i) => toIds(x, `idsList[${i}]`));
    const types = idsList.map((_, i) => (typesList?.[i] == null ? null : toIds(typesList[i], `typesList[${i}]`)));
    types.forEach((t, i) => {
      if (t && t.length !== ids[i].length) throw rangeError(`typesList[${i}]: expected ${ids[i].length} type ids (as idsList[${i}]), got ${t.length}`);
    });
    return this._run(ids.length, o, 'idsList', (i) => ({ ids: ids[i], types: types[i] }));
  }

  /** transformers' default function_to_apply: sigmoid for multi-label or one label, softmax otherwise. */
  _defaultFunction() {
    return this.problemType === 'multi_label_classification' || this.numLabels === 1 ? 'sigmoid' : 'softmax';
  }

  _runOptions(options, where) {
    const o = checkOptions(options, ['truncation', 'batchSize', 'onProgress'], where);
    const batchSize = o.batchSize === undefined ? 32 : checkInteger(o.batchSize, 'batchSize', { min: 1, max: MAX_BATCH });
    if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw typeError(`onProgress: expected a function, got ${describe(o.onProgress)}`);
    return { ...o, batchSize };
  }

  /**
   * n inputs in batches of o.batchSize (longest first within a batch, so runs of one length share an attention
   * call natively), each batch one native call, a turn for the event loop between batches: row(i) → { ids, types }.
   */
  async _run(n, o, what, row) {
    const C = this.numLabels;
    const data = new Float32Array(n * C);
    for (let b0 = 0; b0 < n; b0 += o.batchSize) {
      if (b0 > 0) await nextTask();
      const h = this._handle();  // disposed while waiting: ERR_DISPOSED
      const batch = [];
      for (let i = b0; i < Math.min(n, b0 + o.batchSize); ++i) batch.push({ i, ...row(i) });
      batch.sort((a, b) => b.ids.length - a.ids.length || a.i - b.i);
      const total = batch.reduce((s, r) => s + r.ids.length, 0);
      const ids = new Int32Array(total);
      const types = batch.some((r) => r.types) ? new Int32Array(total) : null;
      let at = 0;
      for (const r of batch) {
        ids.set(r.ids, at);
        if (r.types) types.set(r.types, at);
        at += r.ids.length;
      }
      const tensors = { ids: { data: ids, shape: [total] }, lengths: { data: Int32Array.from(batch, (r) => r.ids.length), shape: [batch.length] } };
      if (types) tensors.types = { data: types, shape: [total] };
      let out;
      if (this._lmHead) {  // ModernBERT: its head in JS on the encoder's rows, one native call per run of one length
        out = this._lmHead.logits(this._rt, h, batch, (e, run) => reword(e, run, what, this.tokenizer));
      } else {
        try {
          out = boundary.models.embedderEmbed(this._rt, h, tensors, { modes: 0, normalize: false, head: true })[0].data;
        } catch (e) {
          throw reword(e, batch, what, this.tokenizer);
        }
      }
      batch.forEach((r, j) => data.set(out.subarray(j * C, (j + 1) * C), r.i * C));
      o.onProgress?.({ done: Math.min(b0 + o.batchSize, n), total: n });
    }
    return { data, shape: [n, C] };
  }

  _tokenizer(what) {
    if (!this.tokenizer) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT',
        `${what}: this model has no tokenizer; pass token ids to logitsOfIds, or load it with its tokenizer files (a folder that has them, or { tokenizer })`);
    }
    return this.tokenizer;
  }
}

/** id2label in id order: config.json's names, LABEL_i where it has none (transformers' default). */
export function labelsOf(config, n) {
  const given = config?.id2label && typeof config.id2label === 'object' ? config.id2label : {};
  const out = [];
  for (let k = 0; k < n; ++k) {
    const name = given[String(k)];
    if (name !== undefined && typeof name !== 'string') throw new AttnWasmError('ERR_INVALID_ARGUMENT', `config.json id2label["${k}"]: expected a string, got ${describe(name)}`);
    out.push(name ?? `LABEL_${k}`);
  }
  const bad = Object.keys(given).find((k) => !(Number(k) >= 0 && Number(k) < n && String(Number(k)) === k));
  if (bad !== undefined) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `config.json id2label: expected the keys "0" … "${n - 1}" (the head's ${n} outputs), got "${bad}"`);
  }
  return out;
}

/** Scores of one row of logits, in float64, as the pipeline's numpy arithmetic (softmax shifted by the max). */
export function applyFunction(fn, row) {
  if (fn === 'sigmoid') return Array.from(row, (x) => 1 / (1 + Math.exp(-x)));
  if (fn === 'softmax') {
    let max = -Infinity;
    for (const x of row) max = Math.max(max, x);
    const e = Array.from(row, (x) => Math.exp(x - max));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / sum);
  }
  return Array.from(row);
}

/** Rows of logits (n × labels.length) → per row its topK { label, score }, best first (ties: the lower id first). */
export function rankedLabels(data, labels, fn, topK) {
  const C = labels.length, out = [];
  for (let i = 0; i < data.length / C; ++i) {
    const scores = applyFunction(fn, data.subarray(i * C, (i + 1) * C));
    const ranked = Array.from(scores, (score, k) => ({ label: labels[k], score, k }));
    ranked.sort((a, b) => b.score - a.score || a.k - b.k);
    out.push(ranked.slice(0, Math.min(topK, C)).map(({ label, score }) => ({ label, score })));
  }
  return out;
}

export function oneOf(v, allowed, what) {
  if (!allowed.includes(v)) throw typeError(`${what}: expected ${allowed.map((a) => `'${a}'`).join(', ')}, got ${typeof v === 'string' ? `'${v}'` : describe(v)}`);
  return v;
}

function checkInput(t, where) {
  if (typeof t === 'string') return;
  if (!Array.isArray(t) || t.length !== 2) throw typeError(`${where}: expected a string or a [text, pair] array of two strings, got ${describe(t)}`);
  t.forEach((s, k) => {
    if (typeof s !== 'string') throw typeError(`${where}[${k}]: expected a string, got ${describe(s)}`);
  });
}

function toIds(x, where) {
  if (x instanceof Int32Array) return x;
  if (!Array.isArray(x)) throw typeError(`${where}: expected an Int32Array or an array of integers, got ${describe(x)}`);
  x.forEach((v, k) => {
    if (!Number.isInteger(v) || v < -(2 ** 31) || v >= 2 ** 31) throw typeError(`${where}[${k}]: expected an integer, got ${describe(v)}`);
  });
  return Int32Array.from(x);
}
