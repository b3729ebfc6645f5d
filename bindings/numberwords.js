// English number words 0 … 999 999 as people type them: the translator's input
// check. Plain JS, no wasm. Three explicit steps:
//
//   normalise  lower case; whitespace collapsed; numbers in digits ("42", "1,234",
//              "12 345", "007") replaced by their plain words ("forty-two"); a comma
//              after "thousand" dropped. Nothing else is rewritten.
//   parse      a small deterministic grammar decides whether the words are one number
//              in 0 … 999 999, and which. The words themselves go to the model as
//              typed ("forty two", "and", "a hundred"): the model learned the variants
//              (tools/models/numbers.py english_spelled generates the same language).
//   refuse     anything else throws AttnWasmError ERR_NOT_A_NUMBER naming the input and
//              the reason, with `suggestion` (a corrected input) where one is close.
//
// Grammar, over the normalised tokens (words and "-"):
//   number   = "zero" | counted | head ["thousand" [rest]]
//   head     = "a" "hundred" tail | "a" (before "thousand") | group        ("a" only first)
//   group    = unit "hundred" tail | below100
//   tail     = [["and"] below100]
//   rest     = "and" below100 | group
//   counted  = below100 "hundred" tail, below100 in 11 … 99 and not a multiple of ten,
//              as the whole number: 1100 … 9999 ("nineteen hundred and eighty-four")
//   below100 = unit | teen | decade [("-" | " ") unit]     unit 1 … 9, teen 10 … 19

import { AttnWasmError, typeError, describe } from './errors.js';

const UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine',
  'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const DECADES = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const VALUE = new Map([...UNITS.map((w, i) => [w, i]), ...DECADES.slice(2).map((w, i) => [w, 10 * (i + 2)])]);
/** Every word the grammar knows, in the order suggestions prefer on a tie. */
const WORDS = [...UNITS, ...DECADES.slice(2), 'hundred', 'thousand', 'and', 'a'];
const KNOWN = new Set(WORDS);
const MAX = 999999;

/** Words that are not number words here, and why. */
const REASONS = new Map([
  ...['million', 'millions', 'billion', 'billions', 'trillion', 'trillions']
    .map((w) => [w, 'numbers above 999 999 cannot be translated']),
  ...['point', 'dot', 'decimal', 'half', 'halves', 'quarter', 'quarters', 'percent']
    .map((w) => [w, 'only whole numbers can be translated']),
  ...['minus', 'negative'].map((w) => [w, 'negative numbers cannot be translated']),
]);
/** Synonyms of a number word. */
const SYNONYMS = new Map([['oh', 'zero'], ['nought', 'zero'], ['naught', 'zero'], ['nil', 'zero'],
  ['none', 'zero'], ['nothing', 'zero'], ['dozen', 'twelve'], ['an', 'a']]);
/** Ordinals → the cardinal they come from ("fifth" → "five", "twentieth" → "twenty"). */
const ORDINALS = new Map([['first', 'one'], ['second', 'two'], ['third', 'three'], ['fifth', 'five'],
  ['eighth', 'eight'], ['ninth', 'nine'], ['twelfth', 'twelve'],
  ...[...UNITS.slice(4), 'hundred', 'thousand'].filter((w) => !['five', 'eight', 'nine', 'twelve'].includes(w))
    .map((w) => [`${w}th`, w]),
  ...DECADES.slice(2).map((w) => [`${w.slice(0, -1)}ieth`, w])]);

/**
 * The plain English words of an integer in 0 … 999 999: hyphenated tens, no
 * "and", "one hundred" — the spelling digits are normalised to.
 * @param {number} n
 * @returns {string} a new string, e.g. 1234 → "one thousand two hundred thirty-four"
 */
