// 'attnwasm/tokenizer': the byte-level BPE tokenizer of a Hugging Face tokenizer.json (the GPT-2,
// Llama 3, SmolLM, Qwen2 kind): text → ids as Hugging Face's Rust `tokenizers` gives them, ids →
// text, and a streaming decoder for generation. Pure JS, no wasm. Not here: WordPiece, Unigram and
// SentencePiece-style files (Metaspace, byte_fallback), pairs of texts, offsets, truncation,
// padding; a file that needs one of them is refused by name (ERR_UNSUPPORTED).
//
// Who does what. @huggingface/tokenizers (Hugging Face's pure-JS library, no dependencies) runs the
// pre-tokenizer's Split regexes: Oniguruma patterns (Llama 3's (?i:'s|…), \p{L}, \s as Oniguruma
// means it) translated to JS RegExps, the part worth a library. This file checks the tokenizer.json
// strictly, splits out the added tokens, applies the normalizer, maps text to byte symbols, merges
// (BytePairEncoder: the Rust library's algorithm on integer ids, 2–4× faster than the JS library's
// string-keyed one on 100 000 characters with a cold cache), applies the post-processor's template and decodes
// bytes, each by the Rust library's rules where the JS library's own pipeline differs from them:
//   - the ByteLevel pre-tokenizer's own regex (GPT-2's) runs as a Split with the same Oniguruma
//     pattern: the JS library's built-in copy uses JS \s (U+FEFF yes, U+0085 no), Rust's \s the
//     reverse;
//   - Digits runs as a Split on \p{N} (Rust: char::is_numeric, so ½ ² Ⅻ ٣ are digits; JS \d is
//     ASCII);
//   - lstrip/rstrip of added tokens strip Unicode White_Space (Rust's char::is_whitespace);
//   - decoding passes every token, added ones too, through the ByteLevel byte map (a token with a
//     character outside the map as its UTF-8 bytes), as Rust does; added tokens with normalized:
//     true decode as their normalized text;
//   - no clean-up of spaces before punctuation (that is transformers' tokenizer_config.json option,
//     not part of tokenizer.json), so decode(encode(text)) === text.
// tests/js/tokenizer.test.mjs checks all of it against goldens from the Rust library.
import { SplitPreTokenizer } from '@huggingface/tokenizers';
import { AttnWasmError, describe, rangeError, typeError } from './errors.js';
import { checkOptions } from './checks.js';
import { checkBool } from './checks.js';
import { repeatedKey } from './json_text.js';

/** GPT-2's pre-tokenizer regex, as the Rust ByteLevel pre-tokenizer compiles it (use_regex: true). */
const GPT2_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/**
 * GPT-2's bytes_to_unicode: byte b → the character that stands for it in vocabularies. Printable
 * Latin-1 bytes stand for themselves; the others (controls, space, 0x7F–0xA0, 0xAD) for U+0100 +
 * their order.
 */
const BYTE_SYMBOL = (() => {
  const table = new Array(256);
  let next = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[b] = String.fromCharCode(printable ? b : 0x100 + next++);
  }
  return table;
})();
/** The inverse: character code → byte, -1 for characters that stand for no byte. */
const SYMBOL_BYTE = (() => {
  const table = new Int16Array(0x144).fill(-1);
  BYTE_SYMBOL.forEach((c, b) => { table[c.charCodeAt(0)] = b; });
  return table;
})();

const WHITESPACE = /\p{White_Space}/u; // Rust's char::is_whitespace
const utf8 = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// The strict reading of tokenizer.json. Every refusal names the field, what is supported and what
// the file has: ERR_UNSUPPORTED for a valid file of another kind, ERR_INVALID_ARGUMENT for a file
// the Rust library would not load either (or would load with ids other than the file's).

const unsupported = (field, expected, got) => new AttnWasmError('ERR_UNSUPPORTED', `tokenizer.json ${field}: expected ${expected}, got ${show(got)}`);
const invalid = (field, message) => new AttnWasmError('ERR_INVALID_ARGUMENT', `tokenizer.json ${field}: ${message}`);

/** A description of what the file has, shown as is (show() quotes strings). */
class Phrase {
  constructor(text) { this.text = text; }
}
const phrase = (text) => new Phrase(text);

