// generate()'s settings for encoder–decoders, as transformers v4.40.2 works them out (the seq2seq search's first
// half; seq2seq_generate.js runs the search): generation_config.json, else config.json's generation fields, under the
// user's options (camelCase, SEQ2SEQ_OPTIONS), with transformers' precedence, checks and defaults
// (resolveGenerationConfig). Not here: the search.
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkOptions } from './checks.js';

// transformers 4.40 GenerationConfig's fields and their defaults (configuration_utils.py GenerationConfig.__init__).
// PretrainedConfig's defaults for the generation keys are the same values, so config.json is read against these too.
const GENERATION_DEFAULTS = Object.freeze({
  max_length: 20, max_new_tokens: null, min_length: 0, min_new_tokens: null, early_stopping: false, max_time: null,
  do_sample: false, num_beams: 1, num_beam_groups: 1, penalty_alpha: null, use_cache: true,
  temperature: 1.0, top_k: 50, top_p: 1.0, typical_p: 1.0, epsilon_cutoff: 0.0, eta_cutoff: 0.0,
  diversity_penalty: 0.0, repetition_penalty: 1.0, encoder_repetition_penalty: 1.0, length_penalty: 1.0,
  no_repeat_ngram_size: 0, bad_words_ids: null, force_words_ids: null, renormalize_logits: false, constraints: null,
  forced_bos_token_id: null, forced_eos_token_id: null, remove_invalid_values: false,
  exponential_decay_length_penalty: null, suppress_tokens: null, begin_suppress_tokens: null,
  forced_decoder_ids: null, sequence_bias: null, guidance_scale: null, low_memory: null,
  num_return_sequences: 1, output_attentions: false, output_hidden_states: false, output_scores: false,
  output_logits: null, return_dict_in_generate: false,
  pad_token_id: null, bos_token_id: null, eos_token_id: null,
  encoder_no_repeat_ngram_size: 0, decoder_start_token_id: null,
  num_assistant_tokens: 5, num_assistant_tokens_schedule: 'heuristic', cache_implementation: null,
  prompt_lookup_num_tokens: null, max_matching_ngram_size: null,
});

// GenerationConfig._get_generation_defaults: what PretrainedConfig._has_non_default_generation_parameters compares.
const LEGACY_KEYS = ['max_length', 'min_length', 'do_sample', 'early_stopping', 'num_beams', 'num_beam_groups',
  'diversity_penalty', 'temperature', 'top_k', 'top_p', 'typical_p', 'repetition_penalty', 'length_penalty',
  'no_repeat_ngram_size', 'encoder_no_repeat_ngram_size', 'bad_words_ids', 'num_return_sequences', 'output_scores',
  'return_dict_in_generate', 'forced_bos_token_id', 'forced_eos_token_id', 'remove_invalid_values',
  'exponential_decay_length_penalty', 'suppress_tokens', 'begin_suppress_tokens'];

