// Whisper's generate for one 30-second window per source, as transformers v4.40.2's
// WhisperForConditionalGeneration.generate runs its short form (generation_whisper.py): the generation config with
// the fields Whisper takes over (suppress_tokens, begin_suppress_tokens, forced_decoder_ids) cleared before
// GenerationMixin's settings are resolved; the init tokens <|startoftranscript|> <|lang|> <|task|> [<|notimestamps|>]
// (speech/init_tokens.js), the language detected from the first step's logits when none is given; prompt_ids
// (<|startofprev|> …) before them; Whisper's processors after generate()'s own (speech/whisper_processors.js), with
// begin_index = the init tokens' count (the prompt not counted, as in 4.40.2); then the shared search
// (seq2seq_generate.js: greedy, sampling, beams). The language detection's step is the generation's first: its
// state is kept and its logits reused when the decoder prompt starts with <|startoftranscript|>.
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkOptions } from './checks.js';
import { resolveGenerationConfig, withModelSettings, SEQ2SEQ_OPTIONS } from './seq2seq_settings.js';
import { generateSeq2Seq, streamSeq2Seq } from './seq2seq_generate.js';
import { whisperInitTokens, needsLanguageDetection, detectLanguageId, languageProbabilities, decoderPrompt } from './speech/init_tokens.js';
import { whisperLogitsProcessors } from './speech/whisper_processors.js';
import { tokenTimestamps } from './speech/alignment.js';

/** generate()'s options: GenerationMixin's (seq2seq's) and Whisper's own, camelCase of transformers' names. */
export const SPEECH_OPTIONS = Object.freeze([...SEQ2SEQ_OPTIONS.filter((k) => k !== 'decoderStartTokenId'),
  'language', 'task', 'returnTimestamps', 'promptIds', 'isMultilingual']);

/**
 * The generation config Whisper reads: generation_config.json, else (an old folder) the generation fields of
 * config.json, as transformers' GenerationConfig.from_model_config builds it.
 */
export function whisperGenerationConfig(generationConfig, config) {
  if (generationConfig != null) return generationConfig;
  const c = config ?? {};
  const out = {};
  for (const k of ['decoder_start_token_id', 'bos_token_id', 'eos_token_id', 'pad_token_id', 'max_length',
    'suppress_tokens', 'begin_suppress_tokens', 'forced_decoder_ids']) if (c[k] !== undefined) out[k] = c[k];
  return out;
}

/** The prompt's ids (promptIds: an array or Int32Array of token ids), checked, as a plain array. */
function promptIdsOf(v, V) {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) && !(v instanceof Int32Array)) throw typeError(`promptIds: expected an array or Int32Array of token ids (getPromptIds(text)), got ${describe(v)}`);
  return Array.from(v, (x, i) => {
    if (!Number.isInteger(x)) throw typeError(`promptIds[${i}]: expected an integer token id, got ${describe(x)}`);
    if (x < 0 || x >= V) throw rangeError(`promptIds[${i}]: expected a token id in [0, ${V}), got ${x}`);
    return x;
  });
}

/**
 * Plans one generation over `B` windows: the settings, the decoder prompt, Whisper's processors. `detect(rows)` is
 * called when the language must be detected: it returns the first step's logits for every source (B × V).
 * @returns {{settings: object, init: number[], prompt: number[], language: number|null, returnTimestamps: boolean | 'word'}}
 */
