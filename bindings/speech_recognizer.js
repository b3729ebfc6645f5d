// Whisper's face (src/models/whisper.h: WhisperForConditionalGeneration from hub folders): SpeechRecognizer computes
// the folder's log-mel features (attnwasm/audio's WhisperFeatureExtractor, exact to transformers'), runs the
// teacher-forced forward, detects the spoken language and generates as transformers' WhisperForConditionalGeneration
// .generate does (speech_generate.js), and transcribes: text and timestamped chunks (speech_transcribe.js). Each
// 30-second window is encoded once; the decoder steps against a native state (the cross-attention keys and values
// of every layer, each row's KV cache), freed when the call ends.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkOptions, checkTensor, DTYPE } from './checks.js';
import { Model } from './model.js';
import { decodingSteps } from './seq2seq.js';
import * as boundary from './boundary.js';
import { WhisperFeatureExtractor } from './audio/feature_extractor.js';
import { speechGeneration, detectLanguages, SPEECH_OPTIONS } from './speech_generate.js';
import { transcribeAudio, streamSegments } from './speech_transcribe.js';
import { whisperVocab, whisperDecode } from './speech/whisper_text.js';
import { getPromptIds } from './speech/init_tokens.js';
import { alignmentSettings } from './speech/alignment.js';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);

/**
 * A Whisper checkpoint loaded by aw.loadModel from a hub folder (config.json model_type whisper). Owns native
 * memory: dispose().
 */