/**
 * The options of resolveGenerationConfig, camelCase, and the GenerationConfig field each sets:
 *
 * | option               | transformers            | value                                   | default (no file sets it) |
 * |----------------------|-------------------------|-----------------------------------------|---------------------------|
 * | maxLength            | max_length              | integer > 1: decoder tokens, start incl. | 20                       |
 * | maxNewTokens         | max_new_tokens          | integer >= 1 or null (wins over maxLength) | null                   |
 * | minLength            | min_length              | integer >= 0 (start token included)     | 0                         |
 * | minNewTokens         | min_new_tokens          | integer >= 0 or null                    | null                      |
 * | numBeams             | num_beams               | integer >= 1 (1: greedy or sampling)    | 1                         |
 * | lengthPenalty        | length_penalty          | finite number                           | 1                         |
 * | earlyStopping        | early_stopping          | true, false or 'never'                  | false                     |
 * | numReturnSequences   | num_return_sequences    | integer >= 1 (<= numBeams; 1 greedy)    | 1                         |
 * | noRepeatNgramSize    | no_repeat_ngram_size    | integer >= 0 (0: off)                   | 0                         |
 * | repetitionPenalty    | repetition_penalty      | number > 0 (1: off)                     | 1                         |
 * | badWordsIds          | bad_words_ids           | array of non-empty arrays of ids, or null | null                    |
 * | forcedBosTokenId     | forced_bos_token_id     | id or null                              | null                      |
 * | forcedEosTokenId     | forced_eos_token_id     | id, array of ids, or null               | null                      |
 * | decoderStartTokenId  | decoder_start_token_id  | id, or null (then bos_token_id)         | null                      |
 * | eosTokenId           | eos_token_id            | id, array of ids, or null (see below)   | null                      |
 * | padTokenId           | pad_token_id            | id, or null (the first eos id, see below) | null                    |
 * | doSample             | do_sample               | boolean                                 | false                     |
 * | temperature          | temperature             | number > 0 (sampling)                   | 1                         |
 * | topK                 | top_k                   | integer >= 0 or null (0/null: off; sampling) | 50                   |
 * | topP                 | top_p                   | number in [0, 1] (1: off; sampling)     | 1                         |
 * | seed                 | (torch.manual_seed)     | integer: the sampler's seed             | a random one              |
 * | signal               | —                       | AbortSignal                             | none                      |
 *
 * "id" is a token id, an integer >= 0 (and < the stepper's vocabSize, checked when generation starts). An option set
 * to undefined is not given; null sets the field to None, as passing None to generate() does. One quirk of 4.40 kept:
 * eosTokenId null takes the eos ids from the processors (min lengths, bad words) and from pad's default, but the
 * search itself (_greedy_search, _sample, _beam_search) then falls back to the model's own eos ids and pad (those of
 * generation_config.json or config.json, before the options) — settings.stopTokenIds, settings.padTokenId. A model
 * without eos ids runs to maxLength.
 */
export const SEQ2SEQ_OPTIONS = Object.freeze(['maxLength', 'maxNewTokens', 'minLength', 'minNewTokens', 'numBeams',
  'lengthPenalty', 'earlyStopping', 'numReturnSequences', 'noRepeatNgramSize', 'repetitionPenalty', 'badWordsIds',
  'forcedBosTokenId', 'forcedEosTokenId', 'renormalizeLogits', 'decoderStartTokenId', 'eosTokenId', 'padTokenId', 'doSample',
  'temperature', 'topK', 'topP', 'seed', 'signal']);

const OPTION_KEYS = Object.freeze({
  maxLength: 'max_length', maxNewTokens: 'max_new_tokens', minLength: 'min_length', minNewTokens: 'min_new_tokens',
  numBeams: 'num_beams', lengthPenalty: 'length_penalty', earlyStopping: 'early_stopping',
  numReturnSequences: 'num_return_sequences', noRepeatNgramSize: 'no_repeat_ngram_size',
  repetitionPenalty: 'repetition_penalty', badWordsIds: 'bad_words_ids', forcedBosTokenId: 'forced_bos_token_id',
  forcedEosTokenId: 'forced_eos_token_id', renormalizeLogits: 'renormalize_logits', decoderStartTokenId: 'decoder_start_token_id', eosTokenId: 'eos_token_id',
  padTokenId: 'pad_token_id', doSample: 'do_sample', temperature: 'temperature', topK: 'top_k', topP: 'top_p',
});

