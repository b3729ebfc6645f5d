// Pre-tokenizers of tokenizer.json: the cuts of normalized text into pieces that the model
// tokenizes one by one, by the Rust library's rules (Pattern::find_matches and the five
// SplitDelimiterBehaviors). Two readers: byteLevelSteps for the byte-level kind (Split, Digits and a
// last ByteLevel), preTokenizer for the others (Metaspace, Split, Digits, BertPreTokenizer,
// Whitespace, WhitespaceSplit, Punctuation, Sequence). A step maps (pieces, atOrigin) to the same,
// where atOrigin says that pieces[0] starts the input (Metaspace's prepend_scheme 'first' needs it).
// Each step's `aligned` does the same to AlignedText pieces (aligned.js: for character offsets).
import * as al from './aligned.js';
import { GPT2_REGEX } from './byte_level.js';
import { compileRegex, literalRegex } from './regex.js';
import { invalid, optionalBoolean, phrase, requireArray, requireBoolean, requireChar, requireObject, requireType, show, unsupported } from './json.js';

const BEHAVIORS = ['Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous'];
const PUNCTUATION = /[\p{P}!-/:-@[-`{-~]/gu; // Rust: is_ascii_punctuation || unicode is_punctuation
const WHITESPACE = /\p{White_Space}/gu; // Rust: char::is_whitespace
const WORD = '\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}'; // the regex crate's Unicode \w
const WHITESPACE_WORDS = new RegExp(`[${WORD}]+|[^${WORD}\\p{White_Space}]+`, 'gu'); // Whitespace's \w+|[^\w\s]+

/**
 * A step that splits each piece at the matches of `re` (a gu RegExp, one match per character for a
 * one-character class, as Rust's char predicates give them) with a SplitDelimiterBehavior.
 */
export function splitStep(re, behavior, invert = false) {
  const general = (pieces, atOrigin) => {
    const out = [];
    let origin = false;
    pieces.forEach((piece, i) => {
      const first = out.length;
      let startsAtZero = false;
      const text = typeof piece === 'string' ? piece : piece.text;
      for (const [start, end] of cuts(text, re, behavior, invert)) {
        if (end > start) {
          if (out.length === first) startsAtZero = start === 0;
          out.push(piece.slice(start, end));
        }
      }
      if (i === 0 && atOrigin && startsAtZero) origin = true;
    });
    return [out, origin];
  };
  const plain = behavior === 'Isolated' && !invert ? (pieces, atOrigin) => isolate(pieces, atOrigin, re) : general;
  return Object.assign(plain, { aligned: general });
}

/** Steps run in order, plain and aligned. */
function sequence(steps) {
  return Object.assign((pieces, atOrigin) => steps.reduce(([p, o], step) => step(p, o), [pieces, atOrigin]), {
    aligned: (pieces, atOrigin) => steps.reduce(([p, o], step) => step.aligned(p, o), [pieces, atOrigin]),
  });
}

/** The fast path of Isolated (no invert): gaps and matches in order, empty ones dropped. */
function isolate(pieces, atOrigin, re) {
  const out = [];
  for (const text of pieces) {
    let prev = 0;
    for (const m of text.matchAll(re)) {
      if (prev < m.index) out.push(text.slice(prev, m.index));
      if (m[0].length > 0) out.push(m[0]);
      prev = m.index + m[0].length;
    }
    if (prev < text.length) out.push(text.slice(prev));
  }
  return [out, atOrigin]; // every piece's first part starts where the piece does
}

/** Rust's NormalizedString::split: [start, end] of the parts to keep. */
function cuts(text, re, behavior, invert) {
  const events = []; // [start, end, isMatch] covering text
  let prev = 0;
  for (const m of text.matchAll(re)) {
    if (prev !== m.index) events.push([prev, m.index, invert]);
    events.push([m.index, m.index + m[0].length, !invert]);
    prev = m.index + m[0].length;
  }
  if (prev !== text.length) events.push([prev, text.length, invert]);
  if (behavior === 'Removed') return events.filter((e) => !e[2]);
  if (behavior === 'Isolated') return events;
  const out = [];
  let previous = false;
  if (behavior === 'MergedWithNext') {
    for (let i = events.length - 1; i >= 0; i--) {
      const [start, end, isMatch] = events[i];
      if (isMatch && !previous && out.length) out[out.length - 1][0] = start;
      else out.push([start, end]);
      previous = isMatch;
    }
    return out.reverse();
  }
  for (const [start, end, isMatch] of events) {
    const merge = behavior === 'Contiguous' ? isMatch === previous : isMatch && !previous;
    if (merge && out.length) out[out.length - 1][1] = end;
    else out.push([start, end]);
    previous = isMatch;
  }
  return out;
}

/** A Split pre-tokenizer's pattern as a gu RegExp. */
function splitPattern(pt, field) {
  const pattern = requireObject(pt.pattern, `${field}.pattern`);
  if (typeof pattern.Regex === 'string') return compileRegex(pattern.Regex, `${field}.pattern.Regex`);
  if (typeof pattern.String === 'string' && pattern.String !== '') return literalRegex(pattern.String);
  throw invalid(`${field}.pattern`, `expected { Regex: string } or { String: non-empty string }, got keys ${Object.keys(pattern).join(', ') || 'none'}`);
}

const digits = (pt, field) => splitStep(requireBoolean(pt.individual_digits, `${field}.individual_digits`) ? /\p{N}/gu : /\p{N}+/gu, 'Isolated');

/**
 * ByteLevel's add_prefix_space: a space before each piece that does not start with one (each: in a
 * Sequence, each piece an earlier step cut, and each part between added tokens). The space takes the
 * first character's offsets (NormalizedString::prepend).
 */
const prefixSpace = Object.assign((pieces, atOrigin) => [pieces.map((p) => (p === '' || p.startsWith(' ') ? p : ` ${p}`)), atOrigin], {
  aligned: (pieces, atOrigin) => [pieces.map((p) => (p.text.startsWith(' ') ? p : al.prepend(p, ' '))), atOrigin],
});

/**
 * The byte-level kind's pre-tokenizer: Split (Isolated) and Digits steps, then ByteLevel, which
 * must come last (it turns text into byte symbols; the model does that here, so it is not a step:
 * its add_prefix_space and GPT-2 regex are).
 */
export function byteLevelSteps(config) {
  const steps = [];
  let byteLevel = false;
  const visit = (pt, field, last) => {
    const type = requireType(pt, field, ['ByteLevel', 'Split', 'Digits', 'Sequence']);
    if (type === 'Sequence') {
      requireArray(pt.pretokenizers, `${field}.pretokenizers`);
      pt.pretokenizers.forEach((p, i) => visit(p, `${field}.pretokenizers[${i}]`, last && i === pt.pretokenizers.length - 1));
    } else if (type === 'ByteLevel') {
      if (!last) throw unsupported(`${field}.type`, 'ByteLevel as the last pre-tokenizer (it turns text into byte symbols)', phrase('ByteLevel before another pre-tokenizer'));
      if (requireBoolean(pt.add_prefix_space, `${field}.add_prefix_space`)) steps.push(prefixSpace);
      const useRegex = pt.use_regex === undefined ? true : requireBoolean(pt.use_regex, `${field}.use_regex`); // Rust's default: true
      if (useRegex) steps.push(splitStep(compileRegex(GPT2_REGEX, `${field}.use_regex`), 'Isolated'));
      byteLevel = true;
    } else if (type === 'Digits') {
      steps.push(digits(pt, field));
    } else {
      // GPT-2-style files isolate their pattern's matches; CLIP's keep only them (Removed, invert).
      if (!BEHAVIORS.includes(pt.behavior)) throw invalid(`${field}.behavior`, `expected one of ${BEHAVIORS.join(', ')}, got ${show(pt.behavior)}`);
      steps.push(splitStep(splitPattern(pt, field), pt.behavior, optionalBoolean(pt.invert, `${field}.invert`, false)));
    }
  };
  if (config == null) throw unsupported('pre_tokenizer', 'a ByteLevel pre-tokenizer (alone or last in a Sequence)', config);
  visit(config, 'pre_tokenizer', true);
  if (!byteLevel) throw unsupported('pre_tokenizer', 'a ByteLevel pre-tokenizer (alone or last in a Sequence)', phrase(`a ${config.type} without one`));
  return sequence(steps);
}

/** Metaspace: ' ' → replacement, the replacement prepended by prepend_scheme, then (split) cut before each. */
function metaspace(pt, field) {
  const replacement = requireChar(pt.replacement, `${field}.replacement`);
  let scheme = pt.prepend_scheme ?? 'always'; // Rust's default
  if (!['first', 'always', 'never'].includes(scheme)) throw invalid(`${field}.prepend_scheme`, `expected 'first', 'always' or 'never', got ${show(scheme)}`);
  if (optionalBoolean(pt.add_prefix_space, `${field}.add_prefix_space`, true) === false) {
    if (scheme !== 'never') throw invalid(`${field}.add_prefix_space`, `false does not match prepend_scheme ${show(scheme)} (the tokenizers library refuses the file)`);
  }
  const split = optionalBoolean(pt.split, `${field}.split`, true);
  const cut = splitStep(literalRegex(replacement), 'MergedWithNext');
  const prepends = (i, atOrigin) => scheme === 'always' || (scheme === 'first' && i === 0 && atOrigin);
  return Object.assign((pieces, atOrigin) => {
    const replaced = pieces.map((text, i) => {
      let s = text.replaceAll(' ', replacement);
      if (prepends(i, atOrigin) && !s.startsWith(replacement)) s = replacement + s;
      return s;
    });
    return split ? cut(replaced, atOrigin) : [replaced, atOrigin];
  }, {
    aligned: (pieces, atOrigin) => {
      const replaced = pieces.map((piece, i) => {
        let t = al.replace(piece, / /g, replacement);
        if (prepends(i, atOrigin) && !t.text.startsWith(replacement)) t = al.prepend(t, replacement);
        return t;
      });
      return split ? cut.aligned(replaced, atOrigin) : [replaced, atOrigin];
    },
  });
}

const TYPES = ['Metaspace', 'Split', 'Digits', 'BertPreTokenizer', 'Whitespace', 'WhitespaceSplit', 'Punctuation', 'Sequence'];

/** The pre-tokenizer of a SentencePiece-style, WordPiece or Unigram file: one step (or null: none). */
export function preTokenizer(config, field = 'pre_tokenizer') {
  if (config == null) return null;
  const type = requireType(config, field, TYPES);
  const behavior = (name) => {
    const b = config[name] ?? 'Isolated';
    if (!BEHAVIORS.includes(b)) throw invalid(`${field}.${name}`, `expected one of ${BEHAVIORS.map((x) => `'${x}'`).join(', ')}, got ${show(b)}`);
    return b;
  };
  switch (type) {
    case 'Sequence': {
      return sequence(requireArray(config.pretokenizers, `${field}.pretokenizers`).map((p, i) => preTokenizer(p, `${field}.pretokenizers[${i}]`)).filter(Boolean));
    }
    case 'Metaspace': return metaspace(config, field);
    case 'Split': return splitStep(splitPattern(config, field), behavior('behavior'), optionalBoolean(config.invert, `${field}.invert`, false));
    case 'Digits': return digits(config, field);
    case 'Punctuation': return splitStep(PUNCTUATION, behavior('behavior'));
    case 'WhitespaceSplit': return splitStep(WHITESPACE, 'Removed');
    case 'Whitespace': return splitStep(WHITESPACE_WORDS, 'Removed', true);
    default: // BertPreTokenizer: whitespace removed, then punctuation isolated
      return sequence([splitStep(WHITESPACE, 'Removed'), splitStep(PUNCTUATION, 'Isolated')]);
  }
}
