// Generation for encoder–decoder models, the shared generation module's seq2seq half (generation.js is the causal
// LMs' half): the search part of Hugging Face transformers v4.40.2's generate() over a decoder `stepper` — the
// effective settings from generation_config.json, config.json and the user's options with transformers' precedence
// (resolveGenerationConfig), then greedy search, sampling (seeded, sampling.js) and beam search (_beam_search +
// BeamSearchScorer + BeamHypotheses, step for step), with the logits processors in _get_logits_processor's order
// (logits_process.js) and torch's float32 log_softmax and topk tie order (torch_f32.js). Greedy and sampling also
// stream one source's tokens (streamSeq2Seq). Not here: the encoder and the decoder's forward (the stepper),
// tokenizers, beam sampling, group and constrained beam search, contrastive and assisted decoding.
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkOptions } from './checks.js';
import { SeededRandom } from './sampling.js';
import { nextTask } from './next_task.js';
import { logSoftmaxF32, softmaxF32, topkLargest } from './torch_f32.js';
import { logitsProcessors, logitsWarpers } from './logits_process.js';

export { logitsProcessors, logitsWarpers } from './logits_process.js';
export { logSoftmaxF32, softmaxF32, topkLargest, expf, logf } from './torch_f32.js';

/**
 * A decoder that generate drives, one position at a time. The sources are encoded already (B of them);
 * `begin(rows, capacity)` makes a decoding state of `rows` = B × k sequences, k consecutive rows per source (k =
 * numBeams for beam search, numReturnSequences for sampling, else 1: row r belongs to source floor(r / k)), each
 * holding up to `capacity` decoder positions. `step` feeds one token per row and returns the logits of the next
 * position, (rows, vocabSize) float32, which generate reads before its next call. `reorder` (beam search only) makes
 * row r continue the history of row parents[r] (a row of the same source). `free` releases the state; generate calls
 * it exactly once for every state it began, on every path (end, error, abort). A stepper with `logSoftmax: true`
 * gives beam search each row's log-probabilities when step's third argument asks ({ logSoftmax: true }): the model's
 * own log_softmax (the native one, in double, rounded to float32) instead of torch's float32 arithmetic here.
 * @typedef {{vocabSize: number, logSoftmax?: boolean, begin: (rows: number, capacity: number) => object,
 *   step: (state: object, tokens: Int32Array, options?: {logSoftmax: boolean}) => Float32Array,
 *   reorder?: (state: object, parents: Int32Array) => void, free: (state: object) => void}} Seq2SeqStepper
 */

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

const SETTINGS = Symbol('seq2seq settings');

const isPlainObject = (x) => x !== null && typeof x === 'object' && !Array.isArray(x) && !ArrayBuffer.isView(x);
const isSignal = (s) => s !== null && typeof s === 'object' && typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function';

function show(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  if (Array.isArray(v)) {
    const text = JSON.stringify(v);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  }
  return describe(v);
}

