// TokenClassifier: an encoder checkpoint with a token-classification head (BertForTokenClassification and its
// RoBERTa / XLM-R / DistilBERT kin; src/models/encoder.h EncoderHead::kToken) as transformers' token-classification
// (NER) pipeline runs it: text → tokens with their character offsets (the tokenizer's returnOffsets) → the encoder
// and its head natively, each text at its own length → per-token softmax → entities, by aggregation strategy:
//   'none'    one entity a token: { entity, score, index, word, start, end }
//   'simple'  adjacent tokens of one tag merged (B-/I- prefixes as the pipeline reads them): { entity_group, … }
//   'first', 'average', 'max'   tokens first grouped into words (a word-aware tokenizer's subwords; otherwise the
//             pipeline's heuristic: a token that does not follow a space continues the word), each word's label by
//             its first token, its averaged scores, or its most confident token; then merged as 'simple'.
// Tags in ignoreLabels (default ['O']) are dropped. start and end are UTF-16 indices of the JS string
// (text.slice(start, end) is the entity's text); transformers reports code points, the same numbers for text
// without characters beyond U+FFFF (emoji, 𝔾). index is the token's, special tokens counted, as transformers'.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkInteger, checkOptions } from './checks.js';
import { nextTask } from './next_task.js';
import { Model } from './model.js';
import { reword } from './embedder.js';
import { labelsOf, oneOf } from './text_classifier.js';
import * as boundary from './boundary.js';
import { symbolBytes } from './tokenizer/byte_level.js';

const STRATEGIES = ['none', 'simple', 'first', 'average', 'max'];

/**
 * A token classifier (named entities, part of speech): loaded by aw.loadModel from a folder whose config.json names
 * a *ForTokenClassification class. Owns native memory: dispose().
 */
export class TokenClassifier extends Model {
  /** Internal: built by loadModel (families.js). */
  constructor(rt, handle, { hfConfig, tokenizer }, fileBytes) {
    super(rt, handle, 'TokenClassifier', fileBytes);
    const info = this._info;
    /** @readonly the Hugging Face config (config.json's keys, as given). */ this.config = hfConfig;
    /** @readonly */ this.modelType = info.modelType;
    /** @readonly */ this.vocabSize = info.vocabSize;
    /** @readonly */ this.hiddenSize = info.hiddenSize;
    /** @readonly */ this.numLayers = info.numLayers;
    /** @readonly the head's outputs */ this.numLabels = info.numLabels;
    /** @readonly id2label in id order (the tags: 'O', 'B-PER', …) */ this.labels = Object.freeze(labelsOf(hfConfig, info.numLabels));
    /** @readonly the tokenizer, or null */ this.tokenizer = tokenizer ?? null;
    const fromTokenizer = typeof tokenizer?.config?.model_max_length === 'number' ? tokenizer.config.model_max_length : Infinity;
    /** @readonly tokens a text is cut to, special tokens included */ this.maxTokens = Math.min(info.maxTokens, fromTokenizer);
  }

