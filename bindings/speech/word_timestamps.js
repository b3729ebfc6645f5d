// Tokens → words with times, as transformers v4.40.2's Whisper tokenizer groups them for the ASR pipeline's
// return_timestamps="word" (models/whisper/tokenization_whisper.py: _collate_word_timestamps,
// _combine_tokens_into_words, _split_tokens_on_unicode, _split_tokens_on_spaces, _merge_punctuations), Python's
// string semantics kept: indices count code points, `in` on two strings is a substring test (so an empty or
// whitespace-only piece counts as punctuation), strip() strips Python's whitespace. Not here: the token times
// (token_timestamps.js), the chunk merging (asr_decode.js).
import { AttnWasmError } from '../errors.js';

/** Languages written without spaces between words: split wherever the text decodes to whole characters. */
const UNICODE_SPLIT = new Set(['chinese', 'japanese', 'thai', 'lao', 'myanmar', 'cantonese']);
const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
const PREPEND = '"\'“¡¿([{-';
const APPEND = '"\'.。,，!！?？:：”)]}、';
const REPLACEMENT = '\ufffd';

// Python's str.strip(): the characters str.isspace() accepts (JS's \s differs: it has U+FEFF, lacks U+001C–U+001F
// and U+0085).
const WS = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const STRIP = new RegExp(`^[${WS}]+|[${WS}]+$`, 'g');
const pyStrip = (s) => s.replace(STRIP, '');

/**
 * _split_tokens_on_unicode: tokens grouped until their text holds no U+FFFD that the whole text does not also hold
 * at that place (a character cut between tokens). Tokens left over at the end (an unfinished character) are dropped,
 * as there. @param {(ids: number[]) => string} decode the tokenizer's decode (special tokens kept, timestamps as text)
 * @returns {{words: string[], tokens: number[][], indices: number[][]}} new
 */
export function splitTokensOnUnicode(decode, tokens) {
  const full = Array.from(decode(tokens));
  const words = [], wordTokens = [], indices = [];
  let current = [], currentIdx = [], offset = 0;
  tokens.forEach((token, i) => {
    current.push(token);
    currentIdx.push(i);
    const decoded = decode(current);
    const chars = Array.from(decoded);
    const at = chars.indexOf(REPLACEMENT);
    if (at >= 0 && offset + at >= full.length) {
      throw new AttnWasmError('ERR_INTERNAL', `words: the text of tokens [${current.join(', ')}] runs past the whole text (transformers' _split_tokens_on_unicode fails here with an IndexError)`);
    }
    if (at < 0 || full[offset + at] === REPLACEMENT) {
      words.push(decoded);
      wordTokens.push(current);
      indices.push(currentIdx);
      current = [];
      currentIdx = [];
      offset += chars.length;
    }
  });
  return { words, tokens: wordTokens, indices };
}

/**
 * _split_tokens_on_spaces: the unicode pieces joined into words, a new word at a special token (id >= eos), a
 * piece starting with a space, or punctuation (its stripped text a substring of string.punctuation).
 * @returns {{words: string[], tokens: number[][], indices: number[][]}} new
 */
export function splitTokensOnSpaces(decode, tokens, eosTokenId) {
  const sub = splitTokensOnUnicode(decode, tokens);
  const words = [], wordTokens = [], indices = [];
  sub.words.forEach((piece, k) => {
    const special = sub.tokens[k][0] >= eosTokenId;
    const withSpace = piece.startsWith(' ');
    const punctuation = PUNCTUATION.includes(pyStrip(piece));
    if (special || withSpace || punctuation || words.length === 0) {
      words.push(piece);
      wordTokens.push(sub.tokens[k]);
      indices.push(sub.indices[k]);
    } else {
      words[words.length - 1] += piece;
      wordTokens[wordTokens.length - 1].push(...sub.tokens[k]);
      indices[indices.length - 1].push(...sub.indices[k]);
    }
  });
  return { words, tokens: wordTokens, indices };
}

/**
 * _merge_punctuations (in place): opening punctuation after a space joined to the word after it (right to left),
 * closing punctuation to the word before it (left to right), the emptied words removed.
 */
export function mergePunctuations(words, tokens, indices, prepended = PREPEND, appended = APPEND) {
  let i = words.length - 2, j = words.length - 1;
  while (i >= 0) {
    if (words[i].startsWith(' ') && prepended.includes(pyStrip(words[i]))) {
      words[j] = words[i] + words[j];
      tokens[j] = tokens[i].concat(tokens[j]);
      indices[j] = indices[i].concat(indices[j]);
      words[i] = '';
      tokens[i] = [];
      indices[i] = [];
    } else j = i;
    i--;
  }
  i = 0;
  j = 1;
  while (j < words.length) {
    if (!words[i].endsWith(' ') && appended.includes(words[j])) {
      words[i] += words[j];
      tokens[i] = tokens[i].concat(tokens[j]);
      indices[i] = indices[i].concat(indices[j]);
      words[j] = '';
      tokens[j] = [];
      indices[j] = [];
    } else i = j;
    j++;
  }
  const keep = (a) => a.filter((x) => x.length > 0);
  const w = keep(words), t = keep(tokens), x = keep(indices);
  words.splice(0, words.length, ...w);
  tokens.splice(0, tokens.length, ...t);
  indices.splice(0, indices.length, ...x);
}

/**
 * _combine_tokens_into_words: the words of `tokens` in `language` (a name as the pipeline tracks it: 'english',
 * 'chinese', …; null: english), split on unicode for languages written without spaces, else on spaces.
 * @returns {{words: string[], tokens: number[][], indices: number[][]}} new
 */
export function combineTokensIntoWords(decode, tokens, language, eosTokenId) {
  const lang = language ?? 'english';
  const r = UNICODE_SPLIT.has(lang) ? splitTokensOnUnicode(decode, tokens) : splitTokensOnSpaces(decode, tokens, eosTokenId);
  mergePunctuations(r.words, r.tokens, r.indices);
  return r;
}

/**
 * _collate_word_timestamps: each word with [its first token's start, its last token's end].
 * @param {(ids: number[]) => string} decode
 * @param {number[]} tokens
 * @param {[number, number | null][]} tokenTimestamps per token, [start, end] in seconds
 * @param {string | null} language
 * @param {number} eosTokenId
 * @returns {{text: string, timestamp: [number, number | null]}[]} new
 */
export function collateWordTimestamps(decode, tokens, tokenTimestamps, language, eosTokenId) {
  const { words, indices } = combineTokensIntoWords(decode, tokens, language, eosTokenId);
  return words.map((text, k) => {
    const idx = indices[k];
    return { text, timestamp: [tokenTimestamps[idx[0]][0], tokenTimestamps[idx[idx.length - 1]][1]] };
  });
}