export function englishWords(n) {
  if (!Number.isInteger(n) || n < 0 || n > MAX) throw new RangeError(`n: expected an integer in [0, ${MAX}], got ${n}`);
  if (n === 0) return 'zero';
  const below100 = (m) => (m < 20 ? UNITS[m] : DECADES[Math.floor(m / 10)] + (m % 10 ? `-${UNITS[m % 10]}` : ''));
  const below1000 = (m) => [m >= 100 ? `${UNITS[Math.floor(m / 100)]} hundred` : '', m % 100 ? below100(m % 100) : '']
    .filter(Boolean).join(' ');
  return [n >= 1000 ? `${below1000(Math.floor(n / 1000))} thousand` : '', n % 1000 ? below1000(n % 1000) : '']
    .filter(Boolean).join(' ');
}

/** Joins tokens with spaces, except around "-": ['forty', '-', 'two'] → "forty-two". */
function joinTokens(tokens) {
  return tokens.join(' ').replace(/ - /g, '-');
}

const quote = (s) => `'${s.length > 60 ? `${s.slice(0, 57)}…` : s}'`;

/**
 * The normalised tokens of a text: [{ t: token, digits?: true }]. Tokens are
 * words, "-", "," and single other characters; a number in digits becomes its
 * words. Throws the refusal for digits that are not a whole number in range.
 */
function normalise(text, refuse) {
  const tokens = [];
  // digits, optionally grouped by "," "." or a space | a word | any other character
  const re = /(\d+(?:[,. ]\d+)*)(?![\p{L}\d])|([\p{L}\p{M}\d]+)|(\S)/gu;
  for (const m of text.toLowerCase().matchAll(re)) {
    const [, digits, word, other] = m;
    if (word !== undefined) tokens.push({ t: word });
    else if (other !== undefined) tokens.push({ t: other });
    else {
      let plain = digits;
      if (/[,. ]/.test(digits)) {
        if (!/^\d{1,3}(,\d{3})+$/.test(digits) && !/^\d{1,3}( \d{3})+$/.test(digits)) {
          refuse(digits.includes('.')
            ? `${quote(digits)}: only whole numbers can be translated (write thousands as 1,000 or 1000)`
            : `${quote(digits)}: group digits in threes, as in 1,234 or 12 345`);
        }
        plain = digits.replace(/[, ]/g, '');
      }
      plain = plain.replace(/^0+(?=\d)/, '');
      if (plain.length > 6) refuse(`${quote(digits)} is above 999 999`);
      for (const t of englishWords(Number(plain)).replace(/-/g, ' - ').split(' ')) tokens.push({ t, digits: true });
    }
  }
  return tokens;
}

/** Optimal-string-alignment edit distance between two short words. */
function editDistance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The known word(s) an unknown word most likely meant, or null: a synonym or an
 * ordinal's cardinal; else the nearest word one edit away ("fourty" → "forty");
 * else two words run together ("twentyone" → "twenty one"); else the nearest
 * word two edits away, for words of five letters or more. Ties go to a word
 * with the same first letter, then to the closest length.
 */
function closest(word) {
  if (SYNONYMS.has(word)) return SYNONYMS.get(word);
  if (ORDINALS.has(word)) return ORDINALS.get(word);
  if (word.length > 20) return null;
  let best = null, bestKey = null;
  for (const w of WORDS) {
    if (w.length < 2) continue;
    const key = [editDistance(word, w), w[0] === word[0] ? 0 : 1, Math.abs(w.length - word.length)];
    if (!bestKey || (key[0] - bestKey[0] || key[1] - bestKey[1] || key[2] - bestKey[2]) < 0) {
      best = w;
      bestKey = key;
    }
  }
  if (bestKey[0] <= 1) return best;
  for (let k = 2; k < word.length - 1; k++) {
    if (KNOWN.has(word.slice(0, k)) && KNOWN.has(word.slice(k))) return `${word.slice(0, k)} ${word.slice(k)}`;
  }
  return bestKey[0] <= 2 && word.length >= 5 ? best : null;
}

/** Why tokens are not a number (thrown inside this module only). */
class Refusal {
  constructor(why) { this.why = why; }
}

