// Embedder: the encoder family (src/models/encoder.h) — BertModel, RobertaModel, XLMRobertaModel — as
// sentence-transformers runs it: text → tokens (the tokenizer's special tokens, truncation to max_seq_length)
// → the encoder → pooling (cls, mean, max, mean_sqrt_len, weightedmean, lasttoken, or several concatenated)
// → optional L2 normalization. The encoder and the pooling run natively, each sentence at its own length (no
// padding); JS owns the tokenizer, the sentence-transformers files of a folder (readSentenceTransformers),
// the batches (sorted by length, a turn for the event loop between them) and the order of the results.
// Not here: the loading itself (models.js), the tokenizer (bindings/tokenizer/). cosineSimilarity, at the
// end, is plain JS on the results.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkBool, checkInteger, checkOptions, checkTensor, shapeStr } from './checks.js';
import { nextTask } from './next_task.js';

import { POOLING } from './native_constants.js';  // sentence-transformers' modes (Pooling.py's names) → the native Pooling

export { POOLING };
// The order Pooling.forward concatenates several modes in: the native enum's.
const POOLING_ORDER = Object.keys(POOLING).sort((a, b) => POOLING[a] - POOLING[b]);
const POOLING_ALIASES = { mean_sqrt_len_tokens: 'mean_sqrt_len' };  // Pooling(pooling_mode=…)'s spelling
const POOLING_NAMES = Object.keys(POOLING).map((n) => `'${n}'`).join(', ');

/**
 * A pooling option → its canonical form: one mode ('mean', …) or several joined by '+' ('cls+max+mean'),
 * written in the order sentence-transformers concatenates them; `name` names the argument in messages.
 */
