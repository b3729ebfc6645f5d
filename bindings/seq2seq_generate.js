// Generation for encoder–decoder models, the shared generation module's seq2seq half (generation.js is the causal
// LMs' half): the search part of Hugging Face transformers v4.40.2's generate() over a decoder `stepper` — the
// effective settings from generation_config.json, config.json and the user's options with transformers' precedence
// (resolveGenerationConfig), then greedy search, sampling (seeded, sampling.js) and beam search (_beam_search +
// BeamSearchScorer + BeamHypotheses, step for step), with the logits processors in _get_logits_processor's order
// (logits_process.js) and torch's float32 log_softmax and topk tie order (torch_f32.js). Greedy and sampling also
// stream one source's tokens (streamSeq2Seq). The settings (resolveGenerationConfig) are seq2seq_settings.js'. Not
// here: the encoder and the decoder's forward (the stepper), tokenizers, beam sampling, group and constrained beam
// search, contrastive and assisted decoding.
import { AttnWasmError, rangeError } from './errors.js';
import { checkOptions } from './checks.js';
import { SeededRandom } from './sampling.js';
import { nextTask } from './next_task.js';
import { softmaxF32 } from './torch_f32.js';
import { SETTINGS } from './seq2seq_settings.js';
import { prepareRun, callStep, turn, promptBuffer, feedPrompt, LiveSources } from './seq2seq_run.js';
import { beamSearch } from './beam_search.js';

export { resolveGenerationConfig, SEQ2SEQ_OPTIONS } from './seq2seq_settings.js';
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
 * own log_softmax (the native one: float exps summed in double, x − lse in double rounded to float32) instead of
 * torch's float32 arithmetic here. step's options also name `into`, the run's (rows, vocabSize) buffer, which the
 * stepper may fill and return instead of a new array (the search reads it before the next step). An optional
 * `keep(state, places)` lets the sources the search is done with leave the state (transformers steps their rows to
 * the end, fed pad, and never reads their logits): the state keeps the sources at `places` (ascending indices among
 * those it holds, in its order), and the steps after it feed and return those sources' rows only (seq2seq_run.js
 * LiveSources). Without it every row is stepped to the end.
 * @typedef {{vocabSize: number, logSoftmax?: boolean, begin: (rows: number, capacity: number) => object,
 *   step: (state: object, tokens: Int32Array, options?: {logSoftmax?: boolean, into?: Float32Array}) => Float32Array,
 *   reorder?: (state: object, parents: Int32Array) => void, keep?: (state: object, places: Int32Array) => void,
 *   free: (state: object) => void}} Seq2SeqStepper
 */


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

// ---- greedy search's bounded pass -----------------------------------------------------------------------------
//
// A stepper may offer `bounded(state)`, `stepBounded(state, tokens)` (the bounds stay in its state), `select(state,
// counts, exclude, cap)` (decodingSteps in seq2seq.js says what it gives) and `exact(state, row, ids)` →
// Float32Array: each step then has, for every logit, bounds from the head's q8 copy (a float32 head's boundedHead:
// 28 % of its bytes read), and the exact logits only of the ids that can still be the argmax. The token chosen
// is the one the exact logits give, always: the processors that change a score from that score alone, never
// decreasing in it ('elementwise'), map the bounds to bounds of the processed scores; every id whose upper bound
// reaches the largest lower bound is a candidate; the candidates' exact logits go through the same processors,
// and the first largest of them is torch.argmax's answer, as no other id can reach it. The model scans the rows
// (one select call a step): each row's ids that its processors may change (their `touches`) come back with their
// bounds, which the processors map here; of the others it gives the largest lower bound and the ids whose upper
// bound reaches it, a superset of those that reach the largest processed lower bound (which can only be larger).
// At a step where a processor may change any score (a forced token's), the step is an ordinary one (every logit
// exact, run.boundedAt); a run with a processor that cannot say what it touches takes no bounded pass. With
// LogitNormalization ('shift': log_softmax, which keeps the order but may round two close scores
// to one value) a runner-up within a few ulps of the winner, too many candidates, or a NaN anywhere takes the
// row's exact logits whole instead (`full`).
const kMaxCandidates = 256;

