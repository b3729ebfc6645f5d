// CausalLM#chat (bindings/causal_lm.js) on a tiny random Llama with a byte-level BPE tokenizer and a
// ChatML template (tests/data/chat_lm_fixture.mjs): the prompt is the template's rendering
// (renderChatTemplate, as transformers renders it) tokenized as applyChatTemplate tokenizes it; the
// tokens are generate()'s on those ids with the end-of-turn stop tokens; a reply ends at <|im_end|>
// (the token greedy generation gives next); a conversation goes on with turn.message; generate()'s
// options work the same (sampling, signal, break, maxNewTokens); template variables; every error; the
// heap is the same after many turns.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { renderChatTemplate } from '../../bindings/chat_template.js';
import { AttnWasmError } from '../../bindings/errors.js';
import { chatCheckpoint, chatTokenizerConfig, CHAT_TEMPLATE, ID } from '../data/chat_lm_fixture.mjs';

const aw = await init({ threads: 1 });
const files = chatCheckpoint();
const lm = await aw.loadModel(files);
after(() => lm.dispose());

const HELLO = [{ role: 'user', content: 'Hello there, how are you?' }];
const isInvalid = (pattern) => (e) => e instanceof AttnWasmError && e.code === 'ERR_INVALID_ARGUMENT' && pattern.test(e.message);

/** All of a generation's tokens. */
async function collect(it) {
  const tokens = [];
  for await (const t of it) tokens.push(t);
  return tokens;
}

