// The logits processors and warpers of transformers v4.40.2 (generation/logits_process.py) that seq2seq generation
// runs, row by row on Float32Array scores in float32 arithmetic as torch does it, built in the order
// GenerationMixin._get_logits_processor / _get_logits_warper build them (seq2seq_generate.js calls these). Each
// processor is row-wise in transformers too, so one row at a time gives the batch's result. Not here: the
// processors of options this runtime refuses (seq2seq_generate.js names them), the search itself.
import { topkLargest, softmaxF32, logSoftmaxF32 } from './torch_f32.js';

const fround = Math.fround;

/**
 * One processor: `apply(ids, len, scores)` changes `scores` (one row of V, in place) given the row's decoder ids so
 * far (`ids[0 .. len)`, the decoder's start token and prompt included, as transformers' `input_ids`).
 * `bounds` says what greedy search's bounded pass (seq2seq_generate.js) may do with it: 'elementwise' — each
 * score's new value depends on that score alone (and the ids), never decreasing in it, so applied to a lower and
 * an upper bound of every logit it gives bounds of the processed scores; 'shift' — the same amount taken from
 * every score (log_softmax), which keeps the argmax up to float32 rounding. An 'elementwise' processor also says
 * which scores apply() may change for these ids: `touches(ids, len)` → the ids (any order, repeats allowed), or null
 * when it may change any (the bounded pass then reads that row's bounds whole).
 * @typedef {{name: string, bounds?: 'elementwise'|'shift', touches?: (ids: Int32Array, len: number) => ArrayLike<number>|null,
 *   apply: (ids: Int32Array, len: number, scores: Float32Array) => void}} LogitsProcessor
 */

/**
 * RepetitionPenaltyLogitsProcessor: every id already in the row, once: score < 0 → score * penalty, else score /
 * penalty (torch casts the Python float to float32 first: fround(score op fround(penalty))).
 */
function repetitionPenalty(penalty, vocabSize) {
  const p = fround(penalty);
  const seen = new Uint32Array(vocabSize);   // stamp per call: gather reads the original score of each id once
  let stamp = 0;
  return {
    name: 'RepetitionPenaltyLogitsProcessor',
    bounds: p > 0 ? 'elementwise' : undefined,
    touches: (ids, len) => ids.subarray(0, len),
    apply(ids, len, scores) {
      stamp++;
      for (let i = 0; i < len; i++) {
        const t = ids[i];
        if (seen[t] === stamp) continue;
        seen[t] = stamp;
        const s = scores[t];
        scores[t] = s < 0 ? fround(s * p) : fround(s / p);
      }
    },
  };
}

/**
 * NoRepeatNGramLogitsProcessor (fairseq's rule, on the decoder ids for an encoder–decoder): the tokens that followed
 * an earlier occurrence of the row's last n − 1 tokens are banned (−inf); nothing while len + 1 < n.
 */
function noRepeatNGram(n) {
  /** Calls ban(t) for each banned token t. */
  const banned = (ids, len, ban) => {
    if (len + 1 < n) return;
    const start = len + 1 - n;             // the prefix: ids[start .. len)
    for (let i = 0; i + n <= len; i++) {
      let match = true;
      for (let j = 0; j < n - 1; j++) if (ids[i + j] !== ids[start + j]) { match = false; break; }
      if (match) ban(ids[i + n - 1]);
    }
  };
  return {
    name: 'NoRepeatNGramLogitsProcessor',
    bounds: 'elementwise',
    touches(ids, len) {
      const out = [];
      banned(ids, len, (t) => out.push(t));
      return out;
    },
    apply(ids, len, scores) { banned(ids, len, (t) => { scores[t] = -Infinity; }); },
  };
}

/**
 * NoBadWordsLogitsProcessor (a SequenceBiasLogitsProcessor of −inf): a one-token bad word is banned always, a longer
 * one when the row ends with all of it but its last token (a prefix longer than the row is skipped); bad words that
 * are exactly [eos] are dropped first, as transformers filters them. The bias is added (score + −inf).
 */
