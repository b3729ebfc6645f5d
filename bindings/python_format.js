// Python's text of a value, for chat templates (jinja_python.js): str() and repr() of
// @huggingface/jinja's runtime values ({ type, value }), json.dumps as transformers' tojson calls it,
// str.strip / lstrip / rstrip with Python's whitespace, and strftime in glibc's C locale. Plain
// functions from values to JS strings: no library classes, no environment (jinja_python.js wraps them
// as the template's filters and methods). Each is checked against Debian's jinja2 by
// tests/data/make_chat_goldens.py. Every function returns a new string owned by the caller.

// ---------------------------------------------------------------------------------------------
// Python's str() and repr() of the library's runtime values ({ type, value }).

/** Python's repr() of a float: the shortest round-trip digits, fixed for exponents -4 … 15. */
export function floatRepr(x) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exp] = Math.abs(x).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const e = Number(exp);
  let text;
  if (e < -4 || e >= 16) text = `${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  else if (e < 0) text = `0.${'0'.repeat(-e - 1)}${digits}`;
  else text = `${digits.slice(0, e + 1).padEnd(e + 1, '0')}.${digits.slice(e + 1) || '0'}`;
  return x < 0 ? `-${text}` : text;
}

const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u; // str.isprintable() is false (but ' ')

/** Python's repr() of a str: quotes, escapes and the non-printable characters as \x, \u or \U. */
export function stringRepr(s) {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch !== ' ' && NOT_PRINTABLE.test(ch)) {
      out += c < 0x100 ? `\\x${hex(c, 2)}` : c < 0x10000 ? `\\u${hex(c, 4)}` : `\\U${hex(c, 8)}`;
    } else out += ch;
  }
  return out + quote;
}

const hex = (c, n) => c.toString(16).padStart(n, '0');

/** Python's str() of a runtime value, as Jinja prints it (undefined prints nothing). */
export function pyStr(v) {
  switch (v.type) {
    case 'StringValue': return v.value;
    case 'UndefinedValue': return '';
    case 'NullValue': return 'None';
    case 'BooleanValue': return v.value ? 'True' : 'False';
    case 'IntegerValue': return String(v.value);
    case 'FloatValue': return floatRepr(v.value);
    case 'ArrayValue': return `[${v.value.map(pyRepr).join(', ')}]`;
    case 'TupleValue': return `(${v.value.map(pyRepr).join(', ')}${v.value.length === 1 ? ',' : ''})`;
    case 'ObjectValue': return `{${[...v.value].map(([k, x]) => `${stringRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
    case 'NamespaceValue': return `<Namespace ${pyStr({ type: 'ObjectValue', value: v.value })}>`;
    default: return v.toString();
  }
}

function pyRepr(v) {
  if (v.type === 'StringValue') return stringRepr(v.value);
  return v.type === 'UndefinedValue' ? 'Undefined' : pyStr(v);
}

// ---------------------------------------------------------------------------------------------
// json.dumps(x, ensure_ascii, indent, separators, sort_keys): transformers' tojson filter.

const JSON_ESCAPES = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

function jsonString(s, ascii) {
  const special = ascii ? /["\\]|[^ -~]/g : /["\\\x00-\x1f]/g;
  return `"${s.replace(special, (ch) => JSON_ESCAPES[ch] ?? `\\u${hex(ch.charCodeAt(0), 4)}`)}"`;
}

/** Python's order of two strings (by code point, not UTF-16 unit), on [key, …] pairs: a sort comparator. */
export const byCodePoint = ([a], [b]) => {
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    const x = a.codePointAt(i), y = b.codePointAt(j);
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
};

/**
 * json.dumps of a runtime value; o: { ascii, indent (a string or null), comma, colon, sortKeys }, depth: the
 * nesting level (0 at the top). A value JSON cannot hold throws Python's TypeError text as an Error.
 */
export function pyJson(v, o, depth) {
  switch (v.type) {
    case 'NullValue': return 'null';
    case 'BooleanValue': return v.value ? 'true' : 'false';
    case 'IntegerValue': return String(v.value);
    case 'FloatValue': return Number.isFinite(v.value) ? floatRepr(v.value) : Number.isNaN(v.value) ? 'NaN' : v.value > 0 ? 'Infinity' : '-Infinity';
    case 'StringValue': return jsonString(v.value, o.ascii);
    case 'ArrayValue': case 'TupleValue': case 'ObjectValue': {
      const object = v.type === 'ObjectValue';
      let entries = object ? [...v.value] : v.value.map((x) => [null, x]);
      if (entries.length === 0) return object ? '{}' : '[]';
      if (object && o.sortKeys) entries = entries.sort(byCodePoint);
      const inner = o.indent === null ? '' : `\n${o.indent.repeat(depth + 1)}`;
      const items = entries.map(([k, x]) => `${inner}${object ? jsonString(k, o.ascii) + o.colon : ''}${pyJson(x, o, depth + 1)}`);
      const outer = o.indent === null ? '' : `\n${o.indent.repeat(depth)}`;
      return `${object ? '{' : '['}${items.join(o.comma)}${outer}${object ? '}' : ']'}`;
    }
    default: {
      const name = { UndefinedValue: 'Undefined', NamespaceValue: 'Namespace', FunctionValue: 'function' }[v.type] ?? v.type;
      throw new Error(`Object of type ${name} is not JSON serializable`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// str.strip / lstrip / rstrip (and the trim filter): Python's whitespace (str.isspace) or `chars`.

const PY_SPACE = new Set([...'\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000'].map((c) => c.codePointAt(0)));
for (let c = 0x2000; c <= 0x200a; c++) PY_SPACE.add(c);

/** Python's s.strip(chars) (side 'strip', 'lstrip' or 'rstrip'); chars null: whitespace. */
export function pyStrip(s, chars, side = 'strip') {
  const set = chars === null ? PY_SPACE : new Set([...chars].map((c) => c.codePointAt(0)));
  const points = [...s];
  let start = 0, end = points.length;
  if (side !== 'rstrip') while (start < end && set.has(points[start].codePointAt(0))) start++;
  if (side !== 'lstrip') while (end > start && set.has(points[end - 1].codePointAt(0))) end--;
  return points.slice(start, end).join('');
}

// ---------------------------------------------------------------------------------------------
// strftime in the C locale, as Python's datetime.strftime gives it on Linux (glibc), with glibc's
// '-' flag (no padding). A directive not listed here comes out as written.

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Formats the local time of `date` with a Python/glibc strftime format (naive: %z and %Z are empty). */
export function strftime(date, format) {
  const y = date.getFullYear(), mo = date.getMonth(), d = date.getDate(), wd = date.getDay();
  const h = date.getHours(), mi = date.getMinutes(), s = date.getSeconds();
  const yday = Math.round((Date.UTC(y, mo, d) - Date.UTC(y, 0, 1)) / 86400000);
  const h12 = h % 12 || 12;
  const num = (n, width, pad = '0') => (flag) => (flag === '-' ? String(n) : String(n).padStart(width, pad));
  const text = (t) => () => t;
  const table = {
    a: text(DAYS[wd].slice(0, 3)), A: text(DAYS[wd]), b: text(MONTHS[mo].slice(0, 3)), h: text(MONTHS[mo].slice(0, 3)), B: text(MONTHS[mo]),
    C: num(Math.floor(y / 100), 2), d: num(d, 2), e: num(d, 2, ' '), H: num(h, 2), I: num(h12, 2), k: num(h, 2, ' '), l: num(h12, 2, ' '),
    j: num(yday + 1, 3), m: num(mo + 1, 2), M: num(mi, 2), S: num(s, 2), f: num(date.getMilliseconds() * 1000, 6),
    p: text(h < 12 ? 'AM' : 'PM'), P: text(h < 12 ? 'am' : 'pm'), u: num(wd || 7, 1), w: num(wd, 1), y: num(y % 100, 2), Y: num(y, 1),
    U: num(Math.floor((yday + 7 - wd) / 7), 2), W: num(Math.floor((yday + 7 - ((wd + 6) % 7)) / 7), 2),
    n: text('\n'), t: text('\t'), z: text(''), Z: text(''), '%': text('%'),
  };
  const composite = { D: '%m/%d/%y', F: '%Y-%m-%d', R: '%H:%M', T: '%H:%M:%S', r: '%I:%M:%S %p', c: '%a %b %e %H:%M:%S %Y', x: '%m/%d/%y', X: '%H:%M:%S' };
  for (const [letter, f] of Object.entries(composite)) table[letter] = () => strftime(date, f);
  return format.replace(/%(-?)([a-zA-Z%])/g, (whole, flag, letter) => (table[letter] ? table[letter](flag) : whole));
}
