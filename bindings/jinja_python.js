// Python's semantics where @huggingface/jinja uses JavaScript's, for chat templates
// (chat_template.js). The library parses and interprets; this file rewrites the parsed program in
// place so that a few constructs call functions written here, and makes the environment with
// transformers' globals. What it makes Python-exact (each checked against Debian's jinja2 by
// tests/data/make_chat_goldens.py): printing a value (`{{ none }}` is None, `{{ [1] }}` is [1] as
// Python's repr, `~`, the `string` filter), str.strip/lstrip/rstrip (Python's whitespace, the chars
// argument) and the `trim` filter, `tojson` (json.dumps with transformers' arguments), the
// select/reject/selectattr/rejectattr filters with Jinja's tests, comparisons, capitalize/title/join,
// strftime_now (glibc's C locale), range (the sandbox's 100 000 limit). The text of a value — str(),
// repr(), json.dumps, strip, strftime — is python_format.js's; this file holds the library's side: its
// value classes, the filters and tests, the rewrite and the environment. Everything else is the
// library's: docs/chat.md lists what still differs.
import { Environment } from '@huggingface/jinja';
import { pyStr, pyJson, pyStrip, byCodePoint, strftime } from './python_format.js';

// The text functions, exported here as before the split (tests/js/chat_template.test.mjs imports strftime).
export { floatRepr, stringRepr, pyStr, pyStrip, strftime } from './python_format.js';

// The library's runtime value classes are not exported: take them from values it makes.
const probe = new Environment();
const classOf = (value) => probe.set(`v${probe.variables.size}`, value).constructor;
const FunctionValue = classOf(() => null);
const StringValue = classOf('');
const BooleanValue = classOf(false);
const ArrayValue = classOf([]);
const IntegerValue = classOf(0);
const UNDEFINED = probe.lookupVariable('an undeclared name');

// ---------------------------------------------------------------------------------------------
// tojson: transformers' json.dumps arguments read from the call (python_format.js writes the text).

/** The tojson filter: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False). */
function tojson(args) {
  const { positional, keywords } = splitArgs(args);
  const names = ['x', 'ensure_ascii', 'indent', 'separators', 'sort_keys'];
  const a = {};
  positional.forEach((v, i) => { a[names[i]] = v; });
  for (const [k, v] of keywords) {
    if (!names.includes(k)) throw new Error(`tojson() got an unexpected keyword argument '${k}'`);
    a[k] = v;
  }
  const given = (k) => a[k] !== undefined && a[k].type !== 'NullValue';
  let indent = null;
  if (given('indent')) {
    const n = a.indent;
    if (n.type === 'StringValue') indent = n.value;
    else if (n.type === 'IntegerValue') indent = ' '.repeat(Math.max(0, n.value));
    else throw new Error(`indent: expected an integer or a string, got ${pyStr(n)}`);
  }
  let [comma, colon] = indent === null ? [', ', ': '] : [',', ': '];
  if (given('separators')) [comma, colon] = a.separators.value.map(pyStr);
  const truthy = (k) => given(k) && a[k].__bool__().value;
  return new StringValue(pyJson(a.x, { ascii: truthy('ensure_ascii'), indent, comma, colon, sortKeys: truthy('sort_keys') }, 0));
}

function splitArgs(args) {
  const last = args[args.length - 1];
  if (last?.type === 'KeywordArgumentsValue') return { positional: args.slice(0, -1), keywords: [...last.value] };
  return { positional: args, keywords: [] };
}

// ---------------------------------------------------------------------------------------------
// str.strip / lstrip / rstrip and the trim filter (python_format.js's pyStrip), capitalize, title, join.

function strip(side) {
  return (args) => {
    const [self, chars] = args;
    if (side !== 'trim' && self.type !== 'StringValue') throw new Error(`'${self.type}' has no attribute '${side}'`);
    if (chars && !['StringValue', 'NullValue', 'UndefinedValue'].includes(chars.type)) throw new Error(`${side} arg must be None or str`);
    const set = chars && chars.type === 'StringValue' ? chars.value : null;
    return new StringValue(pyStrip(pyStr(self), set, side === 'trim' ? 'strip' : side));
  };
}

