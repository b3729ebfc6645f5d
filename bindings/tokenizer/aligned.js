// Text with its alignments to the original, for character offsets (Tokenizer#encode's returnOffsets):
// the Rust library's NormalizedString ported to UTF-16. Every code unit of `text` holds the range
// [a, b) of the original text (UTF-16 units) it comes from; normalizers change the text through
// transform(), whose (character, change) lists are those the Rust normalizers build, so that the
// alignments are the Rust library's: 0 replaces the next original character (and takes its range),
// 1 is inserted (and takes the previous character's range), -n replaces one and removes n after it.
// Only the offsets path uses this file; ids come from the plain-string path (normalizers.js etc.),
// and the offsets path checks that its text is the same.

const isHigh = (c) => c >= 0xd800 && c < 0xdc00;
const isLow = (c) => c >= 0xdc00 && c < 0xe000;

export class AlignedText {
  /**
   * @param {string} text
   * @param {Int32Array} a starts in the original, one per code unit of text
   * @param {Int32Array} b ends in the original
   * @param {number} origin where this part of the original starts (an insertion at the very start aligns there)
   */
  constructor(text, a, b, origin) {
    this.text = text;
    this.a = a;
    this.b = b;
    this.origin = origin;
  }

  /** A part of the original, unchanged: `text` starts at `origin` in the original. */
  static of(text, origin = 0) {
    const a = new Int32Array(text.length);
    const b = new Int32Array(text.length);
    for (let i = 0; i < text.length; i++) {
      const w = isHigh(text.charCodeAt(i)) && i + 1 < text.length && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
      for (let k = 0; k < w; k++) {
        a[i + k] = origin + i;
        b[i + k] = origin + i + w;
      }
      i += w - 1;
    }
    return new AlignedText(text, a, b, origin);
  }

  /** Units [s, e) of the text, with their alignments (the Rust library's slice of a normalized range). */
  slice(s, e) {
    return new AlignedText(this.text.slice(s, e), this.a.subarray(s, e), this.b.subarray(s, e), s < this.a.length ? this.a[s] : this.origin);
  }

  /** The original range of units [s, e) (s < e): the first unit's start and the last one's end, as Rust's expand_alignments. */
  range(s, e) {
    return [this.a[s], this.b[e - 1]];
  }
}

/** The code points of a string. */
export const codePoints = (s) => Array.from(s);

/**
 * Rust's NormalizedString::transform over the whole text: `changes` lists [character, change] in
 * the new text's order; `initialOffset` characters at the start are removed.
 */
export function transform(src, changes, initialOffset = 0) {
  const units = []; // the unit index where each code point of src starts
  for (let i = 0; i < src.text.length; i++) {
    units.push(i);
    if (isHigh(src.text.charCodeAt(i)) && i + 1 < src.text.length && isLow(src.text.charCodeAt(i + 1))) i++;
  }
  let idx = initialOffset;
  let text = '';
  let length = 0;
  for (const [c] of changes) length += c.length;
  const a = new Int32Array(length);
  const b = new Int32Array(length);
  let at = 0;
  for (const [c, change] of changes) {
    let s = src.origin;
    let e = src.origin;
    const k = change > 0 ? idx - 1 : idx;
    if (k >= 0 && units.length > 0) {
      const u = units[Math.min(k, units.length - 1)];
      s = src.a[u];
      e = src.b[u];
    }
    if (change <= 0) idx += 1 - change;
    text += c;
    for (let j = 0; j < c.length; j++) {
      a[at] = s;
      b[at++] = e;
    }
  }
  return new AlignedText(text, a, b, src.origin);
}

/**
 * `text` in place of src's text when it has the same code points, unit for unit (each character
 * became one character of the same width): the alignments stay. null otherwise.
 */
function sameShape(src, text) {
  if (text.length !== src.text.length) return null;
  for (let i = 0; i < text.length; i++) if (isHigh(text.charCodeAt(i)) !== isHigh(src.text.charCodeAt(i))) return null;
  return new AlignedText(text, src.a, src.b, src.origin);
}

/** Rust's NormalizedString::filter: the characters where keep(c) is false removed. */
export function filter(src, keep) {
  const chars = Array.from(src.text);
  const kept = chars.map((c) => keep(c)); // keep is called once per character, in order
  if (kept.every(Boolean)) return src;
  const changes = [];
  let removed = 0;
  let removedStart = 0;
  let last = null;
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (kept[i]) {
      if (last !== null) changes.push([last, -removed]);
      else removedStart = removed;
      last = c;
      removed = 0;
    } else {
      removed++;
    }
  }
  if (last !== null) changes.push([last, -removed]);
  return transform(src, changes, removedStart);
}

/** Rust's NormalizedString::map: one character for one. */
export function map(src, f) {
  const changes = Array.from(src.text, (c) => [f(c), 0]);
  return sameShape(src, changes.map((x) => x[0]).join('')) ?? transform(src, changes);
}