  /**
   * Entities per text, as pipeline('token-classification', aggregation_strategy=…) gives them.
   * @param {string | string[]} texts
   * @param {{ aggregationStrategy?: 'none'|'simple'|'first'|'average'|'max', ignoreLabels?: string[], batchSize?: number }} [options]
   * @returns {Promise<object[][]>} per text, its entities in order
   */
  async classify(texts, options) {
    this._handle();
    const list = typeof texts === 'string' ? [texts] : texts;
    if (!Array.isArray(list)) throw typeError(`texts: expected an Array of strings (or one string), got ${describe(texts)}`);
    list.forEach((t, i) => {
      if (typeof t !== 'string') throw typeError(`texts[${i}]: expected a string, got ${describe(t)}`);
    });
    const o = checkOptions(options, ['aggregationStrategy', 'ignoreLabels', 'batchSize'], 'classify');
    const strategy = o.aggregationStrategy === undefined ? 'none' : oneOf(o.aggregationStrategy, STRATEGIES, 'aggregationStrategy');
    const ignore = o.ignoreLabels === undefined ? ['O'] : o.ignoreLabels;
    if (!Array.isArray(ignore) || ignore.some((x) => typeof x !== 'string')) throw typeError(`ignoreLabels: expected an Array of strings, got ${describe(ignore)}`);
    const batchSize = o.batchSize === undefined ? 32 : checkInteger(o.batchSize, 'batchSize', { min: 1, max: 1 << 20 });
    if (!this.tokenizer) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'classify: this model has no tokenizer; load it with its tokenizer.json');
    // A slow tokenizer (vocab.txt, vocab.json + merges.txt, sentencepiece.bpe.model) runs as the fast one
    // transformers converts it to (its offsets, words and decoder).
    const slow = this.tokenizer._converted ? this.tokenizer : null;
    const tok = slow?._converted() ?? this.tokenizer;
    const wordAware = !!tok._model?.prefix;  // WordPiece's continuing_subword_prefix: the pipeline's word-aware path
    // unk_token_id: the unknown token looked up in the fast vocabulary; a converted one's is the slow class's
    // ('<unk>' for RoBERTa, whose byte-level model has none of its own but whose '<unk>' typed in a text is id 3).
    const unk = tok.tokenToId((slow ? slow.specialToken('unk_token') : tok.config?.unk_token) ?? '') ?? tok._model?.unk ?? -1;
    const out = [];
    for (let b0 = 0; b0 < list.length; b0 += batchSize) {
      if (b0 > 0) await nextTask();
      const batch = list.slice(b0, b0 + batchSize).map((text, j) => ({ i: b0 + j, text, ...this._encode(text, b0 + j) }));
      const logits = this._logits(batch);
      batch.forEach((r, j) => {
        const pre = preEntities(tok, r, logits[j], this.numLabels, unk, wordAware);
        const grouped = aggregate(pre, strategy, this.labels, tok);
        out.push(grouped.filter((e) => !ignore.includes(e.entity ?? e.entity_group)));
      });
    }
    return out;
  }

  /** A text's ids, offsets (UTF-16, from the tokenizer) and which are special; cut to maxTokens keeping the specials. */
  _encode(text, i) {
    let r;
    try {
      r = this.tokenizer.encode(text, { returnOffsets: true });
    } catch (e) {
      if (e.code === 'ERR_UNSUPPORTED') e.message = `texts[${i}]: ${e.message}`;
      throw e;
    }
    const special = Array.from(r.ids, (id, k) => this.tokenizer.isSpecial(id) && r.offsets[k][0] === r.offsets[k][1]);
    let { ids, offsets } = r;
    if (ids.length > this.maxTokens) {
      // truncation=True as the pipeline tokenizes: the text's last tokens go, the trailing special tokens stay.
      let tail = 0;
      while (tail < ids.length && special[ids.length - 1 - tail]) tail++;
      const keep = this.maxTokens - tail;
      const idx = [...Array.from({ length: keep }, (_, k) => k), ...Array.from({ length: tail }, (_, k) => ids.length - tail + k)];
      return { ids: Int32Array.from(idx, (k) => ids[k]), offsets: idx.map((k) => offsets[k]), special: idx.map((k) => special[k]) };
    }
    return { ids, offsets, special };
  }

  /** One native call for a batch: each text's (T, C) logits. */
  _logits(batch) {
    const h = this._handle();
    if (this._lmHead) {  // ModernBERT: the head in JS on the encoder's rows (modernbert_head.js)
      return this._lmHead.tokenLogits(this._rt, h, batch, (e, run) => reword(e, run, 'texts', this.tokenizer));
    }
    const total = batch.reduce((s, r) => s + r.ids.length, 0);
    const ids = new Int32Array(total);
    let at = 0;
    for (const r of batch) { ids.set(r.ids, at); at += r.ids.length; }
    const tensors = { ids: { data: ids, shape: [total] }, lengths: { data: Int32Array.from(batch, (r) => r.ids.length), shape: [batch.length] } };
    let data;
    try {
      data = boundary.models.embedderEmbed(this._rt, h, tensors, { modes: 0, normalize: false, head: true })[0].data;
    } catch (e) {
      throw reword(e, batch, 'texts', this.tokenizer);
    }
    const C = this.numLabels;
    at = 0;
    return batch.map((r) => {
      const part = data.subarray(at * C, (at + r.ids.length) * C);
      at += r.ids.length;
      return part;
    });
  }
}

/** Code points in s[0 … u) (u in UTF-16 units): the pipeline's offsets count characters. */
const codePoints = (s, u) => {
  let n = 0;
  for (let k = 0; k < u; k++) {
    const c = s.charCodeAt(k);
    if (!(c >= 0xdc00 && c <= 0xdfff && k > 0 && s.charCodeAt(k - 1) >= 0xd800 && s.charCodeAt(k - 1) <= 0xdbff)) n++;
  }
  return n;
};
const pyLen = (s) => codePoints(s, s.length);

/** Softmax of one row, float64, shifted by its max (the pipeline's numpy code). */
function softmax(row) {
  let max = -Infinity;
  for (const x of row) max = Math.max(max, x);
  const e = Array.from(row, (x) => Math.exp(x - max));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / sum);
}

