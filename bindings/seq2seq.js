// The encoder–decoder translators' face (src/models/seq2seq.h: Marian, BART, mBART, M2M100 / NLLB from hub folders):
// Seq2SeqLM translates texts, generates from sources as transformers' generate() does (greedy, beams, sampling, the
// logits processors: seq2seq_generate.js, with generation_config.json's defaults), and runs a teacher-forced forward.
// Sources are encoded once per call; the decoder steps against a native state (the encoder's states, the
// cross-attention keys and values of every layer, each row's KV cache), freed when the call ends.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkOptions, checkTensor, DTYPE } from './checks.js';
import { Model } from './model.js';
import * as boundary from './boundary.js';
import { resolveGenerationConfig, generateSeq2Seq, streamSeq2Seq, SEQ2SEQ_OPTIONS } from './seq2seq_generate.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** An ids tensor: { data: Int32Array, shape: [B, T] } from a tensor, an Int32Array / array (one row) or rows. */
function idsTensor(v, what, rt) {
  if (v instanceof Int32Array || (Array.isArray(v) && v.every((x) => typeof x === 'number'))) {
    const data = Int32Array.from(v);
    return checkTensor({ data, shape: [1, data.length] }, what, 'ids', rt);
  }
  if (Array.isArray(v) && v.length && v.every((r) => Array.isArray(r) || r instanceof Int32Array)) {
    const T = v[0].length;
    v.forEach((r, i) => {
      if (r.length !== T) throw new AttnWasmError('ERR_SHAPE', `${what}[${i}]: expected ${T} ids (rows of one length; pad them and pass attentionMask), got ${r.length}`);
    });
    const data = new Int32Array(v.length * T);
    v.forEach((r, i) => data.set(r, i * T));
    return checkTensor({ data, shape: [v.length, T] }, what, 'ids', rt);
  }
  const t = checkTensor(v, what, 'ids', rt);
  if (t.shape.length !== 2) throw new AttnWasmError('ERR_SHAPE', `${what}: expected (batch, tokens), got [${t.shape.join(', ')}]`);
  return t;
}

/**
 * A Marian, BART, mBART or M2M100 / NLLB checkpoint loaded by aw.loadModel from a hub folder (config.json model_type
 * marian, bart, mbart, m2m_100). Owns native memory: dispose().
 */
export class Seq2SeqLM extends Model {
  /** Internal: built by loadModel (families.js). */
  constructor(rt, handle, { hfConfig, tokenizer, generationConfig }, fileBytes) {
    super(rt, handle, 'Seq2SeqLM', fileBytes);
    const info = this._info;
    /** @readonly the Hugging Face config (config.json's keys, as given) */ this.config = hfConfig;
    /** @readonly generation_config.json's keys, or null */ this.generationConfig = generationConfig ?? null;
    /** @readonly the folder's tokenizer (tokenizer.json, else its slow files), or null: then pass ids */ this.tokenizer = tokenizer ?? null;
    /** @readonly config.json's model_type */ this.modelType = info.modelType;
    /** @readonly the encoder's vocabulary */ this.vocabSize = info.vocabSize;
    /** @readonly the logits' width */ this.outputVocabSize = info.tiedHead ? info.vocabSize : info.decoderVocabSize;
    /** @readonly */ this.dModel = info.dModel;
    /** @readonly */ this.encoderLayers = info.encoderLayers;
    /** @readonly */ this.decoderLayers = info.decoderLayers;
    /** @readonly tokens a source or a target may have */ this.maxPositions = info.maxPositions;
    const mpe = hfConfig?.max_position_embeddings;
    const fromConfig = Number.isInteger(mpe) && mpe >= 1 ? mpe : Infinity;
    /**
     * @readonly tokens tokenize() cuts a source to, special tokens included: config.json's max_position_embeddings,
     * at most maxPositions (M2M100's sinusoid reaches 65 536 positions, which no source should take: the encoder is
     * quadratic in them). Not model_max_length: T5's 512 there is advisory (transformers warns not to rely on it;
     * its relative positions take longer sources).
     */
    this.maxSourceLength = Math.min(fromConfig, info.maxPositions);
    /** @readonly */ this.padTokenId = info.padTokenId;
    /** @readonly */ this.eosTokenId = info.eosTokenId;
    /** @readonly */ this.decoderStartTokenId = info.decoderStartTokenId;
    /** @readonly whether the head keeps a q8 copy for bounds (loadModel's boundedHead, a float32 head): greedy's bounded pass */
    this.boundedHead = info.boundedHead === true;
    // generation_config.json and config.json checked once, now: a bad file is a load error.
    this._settings({});
  }