test('the prompt is the template rendered with add_generation_prompt and tokenized without special tokens; the tokens are generate()\'s, ending at <|im_end|>', async () => {
  const turn = lm.chat(HELLO);
  const want = renderChatTemplate(CHAT_TEMPLATE, { messages: HELLO, addGenerationPrompt: true, specialTokens: { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' } });
  assert.equal(turn.prompt, want);
  assert.equal(want, '<|im_start|>user\nHello there, how are you?<|im_end|>\n<|im_start|>assistant\n');
  assert.deepEqual(turn.promptIds, lm.tokenizer.applyChatTemplate(HELLO, { addGenerationPrompt: true }));
  assert.deepEqual(turn.promptIds, lm.tokenizer.encode(want, { addSpecialTokens: false }));
  // Stop tokens: config.json's eos_token_id (<|endoftext|>) and tokenizer_config.json's eos_token, which the template writes (<|im_end|>).
  assert.deepEqual(turn.stopTokens, [ID['<|endoftext|>'], ID['<|im_end|>']]);
  assert.deepEqual(lm.eosTokenIds, [ID['<|endoftext|>']]);
  const tokens = await collect(turn);
  assert.equal(turn.stopReason, 'stop');
  assert.ok(tokens.length > 0, 'a reply of a few tokens');
  assert.deepEqual(turn.ids, tokens.map((t) => t.id));
  assert.equal(turn.text, tokens.map((t) => t.text).join(''));
  assert.deepEqual(tokens.map((t) => t.index), tokens.map((_, i) => i));
  // Without stop tokens, greedy generation from the same ids gives the same tokens and then <|im_end|>.
  const g = lm.generate(turn.promptIds, { stopTokens: [], maxNewTokens: tokens.length + 1 });
  const all = await collect(g);
  assert.deepEqual(all.map((t) => t.id), [...turn.ids, ID['<|im_end|>']]);
  assert.deepEqual(turn.message, { role: 'assistant', content: turn.text });
  assert.notEqual(turn.message, turn.message, 'a new object each time');
});

test('a conversation: turn.message appended, the next turn\'s prompt holds the reply; finalMessage() runs a turn to its end; the done value is the message', async () => {
  const messages = [{ role: 'system', content: 'Be brief.' }, ...HELLO];
  const first = lm.chat(messages);
  const reply = await first.finalMessage();
  assert.deepEqual(reply, first.message);
  assert.equal(first.stopReason, 'stop');
  messages.push(reply, { role: 'user', content: 'Tell me more.' });
  const second = lm.chat(messages);
  assert.ok(second.prompt.endsWith(`<|im_start|>assistant\n${reply.content}<|im_end|>\n<|im_start|>user\nTell me more.<|im_end|>\n<|im_start|>assistant\n`));
  let r;
  const ids = [];
  while (!(r = await second.next()).done) ids.push(r.value.id);
  assert.deepEqual(r.value, second.message);
  assert.deepEqual(ids, second.ids);
  assert.deepEqual((await second.next()).value, second.message, 'done stays done');
  assert.deepEqual(await second.finalMessage(), second.message);
  // The same as generate() on applyChatTemplate's ids.
  const g = lm.generate(lm.tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true }), { stopTokens: second.stopTokens });
  await collect(g);
  assert.deepEqual(g.ids, second.ids);
  assert.equal(g.text, second.text);
});

test('generate()\'s options: sampling with a seed as generate() samples, maxNewTokens, stopTokens, signal, break; the cache is freed', async () => {
  const base = aw.memory().inUseBytes;
  const opts = { temperature: 1.3, topK: 40, topP: 0.95, seed: 11, maxNewTokens: 30 };
  const turn = lm.chat(HELLO, opts);
  await collect(turn);
  const g = lm.generate(turn.promptIds, { ...opts, stopTokens: turn.stopTokens });
  await collect(g);
  assert.deepEqual([turn.ids, turn.seed], [g.ids, 11]);
  const short = lm.chat(HELLO, { maxNewTokens: 2, stopTokens: [] });
  await collect(short);
  assert.deepEqual([short.ids.length, short.stopReason, short.stopTokens], [2, 'length', []]);
  const controller = new AbortController();
  const aborted = lm.chat(HELLO, { signal: controller.signal, stopTokens: [], maxNewTokens: 50 });
  let n = 0;
  for await (const t of aborted) {
    void t;
    if (++n === 3) controller.abort();
  }
  assert.deepEqual([aborted.ids.length, aborted.stopReason], [3, 'aborted']);
  const broken = lm.chat(HELLO, { stopTokens: [], maxNewTokens: 50 });
  for await (const t of broken) if (t.index === 1) break;
  assert.deepEqual([broken.ids.length, broken.stopReason], [2, 'aborted']);
  assert.deepEqual(await broken.return(), { done: true, value: broken.message });
  assert.equal(aw.memory().inUseBytes, base, 'every cache freed');
});

test('template options: chatTemplateKwargs (Qwen3\'s enable_thinking), chatTemplate as text, tools and documents, now', async () => {
  const thinking = lm.chat(HELLO, { chatTemplateKwargs: { enable_thinking: false } });
  assert.ok(thinking.prompt.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'));
  await thinking.return();
  const text = '{{ "<|im_start|>" }}{{ strftime_now("%Y") }} {{ tools | length }} {{ documents[0].title }}: {{ messages[-1].content }}<|im_end|>{{ "<|im_start|>assistant" if add_generation_prompt }}';
  const own = lm.chat(HELLO, { chatTemplate: text, tools: [{ type: 'function', function: { name: 'f' } }], documents: [{ title: 'T', text: 'x' }], now: new Date(2031, 0, 2) });
  assert.equal(own.prompt, '<|im_start|>2031 1 T: Hello there, how are you?<|im_end|><|im_start|>assistant');
  assert.deepEqual(own.stopTokens, [ID['<|endoftext|>'], ID['<|im_end|>']]);
  const noEnd = lm.chat(HELLO, { chatTemplate: '{{ messages[0].content }}' });
  assert.deepEqual(noEnd.stopTokens, [ID['<|endoftext|>'], ID['<|im_end|>']], 'eos_token is <|im_end|> here anyway');
  await own.return();
  await noEnd.return();
});

test('errors, each before anything runs: options by name, the template\'s own message, no template, no tokenizer, a character tokenizer, too long, disposed', async () => {
  const base = aw.memory().inUseBytes;
  assert.throws(() => lm.chat(HELLO, { max_new_tokens: 5 }), (e) => e instanceof TypeError && /^chat options: unknown option 'max_new_tokens' \(expected one of maxNewTokens, .*chatTemplateKwargs, now\)$/.test(e.message));
  assert.throws(() => lm.chat(HELLO, { topP: 0 }), (e) => e instanceof RangeError && /^topP: /.test(e.message));
  assert.throws(() => lm.chat(HELLO, { stopTokens: [1e6] }), (e) => e instanceof RangeError && /^stopTokens\[0\]: /.test(e.message));
  assert.throws(() => lm.chat(HELLO, { chatTemplateKwargs: [] }), (e) => e instanceof TypeError && /^chatTemplateKwargs: expected an object/.test(e.message));
  assert.throws(() => lm.chat(HELLO, { chatTemplateKwargs: { tools: [] } }), (e) => e instanceof TypeError && e.message === "chatTemplateKwargs.tools: pass tools as chat's own option");
  assert.throws(() => lm.chat(HELLO, { chatTemplateKwargs: { addGenerationPrompt: false } }), (e) => e instanceof TypeError && e.message === 'chatTemplateKwargs.addGenerationPrompt: set by chat');
  assert.throws(() => lm.chat(HELLO, { chatTemplateKwargs: { add_generation_prompt: false } }), (e) => e instanceof TypeError && /pass addGenerationPrompt/.test(e.message));
  assert.throws(() => lm.chat('Hi'), (e) => e instanceof TypeError && /^messages: expected an array/.test(e.message));
  assert.throws(() => lm.chat(HELLO, { chatTemplate: '{{ raise_exception("roles!") }}' }), isInvalid(/^roles!$/));
  assert.throws(() => lm.chat(HELLO, { chatTemplate: '{% if false %}x{% endif %}' }), isInvalid(/^chat: the chat template rendered an empty prompt$/));
  const long = [{ role: 'user', content: 'word '.repeat(3000) }];
  assert.throws(() => lm.chat(long), (e) => e instanceof RangeError && /^prompt: expected fewer than maxPositions \(2048\) tokens, got \d+$/.test(e.message));
  assert.equal(aw.memory().inUseBytes, base);
  // Without tokenizer_config.json: no template (a template's text still works).
  const noConfig = await aw.loadModel(new Map([...files].filter(([name]) => name !== 'tokenizer_config.json')));
  assert.throws(() => noConfig.chat(HELLO), isInvalid(/^applyChatTemplate: no chat template: this Tokenizer was made without a tokenizer_config\.json/));
  const ok = noConfig.chat(HELLO, { chatTemplate: CHAT_TEMPLATE });
  assert.deepEqual(ok.stopTokens, [ID['<|endoftext|>'], ID['<|im_end|>']], 'the template writes <|im_end|>');
  await ok.return();
  noConfig.dispose();
  // Without a tokenizer; with the package's model (a character vocabulary).
  const bare = await aw.loadModel(files.get('model.safetensors'), { config: files.get('config.json') });
  assert.throws(() => bare.chat(HELLO), isInvalid(/^chat: this model has no tokenizer/));
  bare.dispose();
  const chars = await aw.loadModel(new URL('../../models/lm/lm.safetensors', import.meta.url));
  assert.throws(() => chars.chat(HELLO), isInvalid(/^chat: this model's tokenizer is its file's character vocabulary, which has no chat template/));
  chars.dispose();
  const gone = await aw.loadModel(files);
  gone.dispose();
  assert.throws(() => gone.chat(HELLO), (e) => e.code === 'ERR_DISPOSED');
  assert.equal(aw.memory().inUseBytes, base);
});

test('a folder\'s chat_template.jinja or chat_template.json is the template, before tokenizer_config.json\'s (as transformers reads them); a tokenizerConfig option is used as given', async () => {
  const text = (o) => new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o));
  const { chat_template: _, ...withoutTemplate } = chatTokenizerConfig();
  const JINJA = "{%- for message in messages %}{{ '<|im_start|>' + message.role + ' said\\n' + message.content + '<|im_end|>' }}{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant said\\n' }}{%- endif %}";
  const want = '<|im_start|>user said\nHello there, how are you?<|im_end|><|im_start|>assistant said\n';
  const folder = (extra, config = withoutTemplate) => new Map([...files].filter(([n]) => n !== 'tokenizer_config.json')
    .concat([['tokenizer_config.json', text(config)], ...extra.map(([n, v]) => [n, text(v)])]));
  // Newer repos: no chat_template in tokenizer_config.json, the template in chat_template.jinja.
  const jinja = await aw.loadModel(folder([['chat_template.jinja', JINJA]]));
  assert.equal(jinja.chat(HELLO).prompt, want);
  assert.equal(jinja.tokenizer.config.chat_template, JINJA);
  jinja.dispose();
  // Both: the .jinja wins (transformers' order), over tokenizer_config.json's and chat_template.json's.
  const both = await aw.loadModel(folder([['chat_template.jinja', JINJA], ['chat_template.json', { chat_template: 'json {{ messages }}' }]], chatTokenizerConfig()));
  assert.equal(both.chat(HELLO).prompt, want);
  both.dispose();
  // chat_template.json, with named templates.
  const named = await aw.loadModel(folder([['chat_template.json', { chat_template: [{ name: 'default', template: JINJA }, { name: 'short', template: 'short' }] }]]));
  assert.equal(named.chat(HELLO).prompt, want);
  assert.equal(named.chat(HELLO, { chatTemplate: 'short' }).prompt, 'short');
  named.dispose();
  // A tokenizerConfig given as an option is the tokenizer's config as it is: the folder's file is not merged in.
  const given = await aw.loadModel(folder([['chat_template.jinja', JINJA]]), { tokenizerConfig: chatTokenizerConfig() });
  assert.equal(given.chat(HELLO).prompt, '<|im_start|>user\nHello there, how are you?<|im_end|>\n<|im_start|>assistant\n');
  given.dispose();
  // Without a template anywhere: the error says where newer repos keep it.
  const none = await aw.loadModel(folder([]));
  assert.throws(() => none.chat(HELLO), isInvalid(/no chat template: tokenizer_config\.json has no chat_template .*chat_template\.jinja/));
  none.dispose();
  // A chat_template.json without a template is refused at the load, by name.
  await assert.rejects(aw.loadModel(folder([['chat_template.json', { template: JINJA }]])), isInvalid(/^chat_template\.json: expected \{ "chat_template": /));
  await assert.rejects(aw.loadModel(folder([['chat_template.json', '{"chat_template": "a", "chat_template": "b"}']])), isInvalid(/chat_template\.json.*given twice/));
});

test('generation_config.json: its eos_token_id is what generate() stops at (as transformers\' generate()); kept as generationConfig; bad ids refused by name', async () => {
  const text = (o) => new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o));
  const prompt = lm.tokenizer.applyChatTemplate(HELLO, { addGenerationPrompt: true });
  // config.json's eos is <|endoftext|>: plain generate() runs past the <|im_end|> greedy decoding gives next.
  const plainIds = (await collect(lm.generate(prompt, { maxNewTokens: 40 }))).map((t) => t.id);
  const end = plainIds.indexOf(ID['<|im_end|>']);
  assert.ok(end >= 0 && end < plainIds.length - 1, `the reply ends at <|im_end|> and generation goes on: ${plainIds}`);
  assert.equal(lm.generationConfig, null);
  const gen = { bos_token_id: ID['<|endoftext|>'], eos_token_id: [ID['<|im_end|>'], ID['<|endoftext|>']], do_sample: true, temperature: 0.7 };
  const withGen = await aw.loadModel(new Map([...files, ['generation_config.json', text(gen)]]));
  assert.deepEqual(withGen.eosTokenIds, [ID['<|im_end|>'], ID['<|endoftext|>']]);
  assert.deepEqual(withGen.generationConfig, gen);
  assert.ok(Object.isFrozen(withGen.generationConfig));
  const g = withGen.generate(prompt, { maxNewTokens: 40 });
  assert.deepEqual((await collect(g)).map((t) => t.id), plainIds.slice(0, end));
  assert.equal(g.stopReason, 'stop');
  withGen.dispose();
  // The option wins over the folder's file; a single id is a list of one.
  const given = await aw.loadModel(new Map([...files, ['generation_config.json', text(gen)]]), { generationConfig: { eos_token_id: ID['<|endoftext|>'] } });
  assert.deepEqual(given.eosTokenIds, [ID['<|endoftext|>']]);
  given.dispose();
  const bad = (g2) => aw.loadModel(new Map([...files, ['generation_config.json', text(g2)]]));
  await assert.rejects(bad({ eos_token_id: 'two' }), isInvalid(/^generation_config\.json eos_token_id: expected a token id \(an integer in \[0, \d+\)\), got "two"$/));
  await assert.rejects(bad({ eos_token_id: [ID['<|im_end|>'], 1e6] }), isInvalid(/^generation_config\.json eos_token_id\[1\]: expected a token id .*got 1000000$/));
  await assert.rejects(bad('{"eos_token_id": 1, "eos_token_id": 2}'), isInvalid(/generation_config\.json.*given twice/));
  await assert.rejects(bad('not json'), isInvalid(/^generation_config\.json: not JSON/));
});

test('many turns: the heap is the same after a conversation as after the same one before', async () => {
  // The runtime keeps a block of scratch as large as the longest prompt so far (docs/memory.md): a
  // first conversation sets it, the same conversation again must end where the first ended.
  const conversation = async () => {
    const messages = [];
    for (let i = 0; i < 12; i++) {
      messages.push({ role: 'user', content: `Turn ${i}: go on.` });
      messages.push(await lm.chat(messages, { maxNewTokens: 16 }).finalMessage());
    }
    return messages;
  };
  const first = await conversation();
  const base = aw.memory().inUseBytes;
  const again = await conversation();
  assert.deepEqual(again, first, 'greedy: the same conversation');
  assert.equal(first.length, 24);
  assert.equal(aw.memory().inUseBytes, base);
});