function show(v) {
  if (v instanceof Phrase) return v.text;
  if (v === undefined) return 'nothing (the field is missing)';
  if (typeof v === 'string') return `'${v}'`;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return describe(v);
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function requireObject(v, field) {
  if (!isObject(v)) throw invalid(field, `expected an object, got ${show(v)}`);
  return v;
}

function requireBoolean(v, field) {
  if (typeof v !== 'boolean') throw invalid(field, `expected a boolean, got ${show(v)}`);
  return v;
}

/** A type name among `types`, else ERR_UNSUPPORTED naming field.type. */
function requireType(v, field, types) {
  requireObject(v, field);
  if (!types.includes(v.type)) throw unsupported(`${field}.type`, types.map((t) => `'${t}'`).join(' or '), v.type);
  return v.type;
}

/** A JS source fragment of an Oniguruma pattern that the translation cannot run exactly, or null. */
function untranslatable(pattern) {
  let inClass = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      if (!inClass && pattern[i + 1] === 'G') return '\\G';
      i++;
    } else if (inClass) {
      if (c === '[') inClass++;
      else if (c === ']') inClass--;
    } else if (c === '[') {
      inClass = 1;
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++; // a ] first in a class is literal
    } else if (pattern.startsWith('(?>', i)) {
      return 'an atomic group (?>…)';
    } else if ((c === '*' || c === '+' || c === '?') && pattern[i + 1] === '+' && pattern[i - 1] !== '(') {
      return `a possessive quantifier ${c}+`;
    }
  }
  return null;
}

/** The largest token id: ids are int32 (the Rust library's u32, kept below 2^31 for Int32Array). */
const MAX_ID = 2 ** 31 - 1;

/** A pattern for a message: at most 60 characters, then how long it is. */
function shortPattern(regex) {
  return regex.length <= 60 ? `'${regex}'` : `'${regex.slice(0, 60)}…' (${regex.length} characters)`;
}

/**
 * Why an Oniguruma pattern may backtrack catastrophically, or null. V8's regex engine has no
 * backtracking limit (the Rust library's Oniguruma has one), so such patterns are refused when the
 * tokenizer is made instead of hanging encode() later. The rule is conservative and simple: a group
 * repeated by *, +, {n,} or {n,m} (m > 1) must hold neither a repetition of its own nor an alternation
 * — (a+)+, (a*)*, (?:a|ab)+, ((a+)b){2,9} are refused; a+b*, (?:ab)+, (?i:'s|'t), \s*[\r\n]+ pass.
 * Every pre-tokenizer pattern of the hub's byte-level tokenizers (GPT-2, Llama 3, Qwen2, GPT-4o style)
 * passes: none repeats a group.
 */
function backtrackRisk(pattern) {
  const frames = [{ repeats: false, alternates: false }];
  let last = null; // what a quantifier right here would repeat: { group: frame } or { atom: true }
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    const top = frames[frames.length - 1];
    if (c === '\\') {
      const brace = /^\\[pPx]\{[^}]*\}|^\\u\{[^}]*\}/.exec(pattern.slice(i));
      i += brace ? brace[0].length - 1 : 1;
      last = { atom: true };
    } else if (c === '[') {
      let depth = 1;
      i++;
      if (pattern[i] === '^') i++;
      if (pattern[i] === ']') i++; // a ] first in a class is literal
      for (; i < pattern.length && depth > 0; i++) {
        if (pattern[i] === '\\') i++;
        else if (pattern[i] === '[') depth++;
        else if (pattern[i] === ']') depth--;
      }
      i--;
      last = { atom: true };
    } else if (c === '(') {
      frames.push({ repeats: false, alternates: false });
      last = null;
    } else if (c === ')') {
      const closed = frames.length > 1 ? frames.pop() : top;
      const parent = frames[frames.length - 1];
      parent.repeats ||= closed.repeats;
      parent.alternates ||= closed.alternates;
      last = { group: closed };
    } else if (c === '|') {
      top.alternates = true;
      last = null;
    } else if (c === '*' || c === '+' || c === '?' || c === '{') {
      let repeating = c !== '?';
      if (c === '{') {
        const m = /^\{(\d*)(,?)(\d*)\}/.exec(pattern.slice(i));
        if (!m) { last = { atom: true }; continue; } // a literal {
        repeating = m[2] === ',' ? m[3] === '' || Number(m[3]) > 1 : Number(m[1]) > 1;
        i += m[0].length - 1;
      }
      if (pattern[i + 1] === '?' || pattern[i + 1] === '+') i++; // lazy or possessive
      if (repeating && last?.group && (last.group.repeats || last.group.alternates)) {
        return `a repeated group that ${last.group.repeats ? 'repeats' : 'alternates'} inside (as in (a+)+ or (a|ab)*)`;
      }
      if (repeating) top.repeats = true;
      last = null;
    } else {
      last = { atom: true };
    }
  }
  return null;
}

/**
 * A library Split pre-tokenizer (behavior Isolated) for an Oniguruma regex, named by `field` in errors.
 * The regex is compiled here, on a one-byte and a two-byte string (V8 compiles a pattern lazily, once per
 * kind of string, and a pattern too large to compile would otherwise throw on every encode).
 */