/** The grammar above over tokens (strings) → the number; throws a Refusal where they stop making one. */
function parseTokens(tokens) {
  let i = 0;
  const peek = () => tokens[i];
  const stop = (why) => { throw new Refusal(why); };
  const unit = (w) => VALUE.has(w) && VALUE.get(w) >= 1 && VALUE.get(w) <= 9;
  const startsBelow100 = (w) => VALUE.has(w) && w !== 'zero';

  function below100() {
    const w = peek();
    if (!startsBelow100(w)) return null;
    i++;
    const v = VALUE.get(w);
    if (v < 20) return v;
    if (peek() === '-') {
      i++;
      if (!unit(peek())) stop(`a hyphen joins tens and units, as in '${w}-two'`);
      return v + VALUE.get(tokens[i++]);
    }
    return unit(peek()) ? v + VALUE.get(tokens[i++]) : v;
  }

  function tail() {  // after "hundred": [["and"] below100]
    if (peek() === 'and') {
      i++;
      const r = below100();
      if (r === null) stop("'and' must be followed by a number below 100, as in 'one hundred and five'");
      return r;
    }
    return startsBelow100(peek()) ? below100() : 0;
  }

  function group(first) {  // → { value, counted }
    if (peek() === 'a') {
      if (!first) stop("'a' can only start the number, as in 'a hundred' or 'a thousand'");
      i++;
      if (peek() === 'thousand') return { value: 1, counted: false };
      if (peek() !== 'hundred') stop("'a' must be followed by 'hundred' or 'thousand'");
      i++;
      return { value: 100 + tail(), counted: false };
    }
    const start = i;
    const x = below100();
    if (x === null) {
      if (peek() === 'hundred' || peek() === 'thousand') stop(`'${peek()}' needs a number before it, as in 'one ${peek()}' or 'a ${peek()}'`);
      if (peek() === 'zero') stop("'zero' can only stand alone");
      if (peek() === 'and') stop("'and' can only come before the last part below 100, as in 'one hundred and five'");
      stop(`'${peek()}' cannot start a number`);
    }
    if (peek() !== 'hundred') return { value: x, counted: false };
    const said = joinTokens(tokens.slice(start, i));
    if (x % 10 === 0 && x >= 10) stop(`${x * 100} is written '${englishWords(x * 100)}', not '${said} hundred'`);
    if (x >= 10 && !first) stop(`'${said} hundred' cannot follow 'thousand'`);
    i++;
    return { value: x * 100 + tail(), counted: x >= 10 };
  }

  if (tokens.length === 1 && tokens[0] === 'zero') return 0;
  const head = group(true);
  let value = head.value;
  if (peek() === 'thousand') {
    if (head.counted) stop(`'${joinTokens(tokens.slice(0, i))} thousand' would be ${(head.value * 1000).toLocaleString('en-US')}, above 999 999`);
    i++;
    value *= 1000;
    if (peek() === 'and') {
      i++;
      const r = below100();
      if (r === null || peek() === 'hundred') stop("'and' after 'thousand' comes only before a last part below 100, as in 'two thousand and six'");
      value += r;
    } else if (i < tokens.length) {
      value += group(false).value;
    }
  }
  if (i < tokens.length) {
    const w = peek();
    if (w === 'thousand' || w === 'hundred') stop(`'${w}' cannot follow '${tokens[i - 1]}'`);
    if (w === '-') stop("a hyphen joins tens and units, as in 'forty-two'");
    stop(`'${w}' cannot follow '${tokens[i - 1]}'`);
  }
  return value;
}

/** Tokens → the number, or null when they are not one. */
function tryParse(tokens) {
  try {
    return parseTokens(tokens);
  } catch (e) {
    if (e instanceof Refusal) return null;
    throw e;
  }
}

/**
 * A suggestion for well-known words in a wrong order: the first of these
 * repairs that makes a number, as a text, or undefined. "hundred" → "one
 * hundred"; "one-hundred" → "one hundred"; "one thousand and one hundred" →
 * "one thousand one hundred"; a year said in two parts, "twenty twenty" →
 * "two thousand twenty", "nineteen eighty-four" → "nineteen hundred eighty-four".
 */