// GenerationConfig fields whose effect this runtime does not have: refused where they would change the result
// (transformers' own conditions), naming the field. `mode` is the search the other fields select.
const UNSUPPORTED = [
  ['max_time', (v) => v != null, 'a wall-clock time limit (MaxTimeCriteria)'],
  ['num_beam_groups', (v, c) => v !== 1 && c.num_beams > 1, 'group beam search'],
  ['diversity_penalty', (v) => v != null && v > 0, 'HammingDiversityLogitsProcessor (group beam search)'],
  ['penalty_alpha', (v, c) => v != null && v > 0 && c.top_k != null && c.top_k > 1 && c.do_sample === false && c.num_beams === 1, 'contrastive search'],
  ['typical_p', (v, c) => c.do_sample === true && v != null && v < 1, 'TypicalLogitsWarper'],
  ['epsilon_cutoff', (v, c) => c.do_sample === true && v != null && v > 0 && v < 1, 'EpsilonLogitsWarper'],
  ['eta_cutoff', (v, c) => c.do_sample === true && v != null && v > 0 && v < 1, 'EtaLogitsWarper'],
  ['encoder_repetition_penalty', (v) => v != null && v !== 1, 'EncoderRepetitionPenaltyLogitsProcessor'],
  ['encoder_no_repeat_ngram_size', (v) => v != null && v > 0, 'EncoderNoRepeatNGramLogitsProcessor'],
  ['force_words_ids', (v) => v != null, 'constrained beam search'],
  ['constraints', (v) => v != null, 'constrained beam search'],
  ['remove_invalid_values', (v) => v === true, 'InfNanRemoveLogitsProcessor'],
  ['exponential_decay_length_penalty', (v) => v != null, 'ExponentialDecayLengthPenalty'],
  ['suppress_tokens', (v) => v != null, 'SuppressTokensLogitsProcessor'],
  ['begin_suppress_tokens', (v) => v != null, 'SuppressTokensAtBeginLogitsProcessor'],
  ['forced_decoder_ids', (v) => v != null, 'ForceTokensLogitsProcessor'],
  ['sequence_bias', (v) => v != null, 'SequenceBiasLogitsProcessor'],
  ['guidance_scale', (v) => v != null && v !== 1, 'classifier-free guidance'],
  ['prompt_lookup_num_tokens', (v) => v != null, 'prompt lookup (assisted) decoding'],
];

/** The key of a settings object's provenance (where each value came from, for run-time messages). */
export const SETTINGS = Symbol('seq2seq settings');

const isPlainObject = (x) => x !== null && typeof x === 'object' && !Array.isArray(x) && !ArrayBuffer.isView(x);
const isSignal = (s) => s !== null && typeof s === 'object' && typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function';

export function show(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  if (Array.isArray(v)) {
    const text = JSON.stringify(v);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  }
  return describe(v);
}

/** An error about one setting: a TypeError/RangeError naming the option, or ERR_INVALID_ARGUMENT naming file and key. */
export function settingError(src, kind, expected, got) {
  const message = `expected ${expected}, got ${show(got)}`;
  if (src.option) return kind === 'type' ? typeError(`${src.option}: ${message}`) : rangeError(`${src.option}: ${message}`);
  return new AttnWasmError('ERR_INVALID_ARGUMENT', `${src.file} ${src.key}: ${message}`);
}

const nameOf = (src) => src.option ?? `${src.file} ${src.key}`;

function integerValue(v, src, min, nullable) {
  if (v === null && nullable) return null;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw settingError(src, 'type', `an integer${nullable ? ' or null' : ''}`, v);
  }
  if (v < min || !Number.isSafeInteger(v)) throw settingError(src, 'range', `an integer >= ${min}`, v);
  return v;
}

function numberValue(v, src) {
  if (typeof v !== 'number') throw settingError(src, 'type', 'a number', v);
  if (!Number.isFinite(v)) throw settingError(src, 'range', 'a finite number', v);
  return v;
}