/** An error about one setting: a TypeError/RangeError naming the option, or ERR_INVALID_ARGUMENT naming file and key. */
function settingError(src, kind, expected, got) {
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

// ---- one run: the stepper, the decoder prompt, the lengths ------------------------------------------------------

function checkStepper(stepper, beams) {
  if (stepper === null || typeof stepper !== 'object') throw typeError(`stepper: expected an object { vocabSize, begin, step, reorder, free }, got ${describe(stepper)}`);
  for (const f of beams ? ['begin', 'step', 'reorder', 'free'] : ['begin', 'step', 'free']) {
    if (typeof stepper[f] !== 'function') throw typeError(`stepper.${f}: expected a function, got ${describe(stepper[f])}`);
  }
  const V = stepper.vocabSize;
  if (typeof V !== 'number' || !Number.isInteger(V)) throw typeError(`stepper.vocabSize: expected an integer, got ${show(V)}`);
  if (V < 1 || V > 2 ** 31 - 1) throw rangeError(`stepper.vocabSize: expected an integer in [1, 2^31 - 1], got ${V}`);
  return V;
}

function checkIds(ids, src, V) {
  for (const id of ids) {
    if (id >= V) {
      throw settingError(src, 'range', `token ids in [0, ${V}) (the stepper's vocabSize)`, id);
    }
  }
}

/** The decoder prompt of each source (decoderInputIds, with the start token put first as transformers does). */
function decoderPrompts(s, given, batchSize, V) {
  if (given === undefined) return Array.from({ length: batchSize }, () => [s.decoderStartTokenId]);
  const asIds = (a, name) => {
    if (!Array.isArray(a) && !(a instanceof Int32Array)) throw typeError(`${name}: expected an array or Int32Array of token ids, got ${describe(a)}`);
    if (a.length === 0) throw rangeError(`${name}: expected at least one token id, got none`);
    return Array.from(a, (x, i) => {
      if (typeof x !== 'number' || !Number.isInteger(x)) throw typeError(`${name}[${i}]: expected an integer token id, got ${show(x)}`);
      if (x < 0 || x >= V) throw rangeError(`${name}[${i}]: expected a token id in [0, ${V}), got ${x}`);
      return x;
    });
  };
  let rows;
  if (Array.isArray(given) && given.length > 0 && (Array.isArray(given[0]) || given[0] instanceof Int32Array)) {
    if (given.length !== batchSize) throw rangeError(`decoderInputIds: expected one prompt per source (${batchSize}), got ${given.length}`);
    rows = given.map((a, b) => asIds(a, `decoderInputIds[${b}]`));
    if (rows.some((r) => r.length !== rows[0].length)) throw rangeError(`decoderInputIds: the sources' prompts must have one length, got ${rows.map((r) => r.length).join(', ')}`);
  } else {
    const one = asIds(given, 'decoderInputIds');
    rows = Array.from({ length: batchSize }, () => one.slice());
  }
  // _prepare_decoder_input_ids_for_generation: prepended when no row starts with it.
  if (rows.every((r) => r[0] !== s.decoderStartTokenId)) rows = rows.map((r) => [s.decoderStartTokenId, ...r]);
  return rows;
}

function prepareRun(stepper, settings, inputs, where) {
  if (settings === null || typeof settings !== 'object' || !settings[SETTINGS]) {
    throw typeError(`settings: expected resolveGenerationConfig()'s result, got ${describe(settings)}`);
  }
  const s = settings, names = s[SETTINGS];
  const V = checkStepper(stepper, s.mode === 'beam');
  const o = checkOptions(inputs, ['batchSize', 'decoderInputIds'], where);
  let batchSize = 1;
  if (o.batchSize !== undefined) {
    if (typeof o.batchSize !== 'number' || !Number.isInteger(o.batchSize)) throw typeError(`batchSize: expected an integer, got ${show(o.batchSize)}`);
    if (o.batchSize < 1 || o.batchSize > 1 << 20) throw rangeError(`batchSize: expected an integer in [1, 2^20], got ${o.batchSize}`);
    batchSize = o.batchSize;
  }
  checkIds([s.decoderStartTokenId], names.decoderStartTokenId, V);
  if (s.padTokenId !== null) checkIds([s.padTokenId], names.padTokenId, V);
  if (s.eosTokenIds) checkIds(s.eosTokenIds, names.eosTokenIds, V);
  if (s.stopTokenIds) checkIds(s.stopTokenIds, names.stopTokenIds, V);
  if (s.forcedBosTokenId !== null) checkIds([s.forcedBosTokenId], names.forcedBosTokenId, V);
  if (s.forcedEosTokenIds) checkIds(s.forcedEosTokenIds, names.forcedEosTokenIds, V);
  if (s.badWordsIds) checkIds(s.badWordsIds.flat(), names.badWordsIds, V);
  const prompts = decoderPrompts(s, o.decoderInputIds, batchSize, V);
  const promptLength = prompts[0].length;
  // _prepare_generated_length: max_new_tokens and min_new_tokens count from the decoder prompt.
  const maxLength = s.maxNewTokens !== null ? s.maxNewTokens + promptLength : s.maxLength;
  const minLength = s.minNewTokens !== null ? s.minNewTokens + promptLength : s.minLength;
  if (promptLength >= maxLength) {
    throw settingError(names.maxLength, 'range', `a length past the decoder prompt's ${promptLength} tokens (start token included)`, s.maxNewTokens ?? s.maxLength);
  }
  const k = s.mode === 'beam' ? s.numBeams : s.mode === 'sample' ? s.numReturnSequences : 1;
  const run = { V, vocabSize: V, batchSize, k, rows: batchSize * k, prompts, promptLength, maxLength, minLength };
  // A stepper that offers log-probabilities (stepper.logSoftmax: the model's own log_softmax, to float32 rounding)
  // gives them to beam search; else log_softmax here, as torch computes it in float32.
  run.logSoftmax = s.mode === 'beam' && stepper.logSoftmax === true;
  run.processors = logitsProcessors(s, run);
  run.warpers = s.mode === 'sample' ? logitsWarpers(s) : [];
  return run;
}

function callStep(stepper, state, tokens, run) {
  const logits = run.logSoftmax ? stepper.step(state, tokens, { logSoftmax: true }) : stepper.step(state, tokens);
  if (!(logits instanceof Float32Array) || logits.length !== run.rows * run.V) {
    throw new AttnWasmError('ERR_SHAPE', `stepper.step: expected a Float32Array of rows × vocabSize = ${run.rows} × ${run.V} logits, got ${ArrayBuffer.isView(logits) ? `a ${describe(logits)} of ${logits.length}` : describe(logits)}`);
  }
  return logits;
}

/** A turn for the event loop between steps; a signal that fired ends the run with its reason. */
async function turn(signal) {
  await nextTask();
  if (signal?.aborted) throw signal.reason;
}

/** The decoder ids of every row (rows, maxLength), each row's prompt first; row r holds source floor(r / k)'s. */
function promptBuffer(run) {
  const ids = new Int32Array(run.rows * run.maxLength);
  for (let r = 0; r < run.rows; r++) ids.set(run.prompts[Math.floor(r / run.k)], r * run.maxLength);
  return ids;
}

/** Feeds the prompt, one position per step (the stepper takes one token per row); the logits after its last token. */
async function feedPrompt(stepper, state, ids, run, signal) {
  const tokens = new Int32Array(run.rows);
  let logits;
  for (let p = 0; p < run.promptLength; p++) {
    if (p > 0) await turn(signal);
    for (let r = 0; r < run.rows; r++) tokens[r] = ids[r * run.maxLength + p];
    logits = callStep(stepper, state, tokens, run);
  }
  return logits;
}

// ---- greedy search and sampling (_greedy_search, _sample) ---------------------------------------------------------

/** torch.argmax of one row: the first NaN if any, else the first largest. */
function argmax(scores) {
  let best = 0;
  for (let i = 0; i < scores.length; i++) {
    const v = scores[i];
    if (v !== v) return i;
    if (v > scores[best]) best = i;
  }
  return best;
}

/**
 * torch.multinomial(softmax(scores), 1) with the project's seeded generator instead of torch's: the same
 * distribution (softmax as torch computes it), not the same draws as torch for a seed.
 */
function drawToken(scores, random, scratch) {
  const probs = softmaxF32(scores, scores.length, scratch);
  let total = 0;
  for (let i = 0; i < probs.length; i++) total += probs[i];
  if (!(total > 0) || !Number.isFinite(total)) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'sampling: the probabilities after the processors and warpers are not a distribution (every score -inf, or a NaN): torch.multinomial refuses them too');
  }
  let u = random.next() * total, last = -1;
  for (let i = 0; i < probs.length; i++) {
    const p = probs[i];
    if (p > 0) { last = i; u -= p; if (u < 0) return i; }
  }
  return last;  // rounding left u >= 0: the last possible id
}