function regexSplit(regex, field) {
  const bad = untranslatable(regex);
  if (bad) throw unsupported(field, 'a regex without \\G, atomic groups or possessive quantifiers', phrase(`${bad} in ${shortPattern(regex)}`));
  const risk = backtrackRisk(regex);
  if (risk) throw unsupported(field, 'a regex that cannot backtrack catastrophically (no repeated group that repeats or alternates inside)', phrase(`${risk} in ${shortPattern(regex)}`));
  const why = (e) => {
    const m = String(e?.message ?? e);
    return m.length <= 120 ? m : `${m.slice(0, 120)}…`;
  };
  let split;
  try {
    split = new SplitPreTokenizer({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: false });
  } catch (e) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `tokenizer.json ${field}: ${shortPattern(regex)} has no JavaScript RegExp translation (${why(e)})`, { cause: e });
  }
  try {
    split.pre_tokenize(['a 1']);
    split.pre_tokenize(['\u00e9\u4e2d 1']);
  } catch (e) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `tokenizer.json ${field}: ${shortPattern(regex)} does not compile as a JavaScript RegExp (${e?.name ?? 'Error'}: ${why(e)})`, { cause: e });
  }
  return split;
}

/** The last pre-tokenizer step: text → byte symbols (each piece's UTF-8 bytes as BYTE_SYMBOL characters). */
const BYTE_LEVEL = { pre_tokenize: (pieces) => pieces.map(byteSymbols) };

function byteSymbols(piece) {
  let out = '';
  for (let i = 0; i < piece.length; i++) {
    const c = piece.charCodeAt(i);
    if (c >= 0x80) {
      out = '';
      for (const b of utf8.encode(piece)) out += BYTE_SYMBOL[b];
      return out;
    }
    out += BYTE_SYMBOL[c];
  }
  return out;
}

/** The pre-tokenizer as a list of steps (library Split pre-tokenizers, then BYTE_LEVEL) run in order. */
function preTokenizerSteps(config) {
  const steps = [];
  const visit = (pt, field, last) => {
    const type = requireType(pt, field, ['ByteLevel', 'Split', 'Digits', 'Sequence']);
    if (type === 'Sequence') {
      if (!Array.isArray(pt.pretokenizers)) throw invalid(`${field}.pretokenizers`, `expected an array, got ${show(pt.pretokenizers)}`);
      pt.pretokenizers.forEach((p, i) => visit(p, `${field}.pretokenizers[${i}]`, last && i === pt.pretokenizers.length - 1));
    } else if (type === 'ByteLevel') {
      if (!last) throw unsupported(`${field}.type`, 'ByteLevel as the last pre-tokenizer (it turns text into byte symbols)', phrase('ByteLevel before another pre-tokenizer'));
      if (requireBoolean(pt.add_prefix_space, `${field}.add_prefix_space`)) throw unsupported(`${field}.add_prefix_space`, 'false', true);
      const useRegex = pt.use_regex === undefined ? true : requireBoolean(pt.use_regex, `${field}.use_regex`); // Rust's default: true
      if (useRegex) steps.push(regexSplit(GPT2_REGEX, `${field}.use_regex`));
      steps.push(BYTE_LEVEL);
    } else if (type === 'Digits') {
      const individual = requireBoolean(pt.individual_digits, `${field}.individual_digits`);
      steps.push(regexSplit(individual ? '\\p{N}' : '\\p{N}+', field));
    } else {
      if (pt.behavior !== 'Isolated') throw unsupported(`${field}.behavior`, "'Isolated'", pt.behavior);
      if (pt.invert !== undefined && requireBoolean(pt.invert, `${field}.invert`)) throw unsupported(`${field}.invert`, 'false', true);
      const pattern = requireObject(pt.pattern, `${field}.pattern`);
      if (typeof pattern.Regex === 'string') steps.push(regexSplit(pattern.Regex, `${field}.pattern.Regex`));
      else if (typeof pattern.String === 'string' && pattern.String !== '') steps.push(new SplitPreTokenizer({ type: 'Split', pattern: { String: pattern.String }, behavior: 'Isolated', invert: false }));
      else throw invalid(`${field}.pattern`, `expected { Regex: string } or { String: non-empty string }, got keys ${Object.keys(pattern).join(', ') || 'none'}`);
    }
  };
  if (config == null) throw unsupported('pre_tokenizer', "a ByteLevel pre-tokenizer (alone or last in a Sequence)", config);
  visit(config, 'pre_tokenizer', true);
  if (steps[steps.length - 1] !== BYTE_LEVEL) {
    throw unsupported('pre_tokenizer', 'a ByteLevel pre-tokenizer (alone or last in a Sequence)', phrase(`a ${config.type} without one`));
  }
  return steps;
}