function noBadWords(badWordsIds, eosTokenIds) {
  const eos = eosTokenIds ?? [];
  const keep = badWordsIds.filter((w) => !(w.length === 1 && eos.includes(w[0])));
  const seen = new Set();
  const words = keep.filter((w) => { const k = w.join(','); if (seen.has(k)) return false; seen.add(k); return true; });
  const single = [...new Set(words.filter((w) => w.length === 1).map((w) => w[0]))];
  const longer = words.filter((w) => w.length > 1);
  /** The tokens banned after these ids. */
  const banned = (ids, len) => {
    if (longer.length === 0) return single;
    const out = new Set(single);
    for (const w of longer) {
      if (w.length > len) continue;
      const from = len - (w.length - 1);
      let match = true;
      for (let j = 0; j < w.length - 1; j++) if (ids[from + j] !== w[j]) { match = false; break; }
      if (match) out.add(w[w.length - 1]);
    }
    return out;
  };
  return {
    name: 'NoBadWordsLogitsProcessor',
    bounds: 'elementwise',
    touches: (ids, len) => [...banned(ids, len)],
    apply(ids, len, scores) { for (const t of banned(ids, len)) scores[t] = scores[t] + -Infinity; },
  };
}

/** MinLengthLogitsProcessor: the eos ids get −inf while the row (start token included) is shorter than minLength. */
function minLength(min, eosTokenIds, vocabSize) {
  const eos = eosTokenIds.filter((e) => e < vocabSize);
  return {
    name: 'MinLengthLogitsProcessor',
    bounds: 'elementwise',
    touches: (ids, len) => (len < min ? eos : []),
    apply(ids, len, scores) { if (len < min) for (const e of eos) scores[e] = -Infinity; },
  };
}

/** MinNewTokensLengthLogitsProcessor: the same, counting the tokens after the decoder prompt. */
function minNewTokens(promptLength, min, eosTokenIds, vocabSize) {
  const eos = eosTokenIds.filter((e) => e < vocabSize);
  return {
    name: 'MinNewTokensLengthLogitsProcessor',
    bounds: 'elementwise',
    touches: (ids, len) => (len - promptLength < min ? eos : []),
    apply(ids, len, scores) { if (len - promptLength < min) for (const e of eos) scores[e] = -Infinity; },
  };
}

/** ForcedBOSTokenLogitsProcessor: at the first step (len 1) every score is −inf but the forced id's, which is 0. */
function forcedBos(id) {
  return {
    name: 'ForcedBOSTokenLogitsProcessor',
    bounds: 'elementwise',
    touches: (ids, len) => (len === 1 ? null : []),
    apply(ids, len, scores) { if (len === 1) { scores.fill(-Infinity); scores[id] = 0; } },
  };
}

/** ForcedEOSTokenLogitsProcessor: at len maxLength − 1, every score is −inf but the forced ids', which are 0. */
function forcedEos(maxLength, idList) {
  return {
    name: 'ForcedEOSTokenLogitsProcessor',
    bounds: 'elementwise',
    touches: (ids, len) => (len === maxLength - 1 ? null : []),
    apply(ids, len, scores) {
      if (len === maxLength - 1) { scores.fill(-Infinity); for (const e of idList) scores[e] = 0; }
    },
  };
}

/**
 * The processors `_get_logits_processor` (transformers 4.40) builds for these settings, in its order:
 * RepetitionPenalty (≠ 1), NoRepeatNGram (> 0), NoBadWords (set), MinLength (> 0, with eos), MinNewTokensLength
 * (> 0, with eos), ForcedBOS (set), ForcedEOS (set). The caller owns the list; each keeps a little scratch.
 * @param {object} s resolveGenerationConfig's settings @param {{promptLength: number, maxLength: number,
 *   minLength: number, vocabSize: number}} run the lengths of this run (after maxNewTokens / minNewTokens)
 * @returns {LogitsProcessor[]}
 */
export function logitsProcessors(s, run) {
  const out = [];
  if (s.repetitionPenalty !== 1) out.push(repetitionPenalty(s.repetitionPenalty, run.vocabSize));
  if (s.noRepeatNgramSize > 0) out.push(noRepeatNGram(s.noRepeatNgramSize));
  if (s.badWordsIds !== null) out.push(noBadWords(s.badWordsIds, s.eosTokenIds));
  // generate() sets min_length = min_new_tokens + prompt when min_new_tokens is set, and then builds both.
  if (run.minLength > 0 && s.eosTokenIds !== null) out.push(minLength(run.minLength, s.eosTokenIds, run.vocabSize));
  if (s.minNewTokens !== null && s.minNewTokens > 0 && s.eosTokenIds !== null) {
    out.push(minNewTokens(run.promptLength, s.minNewTokens, s.eosTokenIds, run.vocabSize));
  }
  if (s.forcedBosTokenId !== null) out.push(forcedBos(s.forcedBosTokenId));
  if (s.forcedEosTokenIds !== null) out.push(forcedEos(run.maxLength, s.forcedEosTokenIds));
  if (s.renormalizeLogits) out.push(logitNormalization(!run.logSoftmax, run.logSoftmaxRow ?? null));
  return out;
}

