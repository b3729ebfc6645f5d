// The ASR pipeline's Whisper decoding of transformers v4.40.2 (models/whisper/tokenization_whisper.py: _decode_asr
// and _find_longest_common_sequence): the generated token rows of one or more chunks → the text and, on request,
// chunks with segment timestamps and languages, or (returnTimestamps 'word', with each row's token times) one chunk
// per word, the rows of stride-overlapping chunks merged. Strides are in seconds, as the pipeline's postprocess
// passes them ([chunk_len, left, right] / sampling rate). Not here: generation, the token times themselves
// (token_timestamps.js), the grouping into words (word_timestamps.js).
import { LANGUAGES } from './languages.js';
import { pyRound2, whisperDecode } from './whisper_text.js';
import { collateWordTimestamps } from './word_timestamps.js';

/**
 * _find_longest_common_sequence(sequences): the token rows of overlapping chunks joined: each next row slid along
 * the joined tail, the alignment with the best matches / overlap + overlap / 10000 (more than one match needed)
 * wins, and the overlap is cut in its middle (left row's first half, right row's second half).
 * With `times` (one array per sequence, as long as it), they are cut at the same places: then [tokens, times].
 * @param {number[][]} sequences @param {Array[]} [times] @returns {number[] | [number[], Array]} new
 */
export function findLongestCommonSequence(sequences, times) {
  let left = sequences[0];
  let leftTimes = times?.[0];
  const total = [], totalTimes = [];
  for (let n = 1; n < sequences.length; n++) {
    const right = sequences[n];
    const L = left.length, R = right.length;
    let max = 0, best = [L, L, 0, 0];
    for (let i = 1; i < L + R; i++) {
      const eps = i / 10000;
      const ls = Math.max(0, L - i), le = Math.min(L, L + R - i);
      const rs = Math.max(0, i - L), re = Math.min(R, i);
      let matches = 0;
      for (let k = 0; k < le - ls; k++) if (left[ls + k] === right[rs + k]) matches++;
      const matching = matches / i + eps;
      if (matches > 1 && matching > max) { max = matching; best = [ls, le, rs, re]; }
    }
    const [ls, le, rs, re] = best;
    const leftMid = Math.floor((le + ls) / 2), rightMid = Math.floor((re + rs) / 2);
    for (let k = 0; k < leftMid; k++) total.push(left[k]);
    left = right.slice(rightMid);
    if (times) {
      for (let k = 0; k < leftMid; k++) totalTimes.push(leftTimes[k]);
      leftTimes = times[n].slice(rightMid);
    }
  }
  total.push(...left);
  if (!times) return total;
  totalTimes.push(...leftTimes);
  return [total, totalTimes];
}

/**
 * _decode_asr(model_outputs, return_timestamps, return_language, time_precision) of transformers v4.40.2.
 * @param {{decode: (ids: number[]) => string, isSpecial: (id: number) => boolean, timestampBegin: number}} vocab
 *   decode: the tokenizer's decode WITHOUT skipping special tokens (as the pipeline calls it; a special token's
 *   text is "<|xx|>"); isSpecial: transformers' all_special_ids (timestamps are not special)
 *   With returnTimestamps 'word' also decodeWords (decode(ids, decode_with_timestamps=True)) and eos (the
 *   tokenizer's eos_token_id): asrVocab gives them.
 * @param {{tokens: ArrayLike<number>, stride?: [number, number, number], tokenTimestamps?: ArrayLike<number>}[]}
 *   outputs each chunk's generated row (prompt and special tokens included), its stride [chunk length, left,
 *   right] in seconds, and with 'word' each token's time in seconds (the row's token_timestamps)
 * @param {{returnTimestamps?: boolean | 'word', returnLanguage?: boolean, timePrecision?: number,
 *   language?: string | null}} [options] language: the tokenizer's own language name (tokenizer.language), the
 *   words' language until a language token says otherwise
 * @returns {{text: string, chunks?: {text: string, timestamp?: [number | null, number | null],
 *   language?: string | null}[]}} new; `chunks` when returnTimestamps or returnLanguage (with 'word': one per word,
 *   { text, timestamp })
 */