  /** generate()'s settings: generation_config.json (else config.json) under the options, as transformers resolves them. */
  _settings(options) { return resolveGenerationConfig(this.generationConfig, this.config, options); }

  /**
   * Sources as the model's tokenizer prepares them: { inputIds, attentionMask } ({ data: Int32Array, shape: [n, S] }),
   * right-padded to the longest, truncated to maxSourceLength. srcLang / tgtLang: the tokenizer's language options
   * (M2M100 / NLLB: the source's language token; Marian's multilingual models: the >>xx<< target token).
   */
  tokenize(texts, options) {
    this._handle();
    const o = checkOptions(options, ['srcLang', 'tgtLang'], 'tokenize');
    const tok = this._tokenizerOf('tokenize');
    const list = Array.isArray(texts) ? texts : [texts];
    if (list.length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'texts: expected at least one text, got an empty array');
    list.forEach((t, i) => { if (typeof t !== 'string') throw typeError(`texts${Array.isArray(texts) ? `[${i}]` : ''}: expected a string, got ${describe(t)}`); });
    const lang = {};
    if (o.srcLang !== undefined) lang.srcLang = o.srcLang;
    if (o.tgtLang !== undefined) lang.tgtLang = o.tgtLang;
    const mode = typeof tok._modeOptions === 'function' ? tok._modeOptions() : [];
    for (const k of Object.keys(lang)) {
      if (!mode.includes(k)) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${k}: this model's tokenizer (${tok.constructor.name}) takes no language option; a Marian model for one pair takes none, and a multilingual one its >>xx<< token by tgtLang`);
    }
    const b = tok.encodeBatch(list, { maxLength: this.maxSourceLength, truncation: true, ...lang });
    return { inputIds: { data: b.inputIds, shape: b.shape }, attentionMask: { data: b.attentionMask, shape: b.shape } };
  }

