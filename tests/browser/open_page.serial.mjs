// The open page (web/open/) in headless Chromium, served by tools/serve.mjs as `npm run demo` serves it, with
// a random checkpoint of a real shape made by the checked-in scripts: SmolLM2-135M in BF16 as 2 shards and
// their index (tools/make_checkpoint.mjs), a byte-level BPE tokenizer of its 49152 ids and a
// tokenizer_config.json with its ChatML chat template (tools/make_tokenizer.mjs). Picked as files: what fits
// is shown before the load; the load shows its progress; a chat turn streams (the text grows while it
// writes) and ends at the token limit with the template applied; Stop ends a long turn; plain completion
// writes; the newest token's attention is drawn for every layer and head; a config.json of model_type
// "gpt2" is refused with the runtime's own message, and a shard missing from the files picked is named.
// No console error and no long task (> 50 ms) on the page during the load and the generations. Saves the
// screenshot docs/open.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readdirSync, copyFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../tools/serve.mjs';
import { writeCheckpoint } from '../../tools/make_checkpoint.mjs';
import { writeTokenizer } from '../../tools/make_tokenizer.mjs';
import { init } from '../../bindings/index.js';
import { launchChromium, watchedPage, LONG_TASK_FAIL_MS } from './chromium.mjs';

const SCREENSHOT = fileURLToPath(new URL('../../docs/open.png', import.meta.url));
let tmp, smol, gpt2, server, browser;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'attnwasm-open-'));
  smol = join(tmp, 'smol');
  writeCheckpoint('smollm2-135m', smol, { shards: 2 });
  writeTokenizer(smol);
  gpt2 = join(tmp, 'gpt2');
  mkdirSync(gpt2);
  for (const f of readdirSync(smol)) copyFileSync(join(smol, f), join(gpt2, f));
  writeFileSync(join(gpt2, 'config.json'), JSON.stringify({ architectures: ['GPT2LMHeadModel'], model_type: 'gpt2', vocab_size: 49152, n_embd: 576, n_layer: 30, n_head: 9 }));
  server = await startServer();
  browser = await launchChromium({ viewport: { width: 1200, height: 1500 } });
}, { timeout: 120_000 });
after(async () => {
  await browser?.close();
  await server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const files = (dir) => readdirSync(dir).map((f) => join(dir, f));

test('open page: SmolLM2-135M-shaped shards from disk — fits, load, chat streamed, Stop, completion, attention, refusals', async (t) => {
  const { page, problems } = await watchedPage(browser.context);
  try {
    await page.goto(`${server.url}web/open/`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
    const caps = await page.evaluate(() => document.querySelector('[data-cap="threads"]').textContent);
    t.diagnostic(`threads in the worker: ${caps}`);

    // What fits, from the headers, before anything loads.
    await page.setInputFiles('#pick-files', files(smol));
    await page.waitForSelector('#fit-card:not(.hidden)');
    const fits = await page.$$eval('#fits tbody tr', (rows) => rows.map((r) => [r.dataset.dtype, ...[...r.cells].map((c) => c.textContent)]));
    const stored = fits.find((r) => r[0] === '');
    assert.match(stored[2], /^2(5\d|6\d)\.\d\d MB$/, JSON.stringify(fits));
    assert.equal(stored[3], 'yes');
    assert.ok(fits.some((r) => r[0] === 'q4'), JSON.stringify(fits));
    assert.match(await page.textContent('#source-summary'), /2 weight file\(s\), 272 tensors — config.json: model_type "llama"/);

    // The load: progress, then the model's facts; no long task on the page meanwhile.
    const t0 = await page.evaluate(() => performance.now());
    await page.click('#load');
    await page.waitForFunction(() => document.body.dataset.loaded === 'true', null, { timeout: 60_000 });
    const rate = await page.textContent('#progress-rate');
    assert.match(rate, /MB\/s/);
    assert.match(await page.textContent('#facts'), /30 × 9/);
    t.diagnostic(`load: ${await page.textContent('#progress-text')}, ${rate}`);

    // Chat: the template applied, the assistant's turn streamed.
    await page.fill('#max-tokens', '40');
    await page.fill('#prompt', 'What is attention?');
    await page.click('#send');
    await page.waitForFunction(() => window.openDemo.state.tokens >= 3, null, { timeout: 30_000 });
    const early = await page.evaluate(() => window.openDemo.state);
    await page.waitForFunction(() => document.getElementById('stats').dataset.state === 'done', null, { timeout: 60_000 });
    const chat = await page.evaluate(() => window.openDemo.state);
    assert.ok(early.tokens < 40 && early.stopReason === null, `streamed: ${early.tokens} tokens seen while writing`);
    assert.equal(chat.tokens, 40);
    assert.equal(chat.stopReason, 'length');
    assert.deepEqual(chat.messages.map((m) => m.role), ['user', 'assistant']);
    assert.equal(chat.messages[1].content, chat.text);
    assert.deepEqual(chat.attention.layers, 30);
    assert.equal(chat.attention.heads, 9);
    assert.equal(await page.getAttribute('#heat', 'data-rows'), '270');
    assert.match(await page.textContent('#top-positions'), /Layer 1, head 1: most attention on position/);
    t.diagnostic(`chat: ${chat.tokens} tokens at ${chat.tokensPerSecond.toFixed(1)} tokens/s; prompt + turn ${chat.attention.positions} positions`);
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // Stop: a long turn ends within a token of the click.
    await page.fill('#max-tokens', '2000');
    await page.fill('#prompt', 'Tell me a long story.');
    await page.click('#send');
    await page.waitForFunction(() => window.openDemo.state.tokens >= 5, null, { timeout: 30_000 });
    await page.click('#stop');
    await page.waitForFunction(() => document.getElementById('stats').dataset.state === 'done', null, { timeout: 30_000 });
    const stopped = await page.evaluate(() => window.openDemo.state);
    assert.equal(stopped.stopReason, 'aborted');
    assert.ok(stopped.tokens < 100, `stopped after ${stopped.tokens} tokens`);
    assert.equal(stopped.messages.length, 4);

    // Plain completion.
    await page.check('#mode-complete');
    await page.fill('#max-tokens', '16');
    await page.fill('#prompt', 'Once upon a time');
    await page.click('#send');
    await page.waitForFunction(() => document.getElementById('stats').dataset.state === 'done' && window.openDemo.state.tokens === 16, null, { timeout: 30_000 });
    assert.equal(await page.textContent('#completion-prompt'), 'Once upon a time');
    const long = await page.evaluate((from) => window.longTasks.filter((e) => e.start >= from), t0);
    if (long.length) t.diagnostic(`long tasks (> 50 ms) during load and generation: ${long.map((e) => `${Math.round(e.ms)} ms at ${Math.round(e.start)}`).join(', ')}`);
    assert.deepEqual(long.filter((e) => e.ms > LONG_TASK_FAIL_MS), [], `tasks over ${LONG_TASK_FAIL_MS} ms on the page during load and generation`);

    // Refusals, on a fresh page: a shard missing from the files, then an unsupported model_type with the
    // runtime's message. (Loading again after the chat and the completion above has, rarely and only with the
    // machine under load, never settled: a known issue, docs/worker.md.)
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
    await page.setInputFiles('#pick-files', files(smol).filter((f) => !f.endsWith('00002-of-00002.safetensors')));
    await page.waitForSelector('#source-error:not(.hidden)');
    assert.match(await page.textContent('#source-error'), /names the shard model-00002-of-00002\.safetensors, which is not among the files given/);
    await page.setInputFiles('#pick-files', files(gpt2));
    await page.waitForSelector('#fit-card:not(.hidden)');
    await page.click('#load');
    try {
      await page.waitForFunction(() => document.body.dataset.loaded === 'error', null, { timeout: 30_000 });
    } catch (e) {  // what the page was doing, for a run that does not reproduce
      const state = await page.evaluate(() => ({ loaded: document.body.dataset.loaded, loadError: document.getElementById('load-error').textContent,
        summary: document.getElementById('source-summary').textContent, loadDisabled: document.getElementById('load').disabled,
        progress: document.getElementById('progress-text').textContent, demo: window.openDemo?.state }));
      state.worker = await page.evaluate(() => Promise.race([window.openDemo.runtime.memory().then((m) => `answers: heap ${m.heapBytes}`, (err) => `rejects: ${err.message}`),
        new Promise((r) => { setTimeout(() => r('silent for 5 s'), 5000); })]));
      throw new Error(`${e.message}; the page: ${JSON.stringify(state)}; problems: ${JSON.stringify(problems)}`);
    }
    const refused = await page.textContent('#load-error');
    const aw = await init({ threads: 1 });
    const expected = await aw.loadModel(gpt2).then(() => null, (e) => e.message);
    await aw.close();
    assert.equal(refused, `Cannot run this checkpoint: ${expected}`);
    assert.match(refused, /gpt2/);
    t.diagnostic(refused);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