const argmax = (xs) => xs.reduce((best, x, k) => (x > xs[best] ? k : best), 0);

/** The pipeline's gather_pre_entities: one entry a non-special token. */
function preEntities(tok, r, logits, C, unk, wordAware) {
  const pre = [];
  for (let k = 0; k < r.ids.length; k++) {
    if (r.special[k]) continue;
    const [s, e] = r.offsets[k];
    const wordRef = r.text.slice(s, e);
    let word = tok.idToToken(r.ids[k]);
    let isSubword = wordAware ? pyLen(word) !== pyLen(wordRef)
      : s > 0 && !r.text.slice(prevCharStart(r.text, s), s + (r.text.charCodeAt(s) >= 0xd800 && r.text.charCodeAt(s) <= 0xdbff ? 2 : 1)).includes(' ');
    if (r.ids[k] === unk) {
      word = wordRef;
      isSubword = false;
    }
    pre.push({ word, scores: softmax(logits.subarray(k * C, (k + 1) * C)), start: s, end: e, index: k, isSubword });
  }
  return pre;
}

/** The UTF-16 index of the character before index u. */
function prevCharStart(s, u) {
  const c = s.charCodeAt(u - 1);
  return c >= 0xdc00 && c <= 0xdfff && u >= 2 ? u - 2 : u - 1;
}

/** tokens → text as the tokenizer's decoder joins them (convert_tokens_to_string). */
function tokensToString(tok, tokens) {
  if (tok._decoder) {
    const stage = tok._decoder();
    return tokens.map((t) => stage.push(t).join('')).join('') + stage.end().join('');
  }
  // Byte-level, as the Rust ByteLevel decoder: a token whose characters are all byte symbols is those bytes, any
  // other its UTF-8; the bytes read once, invalid sequences as U+FFFD. Whether the token is in the vocabulary does
  // not matter: a word the pipeline decoded before ('Café') is decoded again when words are grouped, and its 'é'
  // (U+00E9) is the byte symbol of 0xE9, so transformers gives 'Caf\uFFFD'.
  const bytes = [];
  for (const t of tokens) bytes.push(...symbolBytes(t));
  return new TextDecoder().decode(Uint8Array.from(bytes));
}

function aggregate(pre, strategy, labels, tok) {
  let entities;
  if (strategy === 'none' || strategy === 'simple') {
    entities = pre.map((p) => {
      const k = argmax(p.scores);
      return { entity: labels[k], score: p.scores[k], index: p.index, word: p.word, start: p.start, end: p.end };
    });
    if (strategy === 'none') return entities;
  } else {
    entities = [];
    let group = null;
    for (const p of pre) {
      if (group === null) group = [p];
      else if (p.isSubword) group.push(p);
      else {
        entities.push(aggregateWord(group, strategy, labels, tok));
        group = [p];
      }
    }
    if (group) entities.push(aggregateWord(group, strategy, labels, tok));
  }
  return groupEntities(entities, tok);
}

function aggregateWord(group, strategy, labels, tok) {
  let scores;
  if (strategy === 'first') scores = group[0].scores;
  else if (strategy === 'max') scores = group.reduce((best, p) => (Math.max(...p.scores) > Math.max(...best.scores) ? p : best)).scores;
  else scores = group[0].scores.map((_, k) => group.reduce((s, p) => s + p.scores[k], 0) / group.length);
  const k = argmax(scores);
  return { entity: labels[k], score: scores[k], word: tokensToString(tok, group.map((p) => p.word)), start: group[0].start, end: group.at(-1).end };
}

/** B-X / I-X → ['B', 'X']; a tag without the prefix continues ('I'). */
function tagOf(name) {
  if (name.startsWith('B-')) return ['B', name.slice(2)];
  if (name.startsWith('I-')) return ['I', name.slice(2)];
  return ['I', name];
}

function groupEntities(entities, tok) {
  const groups = [];
  let run = [];
  const close = () => {
    const name = run[0].entity;
    const dash = name.indexOf('-');
    groups.push({
      entity_group: dash < 0 ? name : name.slice(dash + 1),
      score: run.reduce((s, e) => s + e.score, 0) / run.length,
      word: tokensToString(tok, run.map((e) => e.word)),
      start: run[0].start,
      end: run.at(-1).end,
    });
  };
  for (const e of entities) {
    if (run.length === 0) { run.push(e); continue; }
    const [bi, tag] = tagOf(e.entity);
    const [, lastTag] = tagOf(run.at(-1).entity);
    if (tag === lastTag && bi !== 'B') run.push(e);
    else { close(); run = [e]; }
  }
  if (run.length) close();
  return groups;
}