const rowSeed = (seed, j) => (Number.isSafeInteger(seed + j) ? seed + j : seed - j);

/**
 * Greedy search or sampling over all rows, a step at a time: the processors (and, sampling, the warpers) on each
 * unfinished row, argmax or a draw, finished rows padded; a row finishes at an eos id or at maxLength.
 */
class DecodeRun {
  constructor(stepper, s, run) {
    this.stepper = stepper; this.s = s; this.run = run;
    this.ids = promptBuffer(run);
    this.len = run.promptLength;
    this.unfinished = new Uint8Array(run.rows).fill(1);
    this.tokens = new Int32Array(run.rows);
    this.scores = new Float32Array(run.V);
    this.scratch = new Float32Array(run.V);
    this.eos = s.stopTokenIds ? new Set(s.stopTokenIds) : null;
    // One generator per row, seeded by the row's place among its source's rows: a source's draws do not depend on
    // the other sources of the batch.
    this.random = s.mode === 'sample' ? Array.from({ length: run.rows }, (_, r) => new SeededRandom(rowSeed(s.seed, r % run.k))) : null;
    this.state = null;
  }

  open() { this.state = this.stepper.begin(this.run.rows, this.run.maxLength); }

  close() {
    if (this.state !== null) { const st = this.state; this.state = null; this.stepper.free(st); }
  }

