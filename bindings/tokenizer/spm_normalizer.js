// SentencePiece's normalizer (normalizer.cc), over the UTF-8 bytes of the text as sentencepiece runs it:
// at each position the LONGEST rule of the precompiled charsmap that matches (a darts-clone double-array
// trie: a little-endian u32 trie size, the trie's 32-bit units, then NUL-terminated replacement
// strings), else one UTF-8 character (an invalid byte becomes U+FFFD); user-defined pieces are never
// normalized; then remove_extra_whitespaces (leading, trailing and repeated spaces), add_dummy_prefix
// (a space first, or last with treat_whitespace_as_suffix) and escape_whitespaces (' ' → '▁').
// Unlike precompiled.js (tokenizer.json's Precompiled, which takes the first, shortest rule as the
// Rust crate does), this is the library's own behaviour. The same class is the denormalizer.
import { invalid } from './json.js';

const SPACE_SYMBOL = Uint8Array.of(0xe2, 0x96, 0x81); // U+2581 ▁
const REPLACEMENT = Uint8Array.of(0xef, 0xbf, 0xbd); // U+FFFD
const MAX_RESULTS = 32; // kMaxTrieResultsSize: the builder guarantees no key has more matching prefixes
const utf8 = new TextEncoder();
const text = new TextDecoder('utf-8', { ignoreBOM: true });

/** darts-clone's unit fields. */
const offsetOf = (u) => (u >>> 10) << ((u & 512) >>> 6);
const labelOf = (u) => (u & 0x800000ff) >>> 0;

/**
 * The length in bytes of the valid UTF-8 character at bytes[i] (sentencepiece's DecodeUTF8 rules:
 * shortest form, no surrogates, at most U+10FFFF), or 0 when the byte there does not start one.
 */
export function utf8CharLength(bytes, i, end) {
  const b0 = bytes[i];
  if (b0 < 0x80) return 1;
  const trail = (k) => i + k < end && (bytes[i + k] & 0xc0) === 0x80;
  if ((b0 & 0xe0) === 0xc0) return trail(1) && b0 >= 0xc2 ? 2 : 0;
  if ((b0 & 0xf0) === 0xe0) {
    if (!trail(1) || !trail(2)) return 0;
    const cp = ((b0 & 15) << 12) | ((bytes[i + 1] & 63) << 6) | (bytes[i + 2] & 63);
    return cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff) ? 3 : 0;
  }
  if ((b0 & 0xf8) === 0xf0) {
    if (!trail(1) || !trail(2) || !trail(3)) return 0;
    const cp = ((b0 & 7) << 18) | ((bytes[i + 1] & 63) << 12) | ((bytes[i + 2] & 63) << 6) | (bytes[i + 3] & 63);
    return cp >= 0x10000 && cp <= 0x10ffff ? 4 : 0;
  }
  return 0;
}

/** A longest-prefix matcher over the UTF-8 bytes of a set of strings (the user-defined pieces). */
export class BytePrefixMatcher {
  /** @param {Iterable<string>} words */
  constructor(words) {
    this.root = new Map();
    this.empty = true;
    for (const w of words) {
      let node = this.root;
      for (const b of utf8.encode(w)) {
        if (!node.has(b)) node.set(b, new Map());
        node = node.get(b);
      }
      node.end = true;
      this.empty = false;
    }
  }

  /** The length of the longest word at bytes[i…end), or 0. */
  match(bytes, i, end) {
    let node = this.root;
    let best = 0;
    for (let k = i; k < end; k++) {
      node = node.get(bytes[k]);
      if (!node) break;
      if (node.end) best = k + 1 - i;
    }
    return best;
  }
}

export class SpmNormalizer {
  /**
   * @param {object} spec a normalizer_spec (or denormalizer_spec) read by spm_model.js
   * @param {{ suffix?: boolean, userDefined?: BytePrefixMatcher | null }} options
   *   suffix: trainer_spec.treat_whitespace_as_suffix; userDefined: pieces left as they are
   * @param {string} file @param {string} field for messages ('normalizer_spec')
   */
  constructor(spec, { suffix = false, userDefined = null }, file, field) {
    this.addDummyPrefix = spec.add_dummy_prefix;
    this.removeExtra = spec.remove_extra_whitespaces;
    this.escape = spec.escape_whitespaces;
    this.suffix = suffix;
    this.userDefined = userDefined && !userDefined.empty ? userDefined : null;
    this.units = null;
    const blob = spec.precompiled_charsmap;
    if (blob.length > 0) {
      const name = `${field}.precompiled_charsmap`;
      // DecodePrecompiledCharsMap: a u32 size, then the trie (at least its root unit) within the blob.
      const trieBytes = blob.length > 4 ? new DataView(blob.buffer, blob.byteOffset, 4).getUint32(0, true) : 0;
      if (blob.length <= 4 || trieBytes > blob.length - 4 || trieBytes < 4) {
        throw invalid(name, `the blob is broken: ${blob.length} bytes, trie size ${blob.length > 4 ? trieBytes : 'missing'} (expected a u32 size, that many trie bytes, then the replacement strings)`, file);
      }
      this.units = new Uint32Array(trieBytes >>> 2);
      const view = new DataView(blob.buffer, blob.byteOffset + 4, trieBytes);
      for (let i = 0; i < this.units.length; i++) this.units[i] = view.getUint32(4 * i, true);
      this.strings = blob.subarray(4 + trieBytes);
      this.replacements = new Map(); // value → the bytes of its replacement
      this.field = name;
      this.file = file;
    }
  }

