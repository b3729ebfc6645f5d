// A strict JSON reader over UTF-8 bytes, the JS twin of the runtime's (src/io/json.cpp), for what inspect reads
// without a runtime (a safetensors header, a config.json): the same grammar and messages at the same byte offsets.
// Unlike JSON.parse it keeps a number's literal ("2.0" is no integer shape), an object's repeated keys (a tensor
// named twice is refused, not the last one kept), and refuses nesting past 64, numbers past the double range,
// unpaired surrogate escapes and invalid UTF-8. Not a general JSON API: what a node is is written below.

/** Largest nesting of arrays and objects accepted (src/io/json.h kJsonMaxDepth). */
export const MAX_DEPTH = 64;

/**
 * A parsed value: { type: 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object', bool (a boolean),
 * str (a string's text; a number's literal as written), items (an array's nodes), members (an object's
 * [{ key, value }] in order, repeated keys kept) }.
 * @typedef {{type: string, bool?: boolean, str?: string, items?: JsonNode[], members?: {key: string, value: JsonNode}[]}} JsonNode
 */

const hex = (c, width = 2) => c.toString(16).toUpperCase().padStart(width, '0');
const isDigit = (c) => c >= 0x30 && c <= 0x39;
const hexValue = (c) => (isDigit(c) ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1);
const printable = (c) => (c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : `0x${hex(c)}`);
const utf8 = new TextDecoder();

/**
 * The tree of the JSON text in `bytes` (UTF-8: one value, nothing but whitespace after it), owned by the caller.
 * Throws an Error whose message is the runtime's without its "json: " ("unexpected '}', expected a value at
 * byte 12"). A string (JS) is taken as its UTF-8 bytes.
 * @param {Uint8Array|string} bytes
 * @returns {JsonNode}
 */
export function parseTree(bytes) {
  const p = new Parser(typeof bytes === 'string' ? new TextEncoder().encode(bytes) : bytes);
  p.ws();
  const v = p.value(0);
  p.ws();
  if (p.i !== p.s.length) p.fail(`unexpected ${p.describe()} after the JSON value`);
  return v;
}

class Parser {
  constructor(s) {
    this.s = s;
    this.i = 0;
  }

  fail(what) {
    throw new Error(`${what} at byte ${this.i}`);
  }

  /** "'x'" for printable ASCII at the cursor, "byte 0xNN" otherwise. */
  describe() {
    const c = this.s[this.i];
    return c >= 0x20 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `byte 0x${hex(c)}`;
  }

  expected(what) {
    this.fail(this.i >= this.s.length ? `unexpected end of input, expected ${what}` : `unexpected ${this.describe()}, expected ${what}`);
  }

  ws() {
    const s = this.s;
    while (this.i < s.length && (s[this.i] === 0x20 || s[this.i] === 0x09 || s[this.i] === 0x0a || s[this.i] === 0x0d)) this.i++;
  }

  consume(c) {
    if (this.s[this.i] !== c) return false;
    this.i++;
    return true;
  }

  value(depth) {
    if (this.i >= this.s.length) this.fail('unexpected end of input, expected a value');
    const c = this.s[this.i];
    if (c === 0x7b) return this.object(depth + 1);  // {
    if (c === 0x5b) return this.array(depth + 1);   // [
    if (c === 0x22) return { type: 'string', str: this.string() };
    if (c === 0x74) return this.literal('true', { type: 'boolean', bool: true });
    if (c === 0x66) return this.literal('false', { type: 'boolean', bool: false });
    if (c === 0x6e) return this.literal('null', { type: 'null' });
    if (c === 0x2d || isDigit(c)) return this.number();
    return this.fail(`unexpected ${this.describe()}, expected a value`);
  }

  literal(word, node) {
    for (let k = 0; k < word.length; k++) if (this.s[this.i + k] !== word.charCodeAt(k)) this.fail(`unexpected ${this.describe()}, expected a value`);
    this.i += word.length;
    return node;
  }

  object(depth) {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    this.i++;
    const members = [];
    this.ws();
    if (this.consume(0x7d)) return { type: 'object', members };
    for (;;) {
      if (this.s[this.i] !== 0x22) this.expected('\'"\' (an object key)');
      const key = this.string();
      this.ws();
      if (!this.consume(0x3a)) this.expected("':' after an object key");
      this.ws();
      members.push({ key, value: this.value(depth) });
      this.ws();
      if (this.consume(0x7d)) return { type: 'object', members };
      if (!this.consume(0x2c)) this.expected("',' or '}' in an object");
      this.ws();
    }
  }

  array(depth) {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    this.i++;
    const items = [];
    this.ws();
    if (this.consume(0x5d)) return { type: 'array', items };
    for (;;) {
      items.push(this.value(depth));
      this.ws();
      if (this.consume(0x5d)) return { type: 'array', items };
      if (!this.consume(0x2c)) this.expected("',' or ']' in an array");
      this.ws();
    }
  }

  digits() {
    while (this.i < this.s.length && isDigit(this.s[this.i])) this.i++;
  }

