// Oniguruma patterns of tokenizer.json (Split pre-tokenizers, Replace normalizers and decoders) as
// JavaScript RegExps: @huggingface/tokenizers translates them (Llama 3's (?i:'s|…), \p{L}, \s as
// Oniguruma means it); this file refuses what the translation cannot run exactly (\G, atomic groups,
// possessive quantifiers) and what V8 could backtrack on without end, compiles each pattern in
// fromJSON, and lists a pattern's matches as the Rust library's Pattern::find_matches does.
import { SplitPreTokenizer } from '@huggingface/tokenizers';
import { AttnWasmError } from '../errors.js';
import { phrase, unsupported } from './json.js';

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

/** A pattern for a message: at most 60 characters, then how long it is. */
export function shortPattern(regex) {
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
 * The RegExp (flags gu) of an Oniguruma regex, named by `field` in errors. It is compiled here, on a
 * one-byte and a two-byte string (V8 compiles a pattern lazily, once per kind of string, and a pattern
 * too large to compile would otherwise throw on every encode).
 */
export function compileRegex(regex, field) {
  const bad = untranslatable(regex);
  if (bad) throw unsupported(field, 'a regex without \\G, atomic groups or possessive quantifiers', phrase(`${bad} in ${shortPattern(regex)}`));
  const risk = backtrackRisk(regex);
  if (risk) throw unsupported(field, 'a regex that cannot backtrack catastrophically (no repeated group that repeats or alternates inside)', phrase(`${risk} in ${shortPattern(regex)}`));
  const why = (e) => {
    const m = String(e?.message ?? e);
    return m.length <= 120 ? m : `${m.slice(0, 120)}…`;
  };
  let re;
  try {
    re = new SplitPreTokenizer({ type: 'Split', pattern: { Regex: regex }, behavior: 'Isolated', invert: true }).pattern;
  } catch (e) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `tokenizer.json ${field}: ${shortPattern(regex)} has no JavaScript RegExp translation (${why(e)})`, { cause: e });
  }
  try {
    for (const text of ['a 1', '\u00e9\u4e2d 1']) [...text.matchAll(re)];
  } catch (e) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `tokenizer.json ${field}: ${shortPattern(regex)} does not compile as a JavaScript RegExp (${e?.name ?? 'Error'}: ${why(e)})`, { cause: e });
  }
  return re;
}

/** A RegExp (flags gu) that finds a literal string. */
export function literalRegex(text) {
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'), 'gu');
}

/**
 * The matches of `re` (a gu RegExp) in `text` as [start, end] pairs, left to right, not overlapping
 * (an empty match moves on by one character, as Oniguruma's find_iter does).
 */
export function regexMatches(text, re) {
  const out = [];
  for (const m of text.matchAll(re)) out.push([m.index, m.index + m[0].length]);
  return out;
}