  /** Chooses every row's next token from `logits`; returns whether any row is still unfinished. */
  choose(logits) {
    const { run, s, ids, len, scores, tokens } = this;
    const V = run.V, L = run.maxLength;
    for (let r = 0; r < run.rows; r++) {
      let t;
      if (!this.unfinished[r]) t = s.padTokenId;  // finished rows: pad (only with an eos, so pad is set)
      else {
        scores.set(logits.subarray(r * V, (r + 1) * V));
        const row = ids.subarray(r * L, r * L + len);
        for (const p of run.processors) p.apply(row, len, scores);
        if (this.random) {
          for (const w of run.warpers) w.apply(row, len, scores);
          t = drawToken(scores, this.random[r], this.scratch);
        } else t = argmax(scores);
      }
      tokens[r] = t;
      ids[r * L + len] = t;
    }
    this.len++;
    let any = false;
    for (let r = 0; r < run.rows; r++) {
      if (this.unfinished[r] && (this.len >= L || (this.eos !== null && this.eos.has(tokens[r])))) this.unfinished[r] = 0;
      any ||= this.unfinished[r] === 1;
    }
    return any;
  }

  step() { return callStep(this.stepper, this.state, this.tokens, this.run); }

  sequences() {
    return Array.from({ length: this.run.rows }, (_, r) => this.ids.slice(r * this.run.maxLength, r * this.run.maxLength + this.len));
  }
}

// ---- beam search (_beam_search, BeamSearchScorer, BeamHypotheses) -----------------------------------------------

/**
 * BeamHypotheses: the n best finished hypotheses of one source. A hypothesis's score is its summed log-probability
 * (a float32 beam score, as a Python float) divided by generated_len ** length_penalty in double, generated_len
 * being the tokens after the decoder prompt including the eos that ended it (process passes cur_len − prompt with
 * cur_len = input_ids length + 1; finalize passes the length − prompt of unfinished beams, which have no eos).
 */
class BeamHypotheses {
  constructor(numBeams, lengthPenalty, earlyStopping, maxLength) {
    this.numBeams = numBeams; this.lengthPenalty = lengthPenalty; this.earlyStopping = earlyStopping;
    this.maxLength = maxLength;
    this.beams = [];  // [{score, tokens}] in the order transformers' list holds them
    this.worst = 1e9;
  }

  add(tokens, sumLogprobs, generatedLen) {
    const score = sumLogprobs / generatedLen ** this.lengthPenalty;
    if (this.beams.length < this.numBeams || score > this.worst) {
      this.beams.push({ score, tokens });
      if (this.beams.length > this.numBeams) {
        // sorted([(s, idx) ...]): by score, then by place; the first goes, the second's score is the new worst.
        const order = this.beams.map((b, i) => [b.score, i]).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
        this.beams.splice(order[0][1], 1);
        this.worst = order[1][0];
      } else this.worst = Math.min(score, this.worst);
    }
  }