class BoundedChoice {
  constructor(stepper, run) {
    this.stepper = stepper;
    this.V = run.V;
    this.elementwise = run.processors.filter((p) => p.bounds === 'elementwise');
    this.shift = run.processors.some((p) => p.bounds === 'shift');
    this.candidates = new Int32Array(kMaxCandidates);
    this.all = null;
    this.lower = null;  // scratch rows for the touched ids' bounds (only those entries are read)
    this.upper = null;
    this.picked = [];   // the step's select result, per row of the state
    this.touchedOf = [];
  }

  /** Whether a run with these processors may take the bounded pass. */
  static usable(stepper, run, sampling) {
    return !sampling && ['stepBounded', 'select', 'exact', 'bounded'].every((f) => typeof stepper[f] === 'function') &&
      run.processors.every((p) => (p.bounds === 'elementwise' && typeof p.touches === 'function') || p.bounds === 'shift');
  }

  /**
   * Whether the step whose logits the search reads with `len` ids may be bounded: no processor may then change any
   * score (touches → null: a forced token's step, which depends on len alone; `ids` a row's ids, any row's).
   */
  boundedAt(ids, len) { return this.elementwise.every((p) => p.touches(ids, len) !== null); }

  /** The ids the processors may change for this row (ascending, in [0, V)), or null: any. */
  touched(row, len) {
    let set = null;
    for (const p of this.elementwise) {
      const t = p.touches(row, len);
      if (t === null) return null;
      for (let j = 0; j < t.length; j++) {
        const id = t[j];
        if (id >= 0 && id < this.V) (set ??= new Set()).add(id);
      }
    }
    return set === null ? new Int32Array(0) : Int32Array.from(set).sort();
  }

  /**
   * One select call for the step: `rows` the state's rows, `want` [state row, the run's ids of that row] of each
   * unfinished row, `len` the ids' length.
   */
  select(state, rows, want, len) {
    const counts = new Int32Array(rows).fill(-1), touched = new Array(rows).fill(null);
    let total = 0;
    for (const [i, row] of want) {
      const t = this.touched(row, len);
      touched[i] = t;
      counts[i] = t === null ? -1 : t.length;  // null: no bounds for the row (its exact logits whole)
      total += t === null ? 0 : t.length;
    }
    const exclude = new Int32Array(total);
    for (let i = 0, o = 0; i < rows; i++) if (touched[i] !== null) { exclude.set(touched[i], o); o += touched[i].length; }
    this.picked = this.stepper.select(state, counts, exclude, kMaxCandidates);
    this.touchedOf = touched;
  }

  /** The token of the state's row `i` (select ran for this step), `row` the run's ids so far; `scores` scratch. */
  choose(state, i, row, len, scores, processors) {
    const got = this.picked[i];
    let bad = got === null || got === undefined;
    let n = 0;
    if (!bad) {
      const T = this.touchedOf[i], V = this.V;
      let best = got.best;
      bad = !(best === best) || got.found > kMaxCandidates;  // a NaN bound, or too many
      if (!bad && T.length > 0) {
        this.lower ??= new Float32Array(V);
        this.upper ??= new Float32Array(V);
        for (let j = 0; j < T.length; j++) { this.lower[T[j]] = got.pairs[2 * j]; this.upper[T[j]] = got.pairs[2 * j + 1]; }
        for (const p of this.elementwise) { p.apply(row, len, this.lower); p.apply(row, len, this.upper); }
        for (let j = 0; j < T.length && !bad; j++) {
          const lo = this.lower[T[j]];
          if (!(lo <= this.upper[T[j]])) bad = true;  // NaN
          else if (lo > best) best = lo;
        }
      }
      if (!bad && best > -Infinity) {
        // The untouched ids that reach best (got.ids reach got.best <= best) and the touched ones, ascending.
        let a = 0, b = 0;
        const ids = got.ids;
        while (!bad && (a < ids.length || b < T.length)) {
          let id;
          if (b >= T.length || (a < ids.length && ids[a] < T[b])) id = ids[a++];
          else { id = T[b++]; if (!(this.upper[id] >= best)) continue; }
          if (n === kMaxCandidates) bad = true;
          else this.candidates[n++] = id;
        }
      } else bad = true;
    }
    if (!bad) {
      const ids = this.candidates.subarray(0, n);
      const exact = this.stepper.exact(state, i, ids);
      // The other entries of scores are stale: the elementwise processors read and write each score alone, and
      // only the candidates' are read.
      for (let j = 0; j < n; j++) scores[ids[j]] = exact[j];
      const t = this.winner(ids, row, len, scores);
      if (t >= 0) return t;
    }
    return this.exactRow(state, i, row, len, scores, processors);
  }

