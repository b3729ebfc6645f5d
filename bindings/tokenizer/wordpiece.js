// The WordPiece model of tokenizer.json (BERT, all-MiniLM, bge, e5, gte): each pre-tokenized word is
// cut greedily into the longest vocabulary entries from the left, every entry after the first
// written with continuing_subword_prefix ('##'); a word with a part that matches nothing, or longer
// than max_input_chars_per_word characters, is the unknown token alone (the Rust library's rules).
// Each longest match starts at the longest vocabulary entry's length, not at the word's end: the same ids,
// in time linear in the word (a 20 000-character word under max_input_chars_per_word 1e12 took hours when
// every length from the word's end was tried; docs/reliability.md, "Bounded work").
import { invalid, requireInteger, requireString, requireType } from './json.js';
import { readVocab, unkId } from './vocab.js';

export class WordPieceModel {
  constructor(model) {
    requireType(model, 'model', ['WordPiece']);
    const { vocab, tokenOf } = readVocab(model.vocab, 'model.vocab');
    this.vocab = vocab;
    this.tokenOf = tokenOf;
    this.prefix = model.continuing_subword_prefix == null ? '##' : requireString(model.continuing_subword_prefix, 'model.continuing_subword_prefix');
    this.maxChars = model.max_input_chars_per_word == null ? 100 : requireInteger(model.max_input_chars_per_word, 'model.max_input_chars_per_word', 0, Number.MAX_SAFE_INTEGER);
    this.unk = unkId(vocab, requireString(model.unk_token ?? '[UNK]', 'model.unk_token'), 'model.unk_token');
    if (vocab.size === 0) throw invalid('model.vocab', 'expected at least the unknown token, got no entry');
    /** The longest entry's length in UTF-16 code units: no longer piece can match. */
    this.longest = 0;
    for (const token of vocab.keys()) this.longest = Math.max(this.longest, token.length);
    this.cache = new Map();
  }

  /** The ids of one word (an array that may be shared: do not modify). */
  encode(word) {
    const cached = this.cache.get(word);
    if (cached) return cached;
    const ids = this.split(word);
    if (word.length < 256 && this.cache.size < 10000) this.cache.set(word, ids);
    return ids;
  }

  /**
   * The ids of one word with each one's [start, end) in the word's code units (offsets; the unknown
   * token spans the whole word).
   */
  spans(word) {
    const ends = [];
    const ids = this.split(word, ends);
    if (ends.length !== ids.length) return { ids, starts: [0], ends: [word.length] };
    return { ids, starts: [0, ...ends.slice(0, -1)], ends };
  }

  split(word, ends = null) {
    let chars = 0;
    for (const _ of word) if (++chars > this.maxChars) return [this.unk];
    const ids = [];
    for (let start = 0; start < word.length;) {
      let end = Math.min(word.length, start + this.longest);
      // never between the two halves of a surrogate pair
      if (end < word.length && end > start && isLowSurrogate(word.charCodeAt(end)) && isHighSurrogate(word.charCodeAt(end - 1))) end--;
      let id;
      while (start < end) {
        const sub = start > 0 ? this.prefix + word.slice(start, end) : word.slice(start, end);
        id = this.vocab.get(sub);
        if (id !== undefined) break;
        // one character shorter (a surrogate pair is one character)
        end -= end - 2 >= start && isLowSurrogate(word.charCodeAt(end - 1)) && isHighSurrogate(word.charCodeAt(end - 2)) ? 2 : 1;
      }
      if (id === undefined) {
        if (ends) ends.length = 0;
        return [this.unk];
      }
      ids.push(id);
      if (ends) ends.push(end);
      start = end;
    }
    return ids;
  }
}

const isHighSurrogate = (c) => c >= 0xd800 && c < 0xdc00;
const isLowSurrogate = (c) => c >= 0xdc00 && c < 0xe000;
