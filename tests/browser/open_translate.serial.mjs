// The open page (web/open/) with an encoder–decoder translator (issue 40), in headless Chromium against
// tools/serve.mjs: a hub-like M2M100 folder made of the golden files (the small random checkpoint of
// tests/data/goldens/seq2seq_translate/m2m100 beside the golden M2M100Tokenizer files of spm/folders/m2m_hub and the
// SentencePiece model its manifest names), written to a temporary folder and picked as a person picks a folder. The
// translate card lists the tokenizer's 100 language codes with tokenizer_config.json's en → fr chosen; two lines
// translate as one batch, greedy then with 2 beams, to exactly what Node's model.translate(lines, { srcLang,
// tgtLang, numBeams }) gives for the same folder; one line streams token by token to Node's text; another target
// language is taken from its select. Stop ends a long streamed translation, and the card translates again after;
// beams 0 is kept from running by the form; a language the runtime refuses shows its message; Stop ends a long batch
// of beams while its search runs in the worker. No console error, no 404 and no main-thread task over
// LONG_TASK_FAIL_MS from the load on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../tools/serve.mjs';
import { init } from '../../bindings/index.js';
import { launchChromium, watchedPage, LONG_TASK_FAIL_MS } from './chromium.mjs';
import { ARTIFACTS } from './demo_pages.mjs';

const GOLDENS = fileURLToPath(new URL('../data/goldens/', import.meta.url));
const LINES = ['Hello, how are you?', 'The cat sleeps on the mat.'];
const EN_FR = { srcLang: 'en', tgtLang: 'fr' };
let tmp, dir, server, browser, aw, ref;

