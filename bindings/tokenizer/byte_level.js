// GPT-2's byte ↔ symbol map (bytes_to_unicode): the alphabet of byte-level BPE vocabularies, used by
// the ByteLevel pre-tokenizer (text → byte symbols) and the ByteLevel decoder (symbols → bytes).
// Not here: the BPE merges (bpe.js) or the pre-tokenizer's regex (pre_tokenizers.js).

/** GPT-2's pre-tokenizer regex, as the Rust ByteLevel pre-tokenizer compiles it (use_regex: true). */
export const GPT2_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/**
 * byte b → the character that stands for it in vocabularies. Printable Latin-1 bytes stand for
 * themselves; the others (controls, space, 0x7F–0xA0, 0xAD) for U+0100 + their order.
 */
export const BYTE_SYMBOL = (() => {
  const table = new Array(256);
  let next = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[b] = String.fromCharCode(printable ? b : 0x100 + next++);
  }
  return table;
})();

/** The inverse: character code → byte, -1 for characters that stand for no byte. */
export const SYMBOL_BYTE = (() => {
  const table = new Int16Array(0x144).fill(-1);
  BYTE_SYMBOL.forEach((c, b) => { table[c.charCodeAt(0)] = b; });
  return table;
})();

const utf8 = new TextEncoder();

/** A piece of text as byte symbols: its UTF-8 bytes, each as its BYTE_SYMBOL character. */
export function byteSymbols(piece) {
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

/** The bytes a token stands for: its byte symbols, or its UTF-8 when a character is not one (as Rust). */
export function symbolBytes(token) {
  const bytes = new Uint8Array(token.length);
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    const b = c < SYMBOL_BYTE.length ? SYMBOL_BYTE[c] : -1;
    if (b < 0) return utf8.encode(token);
    bytes[i] = b;
  }
  return bytes;
}
