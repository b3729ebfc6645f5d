// Issue 31's families and chat in headless Chromium, without a bundler (an import map for the package's two
// dependencies), served by the test server:
//   - Qwen3 (q/k norms, explicit head_dim; the BF16 tied golden and the F32 YaRN one, each with its 4.x and
//     5.x config.json): the page loads the golden's model.safetensors by URL with its config.json and
//     generates greedily; the ids must be the torch twin's up to the first near tie, as in Node
//     (tests/js/families.test.mjs);
//   - lm.chat: the tiny ChatML model of tests/data/chat_lm_fixture.mjs loaded from File objects (what a
//     folder picker gives), two turns streamed into the page (each token appended to the DOM as it comes);
//     prompts, ids and texts must be Node's for the same files and the same build;
//   - a page whose import map lacks @huggingface/jinja: attnwasm/tokenizer still tokenizes, and only
//     applyChatTemplate fails, with ERR_UNSUPPORTED naming the import map entry to add.
// No console errors, failed requests or HTTP errors on either page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../bindings/index.js';
import { RELAXED_SIMD_SUPPORTED } from '../../bindings/wasm_load.js';
import { ROOT } from '../tarball.mjs';
import { chatCheckpoint } from '../data/chat_lm_fixture.mjs';
import { launchChromium, pageResult } from './chromium.mjs';
import { startStatic } from './static_server.mjs';

const GOLDENS = ['qwen3_qk_norm_tied_bf16', 'qwen3_rope_yarn_bias_untied_f32'];
const read = (name) => JSON.parse(readFileSync(new URL(`../data/goldens/families/${name}.json`, import.meta.url), 'utf8'));
const CONVERSATION = ['Hello there, how are you?', 'Tell me more.'];
const IMPORTS = {
  '@huggingface/tokenizers': '/node_modules/@huggingface/tokenizers/dist/tokenizers.mjs',
  '@huggingface/jinja': '/node_modules/@huggingface/jinja/dist/index.js',
};

const page = (body, imports) => `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>families and chat</title>
<script type="importmap">${JSON.stringify({ imports })}</script></head>
<body><div id="out"></div><script type="module">${body}</script></body></html>`;

const FAMILIES_PAGE = page(`
  import { init } from '/bindings/index.js';
  const run = async () => {
    const { goldens, conversation, relaxedSimd } = await (await fetch('/params.json')).json();
    const aw = await init({ threads: 1, relaxedSimd });
    const out = { relaxedSimd: aw.capabilities().relaxedSimd, families: {}, chat: null };
    for (const g of goldens) {
      for (const gen of g.configs) {
        const config = await (await fetch('/ckpt/' + g.name + '/config.' + gen + '.json')).json();
        const lm = await aw.loadModel('/ckpt/' + g.name + '/model.safetensors', { config });
        const runs = [];
        for (const gr of g.greedy) {
          const ids = [];
          for await (const t of lm.generate(gr.prompt, { maxNewTokens: gr.n, stopTokens: [] })) ids.push(t.id);
          runs.push(ids);
        }
        out.families[g.name + ' ' + gen] = { modelType: lm.modelType, runs };
        lm.dispose();
      }
    }
    // A folder as a folder picker gives it: Files with names.
    const names = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
    const files = await Promise.all(names.map(async (n) => new File([await (await fetch('/chat/' + n)).blob()], n)));
    const lm = await aw.loadModel(files);
    const shown = document.getElementById('out');
    const messages = [];
    const turns = [];
    for (const line of conversation) {
      messages.push({ role: 'user', content: line });
      const turn = lm.chat(messages, { maxNewTokens: 64 });
      const before = shown.textContent.length;
      const tokens = [];
      for await (const t of turn) {
        shown.append(t.text);
        tokens.push({ id: t.id, text: t.text, shownAfter: shown.textContent.length - before });
      }
      turns.push({ prompt: turn.prompt, promptIds: [...turn.promptIds], tokens, text: turn.text, stopReason: turn.stopReason, stopTokens: turn.stopTokens });
      messages.push(turn.message);
    }
    out.chat = { turns, messages };
    lm.dispose();
    out.leftInUse = aw.memory().inUseBytes;
    await aw.close();
    return out;
  };
  run().then((r) => { window.result = r; }, (e) => { window.result = { error: e.message, code: e.code, stack: String(e.stack) }; });
`, IMPORTS);

const NO_JINJA_PAGE = page(`
  import { Tokenizer } from '/bindings/tokenizer.js';
  const json = await (await fetch('/chat/tokenizer.json')).json();
  const config = await (await fetch('/chat/tokenizer_config.json')).json();
  const tok = Tokenizer.fromJSON(json, config);
  const out = { ids: [...tok.encode('Hello there')] };
  try {
    tok.applyChatTemplate([{ role: 'user', content: 'Hi' }]);
    out.chat = 'rendered';
  } catch (e) {
    out.chat = { name: e.name, code: e.code, message: e.message };
  }
  window.result = out;
`, { '@huggingface/tokenizers': IMPORTS['@huggingface/tokenizers'] });