export class SpeechRecognizer extends Model {
  /** Internal: built by loadModel (families.js). */
  constructor(rt, handle, { hfConfig, tokenizer, generationConfig, preprocessorConfig }, fileBytes) {
    super(rt, handle, 'SpeechRecognizer', fileBytes);
    const info = this._info;
    /** @readonly the Hugging Face config (config.json's keys, as given) */ this.config = hfConfig;
    /** @readonly generation_config.json's keys, or null */ this.generationConfig = generationConfig ?? null;
    /** @readonly the folder's tokenizer (tokenizer.json), or null: then ids only */ this.tokenizer = tokenizer ?? null;
    /** @readonly the feature extractor of preprocessor_config.json (transformers' defaults for the model's mel bins without one) */
    this.featureExtractor = new WhisperFeatureExtractor(preprocessorConfig ?? { feature_size: info.numMelBins });
    if (this.featureExtractor.config.featureSize !== info.numMelBins) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `preprocessor_config.json: feature_size is ${this.featureExtractor.config.featureSize} but config.json's num_mel_bins is ${info.numMelBins}; they must agree`);
    }
    /** @readonly */ this.modelType = info.modelType;
    /** @readonly the logits' width */ this.vocabSize = info.vocabSize;
    /** @readonly */ this.dModel = info.dModel;
    /** @readonly */ this.encoderLayers = info.encoderLayers;
    /** @readonly */ this.decoderLayers = info.decoderLayers;
    /** @readonly mel bins per frame (80; 128 for large-v3) */ this.numMelBins = info.numMelBins;
    /** @readonly frames one window holds (2 · max_source_positions: 3000 = 30 s) */ this.frames = info.frames;
    /** @readonly the encoder's states per window (max_source_positions) */ this.maxSourcePositions = info.maxSourcePositions;
    /** @readonly tokens a target may have (max_target_positions) */ this.maxTargetPositions = info.maxTargetPositions;
    /** @readonly */ this.eosTokenId = info.eosTokenId;
    /** @readonly */ this.decoderStartTokenId = info.decoderStartTokenId;
  }

  /**
   * Whisper's input features of audio (attnwasm/audio's WhisperFeatureExtractor#features with the folder's
   * preprocessor_config.json): samples (a Float32Array at 16 kHz, or { data, samplingRate }) → { data, shape: [1,
   * numMelBins, 3000] }.
   */
  features(audio, options) {
    return this.featureExtractor.features(audio, options);
  }

  /** inputFeatures (B, numMelBins, frames) from features, a features tensor, or audio. */
  _inputFeatures(input, what, firstWindow = false) {
    let t = input;
    if (isObject(input) && 'inputFeatures' in input) t = input.inputFeatures;
    else if (!(isObject(input) && 'shape' in input && 'data' in input) || (isObject(input) && 'samplingRate' in input)) {
      // Audio: one window. Longer audio is refused, not cut to its first 30 s without a word; one channel of samples
      // is measured before any features are computed (10 minutes of them took 0.6 s only to be refused).
      const fe = this.featureExtractor;
      const tooLong = (seconds) => new AttnWasmError('ERR_AUDIO_TOO_LONG', `${what}: expected audio of at most ${fe.config.chunkLength} s (one window), got ${seconds.toFixed(2)} s; transcribe() runs longer audio (long-form, or chunkLengthS), or pass features(audio) to use its first 30 s`);
      const samples = input instanceof Float32Array ? [input, fe.samplingRate]
        : isObject(input) && input.data instanceof Float32Array && Number.isFinite(input.samplingRate) && input.samplingRate > 0 ? [input.data, input.samplingRate] : null;
      if (!firstWindow && samples && samples[0].length / samples[1] > fe.config.chunkLength + 0.01) throw tooLong(samples[0].length / samples[1]);
      t = this.features(input, { truncation: firstWindow });
      if (t.shape[2] > this.frames) throw tooLong(t.shape[2] * fe.config.hopLength / fe.samplingRate);
    }
    const f = checkTensor(t, what, 'float', this._rt);
    const [B, M, T] = f.shape;
    if (f.shape.length !== 3 || M !== this.numMelBins || T !== this.frames) {
      throw new AttnWasmError('ERR_SHAPE', `${what}: expected (batch, ${this.numMelBins}, ${this.frames}) (num_mel_bins, 30 s of frames), got [${f.shape.join(', ')}]`);
    }
    if (B < 1) throw new AttnWasmError('ERR_SHAPE', `${what}: expected at least one input, got a batch of 0`);
    return f;
  }

  /**
   * Teacher forcing, as transformers' model(input_features, decoder_input_ids=…): { inputFeatures (B, numMelBins,
   * 3000) or audio, decoderInputIds (B, T) } → { logits (B, T, V), encoderLastHiddenState (B, 1500, dModel) }, each
   * { data: Float32Array, shape }.
   */
  forward(inputs) {
    this._handle();
    if (!isObject(inputs)) throw typeError(`inputs: expected { inputFeatures | audio, decoderInputIds }, got ${describe(inputs)}`);
    const o = checkOptions(inputs, ['inputFeatures', 'audio', 'decoderInputIds'], 'forward');
    if ((o.inputFeatures === undefined) === (o.audio === undefined)) {
      throw typeError(`inputs: expected one of inputFeatures or audio, got ${o.inputFeatures === undefined ? 'neither' : 'both'}`);
    }
    const features = o.inputFeatures !== undefined ? this._inputFeatures({ inputFeatures: o.inputFeatures }, 'inputFeatures') : this._inputFeatures(o.audio, 'audio');
    const dec = idRows(o.decoderInputIds, 'decoderInputIds', this._rt);
    const [logits, hidden] = boundary.models.speechForward(this._rt, this._handle(), { features, dec }, {});
    return { logits, encoderLastHiddenState: hidden };
  }

  _tokenizerOf(what) {
    if (!this.tokenizer) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${what}: this model has no tokenizer (the folder has no tokenizer.json); use generate() for ids`);
    return this.tokenizer;
  }

  /**
   * Generation over windows of up to 30 s, as transformers' WhisperForConditionalGeneration.generate(input_features,
   * …) runs its short form: `input` is audio (one window of up to 30 s, padded to 30 s; longer audio is refused:
   * transcribe() runs it), a features tensor (B, numMelBins, 3000),
   * or { inputFeatures }. Options: language ('en', 'english' or '<|en|>'; detected from the first step when not
   * given, on a multilingual model), task ('transcribe' | 'translate'), returnTimestamps, promptIds (getPromptIds),
   * isMultilingual, and the search's (numBeams, maxNewTokens, maxLength, lengthPenalty, noRepeatNgramSize,
   * repetitionPenalty, doSample, temperature, topK, topP, seed, signal, …: Seq2SeqLM#generate's), and
   * returnTokenTimestamps (transformers' return_token_timestamps: each token's time from the cross-attention
   * alignment heads; refused without generation_config.json's alignment_heads) with numFrames (the input's mel
   * frames: the encoder states past numFrames / 2 are not looked at). Resolves to { sequences (Int32Array rows: the
   * decoder prompt, then the tokens, as transformers returns them), scores (sequences_scores with beams, else null),
   * texts (decoded, special tokens and the prompt skipped), language (the detected language's token, or null),
   * tokenTimestamps (with returnTokenTimestamps: a Float32Array of seconds per row, one per token) }.
   */
  async generate(input, options) {
    this._handle();
    const { returnTokenTimestamps, numFrames, ...rest } = checkOptions(options, [...SPEECH_OPTIONS, 'returnTokenTimestamps', 'numFrames'], 'generate');
    if (returnTokenTimestamps !== undefined && typeof returnTokenTimestamps !== 'boolean') {
      throw typeError(`returnTokenTimestamps: expected true or false, got ${describe(returnTokenTimestamps)}`);
    }
    if (numFrames !== undefined && numFrames !== null && !(Number.isInteger(numFrames) && numFrames >= 0)) {
      throw typeError(`numFrames: expected a number of mel frames (an integer >= 0), got ${describe(numFrames)}`);
    }
    if (numFrames != null && !returnTokenTimestamps) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'numFrames: it crops the alignment of returnTokenTimestamps, which is not set');
    }
    const times = returnTokenTimestamps ? { settings: alignmentSettings(this, 'returnTokenTimestamps'), numFrames: numFrames ?? null } : null;
    const features = this._inputFeatures(input, 'input');
    const g = speechGeneration(this, features, rest, { times });
    const r = await g.run();
    const v = this.tokenizer ? whisperVocab(this.tokenizer) : null;
    return {
      sequences: r.sequences,
      scores: r.scores,
      texts: v ? r.sequences.map((q) => whisperDecode(v, q, { skipSpecialTokens: true })) : null,
      language: g.plan.language === null ? null : this.tokenizer ? this.tokenizer.idToToken(g.plan.language) : g.plan.language,
      ...(times ? { tokenTimestamps: r.tokenTimestamps } : {}),
    };
  }

  /**
   * The spoken language of each input: transformers' detect_language (the first step's logits after
   * <|startoftranscript|>, every non-language token masked), as probabilities: per input, [{ language (code),
   * name, token, id, probability }] sorted, most likely first. `input` as generate's (audio over 30 s: its first
   * 30 s, the window long-form generation detects on); a batch of B > 1 gives B lists.
   */
  detectLanguage(input) {
    this._handle();
    const features = this._inputFeatures(input, 'input', true);
    const lists = detectLanguages(this, features);
    return features.shape[0] > 1 ? lists : lists[0];
  }

  /**
   * Transcribes (or translates, task 'translate') audio as transformers' automatic-speech-recognition pipeline
   * does: up to 30 s in one window; longer audio by long-form generation (30-second windows moved by the
   * timestamps), or in the pipeline's overlapping chunks with chunkLengthS (and strideLengthS, default a sixth).
   * Options: generate()'s, returnTimestamps (true: chunks with [start, end] seconds; 'word': a chunk per word, its
   * times from the cross-attention alignment heads — refused without generation_config.json's alignment_heads),
   * returnLanguage, chunkLengthS, strideLengthS, onProgress({ done, total, seconds }), signal. Resolves to { text,
   * chunks? }.
   */
  async transcribe(audio, options) {
    this._handle();
    return transcribeAudio(this, audio, options);
  }

  /**
   * The segments of a transcription as they are decoded: an async iterator of { timestamp: [start, end], text }
   * (long-form generation's segments; the windows of up to 30 s run one at a time, the state freed after each);
   * with returnTimestamps 'word', each window's words as transcribe() gives them. Options as transcribe's, but
   * chunkLengthS.
   */
  stream(audio, options) {
    this._handle();
    return streamSegments(this, audio, options);
  }

  /** The tokenizer's get_prompt_ids(text): <|startofprev|> and " " + text.trim()'s ids, for generate's promptIds. */
  getPromptIds(text) {
    return getPromptIds(this._tokenizerOf('getPromptIds'), text);
  }

  /** The native decoding state for a generation over `features` (B, M, T): encoded once, stepped, reordered, freed. */
  _stepper(features) {
    const rt = this._rt;
    return {
      vocabSize: this.vocabSize,
      begin: (rows, capacity) => {
        const beams = rows / features.shape[0];
        return boundary.models.speechBegin(rt, this._handle(), { features }, { beams, capacity });
      },
      ...decodingSteps(rt, () => this._handle()),
      /** The alignment heads' cross-attention of tokens (rows, T) under teacher forcing: { data, shape (rows, n, T, S) }. */
      alignment: (state, tokens, rows, T, heads) => boundary.models.speechAlignment(rt, this._handle(), state, {
        tokens: { data: tokens, shape: [rows, T], dtype: DTYPE.I32 }, heads: { data: heads, shape: [heads.length / 2, 2], dtype: DTYPE.I32 },
      })[0],
    };
  }
}

/** Decoder ids (B, T): a tensor, an Int32Array / array (one row) or rows of one length. */
function idRows(v, what, rt) {
  if (v === undefined) throw typeError(`${what}: expected an ids tensor (batch, tokens), got undefined`);
  if (v instanceof Int32Array || (Array.isArray(v) && v.every((x) => typeof x === 'number'))) {
    const data = Int32Array.from(v);
    return checkTensor({ data, shape: [1, data.length] }, what, 'ids', rt);
  }
  if (Array.isArray(v) && v.length && v.every((r) => Array.isArray(r) || r instanceof Int32Array)) {
    const T = v[0].length;
    v.forEach((r, i) => {
      if (r.length !== T) throw new AttnWasmError('ERR_SHAPE', `${what}[${i}]: expected ${T} ids (rows of one length), got ${r.length}`);
    });
    const data = new Int32Array(v.length * T);
    v.forEach((r, i) => data.set(r, i * T));
    return checkTensor({ data, shape: [v.length, T] }, what, 'ids', rt);
  }
  const t = checkTensor(v, what, 'ids', rt);
  if (t.shape.length !== 2) throw new AttnWasmError('ERR_SHAPE', `${what}: expected (batch, tokens), got [${t.shape.join(', ')}]`);
  return t;
}
