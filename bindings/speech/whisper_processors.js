// Whisper's logits processors of transformers v4.40.2 (generation/logits_process.py), on one Float32Array row at a
// time in torch's float32 arithmetic, with the `{name, apply(ids, len, scores)}` shape of ../logits_process.js, and
// the list generation_whisper.py's _retrieve_logit_processors builds. Not here: WhisperNoSpeechDetection (it runs the
// model again on the prompt when begin_index > 1, so it belongs to the generation loop), the standard processors
// (../logits_process.js), the search.
import { AttnWasmError, describe } from '../errors.js';
import { logSoftmaxF32 } from '../torch_f32.js';
import { logsumexpF32 } from './logsumexp_f32.js';

/** @typedef {import('../logits_process.js').LogitsProcessor} LogitsProcessor */

function idList(tokens, name) {
  if (!Array.isArray(tokens) && !ArrayBuffer.isView(tokens)) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: expected an array of token ids, got ${describe(tokens)}`);
  }
  const out = Array.from(tokens);
  out.forEach((t, i) => {
    if (!Number.isInteger(t)) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}[${i}]: expected an integer token id, got ${t}`);
  });
  return out;
}

/**
 * SuppressTokensLogitsProcessor: the listed ids get −inf at every step (ids outside the row are ignored, as
 * torch.isin over arange(V) ignores them).
 * @param {ArrayLike<number>} suppressTokens @returns {LogitsProcessor}
 */
export function suppressTokensProcessor(suppressTokens) {
  const list = idList(suppressTokens, 'suppress_tokens');
  return {
    name: 'SuppressTokensLogitsProcessor',
    apply(ids, len, scores) { for (const t of list) if (t >= 0 && t < scores.length) scores[t] = -Infinity; },
  };
}

/**
 * SuppressTokensAtBeginLogitsProcessor: the listed ids get −inf at the one step where the row holds exactly
 * `beginIndex` ids (input_ids.shape[-1] == begin_index). `setBeginIndex` changes it, as transformers' does.
 * @param {ArrayLike<number>} beginSuppressTokens @param {number} beginIndex
 * @returns {LogitsProcessor & {beginIndex: number, setBeginIndex: (b: number) => void}}
 */
export function suppressTokensAtBeginProcessor(beginSuppressTokens, beginIndex) {
  const list = idList(beginSuppressTokens, 'begin_suppress_tokens');
  return {
    name: 'SuppressTokensAtBeginLogitsProcessor',
    beginIndex,
    setBeginIndex(b) { this.beginIndex = b; },
    apply(ids, len, scores) {
      if (len !== this.beginIndex) return;
      for (const t of list) if (t >= 0 && t < scores.length) scores[t] = -Infinity;
    },
  };
}

/**
 * WhisperTimeStampLogitsProcessor (v4.40.2), on the row's ids and scores; with T = timestampBegin
 * (no_timestamps_token_id + 1) and the generated ids seq = ids[beginIndex .. len):
 *  1. <|notimestamps|> gets −inf;
 *  2. seq ends with a timestamp: after a timestamp too, or when seq has a single id (a pair, or the first), every
 *     timestamp gets −inf; after a text token, every id below eos gets −inf;
 *  3. timestamps do not decrease: with a timestamp in seq, ids T .. last get −inf, where last is seq's last timestamp
 *     when seq ends with text + timestamp, else that timestamp + 1 (so <|0.00|> is not emitted again);
 *  4. at the first step (len == beginIndex): every id below T gets −inf, and with maxInitialTimestampIndex set, every
 *     id above T + maxInitialTimestampIndex;
 *  5. log_softmax of the row so far (float32, torch's kernel); when logsumexp of the timestamps' log-probs (float32,
 *     torch's kernel) is above the largest text log-prob, every id below T gets −inf.
 * @param {{noTimestampsTokenId: number, eosTokenId: number, beginIndex: number,
 *   maxInitialTimestampIndex?: number | null, detectTimestampFromLogprob?: boolean}} o eosTokenId:
 *   generation_config's eos_token_id, or bos_token_id when eos is unset; detectTimestampFromLogprob (default true):
 *   rule 5 on or off (transformers' _detect_timestamp_from_logprob)
 * @returns {LogitsProcessor & {beginIndex: number, setBeginIndex: (b: number) => void}}
 */