// capitalize, title (str.title and Jinja's title filter, which differ) and str.join.

const CASED = /[\p{Lu}\p{Ll}\p{Lt}]/u;

function capitalize([v]) {
  const [first = '', ...rest] = pyStr(v);
  return new StringValue(first.toUpperCase() + rest.join('').toLowerCase());
}

function titleMethod([v]) {
  let out = '', cased = false;
  for (const ch of pyStr(v)) {
    out += cased ? ch.toLowerCase() : ch.toUpperCase();
    cased = CASED.test(ch);
  }
  return new StringValue(out);
}

function titleFilter([v]) {
  const words = pyStr(v).split(/([-\s({[<]+)/u).filter((w) => w !== '');
  return new StringValue(words.map((w) => { const [first, ...rest] = w; return first.toUpperCase() + rest.join('').toLowerCase(); }).join(''));
}

function join([sep, seq]) {
  if (sep.type !== 'StringValue') throw new Error(`'${sep.type}' has no attribute 'join'`);
  return new StringValue(iterate(seq).map((x, i) => {
    if (x.type !== 'StringValue') throw new Error(`sequence item ${i}: expected str instance, ${x.type} found`);
    return x.value;
  }).join(sep.value));
}

// ---------------------------------------------------------------------------------------------
// select / reject / selectattr / rejectattr with Jinja's tests.

const NUMERIC = new Set(['IntegerValue', 'FloatValue', 'BooleanValue']);
const CONTAINERS = new Set(['StringValue', 'ArrayValue', 'TupleValue', 'ObjectValue']);

function pyEq(a, b) {
  if (NUMERIC.has(a.type) && NUMERIC.has(b.type)) return Number(a.value) === Number(b.value);
  if (a.type !== b.type && !(a.type === 'ArrayValue' && b.type === 'TupleValue') && !(a.type === 'TupleValue' && b.type === 'ArrayValue')) return false;
  if (a.type === 'ArrayValue' || a.type === 'TupleValue') return a.value.length === b.value.length && a.value.every((x, i) => pyEq(x, b.value[i]));
  if (a.type === 'ObjectValue') return a.value.size === b.value.size && [...a.value].every(([k, x]) => b.value.has(k) && pyEq(x, b.value.get(k)));
  return a.value === b.value;
}

function pyCompare(a, b) {
  if (NUMERIC.has(a.type) && NUMERIC.has(b.type)) return Number(a.value) - Number(b.value);
  if (a.type === 'StringValue' && b.type === 'StringValue') return byCodePoint([a.value], [b.value]);
  throw new Error(`'<' not supported between ${a.type} and ${b.type}`);
}

const TESTS = {
  defined: (v) => v.type !== 'UndefinedValue',
  undefined: (v) => v.type === 'UndefinedValue',
  none: (v) => v.type === 'NullValue',
  true: (v) => v.type === 'BooleanValue' && v.value === true,
  false: (v) => v.type === 'BooleanValue' && v.value === false,
  boolean: (v) => v.type === 'BooleanValue',
  integer: (v) => v.type === 'IntegerValue',
  float: (v) => v.type === 'FloatValue',
  number: (v) => NUMERIC.has(v.type),
  string: (v) => v.type === 'StringValue',
  mapping: (v) => v.type === 'ObjectValue',
  sequence: (v) => CONTAINERS.has(v.type),
  iterable: (v) => CONTAINERS.has(v.type),
  odd: (v) => v.value % 2 !== 0,
  even: (v) => v.value % 2 === 0,
  divisibleby: (v, n) => v.value % n.value === 0,
  lower: (v) => v.type === 'StringValue' && /\p{Ll}/u.test(v.value) && !/\p{Lu}|\p{Lt}/u.test(v.value),
  upper: (v) => v.type === 'StringValue' && /\p{Lu}/u.test(v.value) && !/\p{Ll}|\p{Lt}/u.test(v.value),
  in: (v, seq) => (seq.type === 'StringValue' ? seq.value.includes(v.value) : seq.type === 'ObjectValue' ? seq.value.has(v.value) : seq.value.some((x) => pyEq(v, x))),
  eq: (v, w) => pyEq(v, w),
  ne: (v, w) => !pyEq(v, w),
  lt: (v, w) => pyCompare(v, w) < 0,
  le: (v, w) => pyCompare(v, w) <= 0,
  gt: (v, w) => pyCompare(v, w) > 0,
  ge: (v, w) => pyCompare(v, w) >= 0,
};
Object.assign(TESTS, { equalto: TESTS.eq, '==': TESTS.eq, '!=': TESTS.ne, '<': TESTS.lt, '<=': TESTS.le, '>': TESTS.gt, '>=': TESTS.ge, lessthan: TESTS.lt, greaterthan: TESTS.gt });

/** An attribute of a runtime value as Jinja's getattr/getitem finds it ('a.b', '0'). */
function attribute(v, path) {
  for (const part of path.split('.')) {
    if (v.type === 'ObjectValue' || v.type === 'NamespaceValue') v = v.value.get(part) ?? UNDEFINED;
    else if ((v.type === 'ArrayValue' || v.type === 'TupleValue') && /^\d+$/.test(part)) v = v.value[Number(part)] ?? UNDEFINED;
    else return UNDEFINED;
  }
  return v;
}

/** The items Python's iter() gives: a dict's keys, a string's characters (code points). */
function iterate(seq) {
  if (!seq || !CONTAINERS.has(seq.type)) throw new Error(`'${seq?.type}' object is not iterable`);
  if (seq.type === 'ObjectValue') return [...seq.value.keys()].map((k) => new StringValue(k));
  return seq.type === 'StringValue' ? [...seq.value].map((c) => new StringValue(c)) : seq.value;
}

function selecting(keep, byAttribute) {
  return (args) => {
    const { positional: [seq, ...rest] } = splitArgs(args);
    const attr = byAttribute ? pyStr(rest.shift()) : null;
    const items = iterate(seq);
    let test = (v) => v.__bool__().value;
    if (rest.length) {
      const [name, ...testArgs] = rest;
      const fn = TESTS[pyStr(name)];
      if (!fn) throw new Error(`No test named '${pyStr(name)}'.`);
      test = (v) => fn(v, ...testArgs);
    }
    return new ArrayValue(items.filter((x) => test(byAttribute ? attribute(x, attr) : x) === keep));
  };
}

// ---------------------------------------------------------------------------------------------
// The rewrite of the parsed program, and the environment.

const STATEMENTS = new Set(['Program', 'If', 'For', 'Break', 'Continue', 'Set', 'Macro', 'Comment', 'CallStatement', 'FilterStatement', 'StringLiteral']);
const BLOCKS = ['body', 'alternate', 'defaultBlock'];
// filter or method name → helper name (called as py:<helper>)
const FILTERS = { trim: 'trim', string: 'string', tojson: 'tojson', select: 'select', reject: 'reject', selectattr: 'selectattr', rejectattr: 'rejectattr', capitalize: 'capitalize', title: 'titleFilter' };
const OPERATORS = { '~': 'concat', '==': 'eq', '!=': 'ne', '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge' };
const METHODS = { strip: 'strip', lstrip: 'lstrip', rstrip: 'rstrip', capitalize: 'capitalize', title: 'title', join: 'join' };

/** Turns `node` (in place: its parent keeps the reference) into a call of the helper `name`. */
function toCall(node, name, args) {
  for (const key of Object.keys(node)) delete node[key];
  Object.assign(node, { type: 'CallExpression', callee: { type: 'Identifier', value: `py:${name}` }, args });
}

function rewrite(node) {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) return node.forEach(rewrite);
  if (node instanceof Map) return node.forEach((v, k) => { rewrite(k); rewrite(v); });
  for (const key of Object.keys(node)) rewrite(node[key]);
  if (typeof node.type !== 'string') return;
  if (STATEMENTS.has(node.type) && node.type !== 'StringLiteral') {
    for (const key of BLOCKS) {
      for (const item of Array.isArray(node[key]) ? node[key] : []) {
        if (!STATEMENTS.has(item.type)) toCall(item, 'print', [Object.assign(Object.create(Object.getPrototypeOf(item)), item)]);
      }
    }
  } else if (node.type === 'FilterExpression') {
    const f = node.filter;
    const name = f.type === 'Identifier' ? f.value : f.callee?.type === 'Identifier' ? f.callee.value : null;
    if (Object.hasOwn(FILTERS, name)) toCall(node, FILTERS[name], [node.operand, ...(f.type === 'CallExpression' ? f.args : [])]);
  } else if (node.type === 'CallExpression' && node.callee.type === 'MemberExpression' && !node.callee.computed
    && node.callee.property.type === 'Identifier' && Object.hasOwn(METHODS, node.callee.property.value)) {
    toCall(node, METHODS[node.callee.property.value], [node.callee.object, ...node.args]);
  } else if (node.type === 'BinaryExpression' && Object.hasOwn(OPERATORS, node.operator.value)) {
    toCall(node, OPERATORS[node.operator.value], [node.left, node.right]);
  }
}

/**
 * Rewrites a program parsed by @huggingface/jinja (Template#parsed) in place so that it calls this
 * file's Python-exact helpers (they are in the environment of makeEnvironment). Call once per parse.
 */
export function pythonize(program) {
  rewrite(program);
  return program;
}

const HELPERS = {
  print: ([v]) => new StringValue(pyStr(v)),
  string: ([v]) => new StringValue(pyStr(v)),
  concat: ([a, b]) => new StringValue(pyStr(a) + pyStr(b)),
  ...Object.fromEntries(['eq', 'ne', 'lt', 'le', 'gt', 'ge'].map((op) => [op, ([a, b]) => new BooleanValue(TESTS[op](a, b))])),
  trim: strip('trim'),
  strip: strip('strip'),
  lstrip: strip('lstrip'),
  rstrip: strip('rstrip'),
  tojson,
  select: selecting(true, false),
  reject: selecting(false, false),
  selectattr: selecting(true, true),
  rejectattr: selecting(false, true),
  capitalize,
  title: titleMethod,
  titleFilter,
  join,
};

const MAX_RANGE = 100000; // jinja2.sandbox.MAX_RANGE: larger ranges raise, so no template loops for ever

function range(args) {
  const n = splitArgs(args).positional.map((v) => {
    if (v.type !== 'IntegerValue') throw new Error(`'${v.type}' object cannot be interpreted as an integer`);
    return v.value;
  });
  const [start, stop, step] = n.length === 1 ? [0, n[0], 1] : [n[0], n[1], n[2] ?? 1];
  if (step === 0) throw new Error('range() arg 3 must not be zero');
  const count = Math.max(0, Math.ceil((stop - start) / step));
  if (count > MAX_RANGE) throw new Error(`Range too big. The sandbox blocks ranges larger than MAX_RANGE (${MAX_RANGE}).`);
  return new ArrayValue(Array.from({ length: count }, (_, i) => new IntegerValue(start + i * step)));
}

/**
 * A fresh environment for one rendering: Jinja's constants, transformers' globals (raise_exception
 * calls `raise(message)`, which must throw; strftime_now formats `now`), range, this file's helpers,
 * then `variables` (JSON-like values).
 * @param {Record<string, unknown>} variables
 * @param {{ now: Date, raise: (message: string) => never }} hooks
 */
export function makeEnvironment(variables, { now, raise }) {
  const env = new Environment();
  for (const [k, v] of [['true', true], ['false', false], ['none', null], ['True', true], ['False', false], ['None', null]]) env.set(k, v);
  env.variables.set('range', new FunctionValue(range));
  const one = (name, args) => {
    if (args.length !== 1) throw new Error(`${name}() takes exactly one argument (${args.length} given)`);
    return pyStr(args[0]);
  };
  env.variables.set('raise_exception', new FunctionValue((args) => raise(one('raise_exception', args))));
  env.variables.set('strftime_now', new FunctionValue((args) => new StringValue(strftime(now, one('strftime_now', args)))));
  for (const [name, fn] of Object.entries(HELPERS)) env.variables.set(`py:${name}`, new FunctionValue(fn));
  for (const [k, v] of Object.entries(variables)) env.set(k, v);
  return env;
}
