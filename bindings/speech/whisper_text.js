// Whisper's tokenizer-side decoding of transformers v4.40.2 (models/whisper/tokenization_whisper.py) over the
// project's Tokenizer: WhisperTokenizer.decode (skip_special_tokens strips a <|startofprev|> prompt, timestamp tokens'
// text filtered out), decode_with_timestamps (_decode_with_timestamps), output_offsets (_compute_offsets), and
// Python's "%.2f" / round(x, 2) on doubles. Not here: the pipeline's chunk merging (asr_decode.js), normalizers.
import { AttnWasmError } from '../errors.js';

const TIMESTAMP_PAT = /<\|(\d+\.\d+)\|>/g;   // WhisperTokenizer.timestamp_pat (Python's \d is Unicode; these are ASCII)

/**
 * Python's f"{x:.2f}": the exact binary value rounded half to even at two decimals. toFixed rounds the same except
 * on an exact tie, where it takes the larger; a double is an exact tie at two decimals only when 8x is odd.
 * @param {number} x @returns {string}
 */
export function pyFixed2(x) {
  const a = Math.abs(x), q = a * 8;
  let s;
  if (Number.isInteger(q) && q % 2 === 1 && q < 2 ** 50) {
    const h = a * 100, lo = Math.floor(h);   // exact: a = q / 8
    const n = lo % 2 === 0 ? lo : lo + 1;
    s = `${Math.trunc(n / 100)}.${String(n % 100).padStart(2, '0')}`;
  } else s = a.toFixed(2);
  return x < 0 || Object.is(x, -0) ? `-${s}` : s;
}

/** Python's round(x, 2) on a double: the double nearest to pyFixed2(x). @param {number} x @returns {number} */
export const pyRound2 = (x) => Number(pyFixed2(x));

/**
 * The ids Whisper decoding needs, read from a tokenizer (bindings/tokenizer's Tokenizer, or any object with
 * tokenToId / isSpecial / decode): <|endoftext|>, <|startoftranscript|>, <|startofprev|>, <|notimestamps|> and
 * timestampBegin = <|notimestamps|> + 1 (transformers' all_special_ids[-1] + 1 for Whisper's token layout).
 * @param {{tokenToId: (t: string) => number | undefined, isSpecial: (id: number) => boolean,
 *   decode: (ids: ArrayLike<number>, o?: {skipSpecialTokens?: boolean}) => string}} tokenizer
 * @returns {{tokenizer: object, eos: number, sot: number, startOfPrev: number, noTimestamps: number,
 *   timestampBegin: number}} a new object holding the tokenizer (not owned)
 */
export function whisperVocab(tokenizer) {
  const id = (t) => {
    const v = tokenizer.tokenToId(t);
    if (v === undefined) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tokenizer: expected Whisper's token ${t}, got a vocabulary without it`);
    return v;
  };
  const noTimestamps = id('<|notimestamps|>');
  return {
    tokenizer, eos: id('<|endoftext|>'), sot: id('<|startoftranscript|>'), startOfPrev: id('<|startofprev|>'),
    noTimestamps, timestampBegin: noTimestamps + 1,
  };
}

/**
 * WhisperTokenizer._strip_prompt: ids starting with <|startofprev|> lose everything before <|startoftranscript|>
 * (all of them when it is absent). transformers strips Python lists only; here any array.
 * @param {ArrayLike<number>} ids @param {number} promptTokenId @param {number} sotId @returns {number[]} new
 */
export function stripPrompt(ids, promptTokenId, sotId) {
  const list = Array.from(ids);
  if (list.length === 0 || list[0] !== promptTokenId) return list;
  const at = list.indexOf(sotId);
  return at >= 0 ? list.slice(at) : [];
}

/**
 * WhisperTokenizer.decode(ids, skip_special_tokens, decode_with_timestamps, output_offsets, time_precision).
 * @param {ReturnType<typeof whisperVocab>} vocab
 * @param {ArrayLike<number>} ids
 * @param {{skipSpecialTokens?: boolean, decodeWithTimestamps?: boolean, outputOffsets?: boolean,
 *   timePrecision?: number}} [options]
 * @returns {string | {text: string, offsets: {text: string, timestamp: [number, number]}[]}} new
 */
export function whisperDecode(vocab, ids, options = {}) {
  const skip = options.skipSpecialTokens ?? false, tp = options.timePrecision ?? 0.02;
  const filtered = skip ? stripPrompt(ids, vocab.startOfPrev, vocab.sot) : Array.from(ids);
  const text = options.decodeWithTimestamps
    ? decodeWithTimestamps(vocab, filtered, skip, tp)
    : vocab.tokenizer.decode(filtered, { skipSpecialTokens: skip }).replace(TIMESTAMP_PAT, '');
  return options.outputOffsets ? { text, offsets: computeOffsets(vocab, ids, tp) } : text;
}

/**
 * _decode_with_timestamps: the text between timestamp tokens decoded (whisperDecode with the same skip), each
 * timestamp written "<|t.tt|>", with t accumulating over segments whose times restart.
 */
export function decodeWithTimestamps(vocab, ids, skip, tp = 0.02) {
  const tb = vocab.timestampBegin, outputs = [[]];
  let curMax = 0, prevLen = 0;
  for (const token of ids) {
    if (token >= tb) {
      const t = (token - tb) * tp;
      if (t < curMax) prevLen += curMax;
      curMax = t;
      outputs.push(`<|${pyFixed2(t + prevLen)}|>`, []);
    } else outputs[outputs.length - 1].push(token);
  }
  return outputs.map((s) => (typeof s === 'string' ? s : whisperDecode(vocab, s, { skipSpecialTokens: skip }))).join('');
}

/**
 * _compute_offsets (decode(..., output_offsets=True)): the segments between timestamp tokens, each
 * {text (decoded with special tokens, timestamps' text filtered), timestamp: [start, end] in seconds}.
 */
export function computeOffsets(vocab, ids, tp = 0.02) {
  const tb = vocab.timestampBegin, list = Array.from(ids);
  const isTs = list.map((t) => t >= tb);
  const consecutive = [];
  for (let i = 0; i + 1 < list.length; i++) if (isTs[i] && isTs[i + 1]) consecutive.push(i + 1);
  const where = [];
  isTs.forEach((b, i) => { if (b) where.push(i); });
  if (consecutive.length === 0 && where.length <= 1) return [];
  if (!consecutive.includes(where[where.length - 1] + 1)) consecutive.push(where[where.length - 1] + 1);
  const offsets = [];
  let last = where[0];
  for (const cur of consecutive) {
    const sliced = list.slice(last, cur);
    if (sliced.length > 1) {
      const start = sliced[0] - tb, end = sliced[sliced.length - 1] - tb;
      const text = vocab.tokenizer.decode(sliced, { skipSpecialTokens: false }).replace(TIMESTAMP_PAT, '');
      offsets.push({ text, timestamp: [start * tp, end * tp] });
    }
    last = cur;
  }
  return offsets;
}