export function planSpeechGeneration(model, B, options, detect) {
  const o = checkOptions(options, SPEECH_OPTIONS, 'generate');
  const { language, task, returnTimestamps, promptIds, isMultilingual, ...rest } = o;
  // 'word' is what the ASR pipeline passes for word timestamps: truthy for the init tokens (no <|notimestamps|>),
  // but not `True` for _retrieve_logit_processors, so no WhisperTimeStampLogitsProcessor (short form).
  if (returnTimestamps !== undefined && typeof returnTimestamps !== 'boolean' && returnTimestamps !== 'word') {
    throw typeError(`returnTimestamps: expected true, false or 'word', got ${describe(returnTimestamps)}`);
  }
  const gc = whisperGenerationConfig(model.generationConfig, model.config);
  const base = { ...gc, suppress_tokens: null, begin_suppress_tokens: null, forced_decoder_ids: null };
  const settings = resolveGenerationConfig(base, model.config, rest);
  const prompt0 = promptIdsOf(promptIds, model.vocabSize);
  const initOptions = { language: language ?? null, task: task ?? null, returnTimestamps: returnTimestamps ?? false, modelConfig: model.config };
  if (isMultilingual !== undefined) initOptions.isMultilingual = isMultilingual;
  let detected = null;
  if (needsLanguageDetection(gc, initOptions)) {
    const logits = detect();
    const V = model.vocabSize;
    const ids = Array.from({ length: B }, (_, b) => detectLanguageId(logits.subarray(b * V, (b + 1) * V), gc.lang_to_id));
    if (new Set(ids).size > 1) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', "language: Multiple languages detected when trying to predict the most likely target language for transcription. It is currently not supported to transcribe to different languages in a single batch. Please make sure to either force a single language by passing `language='...'` or make sure all input audio is of the same language.");
    }
    detected = ids[0];
  }
  const init = whisperInitTokens(gc, { ...initOptions, detectLanguage: () => detected });
  const prompt = decoderPrompt(init, prompt0);
  const maxNew = settings.maxNewTokens ?? 0;
  if (maxNew + prompt.length > model.maxTargetPositions) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `maxNewTokens: The length of \`decoder_input_ids\` equal \`prompt_ids\` plus special start tokens is ${prompt.length}, and the \`max_new_tokens\` is ${maxNew}. Thus, the combined length of \`decoder_input_ids\` and \`max_new_tokens\` is: ${maxNew + prompt.length}. This exceeds the \`max_target_positions\` of the Whisper model: ${model.maxTargetPositions}. You should either reduce the length of your prompt, or reduce the value of \`max_new_tokens\`, so that their combined length is less than ${model.maxTargetPositions}.`);
  }
  const rt = initOptions.returnTimestamps;
  const whisper = withModelSettings(settings, {
    promptAsGiven: true,
    extraProcessors: () => whisperLogitsProcessors(gc, { beginIndex: init.length, returnTimestamps: rt }),
  });
  return { settings: whisper, init, prompt, language: detected, returnTimestamps: rt };
}

/** Rows per source of a search: beams, samples, or 1. */
const rowsPerSource = (s) => (s.mode === 'beam' ? s.numBeams : s.mode === 'sample' ? s.numReturnSequences : 1);

/**
 * A stepper whose state may be begun before the search (for language detection) and whose first step's logits
 * are then reused: begin() hands the search that state, the first step() (the prompt's first token, the same
 * <|startoftranscript|> on every row) returns the logits already computed.
 */
function primedStepper(inner) {
  let state = null, first = null, handed = false;
  return {
    vocabSize: inner.vocabSize,
    logSoftmax: inner.logSoftmax,
    logSoftmaxRow: inner.logSoftmaxRow,
    reorder: inner.reorder,
    alignment: inner.alignment,
    /** Begins the state now and steps <|startoftranscript|>: the logits (rows × V). */
    prime(rows, capacity, sot) {
      state = inner.begin(rows, capacity);
      first = inner.step(state, new Int32Array(rows).fill(sot));
      return first;
    },
    begin(rows, capacity) {
      if (state === null) return inner.begin(rows, capacity);
      handed = true;
      return state;
    },
    step(st, tokens, o) {
      if (first !== null && st === state) {
        const f = first.slice();
        first = null;
        // Beam search asks every step for log-probabilities; this first one's are never read (the detected
        // language's token follows it in the prompt), but they are given as the native step gives them.
        if (o?.logSoftmax) for (let r = 0; r < f.length / inner.vocabSize; r++) inner.logSoftmaxRow(f.subarray(r * inner.vocabSize, (r + 1) * inner.vocabSize));
        return f;
      }
      return inner.step(st, tokens, o);
    },
    free(st) { if (st === state) state = null; inner.free(st); },
    /** Frees a primed state the search never took. */
    release() { if (state !== null && !handed) { const st = state; state = null; inner.free(st); } },
  };
}