  /** is_done: early_stopping true stops at numBeams hypotheses; false and 'never' compare the best reachable score. */
  isDone(bestSumLogprobs, curLen, promptLength) {
    if (this.beams.length < this.numBeams) return false;
    if (this.earlyStopping === true) return true;
    const lp = this.lengthPenalty;
    const denominator = this.earlyStopping === 'never' && lp > 0 ? this.maxLength - promptLength : curLen - promptLength;
    return this.worst >= bestSumLogprobs / denominator ** lp;
  }
}

async function beamSearch(stepper, s, run) {
  const { batchSize: B, V, promptLength } = run;
  const nb = s.numBeams, rows = B * nb, L = run.maxLength;
  const eos = s.stopTokenIds, eosSet = eos ? new Set(eos) : null;
  // torch.topk over numBeams × V candidates per source: max(2, 1 + number of eos ids) × numBeams of them.
  const K = Math.max(2, 1 + (eos ? eos.length : 0)) * nb;
  if (K > nb * V) throw rangeError(`numBeams: beam search ranks ${K} candidates per source, more than numBeams × vocabSize = ${nb * V}`);
  let ids = promptBuffer(run), spare = new Int32Array(ids.length);
  let len = promptLength;
  const beamScores = new Float32Array(rows);
  for (let r = 0; r < rows; r++) beamScores[r] = r % nb === 0 ? 0 : -1e9;
  const hyps = Array.from({ length: B }, () => new BeamHypotheses(nb, s.lengthPenalty, s.earlyStopping, L));
  const done = new Uint8Array(B);
  const scores = new Float32Array(rows * V);
  const nextScores = new Float32Array(rows), nextTokens = new Int32Array(rows), nextIndices = new Int32Array(rows);
  const fround = Math.fround;

  if (s.signal?.aborted) throw s.signal.reason;
  const state = stepper.begin(rows, L);
  try {
    let logits = await feedPrompt(stepper, state, ids, run, s.signal);
    for (;;) {
      // scores = log_softmax(logits) → processors → + beam_scores, all float32
      if (run.logSoftmax) scores.set(logits);
      else logSoftmaxF32(logits, V, scores);
      for (let r = 0; r < rows; r++) {
        const row = scores.subarray(r * V, (r + 1) * V), history = ids.subarray(r * L, r * L + len);
        for (const p of run.processors) p.apply(history, len, row);
        const add = beamScores[r];
        for (let v = 0; v < V; v++) row[v] = fround(row[v] + add);
      }
      // BeamSearchScorer.process, source by source
      for (let b = 0; b < B; b++) {
        const at = b * nb;
        if (done[b]) {
          if (s.padTokenId === null) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `padTokenId: a source whose beams are done is padded, and no pad id is set (transformers refuses it too)`);
          // transformers gives a finished source's beams score 0, pad, and parent row 0 of the whole batch; the
          // parent here is the source's own first row (those rows' outputs are never used again either way).
          for (let j = 0; j < nb; j++) { nextScores[at + j] = 0; nextTokens[at + j] = s.padTokenId; nextIndices[at + j] = at; }
          continue;
        }
        const { values, indices } = topkLargest(scores.subarray(at * V, (at + nb) * V), K);
        let beam = 0, best = -Infinity;  // next_scores[batch].max(): NaN if any is NaN
        for (let i = 0; i < K; i++) {
          const v = values[i];
          if (v !== v) { best = NaN; break; }
          if (v > best) best = v;
        }
        for (let rank = 0; rank < K; rank++) {
          const token = indices[rank] % V, parent = at + Math.floor(indices[rank] / V), score = values[rank];
          if (eosSet !== null && eosSet.has(token)) {
            if (rank >= nb) continue;  // an eos below the top numBeams does not end a hypothesis
            hyps[b].add(ids.slice(parent * L, parent * L + len), score, len + 1 - promptLength);
          } else {
            nextScores[at + beam] = score; nextTokens[at + beam] = token; nextIndices[at + beam] = parent;
            beam++;
          }
          if (beam === nb) break;
        }
        if (beam < nb) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `beam search: fewer than numBeams (${nb}) candidates that are not an eos id among the top ${K}`);
        if (!done[b] && hyps[b].isDone(best, len + 1, promptLength)) done[b] = 1;
      }
      // input_ids = cat(input_ids[beam_idx], beam_next_tokens)
      for (let r = 0; r < rows; r++) {
        spare.set(ids.subarray(nextIndices[r] * L, nextIndices[r] * L + len), r * L);
        spare[r * L + len] = nextTokens[r];
      }
      [ids, spare] = [spare, ids];
      beamScores.set(nextScores);
      len++;
      let allEos = eosSet !== null;
      for (let r = 0; r < rows && allEos; r++) allEos = eosSet.has(ids[r * L + len - 1]);
      if (done.every((d) => d === 1) || len >= L || allEos) break;
      await turn(s.signal);
      stepper.reorder(state, nextIndices.slice());
      logits = callStep(stepper, state, nextTokens, run);
    }
  } finally {
    stepper.free(state);
  }

  // BeamSearchScorer.finalize
  for (let b = 0; b < B; b++) {
    if (done[b]) continue;
    for (let j = 0; j < nb; j++) {
      const r = b * nb + j;
      hyps[b].add(ids.slice(r * L, r * L + len), beamScores[r], len - promptLength);
    }
  }
  const best = [];
  for (let b = 0; b < B; b++) {
    const sorted = hyps[b].beams.slice().sort((x, y) => (x.score < y.score ? -1 : x.score > y.score ? 1 : 0));  // stable, as sorted()
    for (let j = 0; j < s.numReturnSequences; j++) best.push(sorted.pop());
  }
  const lengths = best.map((h) => h.tokens.length);
  const longest = Math.max(...lengths), shortest = Math.min(...lengths);
  const width = Math.min(longest + 1, L);
  if (shortest !== longest && s.padTokenId === null) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'beam search: sequences of different lengths need padTokenId');
  const sequences = best.map((h) => {
    const out = new Int32Array(width).fill(s.padTokenId ?? 0);
    out.set(h.tokens);
    if (h.tokens.length < width) out[h.tokens.length] = eos[0];  // transformers writes the first eos id, whichever ended it
    return out;
  });
  return { sequences, scores: Float32Array.from(best, (h) => h.score) };
}

