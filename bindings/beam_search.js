// Beam search for encoder–decoders as transformers v4.40.2 runs it (_beam_search, BeamSearchScorer, BeamHypotheses,
// step for step) over a stepper (seq2seq_generate.js drives it; seq2seq_run.js holds the run).
import { AttnWasmError, rangeError } from './errors.js';
import { logSoftmaxF32, topkLargestShifted } from './torch_f32.js';
import { callStep, feedPrompt, promptBuffer, turn, LiveSources } from './seq2seq_run.js';

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

export async function beamSearch(stepper, s, run) {
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
  // The sources whose beams are done leave the state where the stepper can drop them (seq2seq_run.js LiveSources):
  // `scores` then holds the state's rows, source by source in its order (live.row(r): run row r's place).
  const live = new LiveSources(stepper, run), parents = new Int32Array(rows);

  if (run.logSoftmax) run.stepOut = scores;  // the stepper's log-probabilities straight into the scores
  if (s.signal?.aborted) throw s.signal.reason;
  const state = stepper.begin(rows, L);
  try {
    let logits = await feedPrompt(stepper, state, ids, run, s.signal);
    for (;;) {
      // scores = log_softmax(logits) → processors → + beam_scores (added, in float32, by the topk's scan), all float32
      if (run.logSoftmax) { if (logits.buffer !== scores.buffer || logits.byteOffset !== scores.byteOffset) scores.set(logits); }
      else logSoftmaxF32(logits, V, scores);
      for (let r = 0; r < rows; r++) {
        const i = live.row(r);
        if (i < 0) continue;  // a done source's row, no longer stepped (its scores are never read)
        const row = scores.subarray(i * V, (i + 1) * V), history = ids.subarray(r * L, r * L + len);
        for (const p of run.processors) p.apply(history, len, row);
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
        const place = live.row(at);
        const { values, indices } = topkLargestShifted(scores.subarray(place * V, (place + nb) * V), V, beamScores.subarray(at, at + nb), K);
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
      live.drop(state, (b) => done[b] === 1);
      // The parents in the state's rows: a row's parent is a row of its own source.
      for (let r = 0; r < rows; r++) {
        const i = live.row(r);
        if (i >= 0) parents[i] = i - (r - nextIndices[r]);
      }
      stepper.reorder(state, parents.slice(0, live.rows));
      logits = callStep(stepper, state, live.gather(nextTokens), run, live.rows);
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
