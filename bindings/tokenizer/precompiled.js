// The Precompiled normalizer: SentencePiece's precompiled_charsmap (XLM-R, multilingual-e5, T5, …),
// read as the Rust spm_precompiled crate reads it. The blob (base64 in tokenizer.json) is a
// little-endian u32 trie size, that many bytes of double-array trie units over UTF-8 bytes, then
// the replacement strings, each ended by a NUL. A lookup walks the trie over a string's bytes and
// takes the FIRST leaf met (the shortest matching prefix: what the crate's transform() does, not the
// longest). Strings are cut into grapheme clusters (Intl.Segmenter, as the crate's graphemes(true)).
import { transform } from './aligned.js';
import { invalid } from './json.js';

const utf8 = new TextEncoder();
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

// A unit: bit 8 has_leaf, bits 0–7 (and 31) the label, value = the low 31 bits, offset = (u >> 10) << ((u & 512) >> 6).
const offsetOf = (u) => (u >>> 10) << ((u & 512) >>> 6);

export class PrecompiledCharsmap {
  /** @param {string} base64 the precompiled_charsmap field, named by `field` in errors */
  constructor(base64, field) {
    let bytes;
    try {
      bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    } catch (e) {
      throw invalid(field, `expected base64, got a string that is not (${e.message})`);
    }
    if (bytes.length < 4) throw invalid(field, `expected at least 4 bytes (the trie size), got ${bytes.length}`);
    const view = new DataView(bytes.buffer);
    const trieBytes = view.getUint32(0, true);
    const units = Math.floor(trieBytes / 4);
    if (4 + 4 * units > bytes.length || units === 0) throw invalid(field, `the trie size (${trieBytes} bytes) does not fit in the ${bytes.length - 4} bytes after it`);
    this.array = new Uint32Array(units);
    for (let i = 0; i < units; i++) this.array[i] = view.getUint32(4 + 4 * i, true);
    this.normalized = bytes.subarray(4 + 4 * units);
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(this.normalized);
    } catch {
      throw invalid(field, 'the replacement strings after the trie are not UTF-8 (the tokenizers library refuses the file)');
    }
    this.cache = new Map(); // string → replacement or null
    this.decoder = new TextDecoder();
  }

  /** The replacement of a string (a grapheme or one character), or null: the crate's transform(). */
  transform(chunk) {
    let hit = this.cache.get(chunk);
    if (hit !== undefined) return hit;
    hit = null;
    const { array } = this;
    const key = utf8.encode(chunk);
    let pos = offsetOf(array[0]);
    for (const c of key) {
      if (c === 0) break;
      pos ^= c;
      // An index outside the array is a malformed trie: no match (the crate would panic).
      if (pos >= array.length) break;
      const unit = array[pos];
      if ((unit & 0x800000ff) >>> 0 !== c) break;
      pos ^= offsetOf(unit);
      if (pos >= array.length) break;
      if ((unit >>> 8) & 1) {
        hit = this.replacement(array[pos] & 0x7fffffff);
        break;
      }
    }
    if (this.cache.size < 65536) this.cache.set(chunk, hit);
    return hit;
  }

  replacement(index) {
    const { normalized } = this;
    let end = index;
    while (end < normalized.length && normalized[end] !== 0) end++;
    return this.decoder.decode(normalized.subarray(Math.min(index, normalized.length), end));
  }

  /** The normalizer: each grapheme of < 6 UTF-8 bytes replaced whole if it matches, else character by character. */
  normalize(text) {
    let out = '';
    for (const segment of graphemeClusters(text)) {
      if (utf8Length(segment) < 6) {
        const whole = this.transform(segment);
        if (whole !== null) {
          out += whole;
          continue;
        }
      }
      for (const c of segment) out += this.transform(c) ?? c;
    }
    return out;
  }

  /**
   * normalize() on an AlignedText, with the changes the Rust Precompiled normalizer gives transform():
   * a replacement's characters replace the old ones one for one, the extra ones inserted, or the last
   * one taking the removal (even when that last one is an earlier grapheme's, as in Rust).
   */
  normalizeAligned(src) {
    const changes = [];
    let modified = false;
    const replace = (old, now) => {
      modified = true;
      const diff = [...now].length - [...old].length;
      for (const c of now) changes.push([c, 0]);
      if (diff > 0) for (let k = changes.length - diff; k < changes.length; k++) changes[k][1] = 1;
      else if (diff < 0 && changes.length) changes[changes.length - 1][1] += diff;
    };
    for (const segment of graphemeClusters(src.text)) {
      if (utf8Length(segment) < 6) {
        const whole = this.transform(segment);
        if (whole !== null) {
          replace(segment, whole);
          continue;
        }
      }
      for (const c of segment) {
        const now = this.transform(c);
        if (now !== null) replace(c, now);
        else changes.push([c, 0]);
      }
    }
    return modified ? transform(src, changes) : src;
  }
}

/**
 * The grapheme clusters of a text, segmented by windows of about WINDOW code units: V8's
 * Intl.Segmenter takes quadratic time on one long string (13 s for 100 000 characters here). Each
 * window starts at a cluster boundary and its last cluster, which the window's end may have cut, is
 * read again at the start of the next one; grapheme rules only look inside a cluster, so the
 * clusters are those of the whole text.
 */
const WINDOW = 2048;
function* graphemeClusters(text) {
  for (let start = 0; start < text.length;) {
    const end = start + WINDOW;
    let last = null;
    for (const { segment, index } of graphemes.segment(end >= text.length ? text.slice(start) : text.slice(start, end))) {
      if (last !== null) yield last.segment;
      last = { segment, index };
    }
    if (end >= text.length || last.index === 0) {
      yield last.segment; // the text's last cluster, or one cluster as long as the window
      start += last.index + last.segment.length;
    } else {
      start += last.index;
    }
  }
}

function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xdc00 ? (i++, 4) : 3;
  }
  return n;
}