/**
 * model: vocab (token → id), merges and the BPE flags. Returns the vocabulary as a Map, its
 * inverse as an array (id → token) and the merges as ids: left, right and merged token of rank r at
 * merges[3r], [3r + 1], [3r + 2].
 */
function checkModel(model) {
  requireType(model, 'model', ['BPE']);
  if (model.dropout != null && model.dropout !== 0) throw unsupported('model.dropout', 'null or 0 (BPE dropout is random: for training)', model.dropout);
  if (model.byte_fallback != null && model.byte_fallback !== false) throw unsupported('model.byte_fallback', 'false (byte fallback is the SentencePiece kind)', model.byte_fallback);
  for (const key of ['continuing_subword_prefix', 'end_of_word_suffix']) {
    if (model[key] != null && model[key] !== '') throw unsupported(`model.${key}`, "null or ''", model[key]);
  }
  if (model.ignore_merges !== undefined) requireBoolean(model.ignore_merges, 'model.ignore_merges');
  requireObject(model.vocab, 'model.vocab');
  const vocab = new Map();
  const tokenOf = []; // id → token, to find a duplicate id
  for (const token in model.vocab) {
    const id = model.vocab[token];
    // Ids are int32 everywhere (the Rust library's u32 ids, Int32Array here): 2^40 would wrap to 0.
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) throw invalid(`model.vocab['${token}']`, `expected an id (an integer in [0, 2^31 - 1]), got ${show(id)}`);
    if (tokenOf[id] !== undefined) throw invalid(`model.vocab['${token}']`, `id ${id} is also the id of '${tokenOf[id]}'`);
    tokenOf[id] = token;
    vocab.set(token, id);
  }
  for (let b = 0; b < 256; b++) {
    if (!vocab.has(BYTE_SYMBOL[b])) throw invalid('model.vocab', `a byte-level vocabulary has all 256 byte symbols; '${BYTE_SYMBOL[b]}' (byte 0x${b.toString(16).padStart(2, '0')}) is missing`);
  }
  if (!Array.isArray(model.merges)) throw invalid('model.merges', `expected an array, got ${show(model.merges)}`);
  const merges = new Int32Array(3 * model.merges.length);
  for (let r = 0; r < model.merges.length; r++) {
    const m = model.merges[r];
    let a, b;
    if (typeof m === 'string') {
      const space = m.indexOf(' ');
      if (space >= 0 && m.indexOf(' ', space + 1) < 0) {
        a = m.slice(0, space);
        b = m.slice(space + 1);
      }
    } else if (Array.isArray(m) && m.length === 2) {
      a = m[0];
      b = m[1];
    }
    if (typeof a !== 'string' || typeof b !== 'string') {
      throw invalid(`model.merges[${r}]`, `expected 'a b' or ['a', 'b'], got ${typeof m === 'string' ? `'${m}'` : show(m)}`);
    }
    const ab = a + b;
    for (const t of [a, b, ab]) {
      if (!vocab.has(t)) throw invalid(`model.merges[${r}]`, `'${t}' (of the merge ${a} + ${b}) is not in model.vocab`);
    }
    merges[3 * r] = vocab.get(a);
    merges[3 * r + 1] = vocab.get(b);
    merges[3 * r + 2] = vocab.get(ab);
  }
  return { vocab, tokenOf, merges };
}

/**
 * added_tokens with the ids the Rust library gives them on loading (a token of the vocabulary its
 * vocabulary id, any other the next id after the vocabulary and the added tokens before it): a file
 * whose ids differ would encode differently there, so it is refused.
 */
