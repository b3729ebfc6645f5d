// Embedder: the encoder family (src/models/encoder.h) — BertModel, RobertaModel, XLMRobertaModel — as
// sentence-transformers runs it: text → tokens (the tokenizer's special tokens, truncation to max_seq_length)
// → the encoder → pooling (cls, mean, max, mean_sqrt_len, weightedmean, lasttoken, or several concatenated)
// → optional L2 normalization. The encoder, the pooling (every mode in one pass) and the normalization run
// natively, each sentence at its own length (no padding); JS owns the tokenizer, the batches (sorted by length,
// a turn for the event loop between them) and the order of the results. Not here: the loading (models.js),
// sentence-transformers' files (sentence_transformers.js), the tokenizer (bindings/tokenizer/), cosineSimilarity
// (similarity.js).
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkBool, checkInteger, checkOptions, checkTensor, shapeStr } from './checks.js';
import { nextTask } from './next_task.js';
import { Model } from './model.js';
import { poolingModes, pyStrip } from './sentence_transformers.js';
import { applyDense, normalizeRows } from './st_dense.js';
import * as boundary from './boundary.js';

const EMBED_OPTIONS = ['batchSize', 'normalize', 'prompt', 'promptName', 'onProgress'];
const MAX_BATCH = 1 << 20;

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A sentence embedder: a BERT-family encoder (Hugging Face's BertModel / RobertaModel / XLMRobertaModel)
 * with sentence-transformers' pooling and normalization, loaded by aw.loadModel / aw.loadEmbedder from a
 * hub folder or from model.safetensors with its config.json. Owns native memory: call dispose().
 */
export class Embedder extends Model {
  /**
   * Internal: built by loadModel from a handle of the native loader (model_loading.js); the model's numbers
   * come from the handle, `st` is readSentenceTransformers' result, `hfConfig` config.json as given.
   */
  constructor(rt, handle, { hfConfig, tokenizer, st }, fileBytes) {
    super(rt, handle, 'Embedder', fileBytes);
    const info = this._info;
    /** @readonly the Hugging Face config (config.json's keys, as given). */ this.config = hfConfig;
    /** @readonly 'bert' | 'roberta' | 'xlm-roberta' */ this.modelType = info.modelType;
    /** @readonly */ this.vocabSize = info.vocabSize;
    /** @readonly hidden_size: every token's vector */ this.hiddenSize = info.hiddenSize;
    /** @readonly */ this.numLayers = info.numLayers;
    /** @readonly */ this.numHeads = info.numHeads;
    /** @readonly max_position_embeddings: rows of the position table */ this.maxPositions = info.maxPositions;
    /** @readonly */ this.typeVocabSize = info.typeVocabSize;
    /** @readonly */ this.padTokenId = info.padTokenId;
    /** @readonly whether the checkpoint has BERT's pooler (forward's poolerOutput) */ this.hasPooler = info.pooler;
    /** @readonly an 'attnwasm/tokenizer' Tokenizer, or null (embedIds and forward only). */ this.tokenizer = tokenizer ?? null;
    /**
     * @readonly the pooling of embed() and embedIds(): 'mean', 'cls', 'max', 'mean_sqrt_len', 'weightedmean',
     * 'lasttoken', or several joined by '+' ('cls+max+mean': concatenated in that order, as sentence-transformers does)
     */
    this.pooling = st.pooling;
    Object.defineProperty(this, '_modes', { value: poolingModes(st.pooling) });
    /** @readonly whether embed() L2-normalizes by default (the folder's Normalize module, or loadModel's normalize) */
    this.normalize = st.normalize;
    /** @readonly whether a prompt's tokens take part in the pooling (the Pooling config's include_prompt) */
    this.includePrompt = st.includePrompt;
    /** @readonly whether texts are lowercased before tokenizing (sentence_bert_config.json's do_lower_case) */
    this.doLowerCase = st.doLowerCase;
    /** @readonly named prompts (config_sentence_transformers.json): embed()'s promptName */ this.prompts = Object.freeze({ ...st.prompts });
    /** @readonly the prompt embed() uses when given none, or null */ this.defaultPromptName = st.defaultPromptName;
    Object.defineProperty(this, '_dense', { value: st.dense ?? [] });
    /** @readonly the Dense modules after the pooling (sentence-transformers' 2_Dense, …): their { inFeatures, outFeatures, activation } */
    this.dense = Object.freeze(this._dense.map(({ inFeatures, outFeatures, activation }) => Object.freeze({ inFeatures, outFeatures, activation })));
    /** @readonly the length of the vectors embed() gives: hiddenSize per pooling mode, or the last Dense module's out_features */
    this.dimension = this._dense.at(-1)?.outFeatures ?? info.hiddenSize * st.pooling.split('+').length;
    // The tokens one sequence may hold: as Encoder::max_tokens (RoBERTa numbers positions from
    // pad_token_id + 1), which info() does not carry.
    const modelTokens = info.maxTokens;  // the native rule (RoBERTa: positions − pad − 1)
    const fromTokenizer = typeof tokenizer?.config?.model_max_length === 'number' ? tokenizer.config.model_max_length : Infinity;
    /**
     * @readonly tokens a text is truncated to, special tokens included: sentence_bert_config.json's
     * max_seq_length, else tokenizer_config.json's model_max_length, never more than the model's positions
     * hold (where sentence-transformers would fail on a longer text, this truncates).
     */
    this.maxTokens = Math.min(modelTokens, st.maxSeqLength ?? fromTokenizer);
  }

  /**
   * Sentence embeddings of texts, in their order, as sentence-transformers' encode() gives them:
   *
   *   const { data, shape } = await embedder.embed(['A cat.', 'A dog.']);   // shape [2, dimension]
   *
   * Each text is stripped of surrounding whitespace (and lowercased with do_lower_case), gets the
   * tokenizer's special tokens and is truncated to maxTokens. The texts run in batches of similar
   * length (longest first, as sentence-transformers sorts them), each sentence at its own length;
   * between batches the event loop gets a turn. Options:
   *   batchSize   texts per native call (default 32)
   *   normalize   L2-normalize (default: the model's `normalize`)
   *   prompt      text put before every text ('query: '); with include_prompt false its tokens are left
   *               out of the pooling; promptName: one of `prompts` (default: defaultPromptName)
   *   onProgress  ({ done, total }) after each batch
   * @param {string[]|string} texts a string is one text (shape [1, dimension])
   * @returns {Promise<{data: Float32Array, shape: [number, number]}>} new, owned by the caller
   */
  async embed(texts, options) {
    this._handle();
    const list = typeof texts === 'string' ? [texts] : texts;
    if (!Array.isArray(list)) throw typeError(`texts: expected an Array of strings (or one string), got ${describe(texts)}`);
    list.forEach((t, i) => {
      if (typeof t !== 'string') throw typeError(`texts[${i}]: expected a string, got ${describe(t)}`);
    });
    const o = this._embedOptions(options, 'embed');
    const tok = this._tokenizer('embed');
    const prompt = this._prompt(o);
    const skip = prompt && !this.includePrompt ? this._promptLength(prompt) : 0;
    // Longest first by characters (sentence-transformers' order), then each batch tokenized as it runs.
    const order = list.map((t, i) => i).sort((a, b) => list[b].length - list[a].length || a - b);
    const bert = this.modelType === 'bert';
    return this._batches(order, o, 'texts', (i) => {
      const r = tok.encodeInputs(this._prepare(prompt + list[i]), { maxLength: this.maxTokens });
      // BertTokenizer gives token_type_ids; RoBERTa's and XLM-R's tokenizers do not (the model's are zeros).
      return { ids: r.inputIds, types: bert && r.tokenTypeIds.some((x) => x !== 0) ? r.tokenTypeIds : null, skip };
    });
  }

  /**
   * Embeddings of texts already tokenized: each an Int32Array or array of ids, special tokens included, at
   * most maxTokens long (not truncated: a longer one is an error naming it). Options: batchSize, normalize,
   * onProgress, as embed().
   * @param {(Int32Array|number[])[]} idsList
   * @returns {Promise<{data: Float32Array, shape: [number, number]}>} new, owned by the caller
   */
  async embedIds(idsList, options) {
    this._handle();
    if (!Array.isArray(idsList)) throw typeError(`idsList: expected an Array of Int32Arrays or arrays of token ids, got ${describe(idsList)}`);
    const rows = idsList.map((ids, i) => {
      if (ids instanceof Int32Array) return ids;
      if (!Array.isArray(ids)) throw typeError(`idsList[${i}]: expected an Int32Array or an array of token ids, got ${describe(ids)}`);
      ids.forEach((x, j) => {
        if (!Number.isInteger(x) || x < -(2 ** 31) || x >= 2 ** 31) throw typeError(`idsList[${i}][${j}]: expected an integer token id, got ${typeof x === 'number' ? x : describe(x)}`);
      });
      return Int32Array.from(ids);
    });
    const o = this._embedOptions(options, 'embedIds', ['batchSize', 'normalize', 'onProgress']);
    const order = rows.map((r, i) => i).sort((a, b) => rows[b].length - rows[a].length || a - b);
    return this._batches(order, o, 'idsList', (i) => ({ ids: rows[i], types: null, skip: 0 }));
  }

  /**
   * The encoder's outputs on a padded batch, as Hugging Face's model(input_ids, attention_mask,
   * token_type_ids) gives them: lastHiddenState (B, T, hiddenSize) and, when the checkpoint has a pooler,
   * poolerOutput (B, hiddenSize) (else null). inputIds (B, T) Int32Array; attentionMask (B, T) of 0/1
   * (Int32Array or Uint8Array; default all ones: padded positions must be masked); tokenTypeIds (B, T)
   * Int32Array (default zeros). tokenize(texts) gives the three. outputAttentions: also `attentions` (B, layers,
   * heads, T, T), each layer's softmax weights (HF's output_attentions; padded keys get 0).
   * @returns {{lastHiddenState: {data: Float32Array, shape: number[]}, poolerOutput: {data: Float32Array, shape: number[]}|null, attentions?: {data: Float32Array, shape: number[]}}}
   */
  forward(inputs) {
    const h = this._handle();
    if (!isObject(inputs)) throw typeError(`inputs: expected { inputIds, attentionMask?, tokenTypeIds? }, got ${describe(inputs)}`);
    if ('data' in inputs && 'shape' in inputs) throw typeError('inputs: expected { inputIds, attentionMask?, tokenTypeIds? }, got a tensor { data, shape }: pass it as inputIds');
    const o = checkOptions(inputs, ['inputIds', 'attentionMask', 'tokenTypeIds', 'outputAttentions'], 'forward');
    if (o.outputAttentions !== undefined && typeof o.outputAttentions !== 'boolean') {
      throw typeError(`outputAttentions: expected a boolean, got ${describe(o.outputAttentions)}`);
    }
    const rt = this._rt;
    const ids = checkTensor(o.inputIds, 'inputIds', 'ids', rt);
    const tensors = { ids };
    const same = (t, name) => {
      if (t.shape.length !== ids.shape.length || t.shape.some((d, i) => d !== ids.shape[i])) {
        throw new AttnWasmError('ERR_SHAPE', `${name}: expected the shape of inputIds ${shapeStr(ids.shape)}, got ${shapeStr(t.shape)}`);
      }
      return t;
    };
    if (o.attentionMask != null) {
      const m = o.attentionMask;
      const asInt = m && m.data instanceof Uint8Array ? { data: Int32Array.from(m.data), shape: m.shape } : m;
      tensors.mask = same(checkTensor(asInt, 'attentionMask', 'ids', rt), 'attentionMask');
    }
    if (o.tokenTypeIds != null) tensors.types = same(checkTensor(o.tokenTypeIds, 'tokenTypeIds', 'ids', rt), 'tokenTypeIds');
    const [lastHiddenState, poolerOutput, attentions] = boundary.models.embedderForward(rt, h, tensors, { attention: !!o.outputAttentions });
    const out = { lastHiddenState, poolerOutput: poolerOutput.shape.length === 1 && poolerOutput.shape[0] === 0 ? null : poolerOutput };
    if (o.outputAttentions) out.attentions = attentions;  // (B, layers, heads, T, T): every layer's softmax weights
    return out;
  }

  /**
   * Texts as forward()'s padded batch, tokenized as embed() tokenizes them (stripped, lowercased with
   * do_lower_case, truncated to maxTokens, the prompt before each): { inputIds, attentionMask, tokenTypeIds },
   * each { data: Int32Array, shape: [n, T] }, padded on the right with the tokenizer's pad token.
   * @param {string[]} texts
   * @param {{prompt?: string, promptName?: string}} [options]
   */
  tokenize(texts, options) {
    this._handle();
    if (!Array.isArray(texts)) throw typeError(`texts: expected an Array of strings, got ${describe(texts)}`);
    const o = checkOptions(options, ['prompt', 'promptName'], 'tokenize');
    const prompt = this._prompt(o);
    texts.forEach((t, i) => {
      if (typeof t !== 'string') throw typeError(`texts[${i}]: expected a string, got ${describe(t)}`);
    });
    const b = this._tokenizer('tokenize').encodeBatch(texts.map((t) => this._prepare(prompt + t)), { maxLength: this.maxTokens });
    const t = (data) => ({ data, shape: b.shape.slice() });
    return { inputIds: t(b.inputIds), attentionMask: t(b.attentionMask), tokenTypeIds: t(b.tokenTypeIds) };
  }

  /** Options shared by embed and embedIds → { batchSize, normalize, onProgress, prompt?, promptName? }. */
  _embedOptions(options, where, allowed = EMBED_OPTIONS) {
    const o = checkOptions(options, allowed, where);
    const batchSize = o.batchSize === undefined ? 32 : checkInteger(o.batchSize, 'batchSize', { min: 1, max: MAX_BATCH });
    const normalize = checkBool(o.normalize, 'normalize', this.normalize);
    if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw typeError(`onProgress: expected a function, got ${describe(o.onProgress)}`);
    return { ...o, batchSize, normalize };
  }

  /** The prompt of embed / tokenize options: `prompt`, the prompts' `promptName`, else the default one, else ''. */
  _prompt(o) {
    if (o.prompt !== undefined && o.promptName !== undefined) throw typeError('prompt: give prompt or promptName, not both');
    if (o.prompt !== undefined) {
      if (typeof o.prompt !== 'string') throw typeError(`prompt: expected a string, got ${describe(o.prompt)}`);
      return o.prompt;
    }
    const name = o.promptName ?? this.defaultPromptName;
    if (name === null) return '';
    if (typeof name !== 'string') throw typeError(`promptName: expected a string, got ${describe(name)}`);
    if (!Object.hasOwn(this.prompts, name)) {
      const names = Object.keys(this.prompts);
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `promptName: expected ${names.length ? `one of ${names.map((n) => `'${n}'`).join(', ')}` : 'no name (this model has no prompts)'}, got '${name}'`);
    }
    return this.prompts[name];
  }

  /** A text as sentence-transformers' Transformer.tokenize prepares it: str.strip(), then lower() with do_lower_case. */
  _prepare(text) {
    const s = pyStrip(text);
    return this.doLowerCase ? s.toLowerCase() : s;
  }

  /**
   * The tokens of a prompt left out of the pooling (include_prompt false), as sentence-transformers counts
   * them: the prompt tokenized alone, less its last token when that one is special ([SEP], </s>).
   */
  _promptLength(prompt) {
    const ids = this.tokenizer.encodeInputs(this._prepare(prompt), { maxLength: this.maxTokens }).inputIds;
    return ids.length && this.tokenizer.isSpecial(ids[ids.length - 1]) ? ids.length - 1 : ids.length;
  }

  _tokenizer(what) {
    if (!this.tokenizer) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT',
        `${what}: this model has no tokenizer; pass token ids to embedIds, or load it with its tokenizer.json (a folder that has one, or { tokenizer })`);
    }
    return this.tokenizer;
  }

  /**
   * Runs the items of `order` (indices into the caller's list) in batches of o.batchSize: row(i) → { ids,
   * types, skip }; each batch sorted by tokens (runs of one length share an attention call natively),
   * embedded in one call, its rows put back at their indices. `what` names the list in errors.
   */
  async _batches(order, o, what, row) {
    const n = order.length, E = this.dimension;
    const data = new Float32Array(n * E);
    for (let b0 = 0; b0 < n; b0 += o.batchSize) {
      if (b0 > 0) await nextTask();
      const h = this._handle();  // disposed while waiting: ERR_DISPOSED
      const batch = order.slice(b0, b0 + o.batchSize).map((i) => ({ i, ...row(i) }));
      batch.sort((a, b) => b.ids.length - a.ids.length || a.i - b.i);
      const out = this._embedBatch(h, batch, o.normalize, what);
      batch.forEach((r, j) => data.set(out.subarray(j * E, (j + 1) * E), r.i * E));
      o.onProgress?.({ done: Math.min(b0 + o.batchSize, n), total: n });
    }
    return { data, shape: [n, E] };
  }

  /** One native call: rows [{ i, ids, types, skip }] → (rows, dimension); errors name the caller's entries. */
  _embedBatch(h, rows, normalize, what) {
    if (rows.length === 0) return new Float32Array(0);
    const total = rows.reduce((s, r) => s + r.ids.length, 0);
    const ids = new Int32Array(total);
    const lengths = Int32Array.from(rows, (r) => r.ids.length);
    const anyTypes = rows.some((r) => r.types);
    const types = anyTypes ? new Int32Array(total) : null;
    let at = 0;
    for (const r of rows) {
      ids.set(r.ids, at);
      if (r.types) types.set(r.types, at);
      at += r.ids.length;
    }
    const tensors = { ids: { data: ids, shape: [total] }, lengths: { data: lengths, shape: [rows.length] } };
    if (types) tensors.types = { data: types, shape: [total] };
    if (rows.some((r) => r.skip)) tensors.skip = { data: Int32Array.from(rows, (r) => r.skip), shape: [rows.length] };
    // Every pooling mode in one native pass, concatenated and normalized there (src/models/encoder.h Embed); with
    // Dense modules, those and the normalization here, after the pooling.
    const dense = this._dense.length > 0;
    let pooled;
    try {
      pooled = boundary.models.embedderEmbed(this._rt, h, tensors, { modes: this._modes, normalize: normalize && !dense })[0].data;
    } catch (e) {
      throw reword(e, rows, what, this.tokenizer);
    }
    if (!dense) return pooled;
    const out = applyDense(this._dense, pooled, rows.length);
    return normalize ? normalizeRows(out, rows.length, this.dimension) : out;
  }
}