/**
 * LogitNormalization (renormalize_logits: true, last of the processors): the row's log_softmax again, after the
 * processors masked or forced some of it; opus-mt's generation_config.json sets it. `exact`: torch's float32 kernel
 * (torch_f32.js), as the search's own log_softmax; else (the model gave its log-probabilities: stepper.logSoftmax)
 * the model's own kernel where the stepper offers it (`native`: stepper.logSoftmaxRow, in place: 0.2 ms a row of
 * 58 101 against 0.7 here), or here in double, rounded to float32, within an ulp of it at a tenth of the exact one's
 * cost.
 */
function logitNormalization(exact, native) {
  return {
    name: 'LogitNormalization',
    bounds: 'shift',
    apply(ids, len, scores) {
      if (exact) { logSoftmaxF32(scores, scores.length); return; }
      let max = -Infinity;
      for (let i = 0; i < scores.length; i++) {
        const v = scores[i];
        if (v > max || v !== v) max = v;
      }
      if (max !== max || max === Infinity) { scores.fill(NaN); return; }
      if (max === -Infinity) return;  // every token masked: torch gives NaN rows too, but no search reads them
      if (native !== null) { native(scores); return; }
      let sum = 0;
      for (let i = 0; i < scores.length; i++) sum += Math.exp(scores[i] - max);
      const shift = max + Math.log(sum);
      for (let i = 0; i < scores.length; i++) scores[i] = fround(scores[i] - shift);
    },
  };
}

/** TemperatureLogitsWarper: score / temperature (the temperature cast to float32 first, as torch does). */
function temperatureWarper(t) {
  const tf = fround(t);
  return {
    name: 'TemperatureLogitsWarper',
    apply(ids, len, scores) { for (let i = 0; i < scores.length; i++) scores[i] = fround(scores[i] / tf); },
  };
}

/** TopKLogitsWarper: scores below the k-th largest (NaN counts as largest, as torch.topk has it) become −inf. */
function topKWarper(topK, minKeep) {
  const k0 = Math.max(topK, minKeep);
  return {
    name: 'TopKLogitsWarper',
    apply(ids, len, scores) {
      const k = Math.min(k0, scores.length);
      const { values } = topkLargest(scores, k);
      const kth = values[k - 1];
      for (let i = 0; i < scores.length; i++) if (scores[i] < kth) scores[i] = -Infinity;
    },
  };
}

/**
 * TopPLogitsWarper: sorted ascending, softmax (float32, torch's kernel), cumulative sum (torch accumulates in double
 * and stores float32), tokens whose cumulative probability is <= 1 − top_p become −inf, the last minKeep always kept.
 * torch.sort is not stable: where equal scores straddle the cut, torch may drop a different one of them than this
 * stable sort (the lower id first) does.
 */
function topPWarper(topP, minKeep) {
  const cut = fround(1 - topP);
  return {
    name: 'TopPLogitsWarper',
    apply(ids, len, scores) {
      const n = scores.length;
      const order = Array.from({ length: n }, (_, i) => i);
      order.sort((a, b) => {                 // ascending, NaN last (largest), as torch.sort; equal: lower id first
        const va = scores[a], vb = scores[b], na = va !== va, nb = vb !== vb;
        if (na || nb) return na - nb || a - b;
        return va < vb ? -1 : va > vb ? 1 : a - b;
      });
      const sorted = Float32Array.from(order, (i) => scores[i]);
      const probs = softmaxF32(sorted, n);
      let cum = 0;
      for (let j = 0; j < n - minKeep; j++) {
        cum += probs[j];
        if (fround(cum) <= cut) scores[order[j]] = -Infinity;
      }
    },
  };
}

/**
 * The warpers `_get_logits_warper` (transformers 4.40) builds for sampling, in its order: Temperature (≠ 1), TopK
 * (set and ≠ 0), TopP (< 1); min_tokens_to_keep 1 (no beams here).
 * @param {object} s resolveGenerationConfig's settings @returns {LogitsProcessor[]}
 */
export function logitsWarpers(s) {
  const out = [];
  if (s.temperature !== 1) out.push(temperatureWarper(s.temperature));
  if (s.topK !== null && s.topK !== 0) out.push(topKWarper(s.topK, 1));
  if (s.topP < 1) out.push(topPWarper(s.topP, 1));
  return out;
}
