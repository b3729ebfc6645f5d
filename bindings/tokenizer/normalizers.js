// Normalizers of tokenizer.json as functions text → text, by the Rust library's rules: NFC, NFD,
// NFKC, NFKD, Lowercase (character by character, no final-sigma rule), Strip, StripAccents, Prepend,
// Replace, BertNormalizer, Precompiled (precompiled.js) and Sequence. The byte-level kind takes none
// or NFC only (byteLevelNormalizer). Not here: which pieces they apply to (added tokens: tokenizer.js).
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
  return (text) => {
    if (cleanText) text = text.replace(BERT_DROP, '').replace(BERT_SPACE, ' ');
    if (chinese) text = text.replace(CJK, ' $& ');
    if (stripAccents) text = text.normalize('NFD').replace(NONSPACING_MARK, '');
    return lower ? lowercase(text) : text;
  };
}

function replace(config, field) {
  const pattern = requireObject(config.pattern, `${field}.pattern`);
  const content = requireString(config.content, `${field}.content`);
  let re;
  if (typeof pattern.Regex === 'string') re = compileRegex(pattern.Regex, `${field}.pattern.Regex`);
  else if (typeof pattern.String === 'string' && pattern.String !== '') re = literalRegex(pattern.String);
  else throw invalid(`${field}.pattern`, `expected { Regex: string } or { String: non-empty string }, got ${isObject(pattern) ? `keys ${Object.keys(pattern).join(', ') || 'none'}` : show(pattern)}`);
  return (text) => text.replace(re, () => content);
}

const TYPES = ['NFC', 'NFD', 'NFKC', 'NFKD', 'Lowercase', 'Strip', 'StripAccents', 'Prepend', 'Replace', 'BertNormalizer', 'Precompiled', 'Sequence'];

/** A normalizer of a SentencePiece-style, WordPiece or Unigram file (null: none). */
export function normalizer(config, field = 'normalizer') {
  if (config == null) return null;
  const type = requireType(config, field, TYPES);
  switch (type) {
    case 'NFC': case 'NFD': case 'NFKC': case 'NFKD': return (text) => text.normalize(type);
    case 'Lowercase': return lowercase;
    case 'StripAccents': return (text) => text.replace(/\p{M}/gu, ''); // Rust: is_combining_mark
    case 'Strip': {
      const left = optionalBoolean(config.strip_left, `${field}.strip_left`, true);
      const right = optionalBoolean(config.strip_right, `${field}.strip_right`, true);
      return (text) => strip(text, left, right);
    }
    case 'Prepend': {
      const prepend = requireString(config.prepend, `${field}.prepend`);
      return (text) => (text === '' ? text : prepend + text);
    }
    case 'Replace': return replace(config, field);
    case 'BertNormalizer': return bert(config, field);
    case 'Precompiled': {
      const map = new PrecompiledCharsmap(requireString(config.precompiled_charsmap, `${field}.precompiled_charsmap`), `${field}.precompiled_charsmap`);
      return (text) => map.normalize(text);
    }
    default: {
      const steps = requireArray(config.normalizers, `${field}.normalizers`).map((n, i) => normalizer(n, `${field}.normalizers[${i}]`)).filter(Boolean);
      return (text) => steps.reduce((t, step) => step(t), text);
    }
  }
}

/** The byte-level kind's normalizer: none or NFC (Qwen2). */
export function byteLevelNormalizer(config) {
  if (config == null) return null;
  requireType(config, 'normalizer', ['NFC']);
  return (text) => text.normalize('NFC');
}
