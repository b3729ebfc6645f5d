// Added tokens of tokenizer.json (added_tokens): their ids checked against the ids the Rust library
// gives them on loading, and the matcher that finds them in text longest first, leftmost first, as
// the Rust library's Aho-Corasick (LeftmostLongest) does, with lstrip / rstrip taking the Unicode
// White_Space beside them. Not here: which text they are looked for in (tokenizer.js).
import { invalid, requireArray, requireBoolean, requireObject, show, unsupported } from './json.js';

const WHITESPACE = /\p{White_Space}/u; // Rust's char::is_whitespace

/**
 * added_tokens with the ids the Rust library gives them on loading (a token of the vocabulary its
 * vocabulary id, any other the next id after the vocabulary and the added tokens before it): a file
 * whose ids differ would encode differently there, so it is refused.
 */
export function checkAddedTokens(list, vocab) {
  if (list === undefined) return [];
  requireArray(list, 'added_tokens');
  let max = -1;
  const contents = new Set();
  return list.map((t, i) => {
    const field = `added_tokens[${i}]`;
    requireObject(t, field);
    if (typeof t.content !== 'string' || t.content === '') throw invalid(`${field}.content`, `expected a non-empty string, got ${show(t.content)}`);
    if (contents.has(t.content)) throw invalid(`${field}.content`, `'${t.content}' is added twice`);
    contents.add(t.content);
    const flags = {};
    for (const key of ['single_word', 'lstrip', 'rstrip', 'normalized', 'special']) flags[key] = requireBoolean(t[key], `${field}.${key}`);
    if (flags.single_word) throw unsupported(`${field}.single_word`, 'false', true);
    const id = vocab.has(t.content) ? vocab.get(t.content) : (max >= vocab.size ? max + 1 : vocab.size);
    if (t.id !== id) throw invalid(`${field}.id`, `expected ${id} (the id the tokenizers library gives '${t.content}': ${vocab.has(t.content) ? 'its id in model.vocab' : 'the next after model.vocab and the added tokens before it'}), got ${show(t.id)}`);
    max = Math.max(max, id);
    return { id, content: t.content, lstrip: flags.lstrip, rstrip: flags.rstrip, normalized: flags.normalized, special: flags.special };
  });
}

export class AddedTokenMatcher {
  /** @param {{content: string, match: string}[]} tokens  `match`: the text to look for */
  constructor(tokens) {
    this.root = new Map();
    this.first = new Uint8Array(0x10000); // 1 where a token starts with that code unit
    for (const t of tokens) {
      this.first[t.match.charCodeAt(0)] = 1;
      let node = this.root;
      for (let i = 0; i < t.match.length; i++) {
        const c = t.match.charCodeAt(i);
        if (!node.has(c)) node.set(c, new Map());
        node = node.get(c);
      }
      node.token = t;
    }
    this.empty = tokens.length === 0;
  }

  /**
   * Splits `text` into [{text} | {token}] parts as the Rust library's find_matches does: an lstrip
   * token takes the White_Space before it (not past the previous match), an rstrip token the
   * White_Space after it. Empty text parts are dropped.
   */
  split(text) {
    if (this.empty) return [{ text }];
    return this.splitRanges(text).map((p) => (p.token ? { token: p.token } : { text: text.slice(p.start, p.end) }));
  }

  /** split() as [{ start, end, token? }] ranges of `text` (a token's range takes the White_Space it strips). */
  splitRanges(text) {
    if (this.empty) return text === '' ? [] : [{ start: 0, end: text.length }];
    const matches = [];
    for (let i = 0; i < text.length;) {
      if (!this.first[text.charCodeAt(i)]) {
        i++;
        continue;
      }
      let node = this.root;
      let found = null;
      for (let j = i; j < text.length; j++) {
        node = node.get(text.charCodeAt(j));
        if (!node) break;
        if (node.token) found = { token: node.token, start: i, stop: j + 1 };
      }
      if (found) {
        matches.push(found);
        i = found.stop;
      } else {
        i++;
      }
    }
    const parts = [];
    let offset = 0;
    for (let { token, start, stop } of matches) {
      if (token.lstrip) {
        let s = start;
        while (s > 0 && WHITESPACE.test(text[s - 1])) s--;
        start = Math.max(s, offset);
      }
      if (token.rstrip) {
        while (stop < text.length && WHITESPACE.test(text[stop])) stop++;
      }
      if (offset < start) parts.push({ start: offset, end: start });
      parts.push({ token, start, end: stop });
      offset = stop;
    }
    if (offset < text.length) parts.push({ start: offset, end: text.length });
    return parts;
  }
}
