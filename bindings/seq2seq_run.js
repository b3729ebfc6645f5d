// One run of the seq2seq search (seq2seq_generate.js, beam_search.js): the stepper checked, the decoder prompts, the
// lengths and processors of the run, the stepper's calls, the event loop's turns between steps.
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkOptions } from './checks.js';
import { nextTask } from './next_task.js';
import { logitsProcessors, logitsWarpers } from './logits_process.js';
import { SETTINGS, settingError, show } from './seq2seq_settings.js';

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
  // _prepare_decoder_input_ids_for_generation: prepended when no row starts with it (not for Whisper, whose prompt
  // may start with <|startofprev|>: settings.promptAsGiven).
  if (!s.promptAsGiven && rows.every((r) => r[0] !== s.decoderStartTokenId)) rows = rows.map((r) => [s.decoderStartTokenId, ...r]);
  return rows;
}

export function prepareRun(stepper, settings, inputs, where) {
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
  // Its renormalize_logits then runs on the model's kernel too, where the stepper offers one (logSoftmaxRow).
  run.logSoftmaxRow = run.logSoftmax && typeof stepper.logSoftmaxRow === 'function' ? (row) => stepper.logSoftmaxRow(row) : null;
  // A model's own processors (Whisper's: speech_generate.js) come after generate()'s, as transformers merges a
  // custom logits_processor list after the default one.
  run.processors = s.extraProcessors ? [...logitsProcessors(s, run), ...s.extraProcessors(run)] : logitsProcessors(s, run);
  run.warpers = s.mode === 'sample' ? logitsWarpers(s) : [];
  return run;
}

// A bounded step's result: the bounds stay in the stepper's state.
const BOUNDED_STEP = Object.freeze({ bounded: true });

/**
 * One step of the state's `rows` rows (all the run's, or fewer once sources have left it: stepper.keep); `len`:
 * the length of the rows' ids when the search reads this step (a bounded run — DecodeRun sets run.bounded and
 * run.boundedAt together — bounds the steps where run.boundedAt(len) allows).
 */
export function callStep(stepper, state, tokens, run, rows = run.rows, len = -1) {
  if (run.bounded && run.boundedAt(len)) {  // the stepper keeps the bounds (stepper.select reads them)
    stepper.stepBounded(state, tokens);
    return BOUNDED_STEP;
  }
  // `into`: the run's buffer for the step's output, reused every step (the search is done with the last one's
  // values when it steps again); a stepper may fill and return it, or return an array of its own.
  run.stepOut ??= new Float32Array(run.rows * run.V);
  const into = rows === run.rows ? run.stepOut : run.stepOut.subarray(0, rows * run.V);
  const logits = stepper.step(state, tokens, run.logSoftmax ? { logSoftmax: true, into } : { into });
  if (!(logits instanceof Float32Array) || logits.length !== rows * run.V) {
    throw new AttnWasmError('ERR_SHAPE', `stepper.step: expected a Float32Array of rows × vocabSize = ${rows} × ${run.V} logits, got ${ArrayBuffer.isView(logits) ? `a ${describe(logits)} of ${logits.length}` : describe(logits)}`);
  }
  return logits;
}

/**
 * The sources a decoding state still holds. transformers steps every row to the end, a finished one fed pad; its
 * logits are never read again. A stepper with `keep(state, places)` lets the sources the search is done with
 * leave the state instead (the places: ascending indices among the sources it holds), so the steps after run the
 * other sources' rows only; the tokens and scores are the same. Without keep (or with one source) it holds all.
 */
export class LiveSources {
  constructor(stepper, run) {
    this.stepper = stepper;
    this.k = run.k;
    this.canKeep = typeof stepper.keep === 'function' && run.batchSize > 1;
    this.list = Int32Array.from({ length: run.batchSize }, (_, b) => b);  // the state's sources, in its order
    this.place = this.list.slice();  // source → its place in the state; −1 once it left
    this.count = run.batchSize;
    this.tokens = null;
  }

  /** The state's rows. */
  get rows() { return this.count * this.k; }

  /** The place in the state's rows (the step's logits) of the run's row r; −1 when its source left. */
  row(r) {
    const p = this.place[Math.floor(r / this.k)];
    return p < 0 ? -1 : p * this.k + (r % this.k);
  }

  /** Drops from the state the sources for which done(source) is true (not all of them: the search ends then). */
  drop(state, done) {
    if (!this.canKeep) return;
    const kept = [];
    for (let i = 0; i < this.count; i++) if (!done(this.list[i])) kept.push(i);
    if (kept.length === this.count || kept.length === 0) return;
    this.stepper.keep(state, Int32Array.from(kept));
    this.list = Int32Array.from(kept, (i) => this.list[i]);
    this.place.fill(-1);
    this.list.forEach((b, i) => { this.place[b] = i; });
    this.count = kept.length;
  }

  /** values (one per run row) → the state's rows' values (a view of a buffer reused from step to step). */
  gather(values) {
    if (this.count === this.place.length) return values;
    const out = (this.tokens ??= new Int32Array(values.length)), k = this.k;
    for (let i = 0; i < this.count; i++) for (let j = 0; j < k; j++) out[i * k + j] = values[this.list[i] * k + j];
    return out.subarray(0, this.rows);
  }
}

/** A turn for the event loop between steps; a signal that fired ends the run with its reason. */
export async function turn(signal) {
  await nextTask();
  if (signal?.aborted) throw signal.reason;
}

/** The decoder ids of every row (rows, maxLength), each row's prompt first; row r holds source floor(r / k)'s. */
export function promptBuffer(run) {
  const ids = new Int32Array(run.rows * run.maxLength);
  for (let r = 0; r < run.rows; r++) ids.set(run.prompts[Math.floor(r / run.k)], r * run.maxLength);
  return ids;
}

/** Feeds the prompt, one position per step (the stepper takes one token per row); the logits after its last token. */
export async function feedPrompt(stepper, state, ids, run, signal) {
  const tokens = new Int32Array(run.rows);
  let logits;
  for (let p = 0; p < run.promptLength; p++) {
    if (p > 0) await turn(signal);
    for (let r = 0; r < run.rows; r++) tokens[r] = ids[r * run.maxLength + p];
    logits = callStep(stepper, state, tokens, run, run.rows, p + 1);
  }
  return logits;
}