async function decodeSearch(stepper, s, run) {
  const d = new DecodeRun(stepper, s, run);
  if (s.signal?.aborted) throw s.signal.reason;
  d.open();
  try {
    let logits = await feedPrompt(stepper, d.state, d.ids, run, s.signal);
    while (d.choose(logits)) {
      await turn(s.signal);
      logits = d.step();
    }
  } finally {
    d.close();
  }
  return { sequences: d.sequences(), scores: null };
}

/**
 * Runs generate()'s search for encoder–decoders, as transformers 4.40 does for the settings' mode: greedy search,
 * sampling (numReturnSequences rows per source; the project's seeded generator, so the same seed gives the same
 * tokens here every time but not torch's tokens), or beam search. The sequences are transformers' `sequences`: the
 * decoder prompt (the start token first) and the generated tokens, every row one length (finished rows padded with
 * padTokenId; beam search's hypotheses closed with the first eos id and padded); `scores` is beam search's
 * `sequences_scores` (null otherwise). The event loop gets a turn between steps; an AbortSignal that fires ends it
 * with the signal's reason; a step's error is rethrown. The stepper's state is freed on every path.
 * @param {Seq2SeqStepper} stepper
 * @param {Readonly<Seq2SeqSettings>} settings resolveGenerationConfig's result
 * @param {{batchSize?: number, decoderInputIds?: ArrayLike<number>|ArrayLike<number>[]}} [inputs] the number of
 *   sources the stepper's encoder holds (default 1), and a decoder prompt (shared, or one per source, one length;
 *   the start token is put first when no prompt starts with it); default: the start token alone
 * @returns {Promise<{sequences: Int32Array[], scores: Float32Array|null}>} batchSize × (numReturnSequences) rows,
 *   source by source; new arrays the caller owns
 */
export async function generateSeq2Seq(stepper, settings, inputs) {
  const run = prepareRun(stepper, settings, inputs, 'generateSeq2Seq');
  return settings.mode === 'beam' ? beamSearch(stepper, settings, run) : decodeSearch(stepper, settings, run);
}