/** Each character becomes f(c) (one or more characters; Rust's lowercase): the first replaces it, the rest are inserted. */
export function expand(src, f) {
  // one character for one of the same width (most lowercasing): only the text changes
  let text = '';
  let one = true;
  for (const c of src.text) {
    const d = f(c);
    if (d.length !== c.length || (d.length === 2 && !isHigh(d.charCodeAt(0)))) {
      one = false;
      break;
    }
    text += d;
  }
  if (one) return sameShape(src, text) ?? transform(src, Array.from(src.text, (c) => [f(c), 0]));
  const changes = [];
  for (const c of src.text) {
    let first = true;
    for (const d of f(c)) {
      changes.push([d, first ? 0 : 1]);
      first = false;
    }
  }
  return transform(src, changes);
}

/** Rust's NormalizedString::prepend: the prepended text and the first character take the first character's range. */
export function prepend(src, s) {
  if (src.text === '') return src;
  const [first] = src.text;
  const head = transform(src.slice(0, first.length), [...Array.from(s, (c, i) => [c, i === 0 ? 0 : 1]), [first, 1]]);
  return concat([head, src.slice(first.length, src.text.length)], src.origin);
}

/** Aligned texts joined. */
export function concat(parts, origin) {
  let length = 0;
  for (const p of parts) length += p.text.length;
  const a = new Int32Array(length);
  const b = new Int32Array(length);
  let at = 0;
  let text = '';
  for (const p of parts) {
    a.set(p.a, at);
    b.set(p.b, at);
    at += p.text.length;
    text += p.text;
  }
  return new AlignedText(text, a, b, origin);
}

/**
 * Rust's NormalizedString::replace: each match of `re` (a global RegExp) replaced by `content`, whose
 * characters all take the range of the match's last character (the previous one for an empty match).
 */
export function replace(src, re, content) {
  const parts = [];
  let prev = 0;
  for (const m of src.text.matchAll(re)) {
    const s = m.index;
    const e = s + m[0].length;
    if (prev < s) parts.push(src.slice(prev, s));
    const at = e > s ? e - 1 : s - 1;
    const a = new Int32Array(content.length).fill(at >= 0 ? src.a[at] : src.origin);
    const b = new Int32Array(content.length).fill(at >= 0 ? src.b[at] : src.origin);
    parts.push(new AlignedText(content, a, b, src.origin));
    prev = e;
  }
  if (prev === 0) return src;
  if (prev < src.text.length) parts.push(src.slice(prev, src.text.length));
  return concat(parts, src.origin);
}

/**
 * The (character, change) list of the unicode-normalization-alignments crate's nfd / nfkd / nfc / nfkc
 * (the Rust library's NormalizedString::nfd etc.): each character's decomposition (its first
 * character 0, the others 1), put in canonical order, then — for NFC / NFKC — composed, a composite
 * taking the sum of its parts' changes less one per merge. The characters come from String#normalize;
 * the changes follow them. null when the two cannot be matched (an engine whose Unicode tables differ).
 */
export function unicodeChanges(text, form) {
  const decomposition = form === 'NFC' || form === 'NFD' ? 'NFD' : 'NFKD';
  let seq = [];
  for (const c of text) {
    let first = true;
    for (const d of c.normalize(decomposition)) {
      seq.push([d, first ? 0 : 1]);
      first = false;
    }
  }
  const full = Array.from(text.normalize(decomposition));
  if (full.length !== seq.length) return null;
  if (full.some((c, i) => c !== seq[i][0])) {
    // canonical reordering across characters: the stable sort keeps equal characters in order
    const used = new Uint8Array(seq.length);
    const sorted = [];
    for (const c of full) {
      let i = 0;
      while (i < seq.length && (used[i] || seq[i][0] !== c)) i++;
      if (i === seq.length) return null;
      used[i] = 1;
      sorted.push(seq[i]);
    }
    seq = sorted;
  }
  if (form === decomposition) return seq;
  const out = Array.from(text.normalize(form));
  const used = new Uint8Array(seq.length);
  let low = 0;
  const changes = [];
  for (const o of out) {
    const parts = Array.from(o.normalize('NFD'));
    let sum = 0;
    for (const p of parts) {
      let i = low;
      while (i < seq.length && (used[i] || seq[i][0] !== p)) i++;
      if (i === seq.length) return null;
      used[i] = 1;
      sum += seq[i][1];
    }
    while (low < seq.length && used[low]) low++;
    changes.push([o, sum - (parts.length - 1)]);
  }
  return changes;
}

/** A Unicode normalization form applied with its alignments (every character the whole text's range if the changes cannot be matched). */
export function normalizeForm(src, form) {
  if (src.text.normalize(form) === src.text) return src; // every character kept (changes all 0)
  const changes = unicodeChanges(src.text, form);
  if (changes) return transform(src, changes);
  const text = src.text.normalize(form);
  const whole = src.text === '' ? [src.origin, src.origin] : src.range(0, src.text.length);
  return new AlignedText(text, new Int32Array(text.length).fill(whole[0]), new Int32Array(text.length).fill(whole[1]), src.origin);
}