  _tokenizerOf(what) {
    if (!this.tokenizer) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${what}: this model has no tokenizer (the folder has neither tokenizer.json nor its slow tokenizer's files); pass ids`);
    return this.tokenizer;
  }

  /** Sources: texts (tokenized), or { inputIds, attentionMask? } → { ids, mask | null }. */
  _sources(input, lang, what) {
    if (typeof input === 'string' || (Array.isArray(input) && input.length && input.every((t) => typeof t === 'string'))) {
      const t = this.tokenize(input, lang);
      return { ids: t.inputIds, mask: t.attentionMask };
    }
    if (isObject(input) && 'inputIds' in input) {
      const ids = idsTensor(input.inputIds, 'inputIds', this._rt);
      let mask = null;
      if (input.attentionMask != null) {
        mask = idsTensor(input.attentionMask, 'attentionMask', this._rt);
        if (mask.shape[0] !== ids.shape[0] || mask.shape[1] !== ids.shape[1]) {
          throw new AttnWasmError('ERR_SHAPE', `attentionMask: expected the shape of inputIds [${ids.shape.join(', ')}], got [${mask.shape.join(', ')}]`);
        }
      }
      return { ids, mask };
    }
    if (input instanceof Int32Array || Array.isArray(input)) return { ids: idsTensor(input, 'inputIds', this._rt), mask: null };
    throw typeError(`${what}: expected a text, an array of texts, ids, or { inputIds, attentionMask }, got ${describe(input)}`);
  }

  /**
   * Teacher forcing, as transformers' model(input_ids, attention_mask, decoder_input_ids):
   * { inputIds (B, S), attentionMask? (B, S), decoderInputIds (B, T) } → { logits (B, T, V), encoderLastHiddenState
   * (B, S, dModel) }, each { data: Float32Array, shape }.
   */
  forward(inputs) {
    this._handle();
    if (!isObject(inputs)) throw typeError(`inputs: expected { inputIds, attentionMask?, decoderInputIds }, got ${describe(inputs)}`);
    checkOptions(inputs, ['inputIds', 'attentionMask', 'decoderInputIds'], 'forward');
    if (inputs.inputIds === undefined) throw typeError('inputIds: expected an ids tensor (batch, tokens), got undefined');
    if (inputs.decoderInputIds === undefined) throw typeError('decoderInputIds: expected an ids tensor (batch, tokens), got undefined');
    const { ids, mask } = this._sources({ inputIds: inputs.inputIds, attentionMask: inputs.attentionMask }, {}, 'inputIds');
    const dec = idsTensor(inputs.decoderInputIds, 'decoderInputIds', this._rt);
    const [logits, hidden] = boundary.models.seq2seqForward(this._rt, this._handle(), mask ? { ids, mask, dec } : { ids, dec }, {});
    return { logits, encoderLastHiddenState: hidden };
  }

  /** The native decoding state for a Generation: encoded once, stepped, reordered, freed. */
  _stepper(ids, mask) {
    const rt = this._rt;
    return {
      vocabSize: this.outputVocabSize,
      begin: (rows, capacity) => {
        const beams = rows / ids.shape[0];
        return boundary.models.seq2seqBegin(rt, this._handle(), mask ? { ids, mask } : { ids }, { beams, capacity });
      },
      ...decodingSteps(rt, () => this._handle(), this.boundedHead),
      // Sources done with leave the state: the steps then run the other sources' rows only.
      keep: (state, sources) => {
        boundary.models.seq2seqReorder(rt, this._handle(), state, { sources: { data: sources, shape: [sources.length], dtype: DTYPE.I32 } });
      },
    };
  }

  /**
   * Generation from sources, as transformers' generate(input_ids, attention_mask, **options) with the folder's
   * generation_config.json (else config.json's generation fields) as defaults. `input`: a text, texts (tokenized
   * with srcLang / tgtLang as tokenize() does), ids, or { inputIds, attentionMask }. Options: transformers' names in
   * camelCase (maxLength, maxNewTokens, minLength, minNewTokens, numBeams, lengthPenalty, earlyStopping,
   * numReturnSequences, noRepeatNgramSize, repetitionPenalty, badWordsIds, forcedBosTokenId, forcedEosTokenId,
   * decoderStartTokenId, eosTokenId, padTokenId, doSample, temperature, topK, topP, seed, signal), and decoderInputIds
   * (a decoder prompt), srcLang, tgtLang (the target language: the forced first token of M2M100 / NLLB / mBART
   * unless forcedBosTokenId is given; Marian's >>xx<< token).
   * One source with greedy search or sampling: an async iterator of tokens { id, index, text? } (text with a
   * tokenizer), whose object also has ids, sequence, text, seed and stopReason. Beam search, or several sources:
   * a Promise of { sequences (transformers' sequences: Int32Array rows, the start token first), scores
   * (sequences_scores, beam search; else null), texts (decoded, special tokens skipped, with a tokenizer) }.
   */
  generate(input, options) {
    this._handle();
    const o = checkOptions(options, [...SEQ2SEQ_OPTIONS, 'decoderInputIds', 'srcLang', 'tgtLang'], 'generate');
    const { decoderInputIds, srcLang, tgtLang, ...rest } = o;
    const lang = {};
    if (srcLang !== undefined) lang.srcLang = srcLang;
    if (tgtLang !== undefined) lang.tgtLang = tgtLang;
    const forced = this._forcedBos(tgtLang, rest);
    const settings = this._settings(forced === null ? rest : { ...rest, forcedBosTokenId: forced });
    const { ids, mask } = this._sources(input, lang, 'input');
    const B = ids.shape[0];
    const stepper = this._stepper(ids, mask);
    const prompt = decoderInputIds === undefined ? undefined : { decoderInputIds: Array.from(decoderInputIds) };
    if (settings.mode !== 'beam' && B === 1 && settings.numReturnSequences === 1) {
      return new Seq2SeqStream(streamSeq2Seq(stepper, settings, prompt), this.tokenizer);
    }
    return generateSeq2Seq(stepper, settings, { batchSize: B, ...prompt }).then((r) => ({
      ...r, texts: this.tokenizer ? r.sequences.map((q) => this.tokenizer.decode(Array.from(q), { skipSpecialTokens: true })) : null,
    }));
  }

  /**
   * Translates texts: each text's best sequence (beam search with the folder's numBeams unless given), decoded with
   * special tokens skipped. Options: srcLang, tgtLang (M2M100 / NLLB: language codes such as 'fr' / 'fra_Latn';
   * Marian's multilingual models: the >>xx<< code; a one-pair Marian model takes neither), numBeams, maxNewTokens,
   * and generate()'s others. Resolves to a string for a string, strings for an array.
   */
  async translate(texts, options) {
    this._handle();
    const list = Array.isArray(texts) ? texts : [texts];
    list.forEach((t, i) => { if (typeof t !== 'string') throw typeError(`texts${Array.isArray(texts) ? `[${i}]` : ''}: expected a string, got ${describe(t)}`); });
    if (list.length === 0) return [];
    const o = checkOptions(options, [...SEQ2SEQ_OPTIONS, 'srcLang', 'tgtLang'], 'translate');
    if (o.numReturnSequences !== undefined && o.numReturnSequences !== 1) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `numReturnSequences: translate() gives one translation per text; generate() returns ${o.numReturnSequences}`);
    }
    this._tokenizerOf('translate');
    const gen = this.generate(list, { ...o, numReturnSequences: 1 });
    const out = typeof gen.then === 'function' ? (await gen).texts : [await gen.finalText()];
    return Array.isArray(texts) ? out : out[0];
  }

  /**
   * The forced first token of a translation into tgtLang: the tokenizer's language id (M2M100 / NLLB's language
   * tokens, mBART's codes) unless the options force one; null when there is none to force (no tgtLang, or Marian,
   * whose target language is a >>xx<< source token).
   */
  _forcedBos(tgtLang, o) {
    if (tgtLang === undefined || o.forcedBosTokenId !== undefined) return null;
    const tok = this._tokenizerOf('tgtLang');
    if (typeof tok.languageId === 'function') return tok.languageId(tgtLang);
    if (this.modelType === 'marian') return null;  // the >>xx<< token of the source
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tgtLang: this model's tokenizer (${tok.constructor.name}) knows no language codes; pass forcedBosTokenId`);
  }
}