export function decodeAsr(vocab, outputs, options = {}) {
  const rt = options.returnTimestamps ?? false, rl = options.returnLanguage ?? false;
  const tp = options.timePrecision ?? 0.02;
  const words = rt === 'word', tb = vocab.timestampBegin;
  const collate = (tokens, times) => collateWordTimestamps(vocab.decodeWords, tokens, times, lastLanguage ?? options.language ?? null, vocab.eos);
  let lastLanguage = null;
  const newChunk = () => ({ language: lastLanguage, timestamp: [null, null], text: '' });
  const chunks = [];
  let chunk = newChunk(), timeOffset = 0, previous = [], previousTimes = [], skip = false;
  // A chunk ends: its text (and words) from the rows gathered since the last end, merged over the strides.
  const flush = () => {
    if (words) {
      const [tokens, times] = findLongestCommonSequence(previous, previousTimes);
      chunk.text = vocab.decode(tokens);
      chunk.words = collate(tokens, times);
    } else chunk.text = vocab.decode(findLongestCommonSequence(previous));
    chunks.push(chunk);
  };
  for (const output of outputs) {
    const ids = Array.from(output.tokens);
    const tt = words ? Array.from(output.tokenTimestamps) : null;
    let lastTimestamp = null, firstTimestamp = tb, chunkLen = 0, strideRight = 0;
    if (output.stride) {
      let strideLeft;
      [chunkLen, strideLeft, strideRight] = output.stride;
      timeOffset -= strideLeft;
      const rightStart = chunkLen - strideRight;
      if (strideLeft) firstTimestamp = strideLeft / tp + tb;
      if (strideRight) {
        for (let k = ids.length - 1; k >= 0; k--) {
          const token = ids[k];
          if (token >= tb) {
            if (lastTimestamp !== null && (token - tb) * tp < rightStart) break;
            lastTimestamp = token;
          }
        }
      }
    }
    let current = [], currentTimes = [];
    for (let i = 0; i < ids.length; i++) {
      const token = ids[i];
      if (vocab.isSpecial(token)) {
        const language = LANGUAGES.get([...vocab.decode([token])].slice(2, -2).join('')) ?? null;
        if (language !== null) {
          if (lastLanguage && language !== lastLanguage && !rt) {
            previous.push(current);
            flush();
            previous = [];
            current = [];
            chunk = newChunk();
          }
          chunk.language = language;
          lastLanguage = language;
        }
      } else if (token >= tb) {
        const time = pyRound2((token - tb) * tp + timeOffset);
        if (lastTimestamp && token >= lastTimestamp) skip = true;
        else if (skip || (previous.length > 0 && token < firstTimestamp)) skip = false;
        else if (chunk.timestamp[0] === null) chunk.timestamp[0] = time;
        else if (time !== chunk.timestamp[0]) {
          chunk.timestamp[1] = time;
          previous.push(current);
          if (words) previousTimes.push(currentTimes);
          flush();
          previous = [];
          current = [];
          previousTimes = [];
          currentTimes = [];
          chunk = newChunk();
        }
      } else {
        current.push(token);
        if (words) currentTimes.push([pyRound2(tt[i] + timeOffset), i + 1 < tt.length ? pyRound2(tt[i + 1] + timeOffset) : null]);
      }
    }
    if (output.stride) timeOffset += chunkLen - strideRight;
    if (current.length > 0) {
      previous.push(current);
      if (words) previousTimes.push(currentTimes);
    } else if (!previous.some((p) => p.length > 0)) {
      chunk = newChunk();
      previous = [];
      previousTimes = [];
    }
  }
  if (previous.length > 0) flush();
  const text = chunks.map((c) => c.text).join('');
  if (!rt && !rl) return { text };
  if (words) return { text, chunks: chunks.flatMap((c) => c.words) };
  return {
    text,
    chunks: chunks.map((c) => {
      const o = {};
      if (rl) o.language = c.language;
      if (rt) o.timestamp = [c.timestamp[0], c.timestamp[1]];
      o.text = c.text;
      return o;
    }),
  };
}

/**
 * The vocab decodeAsr needs, from bindings/tokenizer's Tokenizer (decode without skipping, isSpecial, the words'
 * decode with timestamps as text, the eos id) and whisperVocab's timestampBegin. @param {object} tokenizer
 * @param {number} timestampBegin @returns {object} new
 */
export function asrVocab(tokenizer, timestampBegin) {
  return {
    decode: (ids) => tokenizer.decode(ids, { skipSpecialTokens: false }),
    decodeWords: (ids) => whisperDecode({ tokenizer, timestampBegin }, ids, { decodeWithTimestamps: true }),
    isSpecial: (id) => tokenizer.isSpecial(id),
    eos: tokenizer.tokenToId('<|endoftext|>'),
    timestampBegin,
  };
}