export function checkPooling(v, name = 'pooling') {
  if (typeof v !== 'string') throw typeError(`${name}: expected one of ${POOLING_NAMES} (or several joined by '+'), got ${describe(v)}`);
  const modes = new Set(v.toLowerCase().split('+').map((m) => {
    const mode = POOLING_ALIASES[m.trim()] ?? m.trim();
    if (!(mode in POOLING)) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: expected one of ${POOLING_NAMES} (or several joined by '+'), got '${v}'`);
    return mode;
  }));
  return POOLING_ORDER.filter((m) => modes.has(m)).join('+');
}

const EMBED_OPTIONS = ['batchSize', 'normalize', 'prompt', 'promptName', 'onProgress'];
const MAX_BATCH = 1 << 20;

// Python's str.strip(), which sentence-transformers applies to every text: str.isspace() characters
// (JS's trim() differs: it keeps \x1c-\x1f and \x85, and strips U+FEFF).
const PY_SPACE = '\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'g');
const pyStrip = (s) => s.replace(PY_STRIP, '');

// ---- sentence-transformers' folder files ----

const ST_TYPES = {
  'sentence_transformers.models.Transformer': 'Transformer',
  'sentence_transformers.models.Pooling': 'Pooling',
  'sentence_transformers.models.Normalize': 'Normalize',
};
const POOLING_KEYS = {
  pooling_mode_cls_token: 'cls', pooling_mode_mean_tokens: 'mean', pooling_mode_max_tokens: 'max',
  pooling_mode_mean_sqrt_len_tokens: 'mean_sqrt_len', pooling_mode_weightedmean_tokens: 'weightedmean', pooling_mode_lasttoken: 'lasttoken',
};

const invalid = (file, message) => new AttnWasmError('ERR_INVALID_ARGUMENT', `${file}: ${message}`);
const unsupported = (file, message) => new AttnWasmError('ERR_UNSUPPORTED', `${file}: ${message}`);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const show = (v) => (typeof v === 'string' ? `'${v}'` : JSON.stringify(v) ?? describe(v));

function parseFile(text, file) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalid(file, `not valid JSON (${e.message})`);
  }
}

/**
 * What a sentence-transformers folder says about its embeddings, read as SentenceTransformer(folder) reads it:
 *   modules.json                      Transformer (at the folder's top), Pooling, optionally Normalize — in that
 *                                     order; any other module (Dense, LayerNorm, …) is ERR_UNSUPPORTED;
 *   <Pooling's path>/config.json      the pooling mode (Pooling's defaults for absent keys: mean) and include_prompt;
 *   sentence_bert_config.json         max_seq_length, do_lower_case;
 *   config_sentence_transformers.json prompts, default_prompt_name.
 * Without modules.json: mean pooling, no Normalize (sentence-transformers' fallback for a plain checkpoint).
 * `read(path)` resolves to a file's text or undefined; `override` is loadModel's { pooling, normalize }: a
 * pooling given there is used instead of the folder's (which may then name several modes).
 * @returns {Promise<{pooling: string, normalize: boolean, includePrompt: boolean, maxSeqLength: number|null,
 *   doLowerCase: boolean, prompts: Record<string, string>, defaultPromptName: string|null}>} owned by the caller
 */
export async function readSentenceTransformers(read, hiddenSize, override = {}) {
  const out = { pooling: 'mean', normalize: false, includePrompt: true, maxSeqLength: null, doLowerCase: false, prompts: {}, defaultPromptName: null };
  const modulesText = await read('modules.json');
  if (modulesText !== undefined) {
    const modules = parseFile(modulesText, 'modules.json');
    if (!Array.isArray(modules)) throw invalid('modules.json', `expected an array of modules, got ${describe(modules)}`);
    const kinds = modules.map((m, i) => {
      if (!isObject(m) || typeof m.type !== 'string') throw invalid('modules.json', `[${i}]: expected { type, path }, got ${show(m)}`);
      const kind = ST_TYPES[m.type];
      if (!kind) {
        throw unsupported('modules.json', `[${i}].type: expected ${Object.keys(ST_TYPES).map((t) => `'${t}'`).join(', ')}, got '${m.type}' `
          + '(attnwasm runs a Transformer, its Pooling and an optional Normalize)');
      }
      if (m.path !== undefined && typeof m.path !== 'string') throw invalid('modules.json', `[${i}].path: expected a string, got ${show(m.path)}`);
      return kind;
    });
    const order = kinds.join(',');
    if (order !== 'Transformer,Pooling' && order !== 'Transformer,Pooling,Normalize') {
      throw unsupported('modules.json', `expected the modules Transformer, Pooling and optionally Normalize, in that order, got ${kinds.join(', ') || 'none'}`);
    }
    if (modules[0].path) {
      throw unsupported('modules.json', `[0].path: the Transformer's files in a subfolder ('${modules[0].path}') are not read; `
        + 'give that subfolder as the source (with modules.json and the Pooling folder beside its files)');
    }
    const poolingPath = modules[1].path ?? '';
    if (!poolingPath) throw unsupported('modules.json', '[1].path: expected the Pooling module\'s folder (e.g. \'1_Pooling\'), got \'\'');
    const file = `${poolingPath.replace(/\/+$/, '')}/config.json`;
    const text = await read(file);
    if (text === undefined) throw invalid('source', `${file}, the Pooling module's config named by modules.json, is not in the folder`);
    Object.assign(out, poolingConfig(parseFile(text, file), file, hiddenSize, override.pooling !== undefined));
    out.normalize = kinds.length === 3;
  }
  const sbertText = await read('sentence_bert_config.json');
  if (sbertText !== undefined) {
    const file = 'sentence_bert_config.json';
    const c = parseFile(sbertText, file);
    if (!isObject(c)) throw invalid(file, `expected an object, got ${describe(c)}`);
    if (c.max_seq_length != null) {
      if (!Number.isInteger(c.max_seq_length) || c.max_seq_length < 1) throw invalid(file, `max_seq_length: expected a positive integer or null, got ${show(c.max_seq_length)}`);
      out.maxSeqLength = c.max_seq_length;
    }
    if (c.do_lower_case !== undefined) {
      if (typeof c.do_lower_case !== 'boolean') throw invalid(file, `do_lower_case: expected a boolean, got ${show(c.do_lower_case)}`);
      out.doLowerCase = c.do_lower_case;
    }
  }
  const stText = await read('config_sentence_transformers.json');
  if (stText !== undefined) {
    const file = 'config_sentence_transformers.json';
    const c = parseFile(stText, file);
    if (!isObject(c)) throw invalid(file, `expected an object, got ${describe(c)}`);
    if (c.prompts != null) {
      if (!isObject(c.prompts)) throw invalid(file, `prompts: expected an object of name → text, got ${show(c.prompts)}`);
      for (const [k, v] of Object.entries(c.prompts)) {
        if (typeof v !== 'string') throw invalid(file, `prompts.${k}: expected a string, got ${show(v)}`);
        out.prompts[k] = v;
      }
    }
    if (c.default_prompt_name != null) {
      if (typeof c.default_prompt_name !== 'string' || !(c.default_prompt_name in out.prompts)) {
        throw invalid(file, `default_prompt_name: expected one of the prompts' names (${Object.keys(out.prompts).join(', ') || 'none'}), got ${show(c.default_prompt_name)}`);
      }
      out.defaultPromptName = c.default_prompt_name;
    }
  }
  if (override.pooling !== undefined) out.pooling = override.pooling;
  if (override.normalize !== undefined) out.normalize = override.normalize;
  return out;
}