/**
 * One generation over input features (B, M, frames): { plan, run() } where run() is the search (beams or batches: a
 * Promise of { sequences, scores }; stream: an async iterator for one source greedy or sampled). With `times`
 * (alignment.js's settings and numFrames) the search's state is held after it ends, the rows' token times computed
 * against it (run() then also gives tokenTimestamps: a Float32Array per row), and freed.
 */
export function speechGeneration(model, features, options, { stream = false, times = null } = {}) {
  const B = features.shape[0];
  const stepper = primedStepper(model._stepper(features));
  const gc = whisperGenerationConfig(model.generationConfig, model.config);
  let plan;
  try {
    plan = planSpeechGeneration(model, B, options, () => {
      const s0 = resolveGenerationConfig({ ...gc, suppress_tokens: null, begin_suppress_tokens: null, forced_decoder_ids: null }, model.config,
        pickSeq2Seq(options));
      const k = rowsPerSource(s0);
      const logits = stepper.prime(B * k, model.maxTargetPositions, gc.decoder_start_token_id);
      const V = model.vocabSize, firstRows = new Float32Array(B * V);
      for (let b = 0; b < B; b++) firstRows.set(logits.subarray(b * k * V, (b * k + 1) * V), b * V);
      return firstRows;
    });
    if (plan.language !== null && plan.prompt[0] !== gc.decoder_start_token_id) stepper.release();  // a prompt first: a fresh state
  } catch (e) {
    stepper.release();
    throw e;
  }
  const inputs = { batchSize: B, decoderInputIds: plan.prompt };
  if (stream) return { plan, run: () => streamSeq2Seq(stepper, plan.settings, inputs), release: () => stepper.release() };
  let held = null;  // with `times`: the state the search freed, kept for the alignment until run() ends
  const search = times ? { ...stepper, free: (st) => { held = st; } } : stepper;
  const run = async () => {
    try {
      const r = await generateSeq2Seq(search, plan.settings, inputs);
      if (times) r.tokenTimestamps = tokenTimestamps(stepper, held, r.sequences, times.settings, { numFrames: times.numFrames });
      return r;
    } finally {
      if (held !== null) { const st = held; held = null; stepper.free(st); }
      stepper.release();
    }
  };
  return { plan, run, release: () => stepper.release() };
}

function pickSeq2Seq(options) {
  const out = {};
  for (const k of SEQ2SEQ_OPTIONS) if (options?.[k] !== undefined) out[k] = options[k];
  return out;
}

/** The first step's language probabilities of each source: [{ language, name, token, id, probability }], sorted. */
export function detectLanguages(model, features) {
  const gc = whisperGenerationConfig(model.generationConfig, model.config);
  if (gc.lang_to_id == null || Object.keys(gc.lang_to_id).length === 0) {
    throw new AttnWasmError('ERR_UNSUPPORTED', 'detectLanguage: this model\'s generation_config.json has no lang_to_id (an English-only or outdated config): it detects no language');
  }
  const B = features.shape[0], V = model.vocabSize;
  const stepper = model._stepper(features);
  const state = stepper.begin(B, 1);
  try {
    const logits = stepper.step(state, new Int32Array(B).fill(gc.decoder_start_token_id));
    return Array.from({ length: B }, (_, b) => languageProbabilities(logits.subarray(b * V, (b + 1) * V), gc.lang_to_id));
  } finally {
    stepper.free(state);
  }
}
