// A strict JSON reader for safetensors headers, following the runtime's native reader (src/io/json.h) where
// JSON.parse is lenient or loses what the checks need: a number keeps its literal ("2.0" is not the integer 2
// a shape must be), an object keeps its members in order with repeated keys (a tensor named twice is refused,
// not silently the last one), nesting stops at 64, a number past the double range and a \u escape that does
// not pair its surrogates are errors. UTF-8 is checked by the caller's decoder (TextDecoder, fatal). Not a
// general JSON API: header.js reads its tree, and what a node is is written below.

/** Largest nesting of arrays and objects accepted (src/io/json.h kJsonMaxDepth). */
export const MAX_DEPTH = 64;

/**
 * A parsed value: { type: 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object', bool (a boolean),
 * str (a string's text; a number's literal as written), items (an array's nodes), members (an object's
 * [{ key, value }] in order, repeated keys kept) }.
 * @typedef {{type: string, bool?: boolean, str?: string, items?: JsonNode[], members?: {key: string, value: JsonNode}[]}} JsonNode
 */

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const CONTROL = /[\u0000-\u001f]/;  // eslint-disable-line no-control-regex
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

class JsonSyntaxError extends Error {}

/**
 * The tree of `text` (one JSON value and nothing but whitespace after it), owned by the caller. Throws an
 * Error whose message says what is wrong and at which character ("unexpected '}' at character 12").
 * @param {string} text
 * @returns {JsonNode}
 */
export function parseTree(text) {
  const p = new Parser(text);
  p.ws();
  const v = p.value(0);
  p.ws();
  if (p.i !== text.length) p.fail(`unexpected ${p.show()} after the JSON value`);
  return v;
}

class Parser {
  constructor(s) {
    this.s = s;
    this.i = 0;
  }

  fail(what) {
    throw new JsonSyntaxError(`${what} at character ${this.i}`);
  }

  /** The character at the cursor, for a message. */
  show() {
    if (this.i >= this.s.length) return 'end of input';
    const c = this.s[this.i];
    return c < ' ' ? `character U+${c.charCodeAt(0).toString(16).padStart(4, '0')}` : `'${c}'`;
  }

  ws() {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
      this.i++;
    }
  }

  value(depth) {
    const c = this.s[this.i];
    if (c === undefined) this.fail('unexpected end of input, expected a value');
    if (c === '{' || c === '[') {
      if (depth + 1 > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
      return c === '{' ? this.object(depth + 1) : this.array(depth + 1);
    }
    if (c === '"') return { type: 'string', str: this.string() };
    if (c === '-' || (c >= '0' && c <= '9')) return this.number();
    for (const [word, node] of [['true', { type: 'boolean', bool: true }], ['false', { type: 'boolean', bool: false }], ['null', { type: 'null' }]]) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return node;
      }
    }
    return this.fail(`unexpected ${this.show()}, expected a value`);
  }

  object(depth) {
    this.i++;  // {
    const members = [];
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return { type: 'object', members };
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail(`unexpected ${this.show()}, expected a string key`);
      const key = this.string();
      this.ws();
      if (this.s[this.i] !== ':') this.fail(`unexpected ${this.show()}, expected ':'`);
      this.i++;
      this.ws();
      members.push({ key, value: this.value(depth) });
      this.ws();
      if (this.s[this.i] === ',') { this.i++; continue; }
      if (this.s[this.i] === '}') { this.i++; return { type: 'object', members }; }
      this.fail(`unexpected ${this.show()}, expected ',' or '}'`);
    }
  }

  array(depth) {
    this.i++;  // [
    const items = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return { type: 'array', items };
    }
    for (;;) {
      this.ws();
      items.push(this.value(depth));
      this.ws();
      if (this.s[this.i] === ',') { this.i++; continue; }
      if (this.s[this.i] === ']') { this.i++; return { type: 'array', items }; }
      this.fail(`unexpected ${this.show()}, expected ',' or ']'`);
    }
  }

  number() {
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) this.fail('invalid number: expected a digit');
    const next = this.s[this.i + m[0].length];
    if (next === '.' || next === 'e' || next === 'E') {
      this.i += m[0].length;
      this.fail(`invalid number: expected a digit after '${next}'`);
    }
    if (!Number.isFinite(Number(m[0]))) this.fail(`number ${m[0].slice(0, 32)} is out of the double range`);
    this.i += m[0].length;
    return { type: 'number', str: m[0] };
  }

  /** The string whose opening quote is at the cursor, decoded; the cursor moves past its closing quote. */
  string() {
    const s = this.s;
    let j = this.i + 1;
    for (;;) {
      j = s.indexOf('"', j);
      if (j < 0) {
        this.i = s.length;
        this.fail('unterminated string');
      }
      let k = j - 1;
      while (s.charCodeAt(k) === 92) k--;  // backslashes before the quote: an odd count escapes it
      if ((j - 1 - k) % 2 === 0) break;
      j++;
    }
    const raw = s.slice(this.i, j + 1);
    const control = CONTROL.exec(raw);
    if (control) {
      this.i += control.index;
      this.fail(`control character U+${control[0].charCodeAt(0).toString(16).padStart(4, '0')} in a string (must be escaped)`);
    }
    let text;
    try {
      text = raw.indexOf('\\') < 0 ? raw.slice(1, -1) : JSON.parse(raw);
    } catch {
      this.fail('invalid escape sequence in a string');
    }
    if (LONE_SURROGATE.test(text)) this.fail('a \\u escape of an unpaired surrogate in a string');
    this.i = j + 1;
    return text;
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
