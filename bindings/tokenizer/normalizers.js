// Normalizers of tokenizer.json as functions text → text, by the Rust library's rules: NFC, NFD,
// NFKC, NFKD, Lowercase (character by character, no final-sigma rule), Strip, StripAccents, Prepend,
// Replace, BertNormalizer, Precompiled (precompiled.js) and Sequence, for both kinds of file (byte-level:
// Qwen2's NFC, CLIP's NFC + Replace + Lowercase). Each function's `aligned` does the same to an AlignedText
// (aligned.js), keeping the Rust library's alignments to the original for character offsets.
// Not here: which pieces they apply to (added tokens: tokenizer.js).
import * as al from './aligned.js';
import { PrecompiledCharsmap } from './precompiled.js';
import { compileRegex, literalRegex } from './regex.js';
import { invalid, isObject, optionalBoolean, requireArray, requireBoolean, requireObject, requireString, requireType, show } from './json.js';

const SIGMA = /\u03a3/; // the one letter whose String#toLowerCase depends on context
const SPACE = /\p{White_Space}/u;

/** Rust's char::to_lowercase, character by character (JS lowercases a final Σ as ς; Rust as σ). */
export function lowercase(text) {
  if (!SIGMA.test(text)) return text.toLowerCase();
  let out = '';
  for (const c of text) out += c.toLowerCase();
  return out;
}

/** fn with its aligned form attached. */
const withAligned = (fn, aligned) => Object.assign(fn, { aligned });

/** Rust's lrstrip: the leading / trailing White_Space removed. */
function stripAligned(src, left, right) {
  const chars = [...src.text];
  let a = 0;
  let b = chars.length;
  if (left) while (a < b && SPACE.test(chars[a])) a++;
  if (right) while (b > a && SPACE.test(chars[b - 1])) b--;
  let i = 0;
  return al.filter(src, () => (i++ >= a && i <= b));
}

function strip(text, left, right) {
  const chars = [...text];
  let a = 0;
  let b = chars.length;
  if (left) while (a < b && SPACE.test(chars[a])) a++;
  if (right) while (b > a && SPACE.test(chars[b - 1])) b--;
  return a === 0 && b === chars.length ? text : chars.slice(a, b).join('');
}

// BertNormalizer's classes: control = general category Other except \t \n \r; CJK ideograph blocks.
const BERT_DROP = /[\0\ufffd]|(?![\t\n\r])\p{C}/gu;
const BERT_SPACE = /[\t\n\r]|\p{White_Space}/gu;
const CJK = /[\u4e00-\u9fff\u3400-\u4dbf\u{20000}-\u{2a6df}\u{2a700}-\u{2b73f}\u{2b740}-\u{2b81f}\u{2b920}-\u{2ceaf}\uf900-\ufaff\u{2f800}-\u{2fa1f}]/gu;
const NONSPACING_MARK = /\p{Mn}/gu;

function bert(config, field) {
  const cleanText = requireBoolean(config.clean_text, `${field}.clean_text`);
  const chinese = requireBoolean(config.handle_chinese_chars, `${field}.handle_chinese_chars`);
  const lower = requireBoolean(config.lowercase, `${field}.lowercase`);
  // strip_accents null means: strip them when lowercasing (BERT uncased), keep them otherwise.
  const stripAccents = config.strip_accents == null ? lower : requireBoolean(config.strip_accents, `${field}.strip_accents`);
  const one = (re) => (c) => { re.lastIndex = 0; return re.test(c); };
  const drop = one(BERT_DROP);
  const space = one(BERT_SPACE);
  const cjk = one(CJK);
  const mark = one(NONSPACING_MARK);
  return withAligned((text) => {
    if (cleanText) text = text.replace(BERT_DROP, '').replace(BERT_SPACE, ' ');
    if (chinese) text = text.replace(CJK, ' $& ');
    if (stripAccents) text = text.normalize('NFD').replace(NONSPACING_MARK, '');
    return lower ? lowercase(text) : text;
  }, (t) => {
    if (cleanText) t = al.map(al.filter(t, (c) => !drop(c)), (c) => (space(c) ? ' ' : c));
    if (chinese && t.text.search(CJK) >= 0) t = al.transform(t, Array.from(t.text).flatMap((c) => (cjk(c) ? [[' ', 0], [c, 1], [' ', 1]] : [[c, 0]])));
    if (stripAccents) t = al.filter(al.normalizeForm(t, 'NFD'), (c) => !mark(c));
    return lower ? al.expand(t, lowercase) : t;
  });
}

function replace(config, field) {
  const pattern = requireObject(config.pattern, `${field}.pattern`);
  const content = requireString(config.content, `${field}.content`);
  let re;
  if (typeof pattern.Regex === 'string') re = compileRegex(pattern.Regex, `${field}.pattern.Regex`);
  else if (typeof pattern.String === 'string' && pattern.String !== '') re = literalRegex(pattern.String);
  else throw invalid(`${field}.pattern`, `expected { Regex: string } or { String: non-empty string }, got ${isObject(pattern) ? `keys ${Object.keys(pattern).join(', ') || 'none'}` : show(pattern)}`);
  return withAligned((text) => text.replace(re, () => content), (t) => al.replace(t, re, content));
}

const TYPES = ['NFC', 'NFD', 'NFKC', 'NFKD', 'Lowercase', 'Strip', 'StripAccents', 'Prepend', 'Replace', 'BertNormalizer', 'Precompiled', 'Sequence'];

/** A normalizer of a SentencePiece-style, WordPiece or Unigram file (null: none). */
export function normalizer(config, field = 'normalizer') {
  if (config == null) return null;
  const type = requireType(config, field, TYPES);
  switch (type) {
    case 'NFC': case 'NFD': case 'NFKC': case 'NFKD': return withAligned((text) => text.normalize(type), (t) => al.normalizeForm(t, type));
    case 'Lowercase': return withAligned((text) => lowercase(text), (t) => al.expand(t, lowercase));
    case 'StripAccents': return withAligned((text) => text.replace(/\p{M}/gu, ''), (t) => al.filter(t, (c) => !/\p{M}/u.test(c))); // Rust: is_combining_mark
    case 'Strip': {
      const left = optionalBoolean(config.strip_left, `${field}.strip_left`, true);
      const right = optionalBoolean(config.strip_right, `${field}.strip_right`, true);
      return withAligned((text) => strip(text, left, right), (t) => stripAligned(t, left, right));
    }
    case 'Prepend': {
      const prepend = requireString(config.prepend, `${field}.prepend`);
      return withAligned((text) => (text === '' ? text : prepend + text), (t) => al.prepend(t, prepend));
    }
    case 'Replace': return replace(config, field);
    case 'BertNormalizer': return bert(config, field);
    case 'Precompiled': {
      const map = new PrecompiledCharsmap(requireString(config.precompiled_charsmap, `${field}.precompiled_charsmap`), `${field}.precompiled_charsmap`);
      return withAligned((text) => map.normalize(text), (t) => map.normalizeAligned(t));
    }
    default: {
      const steps = requireArray(config.normalizers, `${field}.normalizers`).map((n, i) => normalizer(n, `${field}.normalizers[${i}]`)).filter(Boolean);
      return withAligned((text) => steps.reduce((t, step) => step(t), text), (t) => steps.reduce((x, step) => step.aligned(x), t));
    }
  }
}