/** A Pooling module's config.json → { pooling, includePrompt }, keys as Pooling(**config) takes them. */
function poolingConfig(c, file, hiddenSize, overridden) {
  if (!isObject(c)) throw invalid(file, `expected an object, got ${describe(c)}`);
  // Pooling.__init__'s defaults: mean pooling, the prompt included.
  const modes = { cls: false, mean: true, max: false, mean_sqrt_len: false, weightedmean: false, lasttoken: false };
  let includePrompt = true;
  for (const [k, v] of Object.entries(c)) {
    if (k === 'word_embedding_dimension') {
      if (v !== hiddenSize) throw invalid(file, `word_embedding_dimension: expected the model's hidden_size (${hiddenSize}), got ${show(v)}`);
    } else if (k in POOLING_KEYS) {
      if (typeof v !== 'boolean') throw invalid(file, `${k}: expected a boolean, got ${show(v)}`);
      modes[POOLING_KEYS[k]] = v;
    } else if (k === 'include_prompt') {
      if (typeof v !== 'boolean') throw invalid(file, `include_prompt: expected a boolean, got ${show(v)}`);
      includePrompt = v;
    } else if (k !== 'pooling_mode') {
      // Pooling(**config) would refuse it too (an unexpected keyword argument).
      throw unsupported(file, `${k}: not a key of sentence-transformers' Pooling (expected word_embedding_dimension, pooling_mode, ${Object.keys(POOLING_KEYS).join(', ')}, include_prompt)`);
    }
  }
  if (c.word_embedding_dimension === undefined) throw invalid(file, 'word_embedding_dimension: missing');
  if (c.pooling_mode != null) {  // Pooling(pooling_mode=…) overrides the flags
    if (typeof c.pooling_mode !== 'string' || c.pooling_mode.includes('+')) throw invalid(file, `pooling_mode: expected one of ${POOLING_NAMES}, got ${show(c.pooling_mode)}`);
    const mode = checkPooling(c.pooling_mode, `${file}: pooling_mode`);
    for (const m of Object.keys(modes)) modes[m] = m === mode;
  }
  const on = POOLING_ORDER.filter((m) => modes[m]);
  if (overridden) return { includePrompt };
  if (on.length === 0) throw unsupported(file, 'no pooling mode is set (sentence-transformers would give empty embeddings)');
  return { pooling: on.join('+'), includePrompt };
}

// ---- the model ----

export function makeEmbedder(rt, classes) {

  /**
   * A sentence embedder: a BERT-family encoder (Hugging Face's BertModel / RobertaModel / XLMRobertaModel)
   * with sentence-transformers' pooling and normalization, loaded by aw.loadModel / aw.loadEmbedder from a
   * hub folder or from model.safetensors with its config.json. Owns native memory: call dispose().
   */
  class Embedder extends classes.Module {
    /**
     * Internal: built by loadModel from a handle of the native loader (model_loading.js); the model's numbers
     * come from the handle, `st` is readSentenceTransformers' result, `hfConfig` config.json as given.
     */
    constructor(handle, { hfConfig, tokenizer, st }, fileBytes) {
      super();
      this._adopt(handle, 'Embedder');
      const info = JSON.parse(handle.info());
      /** @readonly the Hugging Face config (config.json's keys, as given). */ this.config = hfConfig;
      /** @readonly bytes read from the files */ this.fileBytes = fileBytes;
      /** @readonly bytes the weights take in memory (as stored, or in the dtype asked for) */ this.weightBytes = info.weightBytes;
      /** @readonly the same by type: { bf16: …, f32: … } */ this.weightTypes = info.weightTypes;
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
      this._modes = st.pooling.split('+');
      /** @readonly whether embed() L2-normalizes by default (the folder's Normalize module, or loadModel's normalize) */
      this.normalize = st.normalize;
      /** @readonly whether a prompt's tokens take part in the pooling (the Pooling config's include_prompt) */
      this.includePrompt = st.includePrompt;
      /** @readonly whether texts are lowercased before tokenizing (sentence_bert_config.json's do_lower_case) */
      this.doLowerCase = st.doLowerCase;
      /** @readonly named prompts (config_sentence_transformers.json): embed()'s promptName */ this.prompts = Object.freeze({ ...st.prompts });
      /** @readonly the prompt embed() uses when given none, or null */ this.defaultPromptName = st.defaultPromptName;
      /** @readonly the length of the vectors embed() gives: hiddenSize per pooling mode */
      this.dimension = info.hiddenSize * this._modes.length;
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
      const [lastHiddenState, poolerOutput, attentions] = rt._run(tensors, { attention: !!o.outputAttentions },
        (a) => rt._take(rt._core.embedderForward(h, a)));
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
      // Every pooling mode in one native pass, concatenated and normalized there (src/models/encoder.h Embed).
      const modes = this._modes.reduce((m, mode) => m | (1 << POOLING[mode]), 0);
      try {
        return rt._run(tensors, { modes, normalize }, (a) => rt._take(rt._core.embedderEmbed(h, a)))[0].data;
      } catch (e) {
        throw reword(e, rows, what);
      }
    }
  }

  return { Embedder };
}