function checkAddedTokens(list, vocab) {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw invalid('added_tokens', `expected an array, got ${show(list)}`);
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

/** The ids the post-processor puts before and after the text when special tokens are added. */
function checkPostProcessor(config, idOf) {
  const template = { before: [], after: [] };
  const visit = (pp, field) => {
    const type = requireType(pp, field, ['ByteLevel', 'TemplateProcessing', 'Sequence']);
    if (type === 'Sequence') {
      if (!Array.isArray(pp.processors)) throw invalid(`${field}.processors`, `expected an array, got ${show(pp.processors)}`);
      pp.processors.forEach((p, i) => visit(p, `${field}.processors[${i}]`));
    } else if (type === 'TemplateProcessing') {
      if (template.set) throw unsupported(field, 'one TemplateProcessing', phrase('a second one'));
      template.set = true;
      if (!Array.isArray(pp.single)) throw invalid(`${field}.single`, `expected an array, got ${show(pp.single)}`);
      const special = requireObject(pp.special_tokens, `${field}.special_tokens`);
      let side = template.before;
      pp.single.forEach((item, i) => {
        const itemField = `${field}.single[${i}]`;
        if (isObject(item) && isObject(item.Sequence) && item.Sequence.id === 'A' && side === template.before) {
          side = template.after;
        } else if (isObject(item) && isObject(item.SpecialToken) && typeof item.SpecialToken.id === 'string') {
          const name = item.SpecialToken.id;
          const entry = special[name];
          if (!isObject(entry) || !Array.isArray(entry.ids)) throw invalid(`${field}.special_tokens['${name}'].ids`, `expected the ids of '${name}', got ${show(entry?.ids)}`);
          entry.ids.forEach((id, k) => {
            if (!Number.isSafeInteger(id) || idOf(id) === undefined) throw invalid(`${field}.special_tokens['${name}'].ids[${k}]`, `expected an id of the vocabulary or added_tokens, got ${show(id)}`);
          });
          side.push(...entry.ids);
        } else {
          throw unsupported(itemField, "{ SpecialToken: { id } } or one { Sequence: { id: 'A' } }", isObject(item) ? phrase(`an item with keys ${Object.keys(item).join(', ')}`) : item);
        }
      });
      if (side !== template.after) throw invalid(`${field}.single`, "expected one { Sequence: { id: 'A' } } (the text), got none");
    }
    // ByteLevel as a post-processor only trims offsets: nothing to do for ids.
  };
  if (config != null) visit(config, 'post_processor');
  return { before: Int32Array.from(template.before), after: Int32Array.from(template.after) };
}

// ---------------------------------------------------------------------------------------------
// BPE merges: the Rust library's Word::merge_all. A piece starts as its byte symbols' ids; the
// adjacent pair of lowest merge rank is merged, the leftmost of equal ranks first, until no pair
// has a merge. A binary heap of (rank, position) keys with stale entries skipped on pop keeps long
// pieces (a 100 KB run of one character) at n log n.

const POS = 2 ** 32; // a heap key is rank · 2^32 + position (ranks < 2^21 too)
const CACHE_ENTRIES = 10000; // as the Rust library's BPE cache
const CACHE_MAX_LENGTH = 256;

class BytePairEncoder {
  /**
   * @param {Map<string, number>} vocab
   * @param {Int32Array} merges (left, right, merged) ids per rank, as checkModel gives them
   * @param {boolean} ignoreMerges a piece that is a vocabulary entry is that entry
   */
  constructor(vocab, merges, ignoreMerges) {
    this.vocab = vocab;
    this.ignoreMerges = ignoreMerges;
    this.merges = merges;
    // pair → rank: open addressing over Int32Arrays (a Map keyed by left · 2^21 + right boxes
    // every key, which made fromJSON of a 50 000-merge file several times slower).
    const count = merges.length / 3;
    let size = 16;
    while (size < 2 * count) size *= 2;
    this.mask = size - 1;
    this.slots = new Int32Array(size).fill(-1); // the rank whose pair is in this slot
    for (let r = 0; r < count; r++) {
      let i = this.slot(merges[3 * r], merges[3 * r + 1]);
      while (this.slots[i] >= 0 && !(merges[3 * this.slots[i]] === merges[3 * r] && merges[3 * this.slots[i] + 1] === merges[3 * r + 1])) i = (i + 1) & this.mask;
      this.slots[i] = r; // a later duplicate of a pair wins, as in Rust
    }
    this.cache = new Map();
  }

  slot(a, b) {
    return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77)) >>> 0 & this.mask;
  }

  /** The rank of merging ids a and b, or -1. */
  rank(a, b) {
    const { slots, merges, mask } = this;
    for (let i = this.slot(a, b); ; i = (i + 1) & mask) {
      const r = slots[i];
      if (r < 0 || (merges[3 * r] === a && merges[3 * r + 1] === b)) return r;
    }
  }

  /**
   * The ids of one pre-tokenized piece of text (before its byte symbols: the cache skips those too);
   * the array may be shared (the cache): do not modify.
   */
  encode(text) {
    const cached = this.cache.get(text);
    if (cached) return cached;
    const piece = byteSymbols(text);
    const ids = this.ignoreMerges && this.vocab.has(piece) ? [this.vocab.get(piece)] : this.merge(piece);
    if (text.length < CACHE_MAX_LENGTH && this.cache.size < CACHE_ENTRIES) this.cache.set(text, ids);
    return ids;
  }

  merge(piece) {
    const n = piece.length;
    if (n === 1) return [this.vocab.get(piece)];
    const sym = new Int32Array(n); // the token id at each position, -1 once merged into its left
    const next = new Int32Array(n);
    const prev = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      sym[i] = this.vocab.get(piece[i]);
      next[i] = i + 1 < n ? i + 1 : -1;
      prev[i] = i - 1;
    }
    const heap = [];
    const offer = (pos) => {
      const r = this.rank(sym[pos], sym[next[pos]]);
      if (r >= 0) heapPush(heap, r * POS + pos);
    };
    for (let i = 0; i + 1 < n; i++) offer(i);
    while (heap.length) {
      const key = heapPop(heap);
      const r = Math.floor(key / POS);
      const pos = key - r * POS;
      const right = next[pos];
      // stale: the left symbol was merged away, it has no right neighbour, or the pair changed
      if (sym[pos] < 0 || right < 0 || this.rank(sym[pos], sym[right]) !== r) continue;
      sym[pos] = this.merges[3 * r + 2];
      sym[right] = -1;
      next[pos] = next[right];
      if (next[pos] >= 0) prev[next[pos]] = pos;
      if (prev[pos] >= 0) offer(prev[pos]);
      if (next[pos] >= 0) offer(pos);
    }
    const ids = [];
    for (let i = 0; i >= 0; i = next[i]) ids.push(sym[i]);
    return ids;
  }
}