function tokenId(v, src, nullable) {
  if (Array.isArray(v) && !src.option) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${src.file} ${src.key}: one id per source (a list) is not supported; expected a token id`);
  }
  return integerValue(v, src, 0, nullable);
}

/** An id or a non-empty array of ids → an array (duplicates kept: transformers counts them), or null. */
function tokenIds(v, src) {
  if (v === null) return null;
  if (typeof v === 'number') return [tokenId(v, src, false)];
  if (!Array.isArray(v) && !(v instanceof Int32Array)) throw settingError(src, 'type', 'a token id, an array of token ids or null', v);
  if (v.length === 0) throw settingError(src, 'range', 'a token id or a non-empty array of them', v);
  return Array.from(v, (x, i) => {
    if (typeof x !== 'number' || !Number.isInteger(x)) throw settingError({ ...src, option: src.option && `${src.option}[${i}]`, key: `${src.key}[${i}]` }, 'type', 'an integer token id', x);
    if (x < 0 || !Number.isSafeInteger(x)) throw settingError({ ...src, option: src.option && `${src.option}[${i}]`, key: `${src.key}[${i}]` }, 'range', 'a token id >= 0', x);
    return x;
  });
}

function wordLists(v, src) {
  if (v === null) return null;
  if (!Array.isArray(v)) throw settingError(src, 'type', 'an array of arrays of token ids, or null', v);
  if (v.length === 0) throw settingError(src, 'range', 'a non-empty array of arrays of token ids', v);
  return v.map((w, i) => {
    const at = { ...src, option: src.option && `${src.option}[${i}]`, key: `${src.key}[${i}]` };
    if (!Array.isArray(w) && !(w instanceof Int32Array)) throw settingError(at, 'type', 'an array of token ids', w);
    if (w.length === 0) throw settingError(at, 'range', 'a non-empty array of token ids', w);
    return Array.from(w, (x, j) => {
      const here = { ...src, option: src.option && `${src.option}[${i}][${j}]`, key: `${src.key}[${i}][${j}]` };
      if (typeof x !== 'number' || !Number.isInteger(x)) throw settingError(here, 'type', 'an integer token id', x);
      if (x < 0 || !Number.isSafeInteger(x)) throw settingError(here, 'range', 'a token id >= 0', x);
      return x;
    });
  });
}

function sameValue(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}

/** GenerationConfig.from_model_config: the generation fields of config.json, then of its decoder/generator/text_config. */
function fromModelConfig(config) {
  const out = { ...GENERATION_DEFAULTS };
  for (const key of Object.keys(GENERATION_DEFAULTS)) if (Object.hasOwn(config, key)) out[key] = config[key];
  for (const sub of ['decoder', 'generator', 'text_config']) {
    const d = config[sub];
    if (!isPlainObject(d)) continue;
    for (const key of Object.keys(GENERATION_DEFAULTS)) {
      if (Object.hasOwn(d, key) && sameValue(out[key], GENERATION_DEFAULTS[key])) out[key] = d[key];
    }
  }
  return out;
}

const hasNonDefaultGenerationParameters = (config) =>
  LEGACY_KEYS.some((k) => Object.hasOwn(config, k) && !sameValue(config[k], GENERATION_DEFAULTS[k]));

/**
 * The effective generation settings, as transformers 4.40's generate() works them out for an encoder–decoder:
 * generation_config.json when there is one (GenerationConfig.from_pretrained: its fields over GenerationConfig's
 * defaults), else config.json's generation fields (GenerationConfig.from_model_config, its decoder / generator /
 * text_config sub-config filling fields left at their defaults); a generation_config.json marked
 * `_from_model_config: true` gives way to config.json when config.json sets any generation field to a non-default
 * value (transformers' legacy rule in _prepare_generation_config); the user's options (SEQ2SEQ_OPTIONS, whose table
 * maps them to transformers' names) override both. Then: pad_token_id defaults to the first eos id, the decoder's
 * start token to bos_token_id, and the search is chosen as get_generation_mode does (greedy, sampling, beam search).
 * Fields whose effect this runtime lacks are refused (ERR_UNSUPPORTED, naming the file and field) where
 * transformers would use them; a model class's own defaults for fields config.json leaves out are not known here
 * (save_pretrained writes every value that differs from PretrainedConfig's defaults, so saved files carry them).
 *
 * Errors name the option (TypeError ERR_INVALID_TYPE, RangeError ERR_OUT_OF_RANGE), or the file and field
 * (AttnWasmError ERR_INVALID_ARGUMENT). A length that needs the decoder prompt (maxLength against it) is checked
 * again when generation starts.
 * @param {object|null} generationConfig parsed generation_config.json, or null when the model has none
 * @param {object|null} config parsed config.json
 * @param {object} [options] the user's options (SEQ2SEQ_OPTIONS)
 * @returns {Readonly<Seq2SeqSettings>} a new frozen object (the caller owns it; the signal is the one given)
 */
export function resolveGenerationConfig(generationConfig, config, options) {
  if (generationConfig != null && !isPlainObject(generationConfig)) {
    throw typeError(`generationConfig: expected the parsed generation_config.json (an object) or null, got ${describe(generationConfig)}`);
  }
  if (config != null && !isPlainObject(config)) throw typeError(`config: expected the parsed config.json (an object), got ${describe(config)}`);
  const o = checkOptions(options, SEQ2SEQ_OPTIONS, 'generate');
  const model = config ?? {};
  let c, file;
  if (generationConfig == null || (generationConfig._from_model_config === true && hasNonDefaultGenerationParameters(model))) {
    c = fromModelConfig(model);
    file = 'config.json';
  } else {
    c = { ...GENERATION_DEFAULTS };
    for (const key of Object.keys(GENERATION_DEFAULTS)) if (Object.hasOwn(generationConfig, key)) c[key] = generationConfig[key];
    file = 'generation_config.json';
  }
  const src = {};
  for (const key of Object.keys(GENERATION_DEFAULTS)) src[key] = { file, key };
  const own = { eos: c.eos_token_id, pad: c.pad_token_id };  // the model's generation config, before the options
  for (const [option, key] of Object.entries(OPTION_KEYS)) {
    if (o[option] === undefined) continue;
    c[key] = o[option];
    src[key] = { option, key };
  }

  // Types and ranges (GenerationConfig.validate and the processors' own checks).
  const es = c.early_stopping;
  if (es !== true && es !== false && es !== 'never') {
    throw settingError(src.early_stopping, typeof es === 'boolean' || typeof es === 'string' ? 'range' : 'type', "true, false or 'never'", es);
  }
  if (typeof c.do_sample !== 'boolean') throw settingError(src.do_sample, 'type', 'a boolean', c.do_sample);
  if (typeof c.renormalize_logits !== 'boolean') throw settingError(src.renormalize_logits, 'type', 'a boolean', c.renormalize_logits);
  const numBeams = integerValue(c.num_beams, src.num_beams, 1, false);
  const doSample = c.do_sample;
  const maxNewTokens = integerValue(c.max_new_tokens, src.max_new_tokens, 1, true);
  const maxLength = integerValue(c.max_length, src.max_length, 1, false);
  if (maxNewTokens === null && maxLength < 2) {
    throw settingError(src.max_length, 'range', 'an integer > 1 (the decoder\'s tokens, its start token included; or set maxNewTokens)', maxLength);
  }
  const minLength = integerValue(c.min_length, src.min_length, 0, false);
  const minNewTokens = integerValue(c.min_new_tokens, src.min_new_tokens, 0, true);
  const lengthPenalty = numberValue(c.length_penalty, src.length_penalty);
  const numReturnSequences = integerValue(c.num_return_sequences, src.num_return_sequences, 1, false);
  const noRepeatNgramSize = integerValue(c.no_repeat_ngram_size, src.no_repeat_ngram_size, 0, false);
  const repetitionPenalty = numberValue(c.repetition_penalty, src.repetition_penalty);
  if (!(repetitionPenalty > 0)) throw settingError(src.repetition_penalty, 'range', 'a number > 0 (1: off)', repetitionPenalty);
  const badWordsIds = wordLists(c.bad_words_ids, src.bad_words_ids);
  const forcedBosTokenId = tokenId(c.forced_bos_token_id, src.forced_bos_token_id, true);
  const forcedEosTokenIds = tokenIds(c.forced_eos_token_id, src.forced_eos_token_id);
  const eosTokenIds = tokenIds(c.eos_token_id, src.eos_token_id);
  let padTokenId = tokenId(c.pad_token_id, src.pad_token_id, true);
  const bos = tokenId(c.bos_token_id, src.bos_token_id, true);
  let decoderStartTokenId = tokenId(c.decoder_start_token_id, src.decoder_start_token_id, true);
  if (typeof c.temperature !== 'number') throw settingError(src.temperature, 'type', 'a number', c.temperature);
  if (typeof c.top_p !== 'number') throw settingError(src.top_p, 'type', 'a number', c.top_p);
  const topK = c.top_k === null ? null : integerValue(c.top_k, src.top_k, doSample ? 0 : -Infinity, true);
  const temperature = c.temperature, topP = c.top_p;
  if (doSample && !(temperature > 0 && Number.isFinite(temperature))) {
    throw settingError(src.temperature, 'range', 'a number > 0 when sampling (doSample false: greedy)', temperature);
  }
  if (doSample && !(topP >= 0 && topP <= 1)) throw settingError(src.top_p, 'range', 'a number in [0, 1] when sampling (1: off)', topP);

  // The search (get_generation_mode) and what it cannot run.
  for (const [key, applies, what] of UNSUPPORTED) {
    if (applies(c[key], c)) {
      throw new AttnWasmError('ERR_UNSUPPORTED', `${nameOf(src[key])}: ${show(c[key])} asks for ${what}, which attnwasm's generate does not run`);
    }
  }
  if (doSample && numBeams > 1) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${nameOf(src.do_sample)}: doSample with numBeams ${numBeams} asks for beam sampling, which attnwasm's generate does not run (set numBeams 1 to sample, doSample false for beam search)`);
  }
  const mode = numBeams > 1 ? 'beam' : doSample ? 'sample' : 'greedy';
  if (mode === 'greedy' && numReturnSequences !== 1) {
    throw settingError(src.num_return_sequences, 'range', '1 with greedy search (transformers returns one sequence per source without beams or sampling)', numReturnSequences);
  }
  if (mode === 'beam' && numReturnSequences > numBeams) {
    throw settingError(src.num_return_sequences, 'range', `at most numBeams (${numBeams})`, numReturnSequences);
  }
  if (badWordsIds !== null && eosTokenIds !== null && badWordsIds.every((w) => w.length === 1 && eosTokenIds.includes(w[0]))) {
    throw settingError(src.bad_words_ids, 'range', 'a bad word other than [eos] (transformers drops those, and refuses an empty list)', c.bad_words_ids);
  }

  // generate(): pad defaults to the first eos id; the decoder starts with decoder_start_token_id, else bos_token_id.
  let padSrc = padTokenId === null && eosTokenIds !== null ? src.eos_token_id : src.pad_token_id;
  if (padTokenId === null && eosTokenIds !== null) padTokenId = eosTokenIds[0];
  // _greedy_search, _sample and _beam_search stop at the generation config's eos ids, or, when those are None, at
  // the model's own (self.generation_config's, before the options): eosTokenId null does not stop them stopping at
  // the model's eos. Their pad falls back the same way.
  let stopTokenIds = eosTokenIds, stopSrc = src.eos_token_id;
  if (stopTokenIds === null && own.eos != null) {
    stopSrc = { file, key: 'eos_token_id' };
    stopTokenIds = tokenIds(own.eos, stopSrc);
  }
  if (padTokenId === null && own.pad != null) {
    padSrc = { file, key: 'pad_token_id' };
    padTokenId = tokenId(own.pad, padSrc, true);
  }
  if (stopTokenIds !== null && padTokenId === null && mode !== 'beam') {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `padTokenId: stopping at eos id ${stopTokenIds[0]} (${nameOf(stopSrc)}) needs a pad id for the rows that end first, and none is set`);
  }
  let startSrc = src.decoder_start_token_id;
  if (decoderStartTokenId === null) { decoderStartTokenId = bos; startSrc = src.bos_token_id; }
  if (decoderStartTokenId === null) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `decoderStartTokenId: neither decoder_start_token_id nor bos_token_id is set (${file}); pass decoderStartTokenId`);
  }

  let seed = o.seed;
  if (seed === undefined) seed = Math.floor(Math.random() * 2 ** 32);
  else integerValue(seed, { option: 'seed', key: 'seed' }, -(2 ** 53 - 1), false);
  if (o.signal !== undefined && !isSignal(o.signal)) throw typeError(`signal: expected an AbortSignal, got ${describe(o.signal)}`);

  const settings = {
    mode, maxLength, maxNewTokens, minLength, minNewTokens, numBeams, lengthPenalty, earlyStopping: es,
    numReturnSequences, noRepeatNgramSize, repetitionPenalty, badWordsIds, forcedBosTokenId, forcedEosTokenIds,
    renormalizeLogits: c.renormalize_logits,
    decoderStartTokenId, eosTokenIds, stopTokenIds, padTokenId, doSample, temperature, topK, topP, seed,
    signal: o.signal ?? null,
  };
  // Where each id came from, for the messages of checks that need the vocabulary (run time).
  Object.defineProperty(settings, SETTINGS, {
    value: Object.freeze({
      badWordsIds: src.bad_words_ids, forcedBosTokenId: src.forced_bos_token_id, forcedEosTokenIds: src.forced_eos_token_id,
      eosTokenIds: src.eos_token_id, stopTokenIds: stopSrc, padTokenId: padSrc, decoderStartTokenId: startSrc,
      maxLength: maxNewTokens === null ? src.max_length : src.max_new_tokens,
    }),
  });
  if (badWordsIds) { badWordsIds.forEach(Object.freeze); Object.freeze(badWordsIds); }
  for (const a of [forcedEosTokenIds, eosTokenIds, stopTokenIds]) if (a) Object.freeze(a);
  return Object.freeze(settings);
}