export function whisperTimestampProcessor(o) {
  const noTs = o.noTimestampsTokenId, T = noTs + 1, eos = o.eosTokenId;
  const maxInit = o.maxInitialTimestampIndex ?? null;
  const detect = o.detectTimestampFromLogprob ?? true;
  let logprobs = null;                        // scratch: one row of log-probabilities
  return {
    name: 'WhisperTimeStampLogitsProcessor',
    beginIndex: o.beginIndex,
    setBeginIndex(b) { this.beginIndex = b; },
    apply(ids, len, scores) {
      const V = scores.length, b = this.beginIndex;
      scores[noTs] = -Infinity;
      const n = Math.max(0, len - b);        // Python's slice input_ids[k, b:]
      const at = (j) => ids[b + j];
      const lastTs = n >= 1 && at(n - 1) >= T;
      const penultTs = n < 2 || at(n - 2) >= T;
      if (lastTs) {
        if (penultTs) scores.fill(-Infinity, Math.min(T, V));
        else scores.fill(-Infinity, 0, Math.min(eos, V));
      }
      let lastTimestamp = -1;
      for (let j = n - 1; j >= 0; j--) if (at(j) >= T) { lastTimestamp = at(j); break; }
      if (lastTimestamp >= 0) {
        const stop = lastTs && !penultTs ? lastTimestamp : lastTimestamp + 1;
        if (stop > T) scores.fill(-Infinity, T, Math.min(stop, V));
      }
      if (len === b) {
        scores.fill(-Infinity, 0, Math.min(T, V));
        if (maxInit !== null) {
          const lastAllowed = T + maxInit;
          if (lastAllowed + 1 < V) scores.fill(-Infinity, Math.max(0, lastAllowed + 1));
        }
      }
      if (T >= V || !detect) return;                     // no timestamps in the row: logsumexp of nothing is −inf
      if (logprobs === null || logprobs.length !== V) logprobs = new Float32Array(V);
      logSoftmaxF32(scores, V, logprobs);
      const lse = logsumexpF32(logprobs, T, V - T);
      let maxText = -Infinity;
      for (let i = 0; i < T; i++) {
        const v = logprobs[i];
        if (v !== v) { maxText = NaN; break; }
        if (v > maxText) maxText = v;
      }
      if (lse > maxText) scores.fill(-Infinity, 0, T);
    },
  };
}

/**
 * The processors Whisper's generate adds (_retrieve_logit_processors, v4.40.2), in its order: SuppressTokensAtBegin
 * (begin_suppress_tokens set), SuppressTokens (suppress_tokens set), WhisperTimeStamp (returnTimestamps true). All get
 * `beginIndex` = the number of init tokens (short-form; the long-form loop calls setBeginIndex with the decoder
 * prompt's length before each segment). generate() then puts them AFTER GenerationMixin's own processors
 * (logitsProcessors of ../logits_process.js, whose suppress_tokens / begin_suppress_tokens / forced_decoder_ids are
 * cleared by Whisper first) and before LogitNormalization.
 * @param {{suppress_tokens?: number[] | null, begin_suppress_tokens?: number[] | null, no_timestamps_token_id?: number,
 *   eos_token_id?: number | null, bos_token_id?: number | null, max_initial_timestamp_index?: number | null}} config
 *   generation_config.json's fields
 * @param {{beginIndex: number, returnTimestamps: boolean}} run
 * @returns {LogitsProcessor[]} new processors (each keeps a little scratch), owned by the caller
 */
export function whisperLogitsProcessors(config, run) {
  const out = [];
  if (config.begin_suppress_tokens != null) {
    out.push(suppressTokensAtBeginProcessor(config.begin_suppress_tokens, run.beginIndex));
  }
  if (config.suppress_tokens != null) out.push(suppressTokensProcessor(config.suppress_tokens));
  if (run.returnTimestamps === true) {
    if (!Number.isInteger(config.no_timestamps_token_id)) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `generation_config.no_timestamps_token_id: expected a token id to return timestamps, got ${config.no_timestamps_token_id}`);
    }
    out.push(whisperTimestampProcessor({
      noTimestampsTokenId: config.no_timestamps_token_id,
      eosTokenId: config.eos_token_id || config.bos_token_id,
      beginIndex: run.beginIndex,
      maxInitialTimestampIndex: config.max_initial_timestamp_index ?? null,
    }));
  }
  return out;
}