/** Min-heap of numbers in a plain array. */
function heapPush(heap, key) {
  let i = heap.push(key) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent] <= key) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = key;
}

function heapPop(heap) {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length) {
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1] < heap[child]) child++;
      if (heap[child] >= last) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = last;
  }
  return top;
}

// ---------------------------------------------------------------------------------------------
// Added tokens: matched longest-first, leftmost first, as the Rust library's Aho-Corasick
// (LeftmostLongest) does, in a trie over UTF-16 code units.

class AddedTokenMatcher {
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
      if (offset < start) parts.push({ text: text.slice(offset, start) });
      parts.push({ token });
      offset = stop;
    }
    if (offset < text.length) parts.push({ text: text.slice(offset) });
    return parts;
  }
}

// ---------------------------------------------------------------------------------------------

function parseJson(json) {
  if (json instanceof ArrayBuffer) json = new Uint8Array(json);
  if (json instanceof Uint8Array) json = new TextDecoder('utf-8', { fatal: false }).decode(json);
  if (typeof json === 'string') {
    const repeated = repeatedKey(json);
    if (repeated) throw invalid(repeated.path === '' ? '(top level)' : repeated.path.slice(repeated.path[0] === '.' ? 1 : 0), `the key '${repeated.key}' is given twice (JSON.parse would keep the last, other readers the first)`);
    try {
      json = JSON.parse(json);
    } catch (e) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tokenizer.json: not JSON (${e.message})`, { cause: e });
    }
  } else if (!isObject(json)) {
    throw typeError(`tokenizer.json: expected the parsed object, its text or its bytes (a Uint8Array or ArrayBuffer), got ${describe(json)}`);
  }
  if (!isObject(json)) throw invalid('(top level)', `expected an object, got ${describe(json)}`);
  return json;
}

/**
 * A byte-level BPE tokenizer from a Hugging Face tokenizer.json. Immutable once made; holds no
 * native memory (nothing to dispose). Made with Tokenizer.fromJSON.
 */
export class Tokenizer {
  /**
   * Reads a tokenizer.json strictly: the GPT-2 / Llama 3 / SmolLM / Qwen2 kind — a BPE model over
   * byte symbols, no normalizer or NFC, a pre-tokenizer of Split (Isolated), Digits and ByteLevel
   * steps ending in ByteLevel, a ByteLevel decoder, a ByteLevel and/or TemplateProcessing
   * post-processor. Anything else throws AttnWasmError ERR_UNSUPPORTED naming the field, what is
   * supported and what the file has; a file the Rust library would refuse or give other ids to
   * throws ERR_INVALID_ARGUMENT. The input is not kept or modified.
   * @param {string | object | Uint8Array | ArrayBuffer} json the file's text, bytes or parsed object
   * @returns {Tokenizer}
   */
  static fromJSON(json) {
    return new Tokenizer(parseJson(json), INTERNAL);
  }

  /** @private Use Tokenizer.fromJSON. */
  constructor(json, token) {
    if (token !== INTERNAL) throw typeError('Tokenizer: use Tokenizer.fromJSON(tokenizerJson)');
    const { vocab, tokenOf, merges } = checkModel(json.model);
    if (json.normalizer != null) requireType(json.normalizer, 'normalizer', ['NFC']);
    this._nfc = json.normalizer != null;
    this._splits = preTokenizerSteps(json.pre_tokenizer).slice(0, -1); // the last step is BYTE_LEVEL
    if (json.decoder == null) throw unsupported('decoder', "a ByteLevel decoder", json.decoder);
    requireType(json.decoder, 'decoder', ['ByteLevel']);
    const added = checkAddedTokens(json.added_tokens, vocab);

    // id → token as decode sees it: an added token with normalized: true as its normalized text.
    const normalize = (s) => (this._nfc ? s.normalize('NFC') : s);
    this._idToToken = tokenOf; // id → token (a sparse array where the ids have holes)
    this._vocab = vocab;
    this._added = new Map(); // added token content → id (looked up before the vocabulary, as in Rust)
    this._special = new Set();
    let extra = 0;
    for (const t of added) {
      if (tokenOf[t.id] === undefined) extra++;
      tokenOf[t.id] = t.normalized ? normalize(t.content) : t.content;
      this._added.set(t.content, t.id);
      if (t.special) this._special.add(t.id);
    }
    this._raw = new AddedTokenMatcher(added.filter((t) => !t.normalized).map((t) => ({ ...t, match: t.content })));
    this._normalized = new AddedTokenMatcher(added.filter((t) => t.normalized).map((t) => ({ ...t, match: normalize(t.content) })));
    this._template = checkPostProcessor(json.post_processor, (id) => tokenOf[id]);
    this._bpe = new BytePairEncoder(vocab, merges, json.model.ignore_merges ?? false);
    this._bytes = new Map(); // id → its bytes (filled as ids are decoded)
    /** Number of ids: the vocabulary plus the added tokens not in it (the Rust library's get_vocab_size(true)). */
    this.vocabSize = vocab.size + extra;
    /** @private The largest id (ids may have holes: it can exceed vocabSize - 1); a model's vocab_size must exceed it. */
    this._maxId = tokenOf.length - 1;
    Object.freeze(this);
  }

  /**
   * Text → token ids, as the Rust library's encode(text, add_special_tokens) gives them: added and
   * special tokens written in the text become their ids (longest first), the rest is normalized,
   * pre-tokenized and merged; `addSpecialTokens` (default true) adds the post-processor's tokens
   * (Llama 3's <|begin_of_text|>). Unpaired surrogates count as U+FFFD.
   * @param {string} text
   * @param {{ addSpecialTokens?: boolean }} [options]
   * @returns {Int32Array} a new array owned by the caller
   */
  encode(text, options) {
    if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
    const { addSpecialTokens } = checkOptions(options, ['addSpecialTokens'], 'encode');
    const withSpecial = checkBool(addSpecialTokens, 'addSpecialTokens', true);
    const ids = [];
    for (const part of this._raw.split(text.toWellFormed())) {
      if (part.token) {
        ids.push(part.token.id);
        continue;
      }
      for (const sub of this._normalized.split(this._nfc ? part.text.normalize('NFC') : part.text)) {
        if (sub.token) {
          ids.push(sub.token.id);
          continue;
        }
        for (const piece of this._split(sub.text)) {
          for (const id of this._bpe.encode(piece)) ids.push(id);
        }
      }
    }
    if (!withSpecial) return Int32Array.from(ids);
    const { before, after } = this._template;
    const out = new Int32Array(before.length + ids.length + after.length);
    out.set(before, 0);
    out.set(ids, before.length);
    out.set(after, before.length + ids.length);
    return out;
  }

  /**
   * The pre-tokenizer's pieces of `text`, in byte symbols ('Ġworld' for ' world'): what the Rust
   * library's pre_tokenizer.pre_tokenize_str gives (no normalizer, no added tokens).
   * @param {string} text
   * @returns {string[]}
   */
  preTokenize(text) {
    if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
    return this._preTokenize(text.toWellFormed());
  }

  _preTokenize(text) {
    return BYTE_LEVEL.pre_tokenize(this._split(text));
  }

  /** The pieces of the pre-tokenizer's Split steps, before the byte symbols. */
  _split(text) {
    let pieces = [text];
    for (const step of this._splits) pieces = step.pre_tokenize(pieces);
    return pieces;
  }

  /**
   * Token ids → text, as the Rust library's decode(ids, skip_special_tokens) gives it: the tokens'
   * bytes joined and read as UTF-8, a broken sequence as U+FFFD. `skipSpecialTokens` (default
   * false) leaves out the special tokens. An id outside the vocabulary throws RangeError (the Rust
   * library would drop it silently).
   * @param {ArrayLike<number>} ids an Array or typed array of ids
   * @param {{ skipSpecialTokens?: boolean }} [options]
   * @returns {string}
   */
  decode(ids, options) {
    const { skipSpecialTokens } = checkOptions(options, ['skipSpecialTokens'], 'decode');
    const skip = checkBool(skipSpecialTokens, 'skipSpecialTokens', false);
    const list = this._checkIds(ids);
    const parts = [];
    let length = 0;
    for (let i = 0; i < list.length; i++) {
      if (skip && this._special.has(list[i])) continue;
      const bytes = this._tokenBytes(list[i]);
      parts.push(bytes);
      length += bytes.length;
    }
    const all = new Uint8Array(length);
    let at = 0;
    for (const bytes of parts) {
      all.set(bytes, at);
      at += bytes.length;
    }
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(all);
  }

  /**
   * A streaming decoder for generation: push(id) returns the text that became complete with that
   * token and holds back an incomplete UTF-8 sequence (an emoji split across byte tokens comes out
   * whole with its last byte, never as U+FFFD halves); end() returns what is held back. The pushed
   * texts joined with end()'s equal decode(ids) of the same ids.
   * @param {{ skipSpecialTokens?: boolean }} [options]
   * @returns {StreamDecoder}
   */
  streamDecoder(options) {
    const { skipSpecialTokens } = checkOptions(options, ['skipSpecialTokens'], 'streamDecoder');
    return new StreamDecoder(this, checkBool(skipSpecialTokens, 'skipSpecialTokens', false), INTERNAL);
  }

  /**
   * The id of a token: a vocabulary entry in byte symbols ('Ġthe') or an added token's content
   * ('<|endoftext|>'); undefined for anything else.
   * @param {string} token
   * @returns {number | undefined}
   */
  tokenToId(token) {
    if (typeof token !== 'string') throw typeError(`token: expected a string, got ${describe(token)}`);
    return this._added.get(token) ?? this._vocab.get(token);
  }

  /**
   * The token of an id (vocabulary entries in byte symbols), undefined for an id outside the
   * vocabulary.
   * @param {number} id
   * @returns {string | undefined}
   */
  idToToken(id) {
    if (!Number.isInteger(id)) throw typeError(`id: expected an integer, got ${typeof id === 'number' ? id : describe(id)}`);
    return id >= 0 ? this._idToToken[id] : undefined;
  }

  /**
   * Whether an id is a special added token (those decode's skipSpecialTokens leaves out).
   * @param {number} id
   * @returns {boolean}
   */
  isSpecial(id) {
    if (!Number.isInteger(id)) throw typeError(`id: expected an integer, got ${typeof id === 'number' ? id : describe(id)}`);
    return this._special.has(id);
  }

  _checkIds(ids) {
    if (!(Array.isArray(ids) || (ArrayBuffer.isView(ids) && !(ids instanceof DataView)))) {
      throw typeError(`ids: expected an Array or typed array of token ids, got ${describe(ids)}`);
    }
    for (let i = 0; i < ids.length; i++) this._checkId(ids[i], `ids[${i}]`);
    return ids;
  }

  _checkId(id, name) {
    if (typeof id !== 'number' || !Number.isInteger(id)) throw typeError(`${name}: expected an integer token id, got ${typeof id === 'number' ? id : describe(id)}`);
    if (id < 0 || this._idToToken[id] === undefined) throw rangeError(`${name}: expected an id of this tokenizer's vocabulary (${this.vocabSize} ids), got ${id}`);
  }

  /** The bytes an id decodes to: its token's byte symbols, or its UTF-8 when a character is not one. */
  _tokenBytes(id) {
    let bytes = this._bytes.get(id);
    if (bytes) return bytes;
    const token = this._idToToken[id];
    bytes = new Uint8Array(token.length);
    for (let i = 0; i < token.length; i++) {
      const c = token.charCodeAt(i);
      const b = c < SYMBOL_BYTE.length ? SYMBOL_BYTE[c] : -1;
      if (b < 0) {
        bytes = utf8.encode(token);
        break;
      }
      bytes[i] = b;
    }
    this._bytes.set(id, bytes);
    return bytes;
  }
}