const chatFiles = chatCheckpoint();
const goldens = GOLDENS.map(read);
const bin = (body, type = 'application/octet-stream') => ({ type, body, headers: { 'Content-Length': String(body.byteLength) } });
const routes = {
  '/families.html': { type: 'text/html; charset=utf-8', body: FAMILIES_PAGE },
  '/nojinja.html': { type: 'text/html; charset=utf-8', body: NO_JINJA_PAGE },
  '/params.json': bin(Buffer.from(JSON.stringify({
    relaxedSimd: RELAXED_SIMD_SUPPORTED, conversation: CONVERSATION,
    goldens: goldens.map((g) => ({ name: g.name, configs: Object.keys(g.configs), greedy: g.greedy.map((gr) => ({ prompt: gr.prompt, n: gr.ids.length })) })),
  })), 'application/json'),
};
for (const g of goldens) {
  routes[`/ckpt/${g.name}/model.safetensors`] = bin(Buffer.from(g.weights.base64, 'base64'));
  for (const [gen, config] of Object.entries(g.configs)) routes[`/ckpt/${g.name}/config.${gen}.json`] = bin(Buffer.from(JSON.stringify(config)), 'application/json');
}
for (const [n, bytes] of chatFiles) routes[`/chat/${n}`] = bin(Buffer.from(bytes), n.endsWith('.json') ? 'application/json' : 'application/octet-stream');

let server, browser;
before(async () => {
  server = await startStatic({ root: ROOT.replace(/\/$/, ''), allow: ['bindings', 'dist', 'node_modules'], routes });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('Chromium: Qwen3 goldens generate the twin\'s greedy ids; lm.chat streams two turns with Node\'s prompts, ids and text', async (t) => {
  const { result, problems } = await pageResult(browser.context, `${server.url}families.html`, { timeout: 120_000 });
  assert.deepEqual(problems, []);
  assert.equal(result.error, undefined, `${result.error}\n${result.stack}`);
  assert.equal(result.relaxedSimd, RELAXED_SIMD_SUPPORTED, 'the page runs the build Node runs');
  let compared = 0;
  for (const g of goldens) {
    for (const gen of Object.keys(g.configs)) {
      const got = result.families[`${g.name} ${gen}`];
      assert.equal(got.modelType, 'qwen3');
      g.greedy.forEach((gr, k) => {
        const n = gr.margins.findIndex((m) => m < g.greedyMinMargin);
        const upTo = n < 0 ? gr.ids.length : n;
        assert.ok(upTo > 0, `${g.name} greedy ${k}: a clear first token`);
        assert.deepEqual(got.runs[k].slice(0, upTo), gr.ids.slice(0, upTo), `${g.name} (${gen} config.json) greedy ${k}`);
        compared += upTo;
      });
    }
  }
  // Node, same files, same build: the same conversation.
  const aw = await init({ threads: 1, relaxedSimd: RELAXED_SIMD_SUPPORTED });
  const lm = await aw.loadModel(chatFiles);
  const messages = [];
  for (const [i, line] of CONVERSATION.entries()) {
    messages.push({ role: 'user', content: line });
    const turn = lm.chat(messages, { maxNewTokens: 64 });
    const message = await turn.finalMessage();
    const got = result.chat.turns[i];
    assert.equal(got.prompt, turn.prompt, `turn ${i + 1}: prompt`);
    assert.deepEqual(got.promptIds, [...turn.promptIds], `turn ${i + 1}: prompt ids`);
    assert.deepEqual(got.tokens.map((x) => x.id), turn.ids, `turn ${i + 1}: ids`);
    assert.equal(got.text, turn.text, `turn ${i + 1}: text`);
    assert.deepEqual([got.stopReason, got.stopTokens], [turn.stopReason, turn.stopTokens], `turn ${i + 1}: ended by <|im_end|>`);
    assert.equal(got.stopReason, 'stop');
    // Streamed: the page showed each token's text as it came.
    assert.ok(got.tokens.length > 0);
    got.tokens.forEach((x, j) => assert.equal(x.shownAfter, got.tokens.slice(0, j + 1).reduce((a, y) => a + y.text.length, 0)));
    messages.push(message);
  }
  assert.deepEqual(result.chat.messages, messages);
  lm.dispose();
  await aw.close();
  t.diagnostic(`${compared} golden ids compared; chat turns of ${result.chat.turns.map((x) => x.tokens.length).join(' and ')} tokens`);
});

test('Chromium without @huggingface/jinja in the import map: the tokenizer works, applyChatTemplate says what to map', async () => {
  const { result, problems } = await pageResult(browser.context, `${server.url}nojinja.html`);
  assert.deepEqual(problems, []);
  const { Tokenizer } = await import('../../bindings/tokenizer.js');
  const tok = Tokenizer.fromJSON(chatFiles.get('tokenizer.json'), chatFiles.get('tokenizer_config.json'));
  assert.deepEqual(result.ids, [...tok.encode('Hello there')]);
  assert.equal(result.chat.name, 'AttnWasmError');
  assert.equal(result.chat.code, 'ERR_UNSUPPORTED');
  assert.match(result.chat.message, /^applyChatTemplate: chat templates need the package's dependency @huggingface\/jinja, which did not load \(.*\); in a page without a bundler, map it in the import map: "@huggingface\/jinja": "\/node_modules\/@huggingface\/jinja\/dist\/index\.js"$/);
});
