// The added and special tokens of transformers' slow tokenizers (PreTrainedTokenizer, v4.40): the
// AddedToken flags, the special-token attributes (bos … mask, additional_special_tokens), the ids
// `_add_tokens` gives tokens not in the vocabulary on construction, and the split of a text around
// added tokens with their lstrip / rstrip / single_word rules. Python's str methods (strip, split,
// isspace) are emulated here with Python's whitespace set. Not here: the classes (slow_*.js).
import { invalid, isObject, show } from './json.js';

/** Python's str.isspace() characters (Unicode Zs, and the bidirectional classes WS, B, S). */
export const PY_SPACE = '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const LEADING = new RegExp(`^[${PY_SPACE}]+`);
const TRAILING = new RegExp(`[${PY_SPACE}]+$`);
export const pyLstrip = (s) => s.replace(LEADING, '');
export const pyRstrip = (s) => s.replace(TRAILING, '');
export const pyStrip = (s) => pyRstrip(pyLstrip(s));
export const pyIsSpace = (c) => new RegExp(`^[${PY_SPACE}]$`).test(c);

/** The special-token attributes, in transformers' order (all_special_tokens follows it). */
export const SPECIAL_ATTRIBUTES = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token', 'additional_special_tokens'];

/** tokenizers.AddedToken: content and flags; `normalized` unset means `not special` (tokenizers 0.19). */
export function addedToken(content, flags = {}) {
  const special = flags.special ?? false;
  return { content, single_word: false, lstrip: false, rstrip: false, special, ...flags, normalized: flags.normalized ?? !special };
}

/** A token from a file: a string, or an AddedToken's fields ({ content, lstrip, … }, with or without "__type"). */
export function tokenFrom(v, file, field) {
  if (typeof v === 'string') return v;
  if (isObject(v) && typeof v.content === 'string') {
    const flags = {};
    for (const k of ['single_word', 'lstrip', 'rstrip', 'normalized', 'special']) {
      if (v[k] === undefined) continue;
      if (typeof v[k] !== 'boolean') throw invalid(`${field}.${k}`, `expected a boolean, got ${show(v[k])}`, file);
      flags[k] = v[k];
    }
    return addedToken(v.content, flags);
  }
  throw invalid(field, `expected a token (a string or { content: string, … }), got ${show(v)}`, file);
}

export const tokenText = (t) => (t == null ? null : typeof t === 'string' ? t : t.content);

/** all_special_tokens_extended: the attributes' tokens in order, each content once. */
export function allSpecialTokensExtended(special) {
  const out = [];
  const seen = new Set();
  for (const key of SPECIAL_ATTRIBUTES) {
    const v = special[key];
    if (!v || (Array.isArray(v) && v.length === 0)) continue;
    for (const t of Array.isArray(v) ? v : [v]) {
      if (seen.has(tokenText(t))) continue;
      seen.add(tokenText(t));
      out.push(t);
    }
  }
  return out;
}

/**
 * Splits text around added tokens, leftmost and longest first (transformers' Trie.split; they
 * differ only for overlapping added tokens, which these tokenizers do not have), then applies each
 * added token's rstrip / lstrip / single_word as PreTrainedTokenizer.tokenize does.
 * @param {string} text @param {Map<string, object>} added content → AddedToken
 * @returns {{ text: string, token: boolean }[]}
 */
export function splitOnAdded(text, added, root) {
  const parts = [];
  let last = 0;
  for (let i = 0; i < text.length;) {
    let node = root;
    let best = 0;
    for (let k = i; k < text.length; k++) {
      node = node.get(text.charCodeAt(k));
      if (!node) break;
      if (node.end) best = k + 1 - i;
    }
    if (best === 0) {
      i++;
      continue;
    }
    if (i > last) parts.push({ text: text.slice(last, i), token: false });
    parts.push({ text: text.slice(i, i + best), token: true });
    i += best;
    last = i;
  }
  if (last < text.length) parts.push({ text: text.slice(last), token: false });
  for (let i = 0; i < parts.length; i++) {
    if (!parts[i].token) continue;
    const tok = added.get(parts[i].text);
    const left = parts[i - 1];
    const right = parts[i + 1];
    if (tok.rstrip && right && right.text) right.text = pyLstrip(right.text);
    if (tok.lstrip && left && left.text) left.text = pyRstrip(left.text);
    if (tok.single_word && left && left.text && !left.text.endsWith(' ')) {
      left.text += parts[i].text;
      parts[i].text = '';
    } else if (tok.single_word && right && right.text && !right.text.startsWith(' ')) {
      right.text = parts[i].text + right.text;
      right.token = false;
      parts[i].text = '';
    }
  }
  // An emptied part is skipped; a part is an added token when its text is one (as the Python re-checks).
  return parts.filter((p) => p.text !== '').map((p) => ({ text: p.text, token: added.has(p.text) }));
}

/** The trie splitOnAdded walks: a Map per node over UTF-16 code units. */
export function addedTrie(contents) {
  const root = new Map();
  for (const c of contents) {
    if (c === '') continue;
    let node = root;
    for (let i = 0; i < c.length; i++) {
      const k = c.charCodeAt(i);
      if (!node.has(k)) node.set(k, new Map());
      node = node.get(k);
    }
    node.end = true;
  }
  return root;
}