const INTERNAL = Symbol('attnwasm.tokenizer');

/**
 * Decodes ids one at a time (Tokenizer#streamDecoder). Holds at most three bytes of an unfinished
 * UTF-8 sequence between calls.
 */
class StreamDecoder {
  /** @private Use tokenizer.streamDecoder(). */
  constructor(tokenizer, skipSpecialTokens, token) {
    if (token !== INTERNAL) throw typeError('StreamDecoder: use tokenizer.streamDecoder()');
    this._tokenizer = tokenizer;
    this._skip = skipSpecialTokens;
    // ignoreBOM: a U+FEFF at the start is text, as in the Rust library's from_utf8_lossy.
    this._utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  }

  /**
   * The text that became complete with this token ('' while a character's bytes are incomplete or
   * for a skipped special token).
   * @param {number} id
   * @returns {string}
   */
  push(id) {
    this._tokenizer._checkId(id, 'id');
    return this._push(id);
  }

  _push(id) {
    if (this._skip && this._tokenizer._special.has(id)) return '';
    return this._utf8.decode(this._tokenizer._tokenBytes(id), { stream: true });
  }

  /**
   * The text held back: '' after whole characters, U+FFFD for an incomplete sequence (as decode
   * gives it). The decoder can be used again afterwards, as a new one.
   * @returns {string}
   */
  end() {
    return this._utf8.decode();
  }
}