  /** The first largest of the candidates' processed exact scores; −1 when it cannot decide (NaN, a close shift). */
  winner(ids, row, len, scores) {
    for (const p of this.elementwise) p.apply(row, len, scores);
    let t = ids[0];
    for (let j = 0; j < ids.length; j++) {
      const v = scores[ids[j]];
      if (v !== v) return -1;
      if (v > scores[t]) t = ids[j];
    }
    if (this.shift) {  // another candidate log_softmax could round to the winner's value
      const w = scores[t], tol = 2 ** -19 * (Math.abs(w) + 32);
      for (let j = 0; j < ids.length; j++) if (ids[j] !== t && scores[ids[j]] >= w - tol) return -1;
    }
    return t;
  }

  /** The row's exact logits whole, and the ordinary path. */
  exactRow(state, i, row, len, scores, processors) {
    this.all ??= Int32Array.from({ length: this.V }, (_, k) => k);
    scores.set(this.stepper.exact(state, i, this.all));
    for (const p of processors) p.apply(row, len, scores);
    return argmax(scores);
  }
}

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
    // A source whose rows have all finished leaves the state (where the stepper can drop it): its rows get pad.
    this.live = new LiveSources(stepper, run);
    this.bounded = BoundedChoice.usable(stepper, run, this.random !== null) ? new BoundedChoice(stepper, run) : null;
  }

  open() {
    this.state = this.stepper.begin(this.run.rows, this.run.maxLength);
    if (this.bounded !== null && !this.stepper.bounded(this.state)) this.bounded = null;
    this.run.bounded = this.bounded !== null;
    if (this.bounded !== null) this.run.boundedAt = (len) => this.bounded.boundedAt(this.ids, len);
  }

  close() {
    if (this.state !== null) { const st = this.state; this.state = null; this.stepper.free(st); }
  }

  /** Chooses every row's next token from `logits`; returns whether any row is still unfinished. */
  choose(logits) {
    const { run, s, ids, len, scores, tokens } = this;
    const V = run.V, L = run.maxLength;
    const bounded = !(logits instanceof Float32Array);  // a bounded step: the stepper kept the bounds
    if (bounded) {
      const want = [];
      for (let r = 0; r < run.rows; r++) if (this.unfinished[r]) want.push([this.live.row(r), ids.subarray(r * L, r * L + len)]);
      this.bounded.select(this.state, this.live.rows, want, len);
    }
    for (let r = 0; r < run.rows; r++) {
      let t;
      if (!this.unfinished[r]) t = s.padTokenId;  // finished rows: pad (only with an eos, so pad is set)
      else {
        const i = this.live.row(r);  // an unfinished row's source is in the state
        const row = ids.subarray(r * L, r * L + len);
        if (bounded) {
          tokens[r] = t = this.bounded.choose(this.state, i, row, len, scores, run.processors);
          ids[r * L + len] = t;
          continue;
        }
        scores.set(logits.subarray(i * V, (i + 1) * V));
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
    if (any) this.live.drop(this.state, (b) => this.unfinished.subarray(b * run.k, (b + 1) * run.k).every((u) => u === 0));
    return any;
  }

  step() { return callStep(this.stepper, this.state, this.live.gather(this.tokens), this.run, this.live.rows, this.len); }

  sequences() {
    return Array.from({ length: this.run.rows }, (_, r) => this.ids.slice(r * this.run.maxLength, r * this.run.maxLength + this.len));
  }
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