  // number = [ "-" ] ( "0" / [1-9] *DIGIT ) [ "." 1*DIGIT ] [ ("e"/"E") ["+"/"-"] 1*DIGIT ]
  number() {
    const start = this.i;
    this.consume(0x2d);
    if (!this.consume(0x30)) {
      if (!isDigit(this.s[this.i] ?? -1)) this.fail('invalid number: expected a digit');
      this.digits();
    }
    if (this.consume(0x2e)) {
      if (!isDigit(this.s[this.i] ?? -1)) this.fail("invalid number: expected a digit after '.'");
      this.digits();
    }
    if (this.s[this.i] === 0x65 || this.s[this.i] === 0x45) {
      this.i++;
      if (!this.consume(0x2b)) this.consume(0x2d);
      if (!isDigit(this.s[this.i] ?? -1)) this.fail('invalid number: expected a digit in the exponent');
      this.digits();
    }
    const str = utf8.decode(this.s.subarray(start, this.i));
    if (!Number.isFinite(Number(str))) {
      this.i = start;
      this.fail(`number ${str.slice(0, 32)} is out of the double range`);
    }
    return { type: 'number', str };
  }

  /** The string at the cursor (its opening quote), decoded; the cursor moves past its closing quote. */
  string() {
    const s = this.s;
    const parts = [];
    let run = ++this.i;  // the start of the bytes not yet decoded
    const flush = () => { if (this.i > run) parts.push(utf8.decode(s.subarray(run, this.i))); };
    for (;;) {
      if (this.i >= s.length) this.fail('unterminated string');
      const c = s[this.i];
      if (c === 0x22) {
        flush();
        this.i++;
        return parts.join('');
      }
      if (c === 0x5c) {
        flush();
        parts.push(this.escape());
        run = this.i;
      } else if (c < 0x20) {
        this.fail(`control character 0x${hex(c)} in a string (must be escaped)`);
      } else if (c < 0x80) {
        this.i++;
      } else {
        this.utf8Sequence();
      }
    }
  }

  /** At '\\': the escape's text. */
  escape() {
    const start = this.i++;
    if (this.i >= this.s.length) this.fail('unterminated string');
    const e = this.s[this.i++];
    const simple = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' }[e];
    if (simple !== undefined) return simple;
    if (e !== 0x75) {
      this.i = start;
      this.fail(`invalid escape sequence '\\${printable(e)}'`);
    }
    const cp = this.hex4();
    if (cp >= 0xdc00 && cp <= 0xdfff) {
      this.i = start;
      this.fail(`unpaired low surrogate \\u${hex(cp, 4)}`);
    }
    if (cp < 0xd800 || cp > 0xdbff) return String.fromCharCode(cp);
    if (this.s[this.i] !== 0x5c || this.s[this.i + 1] !== 0x75) {
      this.i = start;
      this.fail(`high surrogate \\u${hex(cp, 4)} not followed by a \\u low surrogate`);
    }
    this.i += 2;
    const low = this.hex4();
    if (low < 0xdc00 || low > 0xdfff) {
      this.i = start;
      this.fail(`high surrogate \\u${hex(cp, 4)} followed by \\u${hex(low, 4)}, not a low surrogate`);
    }
    return String.fromCharCode(cp, low);
  }

  hex4() {
    if (this.s.length - this.i < 4) this.fail('unterminated \\u escape');
    let v = 0;
    for (let k = 0; k < 4; k++) {
      const h = hexValue(this.s[this.i]);
      if (h < 0) this.fail(`invalid hex digit ${this.describe()} in a \\u escape`);
      v = v * 16 + h;
      this.i++;
    }
    return v;
  }

  /** At a byte ≥ 0x80: a well-formed sequence (RFC 3629; no overlong forms, no surrogates, nothing past U+10FFFF). */
  utf8Sequence() {
    const b0 = this.s[this.i];
    let len, lo = 0x80, hi = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf) len = 2;
    else if (b0 >= 0xe0 && b0 <= 0xef) {
      len = 3;
      if (b0 === 0xe0) lo = 0xa0;
      if (b0 === 0xed) hi = 0x9f;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      len = 4;
      if (b0 === 0xf0) lo = 0x90;
      if (b0 === 0xf4) hi = 0x8f;
    } else this.fail(`invalid UTF-8 lead byte 0x${hex(b0)}`);
    if (this.s.length - this.i < len) this.fail('truncated UTF-8 sequence');
    for (let k = 1; k < len; k++) {
      const b = this.s[this.i + k];
      if (b < (k === 1 ? lo : 0x80) || b > (k === 1 ? hi : 0xbf)) this.fail(`invalid UTF-8 sequence (byte 0x${hex(b)} after lead byte 0x${hex(b0)})`);
    }
    this.i += len;
  }
}

/**
 * The value of a number node written as a plain integer (digits only: no sign, fraction or exponent) not above
 * 2^53, the largest every reader holds exactly; else null (the native reader's AsUint53).
 * @param {JsonNode} node
 * @returns {number | null}
 */
export function asUint53(node) {
  if (node.type !== 'number' || !/^\d{1,16}$/.test(node.str)) return null;
  return BigInt(node.str) <= 2n ** 53n ? Number(node.str) : null;
}