/** The M2M100 folder as tests/js/seq2seq_translate.test.mjs's folder() assembles it, written to `out`. */
function writeFolder(out) {
  mkdirSync(out, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(GOLDENS, 'spm/manifest.json'), 'utf8'));
  for (const d of ['seq2seq_translate/m2m100', 'spm/folders/m2m_hub']) {
    for (const f of readdirSync(join(GOLDENS, d))) writeFileSync(join(out, f), readFileSync(join(GOLDENS, d, f)));
  }
  for (const [f, src] of Object.entries(manifest.m2m_hub)) writeFileSync(join(out, f), readFileSync(join(GOLDENS, 'spm', src)));
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'attnwasm-open-translate-'));
  dir = join(tmp, 'm2m100');
  writeFolder(dir);
  aw = await init({ threads: 1 });
  ref = await aw.loadModel(dir);
  server = await startServer({ port: 0 });
  browser = await launchChromium({ viewport: { width: 1280, height: 1300 } });
}, { timeout: 60_000 });
after(async () => {
  await browser?.close();
  await server?.close();
  ref?.dispose();
  await aw?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** The open page with the folder picked and loaded. */
async function opened() {
  const { page, problems } = await watchedPage(browser.context);
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${new URL(r.url()).pathname}`); });
  await page.goto(`${server.url}web/open/`);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
  await page.setInputFiles('#pick-folder', dir);
  await page.waitForSelector('#fit-card:not(.hidden)');
  await page.click('#load');
  await page.waitForFunction(() => document.body.dataset.loaded === 'true', null, { timeout: 30_000 });
  return { page, problems };
}

/** The texts typed, the beams and token limit set, Translate pressed (or Ctrl+Enter); resolves to the run once it ends. */
async function translate(page, lines, { beams = '1', max = '', key = false, wait = true } = {}) {
  await page.fill('#source-text', lines.join('\n'));
  await page.fill('#beams', beams);
  await page.fill('#translate-max', max);
  const seq = await page.evaluate(() => window.openDemo.state.translate?.seq ?? -1);
  if (key) await page.press('#source-text', 'Control+Enter');
  else await page.click('#translate');
  if (!wait) {
    await page.waitForFunction((q) => window.openDemo.state.translate?.seq > q, seq);
    return null;
  }
  await page.waitForFunction((q) => {
    const r = window.openDemo.state.translate;
    return r && r.seq > q && !r.running;
  }, seq, { timeout: 60_000 });
  return page.evaluate(() => window.openDemo.state.translate);
}

const shownTranslations = (page) => page.$$eval('#translations td.translation', (tds) => tds.map((td) => td.textContent));
const longTasks = (page, from) => page.evaluate((t) => window.longTasks.filter((e) => e.start >= t), from);
const showLong = (long) => (long.length ? long.map((e) => `${Math.round(e.ms)} ms`).join(', ') : 'none');

test('open page: an M2M100 folder translates two lines en → fr as Node\'s translate() does, greedy and with 2 beams; one line streams', async (t) => {
  const { page, problems } = await opened();
  assert.equal(await page.evaluate(() => window.openDemo.state.kind), 'Seq2SeqLM');
  assert.equal(await page.textContent('#model-title'), 'A m2m_100 translator (encoder–decoder)');
  const facts = (await page.textContent('#facts')).replace(/\s+/g, ' ');
  assert.match(facts, /model_typem2m_100/);
  assert.match(facts, /layers2 encoder \+ 2 decoder, width 16/);
  assert.match(facts, /vocabulary609/);
  assert.match(facts, /languages100, en → fr by default/);
  assert.match(facts, /generation1 beam\(s\), max_length 14 \(generation_config\.json\)/);
  assert.equal(await page.isVisible('#translate-card'), true);
  assert.equal(await page.isVisible('#lm-card'), false);

  // The language selects: the tokenizer's codes, tokenizer_config.json's src_lang / tgt_lang chosen.
  const codes = ref.tokenizer.languageCodes;
  for (const id of ['src-lang', 'tgt-lang']) {
    assert.deepEqual(await page.$$eval(`#${id} option`, (o) => o.map((x) => x.value)), codes, `#${id}: the tokenizer's codes`);
  }
  assert.deepEqual([await page.inputValue('#src-lang'), await page.inputValue('#tgt-lang')], ['en', 'fr']);
  assert.equal(await page.inputValue('#beams'), '1', 'generation_config.json has no num_beams');
  assert.equal(await page.getAttribute('#translate-max', 'placeholder'), 'up to max_length 14');

  const t0 = await page.evaluate(() => performance.now());
  for (const [numBeams, key] of [[1, false], [2, true]]) {
    const want = await ref.translate(LINES, { ...EN_FR, numBeams });
    const run = await translate(page, LINES, { beams: String(numBeams), key });
    assert.equal(run.stopReason, 'done', run.error ?? '');
    assert.equal(run.streamed, false, 'two lines: one batch');
    assert.deepEqual(run.options, { ...EN_FR, numBeams });
    assert.deepEqual(run.texts, want, `numBeams ${numBeams}: Node's translations`);
    assert.deepEqual(await shownTranslations(page), want);
    assert.equal(run.scores === null, numBeams === 1, 'beam search\'s scores');
    t.diagnostic(`numBeams ${numBeams}: ${JSON.stringify(want)} in ${run.ms.toFixed(1)} ms`);
  }

  // One line, greedy: streamed token by token, to Node's text and stop reason.
  const g = ref.generate(LINES[0], { ...EN_FR, numBeams: 1 });
  let n = 0;
  for await (const _ of g) n += 1;
  const one = await translate(page, [LINES[0]]);
  assert.equal(one.streamed, true);
  assert.deepEqual(one.texts, [await ref.translate(LINES[0], { ...EN_FR, numBeams: 1 })]);
  assert.equal(one.texts[0], g.text);
  assert.equal(one.tokens, n, 'every token streamed');
  assert.equal(one.stopReason, g.stopReason);
  assert.deepEqual(await shownTranslations(page), one.texts);
  assert.equal(await page.textContent('#translate-stats [data-stat="tokens"] b'), String(n));

  // Another target language, from its select.
  await page.selectOption('#tgt-lang', 'de');
  const de = await translate(page, LINES);
  assert.deepEqual(de.options, { srcLang: 'en', tgtLang: 'de', numBeams: 1 });
  assert.deepEqual(de.texts, await ref.translate(LINES, { srcLang: 'en', tgtLang: 'de', numBeams: 1 }));
  await page.screenshot({ path: join(ARTIFACTS, 'open_translate.png'), fullPage: true });
  const long = await longTasks(page, t0);
  t.diagnostic(`main-thread tasks over 50 ms: ${showLong(long)}`);
  assert.deepEqual(long.filter((e) => e.ms > LONG_TASK_FAIL_MS), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('open page: Stop ends a long streamed translation; the card translates again after; beams 0 does not run; a refusal shows the runtime\'s message', async (t) => {
  const { page, problems } = await opened();
  const t0 = await page.evaluate(() => performance.now());

  // One line, greedy, up to 10 000 new tokens (M2M100's positions are sinusoidal): stopped after some have come.
  await translate(page, [LINES[0]], { max: '10000', wait: false });
  await page.waitForFunction(() => window.openDemo.state.translate?.tokens >= 20, null, { timeout: 30_000 });
  assert.equal(await page.isDisabled('#translate'), true, 'Translate waits while one runs');
  await page.click('#translate-stop');
  await page.waitForFunction(() => document.getElementById('translate-stats').dataset.state === 'stopped', null, { timeout: 10_000 });
  const s = await page.evaluate(() => window.openDemo.state.translate);
  assert.equal(s.stopReason, 'aborted');
  assert.ok(s.tokens >= 20 && s.tokens < 10000, `${s.tokens} tokens`);
  assert.equal(await page.textContent('#translate-stats [data-stat="end"]'), 'stopped');
  assert.ok((await shownTranslations(page))[0].length > 0, 'the text so far stays');
  t.diagnostic(`stream stopped after ${s.tokens} tokens, ${s.ms.toFixed(0)} ms (${((s.tokens - 1) / ((s.lastMs - s.firstMs) / 1000)).toFixed(0)} tokens/s)`);

  // The card works on: the two lines again, with 2 beams.
  const again = await translate(page, LINES, { beams: '2' });
  assert.deepEqual(again.texts, await ref.translate(LINES, { ...EN_FR, numBeams: 2 }));

  // Beams 0: the form's own check keeps it from running (the click and Ctrl+Enter alike).
  const seq = again.seq;
  await page.fill('#beams', '0');
  await page.click('#translate');
  await page.press('#source-text', 'Control+Enter');
  assert.equal(await page.evaluate(() => document.getElementById('beams').matches(':invalid')), true);
  assert.equal(await page.evaluate(() => window.openDemo.state.translate.seq), seq, 'nothing ran');

  // A language the tokenizer does not know (an option put in the select by hand): the runtime's message, shown as
  // the page shows errors; the card translates again after.
  await page.evaluate(() => document.getElementById('tgt-lang').append(new Option('xx', 'xx')));
  await page.selectOption('#tgt-lang', 'xx');
  const bad = await translate(page, LINES);
  assert.equal(bad.stopReason, 'error');
  assert.equal(await page.isVisible('#translate-error'), true);
  assert.match(await page.textContent('#translate-error'), /'xx'/);
  assert.equal(await page.getAttribute('#translate-stats', 'data-state'), 'error');
  await page.selectOption('#tgt-lang', 'fr');
  assert.deepEqual((await translate(page, LINES)).texts, await ref.translate(LINES, { ...EN_FR, numBeams: 1 }));
  assert.equal(await page.isVisible('#translate-error'), false);

  const long = await longTasks(page, t0);
  t.diagnostic(`main-thread tasks over 50 ms: ${showLong(long)}`);
  assert.deepEqual(long.filter((e) => e.ms > LONG_TASK_FAIL_MS), []);
  assert.deepEqual(problems, []);
  await page.close();
});

// A batch runs in the worker as one call (generateSeq2Seq), which checks its AbortSignal between steps; the page's
// abort reaches the worker as a message, read at the search's next turn (bindings/next_task.js: a MessageChannel
// turn in a worker, not scheduler.yield(), whose continuations Chromium runs ahead of the worker's messages: the
// abort was then read only when the search had ended, 8.9 s for this batch).
test('open page: Stop ends a long batch of beams while its search runs', async (t) => {
  const { page, problems } = await opened();
  try {
    const t0 = await page.evaluate(() => performance.now());
    // 48 lines × 4 beams × 400 new tokens (about 6 s in Node): stopped while its search runs.
    const many = Array.from({ length: 48 }, (_, i) => `Line ${i}: the quick brown fox jumps over the lazy dog.`);
    await translate(page, many, { beams: '4', max: '400', wait: false });
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.openDemo.state.translate.running), true, 'the batch still runs');
    const clicked = await page.evaluate(() => performance.now());
    await page.click('#translate-stop');
    await page.waitForFunction(() => document.getElementById('translate-stats').dataset.state === 'stopped', null, { timeout: 3_000 });
    const stoppedAt = await page.evaluate(() => performance.now());
    const b = await page.evaluate(() => window.openDemo.state.translate);
    assert.equal(b.stopReason, 'aborted');
    assert.equal(b.error, null);
    assert.equal(await page.isVisible('#translate-error'), false);
    assert.equal(await page.$$eval('#translations tr', (r) => r.length), 49, 'a row per line, and the head');
    t.diagnostic(`batch of 48 × 4 beams stopped ${b.ms.toFixed(0)} ms after Translate, seen ${(stoppedAt - clicked).toFixed(0)} ms after Stop`);
    assert.equal(await page.isDisabled('#translate'), false);
    assert.equal(await page.isDisabled('#translate-stop'), true);

    const long = await longTasks(page, t0);
    assert.deepEqual(long.filter((e) => e.ms > LONG_TASK_FAIL_MS), []);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