// ---- streaming (one source, greedy or sampling) -----------------------------------------------------------------

/**
 * One source's generation as an async iterator of `{ id, index }` tokens (greedy or sampling), like generation.js's
 * Generation: steps run one at a time in order, with a turn for the event loop between them; the eos token that
 * ends it is not yielded (it is in `sequence`); `break` or return() frees the state; an AbortSignal that fires ends
 * it with stopReason 'aborted'. Made by streamSeq2Seq.
 */
export class Seq2SeqGeneration {
  constructor(stepper, settings, run) {
    this._d = new DecodeRun(stepper, settings, run);
    this._signal = settings.signal;
    this._queue = Promise.resolve();
    this._started = false;
    /** @readonly the tokens generated so far (the eos that ended it not included). */
    this.ids = [];
    /** @readonly the sampling seed (the one given or drawn). */
    this.seed = settings.seed;
    /** 'stop' (an eos id) | 'length' (maxLength) | 'aborted' | 'error', or null while running. */
    this.stopReason = null;
  }

  /** The decoder's tokens so far, as transformers' `sequences` row: the prompt, the tokens, the eos if it stopped on one. */
  get sequence() { return this._d.ids.slice(0, this._d.len); }

  [Symbol.asyncIterator]() { return this; }

  next() {
    const step = this._queue.then(() => this._step());
    this._queue = step.catch(() => {});
    return step;
  }

  /** Ends it now (what `break` in a for-await loop calls): frees the state. */
  async return() {
    if (!this.stopReason) this.stopReason = 'aborted';
    this._d.close();
    return { done: true, value: undefined };
  }

  _end(reason) {
    if (!this.stopReason) this.stopReason = reason;
    this._d.close();
    return { done: true, value: undefined };
  }

  async _step() {
    if (this.stopReason) return { done: true, value: undefined };
    const d = this._d;
    if (this._signal?.aborted) return this._end('aborted');
    if (!d.unfinished[0]) return this._end('length');
    let logits;
    try {
      if (!this._started) {
        this._started = true;
        d.open();
        logits = await feedPrompt(d.stepper, d.state, d.ids, d.run, null);
      } else {
        await nextTask();
        if (this.stopReason) return { done: true, value: undefined };
        if (this._signal?.aborted) return this._end('aborted');
        logits = d.step();
      }
      d.choose(logits);
    } catch (e) {
      this.stopReason = 'error';
      d.close();
      throw e;
    }
    const id = d.tokens[0];
    if (d.eos !== null && d.eos.has(id)) return this._end('stop');
    const value = { id, index: this.ids.length };
    this.ids.push(id);
    if (!d.unfinished[0]) d.close();  // maxLength reached: the next call reports 'length'
    return { done: false, value };
  }
}

/**
 * Streams one source's tokens (greedy search or sampling; numReturnSequences 1): the tokens generateSeq2Seq would
 * put after the decoder prompt, as they come. The stepper's state begins at the first next() and is freed at the end,
 * on break/return(), on abort and on a step's error.
 * @param {Seq2SeqStepper} stepper the stepper of one encoded source
 * @param {Readonly<Seq2SeqSettings>} settings resolveGenerationConfig's result
 * @param {{decoderInputIds?: ArrayLike<number>}} [inputs] a decoder prompt (default: the start token)
 * @returns {Seq2SeqGeneration} (the caller owns it)
 */
export function streamSeq2Seq(stepper, settings, inputs) {
  checkOptions(inputs, ['decoderInputIds'], 'streamSeq2Seq');
  if (settings?.[SETTINGS] && settings.mode === 'beam') throw rangeError(`numBeams: streaming runs greedy search or sampling (numBeams 1), got ${settings.numBeams}; use generateSeq2Seq for beam search`);
  if (settings?.[SETTINGS] && settings.numReturnSequences !== 1) throw rangeError(`numReturnSequences: streaming gives one sequence, got ${settings.numReturnSequences}`);
  const run = prepareRun(stepper, settings, inputs, 'streamSeq2Seq');
  return new Seq2SeqGeneration(stepper, settings, run);
}