/**
 * A native error about one batch's rows — where it is, structured (the error's `at`: lengths[3], ids[40]) —
 * reworded to name the caller's entry ("texts[17]: …", "idsList[2][5]: …"); other errors unchanged. With the
 * tokenizer, an id out of range that is one of its tokens is named (an added token past vocab_size: Gemma 3's
 * <image_soft_token>).
 */
export function reword(e, rows, what, tokenizer = null) {
  const at = e.at;
  if (at?.arg === 'lengths' && rows[at.index]) {
    e.message = `${what}[${rows[at.index].i}]: ${at.value === 0 ? 'no tokens (a sequence needs at least one)' : `${at.value} tokens, more than the model's ${at.limit}`}`;
    return e;
  }
  if (at?.arg === 'ids' || at?.arg === 'tokenTypeIds') {
    let k = at.index;
    for (const r of rows) {
      if (k < r.ids.length) {
        const token = at.arg === 'ids' && typeof tokenizer?.idToToken === 'function' ? tokenizer.idToToken(at.value) : undefined;
        const named = token === undefined ? '' : ` (the tokenizer's ${JSON.stringify(token)}, which the model's vocabulary does not have)`;
        e.message = `${what}[${r.i}]${at.arg === 'ids' ? '' : ' (token type ids)'}[${k}]: id ${at.value} is out of range [0, ${at.limit})${named}`;
        return e;
      }
      k -= r.ids.length;
    }
  }
  return e;
}