function rearranged(tokens) {
  const candidates = [];
  if (tokens[0] === 'hundred' || tokens[0] === 'thousand') candidates.push(['one', ...tokens]);
  if (tokens.includes('-')) candidates.push(tokens.filter((t) => t !== '-'));
  if (tokens.includes('and')) candidates.push(tokens.filter((t) => t !== 'and'));
  const first = VALUE.get(tokens[0]);
  const rest = tryParse(tokens.slice(1));
  if (first >= 10 && first <= 20 && rest >= 1 && rest <= 99) {
    candidates.push(first % 10 ? [tokens[0], 'hundred', ...tokens.slice(1)] : englishWords(first * 100 + rest).replace(/-/g, ' - ').split(' '));
  }
  const fix = candidates.find((c) => tryParse(c) !== null);
  return fix && joinTokens(fix);
}

/**
 * Reads English number words (0 … 999 999) the way people type them.
 * @param {string} text e.g. "Forty two", "one hundred and five", "a thousand", "1,234"
 * @returns {{value: number, words: string, tokens: string[]}} all new: the number;
 *   the normalised words the model is given ("forty two", "one thousand two hundred
 *   thirty-four"); and their tokens, hyphens as tokens of their own.
 * @throws {AttnWasmError} ERR_NOT_A_NUMBER when the text is not one number in
 *   0 … 999 999; `error.input` is the text, `error.suggestion` a corrected input when one is close.
 */
export function parseEnglishNumber(text) {
  if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
  const refuse = (why, suggestion) => {
    const shown = text.trim().replace(/\s+/g, ' ');
    const hint = suggestion ? ` Did you mean '${suggestion}'?` : '';
    const e = new AttnWasmError('ERR_NOT_A_NUMBER',
      `text: ${shown ? quote(shown) : 'the text'} is not a number from 0 to 999 999: ${why}.${hint}`);
    e.input = text;
    if (suggestion) e.suggestion = suggestion;
    throw e;
  };
  if (!text.trim()) refuse('it is empty');
  const tokens = normalise(text, refuse);
  const hasDigits = tokens.some((x) => x.digits);
  const hasWords = tokens.some((x) => !x.digits && KNOWN.has(x.t));

  // Words and characters the grammar does not know: say why, and repair what is close.
  const unknown = tokens.filter((x) => !KNOWN.has(x.t) && x.t !== '-' && x.t !== ',');
  if (unknown.length) {
    const first = unknown[0].t;
    const repaired = [];
    for (const x of tokens) {
      if (KNOWN.has(x.t) || x.t === '-' || x.t === ',') repaired.push(x.t);
      else if (/^[\p{L}\p{M}]+$/u.test(x.t)) repaired.push(...(closest(x.t) ?? x.t).split(' '));
      // a stray character is dropped
    }
    const plain = repaired.filter((t) => t !== ',');
    const fix = tryParse(plain) === null ? rearranged(plain) : joinTokens(repaired).replace(/ ,/g, ',');
    if (REASONS.has(first)) refuse(`'${first}': ${REASONS.get(first)}`, fix);
    if (ORDINALS.has(first)) refuse(`'${first}' is an ordinal; only cardinal numbers ('${ORDINALS.get(first)}') can be translated`, fix);
    if (!/^[\p{L}\p{M}\d]+$/u.test(first)) refuse(`'${first}' is not part of a number`, fix);
    refuse(`${quote(first)} is not an English number word`, fix);
  }
  // Commas: only after "thousand" (the digits' own commas are gone already).
  const words = [];
  tokens.forEach((x, k) => {
    if (x.t !== ',') words.push(x.t);
    else if (k === 0 || tokens[k - 1].t !== 'thousand') refuse("a comma can only follow 'thousand', as in 'one thousand, two hundred'");
  });
  if (words[0] === '-' && words.length > 1) refuse('negative numbers cannot be translated');
  let value;
  try {
    value = parseTokens(words);
  } catch (e) {
    if (!(e instanceof Refusal)) throw e;
    if (hasDigits && hasWords) refuse(`${e.why}; write the number all in digits or all in words`);
    refuse(e.why, rearranged(words));
  }
  return { value, words: joinTokens(words), tokens: words };
}