/**
 * A native decoding state's calls, shared by Seq2SeqLM's and SpeechRecognizer's steppers (seq2seq_generate.js
 * Seq2SeqStepper): step (into the search's buffer when it gives one), the model's log-probabilities for beam search
 * (kernels f32_log_softmax) and for renormalize_logits (logSoftmaxRow, in place), reorder, free; with `bounded`
 * (a bounded head: Seq2SeqLM#boundedHead) greedy search's bounded pass.
 */
export function decodingSteps(rt, handle, bounded = false) {
  return {
    logSoftmax: true,
    step: (state, tokens, o) => {
      const [logits] = boundary.models.seq2seqStep(rt, handle(), state, { tokens: { data: tokens, shape: [tokens.length, 1], dtype: DTYPE.I32 } },
        { all: false, logSoftmax: o?.logSoftmax === true }, o?.into ?? null);
      return logits.data;
    },
    logSoftmaxRow: (row) => { boundary.models.logSoftmaxRows(rt, { x: { data: row, shape: [1, row.length], dtype: DTYPE.F32 } }, row); },
    // The head's bounded pass (a float32 head: greedy search, seq2seq_generate.js): bounds of the logits from the
    // head's q8 copy, then the exact logits of a row's candidates.
    bounded: () => bounded,
    // The bounds stay in the state: stepBounded returns nothing, and select gives every row's candidates in one
    // call (Seq2SeqModel::SelectBounded). Per row i of the state: counts[i] >= 0 — its next counts[i] ids of
    // `exclude` are ids the search maps itself — gives { best, found, ids, pairs }: the largest lower bound of the
    // other ids (NaN: a NaN bound), how many of them have an upper bound >= best (counting stops at cap + 1), the
    // first min(found, cap) of those ascending, and the excluded ids' bounds as (lower, upper) pairs; −1 gives null.
    stepBounded: (state, tokens) => {
      boundary.models.seq2seqStep(rt, handle(), state, { tokens: { data: tokens, shape: [tokens.length, 1], dtype: DTYPE.I32 } }, { bounded: true });
    },
    select: (state, counts, exclude, cap) => {
      const req = new Int32Array(1 + counts.length + exclude.length);
      req[0] = cap;
      req.set(counts, 1);
      req.set(exclude, 1 + counts.length);
      const [{ data }] = boundary.models.seq2seqStep(rt, handle(), state, { exact: { data: req, shape: [req.length], dtype: DTYPE.I32 } }, { row: -1 });
      const out = [];
      let o = 0;
      for (const c of counts) {
        if (c < 0) { out.push(null); continue; }
        const found = data[o + 1], listed = Math.min(found, cap), p = o + 2 + 2 * c;  // best, found, the pairs, the ids
        out.push({ best: data[o], found, ids: Int32Array.from(data.subarray(p, p + listed)), pairs: data.subarray(o + 2, p) });
        o = p + listed;
      }
      return out;
    },
    exact: (state, row, ids) => boundary.models.seq2seqStep(rt, handle(), state, { exact: { data: ids, shape: [ids.length], dtype: DTYPE.I32 } }, { row })[0].data,
    reorder: (state, parents) => {
      boundary.models.seq2seqReorder(rt, handle(), state, { parents: { data: parents, shape: [parents.length], dtype: DTYPE.I32 } });
    },
    free: (state) => boundary.release(rt, state),
  };
}