/**
 * A model's own additions to resolveGenerationConfig's settings (Whisper's: speech_generate.js), in a new frozen
 * settings object: `promptAsGiven` (the decoder prompt is not given the start token in front) and
 * `extraProcessors(run)` (processors after generate()'s own).
 */
export function withModelSettings(settings, { promptAsGiven = false, extraProcessors = null } = {}) {
  const out = { ...settings, promptAsGiven, extraProcessors };
  Object.defineProperty(out, SETTINGS, { value: settings[SETTINGS] });
  return Object.freeze(out);
}

/**
 * resolveGenerationConfig's result: the options' fields (eosTokenIds and forcedEosTokenIds as arrays), the search
 * (`mode`), the ids the search stops at (`stopTokenIds`: eosTokenIds, else the model's own), the pad it fills with
 * (`padTokenId`: pad_token_id, else the first eos id, else the model's own pad) and the decoder's start token
 * (decoder_start_token_id, else bos_token_id). maxLength and minLength are as given: generation adds the decoder
 * prompt's length to maxNewTokens / minNewTokens when those are set.
 * @typedef {{mode: 'greedy'|'sample'|'beam', maxLength: number, maxNewTokens: number|null, minLength: number,
 *   minNewTokens: number|null, numBeams: number, lengthPenalty: number, earlyStopping: boolean|'never',
 *   numReturnSequences: number, noRepeatNgramSize: number, repetitionPenalty: number,
 *   badWordsIds: number[][]|null, forcedBosTokenId: number|null, forcedEosTokenIds: number[]|null,
 *   decoderStartTokenId: number, eosTokenIds: number[]|null, stopTokenIds: number[]|null, padTokenId: number|null,
 *   doSample: boolean,
 *   temperature: number, topK: number|null, topP: number, seed: number, signal: AbortSignal|null}} Seq2SeqSettings
 */
