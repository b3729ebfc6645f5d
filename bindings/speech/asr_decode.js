// The ASR pipeline's Whisper decoding of transformers v4.40.2 (models/whisper/tokenization_whisper.py: _decode_asr
// and _find_longest_common_sequence): the generated token rows of one or more chunks → the text and, on request,
// chunks with segment timestamps and languages, the rows of stride-overlapping chunks merged. Strides are in seconds,
// as the pipeline's postprocess passes them ([chunk_len, left, right] / sampling rate). Not here: word-level
// timestamps (they need the cross-attention alignment; 'word' is refused), generation.
import { AttnWasmError } from '../errors.js';
import { LANGUAGES } from './languages.js';
import { pyRound2 } from './whisper_text.js';

/**
 * _find_longest_common_sequence(sequences): the token rows of overlapping chunks joined: each next row slid along
 * the joined tail, the alignment with the best matches / overlap + overlap / 10000 (more than one match needed)
 * wins, and the overlap is cut in its middle (left row's first half, right row's second half).
 * @param {number[][]} sequences @returns {number[]} new
 */
export function findLongestCommonSequence(sequences) {
  let left = sequences[0];
  const total = [];
  for (const right of sequences.slice(1)) {
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
  }
  total.push(...left);
  return total;
}

/**
 * _decode_asr(model_outputs, return_timestamps, return_language, time_precision) of transformers v4.40.2.
 * @param {{decode: (ids: number[]) => string, isSpecial: (id: number) => boolean, timestampBegin: number}} vocab
 *   decode: the tokenizer's decode WITHOUT skipping special tokens (as the pipeline calls it; a special token's
 *   text is "<|xx|>"); isSpecial: transformers' all_special_ids (timestamps are not special)
 * @param {{tokens: ArrayLike<number>, stride?: [number, number, number]}[]} outputs each chunk's generated row
 *   (prompt and special tokens included) and its stride [chunk length, left, right] in seconds
 * @param {{returnTimestamps?: boolean, returnLanguage?: boolean, timePrecision?: number}} [options]
 * @returns {{text: string, chunks?: {text: string, timestamp?: [number | null, number | null],
 *   language?: string | null}[]}} new; `chunks` when returnTimestamps or returnLanguage
 */
export function decodeAsr(vocab, outputs, options = {}) {
  const rt = options.returnTimestamps ?? false, rl = options.returnLanguage ?? false;
  const tp = options.timePrecision ?? 0.02;
  if (rt === 'word') {
    throw new AttnWasmError('ERR_UNSUPPORTED', "returnTimestamps: expected true or false, got 'word' (word-level timestamps need the cross-attention alignment heads, not read here)");
  }
  const tb = vocab.timestampBegin;
  let lastLanguage = null;
  const newChunk = () => ({ language: lastLanguage, timestamp: [null, null], text: '' });
  const chunks = [];
  let chunk = newChunk(), timeOffset = 0, previous = [], skip = false;
  for (const output of outputs) {
    const ids = Array.from(output.tokens);
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
    let current = [];
    for (const token of ids) {
      if (vocab.isSpecial(token)) {
        const language = LANGUAGES.get([...vocab.decode([token])].slice(2, -2).join('')) ?? null;
        if (language !== null) {
          if (lastLanguage && language !== lastLanguage && !rt) {
            previous.push(current);
            chunk.text = vocab.decode(findLongestCommonSequence(previous));
            chunks.push(chunk);
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
          chunk.text = vocab.decode(findLongestCommonSequence(previous));
          chunks.push(chunk);
          previous = [];
          current = [];
          chunk = newChunk();
        }
      } else current.push(token);
    }
    if (output.stride) timeOffset += chunkLen - strideRight;
    if (current.length > 0) previous.push(current);
    else if (!previous.some((p) => p.length > 0)) {
      chunk = newChunk();
      previous = [];
    }
  }
  if (previous.length > 0) {
    chunk.text = vocab.decode(findLongestCommonSequence(previous));
    chunks.push(chunk);
  }
  const text = chunks.map((c) => c.text).join('');
  if (!rt && !rl) return { text };
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
 * The vocab decodeAsr needs, from bindings/tokenizer's Tokenizer (decode without skipping, isSpecial) and
 * whisperVocab's timestampBegin. @param {object} tokenizer @param {number} timestampBegin @returns {object} new
 */
export function asrVocab(tokenizer, timestampBegin) {
  return {
    decode: (ids) => tokenizer.decode(ids, { skipSpecialTokens: false }),
    isSpecial: (id) => tokenizer.isSpecial(id),
    timestampBegin,
  };
}