/** One source's generation streamed (Seq2SeqLM#generate): the search's tokens, with their text. */
class Seq2SeqStream {
  constructor(g, tokenizer) {
    this._g = g;
    this._decoder = tokenizer ? tokenizer.streamDecoder({ skipSpecialTokens: true }) : null;
    /** @readonly the text so far (with a tokenizer) */ this.text = '';
  }

  /** The tokens generated so far (the eos that ended it not included). */
  get ids() { return this._g.ids; }
  /** transformers' sequences row so far: the start token, the tokens, the eos if it stopped on one. */
  get sequence() { return this._g.sequence; }
  /** The sampling seed. */
  get seed() { return this._g.seed; }
  /** 'stop' | 'length' | 'aborted' | 'error', or null while running. */
  get stopReason() { return this._g.stopReason; }

  [Symbol.asyncIterator]() { return this; }

  async next() {
    const r = await this._g.next();
    if (r.done) {
      if (this._decoder) { this.text += this._decoder.end(); this._decoder = null; }
      return r;
    }
    const value = { ...r.value };
    if (this._decoder) {
      value.text = this._decoder.push(value.id);
      this.text += value.text;
    }
    return { done: false, value };
  }

  /** Ends it now (what `break` in a for-await loop calls): frees the state. */
  async return() { return this._g.return(); }

  /** Runs it to the end and resolves to the text (with a tokenizer). */
  async finalText() {
    while (!(await this.next()).done);
    return this.text;
  }
}