/**
 * A native error about one batch's rows ("lengths[3]: …", "ids: id 9 at index 40 is …") reworded to name
 * the caller's entry ("texts[17]: …", "idsList[2][5]: …"); other errors unchanged.
 */
function reword(e, rows, what) {
  const m = /^lengths\[(\d+)\]: expected an integer in \[1, (\d+)\].*?, got (\d+)/.exec(e.message);
  if (m && rows[+m[1]]) {
    const n = +m[3];
    e.message = `${what}[${rows[+m[1]].i}]: ${n === 0 ? 'no tokens (a sequence needs at least one)' : `${n} tokens, more than the model's ${m[2]}`}`;
    return e;
  }
  const id = /^(ids|tokenTypeIds): id (-?\d+) at index (\d+) (.*)$/.exec(e.message);
  if (id) {
    let k = +id[3];
    for (const r of rows) {
      if (k < r.ids.length) {
        e.message = `${what}[${r.i}]${id[1] === 'ids' ? '' : ' (token type ids)'}[${k}]: id ${id[2]} ${id[4]}`;
        return e;
      }
      k -= r.ids.length;
    }
  }
  return e;
}

// ---- similarity ----

/** A vector or matrix argument of cosineSimilarity → { data, n, d, matrix }. */
function rowsOf(x, name) {
  if (Array.isArray(x) || (ArrayBuffer.isView(x) && !(x instanceof DataView))) {
    if (Array.isArray(x)) {
      x.forEach((v, i) => {
        if (typeof v !== 'number') throw typeError(`${name}[${i}]: expected a number, got ${describe(v)}`);
      });
    } else if (x instanceof BigInt64Array || x instanceof BigUint64Array) {
      throw typeError(`${name}: expected a Float32Array, Float64Array or array of numbers, got ${describe(x)}`);
    }
    return { data: x, n: 1, d: x.length, matrix: false };
  }
  if (!isObject(x) || !Array.isArray(x.shape) || !(x.data instanceof Float32Array || x.data instanceof Float64Array)) {
    throw typeError(`${name}: expected a vector (Float32Array, Float64Array, array of numbers) or a tensor { data: Float32Array, shape: [n, d] }, got ${describe(x)}`);
  }
  const { data, shape } = x;
  if (shape.length < 1 || shape.length > 2 || !shape.every((s) => Number.isInteger(s) && s >= 0)) {
    throw new AttnWasmError('ERR_SHAPE', `${name}.shape: expected [d] or [n, d], got ${JSON.stringify(shape)}`);
  }
  const [n, d] = shape.length === 1 ? [1, shape[0]] : shape;
  if (data.length !== n * d) throw new AttnWasmError('ERR_SHAPE', `${name}: data has ${data.length} elements but shape ${shapeStr(shape)} needs ${n * d}`);
  return { data, n, d, matrix: shape.length === 2 };
}

/**
 * Cosine similarity, in float64: a·b / (‖a‖ ‖b‖), 0 where a norm is 0 (sentence-transformers' cos_sim divides
 * by max(‖x‖, 1e-12) in float32). Two vectors (Float32Array, Float64Array, arrays of numbers or { data, shape:
 * [d] }) → a number; a matrix { data, shape: [n, d] } (embed()'s result) and a matrix [m, d] → { data:
 * Float32Array, shape: [n, m] } (a vector with a matrix counts as one row). Owned by the caller.
 */
export function cosineSimilarity(a, b) {
  const x = rowsOf(a, 'a'), y = rowsOf(b, 'b');
  if (x.d !== y.d) throw new AttnWasmError('ERR_SHAPE', `b: expected vectors of a's length ${x.d}, got ${y.d}`);
  if (x.d === 0) throw new AttnWasmError('ERR_SHAPE', 'a: expected vectors of at least one element, got 0');
  const norms = (m) => Float64Array.from({ length: m.n }, (_, r) => {
    let s = 0;
    for (let j = r * m.d; j < (r + 1) * m.d; j++) s += m.data[j] * m.data[j];
    return Math.sqrt(s);
  });
  const nx = norms(x), ny = norms(y), d = x.d;
  const cos = (r, c) => {
    if (nx[r] === 0 || ny[c] === 0) return 0;
    let s = 0;
    for (let j = 0; j < d; j++) s += x.data[r * d + j] * y.data[c * d + j];
    return s / (nx[r] * ny[c]);
  };
  if (!x.matrix && !y.matrix) return cos(0, 0);
  const out = new Float32Array(x.n * y.n);
  for (let r = 0; r < x.n; r++) for (let c = 0; c < y.n; c++) out[r * y.n + c] = cos(r, c);
  return { data: out, shape: [x.n, y.n] };
}