  /** The replacement string at `value` in the strings after the trie (up to its NUL). */
  _replacement(value) {
    let r = this.replacements.get(value);
    if (r === undefined) {
      if (value >= this.strings.length) throw invalid(this.field, `a rule points at byte ${value} of the replacement strings, which have ${this.strings.length}: the charsmap is corrupt`, this.file);
      let end = value;
      while (end < this.strings.length && this.strings[end] !== 0) end++;
      r = this.strings.subarray(value, end);
      this.replacements.set(value, r);
    }
    return r;
  }

  /**
   * NormalizePrefix: the replacement of what starts at bytes[i] and how many bytes it consumes,
   * written to this._rep / returned as the length.
   */
  _prefix(bytes, i, end) {
    if (this.userDefined) {
      const n = this.userDefined.match(bytes, i, end);
      if (n > 0) {
        this._rep = bytes.subarray(i, i + n);
        return n;
      }
    }
    const units = this.units;
    if (units) {
      // darts-clone commonPrefixSearch from the root, keeping the longest match.
      let node = offsetOf(units[0]);
      let longest = 0;
      let value = 0;
      let found = 0;
      for (let k = i; k < end; k++) {
        const c = bytes[k];
        node ^= c;
        if (node >= units.length) break; // outside the array: no such key (a corrupt trie)
        const u = units[node];
        if (labelOf(u) !== c) break;
        node ^= offsetOf(u);
        if ((u >>> 8) & 1) {
          if (node >= units.length) break;
          if (++found > MAX_RESULTS) break;
          longest = k + 1 - i;
          value = units[node] & 0x7fffffff;
        }
      }
      if (longest > 0) {
        this._rep = this._replacement(value);
        return longest;
      }
    }
    const n = utf8CharLength(bytes, i, end);
    if (n === 0) {
      this._rep = REPLACEMENT;
      return 1;
    }
    this._rep = bytes.subarray(i, i + n);
    return n;
  }

  /**
   * The normalized text, as sentencepiece's Normalizer::Normalize gives it.
   * @param {string} input well-formed text
   * @returns {string}
   */
  normalize(input) {
    if (input === '') return '';
    const bytes = utf8.encode(input);
    const end = bytes.length;
    let i = 0;
    if (this.removeExtra) {
      while (i < end) {
        const n = this._prefix(bytes, i, end);
        if (this._rep.length !== 1 || this._rep[0] !== 0x20) break;
        i += n;
      }
    }
    if (i === end) return '';
    let out = new Uint8Array(end * 3 + 16);
    let len = 0;
    const put = (b) => {
      if (len === out.length) {
        const grown = new Uint8Array(out.length * 2);
        grown.set(out);
        out = grown;
      }
      out[len++] = b;
    };
    const space = () => {
      if (this.escape) SPACE_SYMBOL.forEach(put);
      else put(0x20);
    };
    if (!this.suffix && this.addDummyPrefix) space();
    let prevSpace = this.removeExtra;
    while (i < end) {
      const n = this._prefix(bytes, i, end);
      const rep = this._rep;
      let s = 0;
      if (prevSpace) while (s < rep.length && rep[s] === 0x20) s++;
      if (s < rep.length) {
        for (let k = s; k < rep.length; k++) {
          if (this.escape && rep[k] === 0x20) SPACE_SYMBOL.forEach(put);
          else put(rep[k]);
        }
        prevSpace = rep[rep.length - 1] === 0x20;
      }
      i += n;
      if (!this.removeExtra) prevSpace = false;
    }
    if (this.removeExtra) {
      // Trailing spaces (escaped or not) are dropped.
      if (this.escape) while (len >= 3 && out[len - 3] === 0xe2 && out[len - 2] === 0x96 && out[len - 1] === 0x81) len -= 3;
      else while (len > 0 && out[len - 1] === 0x20) len--;
    }
    if (this.suffix && this.addDummyPrefix) space();
    return text.decode(out.subarray(0, len));
  }
}
