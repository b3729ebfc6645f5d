// Browser tests of the writing demo (web/write/) in headless Chromium, driven by
// playwright-core, against tools/serve.mjs started in-process on a free port,
// as demo.test.mjs tests the other demos. The model runs in a worker
// ('attnwasm/worker'): the page starts one, and neither the .wasm nor the
// model's bytes are fetched by the page itself; ?runtime=page runs it in the page
// and writes the same text; without COOP/COEP it works on one thread. A person's path through the page:
// type a prompt, press Write, watch the tokens stream in (over several
// animation frames), the per-token times and the attention heatmap (changing
// with layer and head); Stop; Write again while writing; the same seed giving
// the same text; greedy decoding giving torch's text (models/lm/reference.json);
// characters the model cannot write explained next to the prompt; keystrokes
// landing in the prompt while the model writes; no console or page errors.
// Timings (first token after Write for a 20-character prompt, tokens/s over
// 200 tokens, the longest gap between frames, in the worker and in the page) are
// reported with t.diagnostic, never asserted: the machines are shared.
// Screenshot: test-artifacts/write.png.
//
// Needs /usr/bin/chromium (bash tools/setup.sh installs it) and npm's
// playwright-core (never `npx playwright install`: it would download a browser).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../tools/serve.mjs';
import { ARTIFACTS, demoSession, nonBlankPixels, openDemoPage } from './demo_pages.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LM = join(ROOT, 'models/lm/lm.safetensors');
const LM_REF = join(ROOT, 'models/lm/reference.json');
const noLm = !(existsSync(LM) && existsSync(LM_REF)) && 'models/lm/ not trained yet';
/** 20 characters: the model sees 21 ids (an <eos> first). */
const PROMPT_20 = 'The meaning of life ';
const TIMING_RUNS = 9;

const openPage = demoSession().open;
/** The demo server without COOP/COEP (a page that is not cross-origin isolated). */
let plainServer;
before(async () => { plainServer = await startServer({ port: 0, isolated: false }); });
after(async () => { await plainServer?.close(); });

/** Waits until the prompt's check (the worker's tokenizer, a message away) has answered for the text in the box. */
const checked = (page) => page.waitForSelector('#prompt:not([data-check])', { state: 'attached' });

/**
 * What shows that the model runs in the worker: the page's Worker running bindings/worker_main.js, and
 * the page's own resource timing holding neither a .wasm nor the model's file (what the worker's code
 * fetches is in the worker's timeline; Chromium lists a module worker's imports, bindings/index.js and
 * the glue, in the page's).
 */
async function assertInWorker(page) {
  assert.equal(await page.evaluate(() => window.writeDemo.runtime), 'worker');
  assert.ok(page.workers().some((w) => new URL(w.url()).pathname === '/bindings/worker_main.js'),
    `workers: ${page.workers().map((w) => w.url()).join(', ')}`);
  const fetched = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname));
  for (const path of fetched) assert.doesNotMatch(path, /\.wasm$|^\/models\//, `the page itself fetched ${path}`);
  assert.ok(fetched.includes('/bindings/worker.js'), fetched.join(', '));
}

/** Sets the sampling controls as a person would (fill, check); `seed` '' is a random seed. */
async function setControls(page, { tokens, temperature, topK, topP, seed, stopAtEnd }) {
  if (tokens !== undefined) await page.fill('#max-tokens', String(tokens));
  if (temperature !== undefined) await page.fill('#temperature', String(temperature));
  if (temperature !== 0) {
    if (topK !== undefined) await page.fill('#top-k', String(topK));
    if (topP !== undefined) await page.fill('#top-p', String(topP));
    if (seed !== undefined) await page.fill('#seed', String(seed));
  }
  if (stopAtEnd !== undefined) await page.setChecked('#stop-at-end', stopAtEnd);
}

/** Clears the prompt and types `text` key by key. */
async function typePrompt(page, text) {
  await page.click('#prompt');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  if (text) await page.keyboard.type(text);
  assert.equal(await page.inputValue('#prompt'), text);
  await checked(page);
}

const runNumber = async (page) => Number(await page.getAttribute('#result-card', 'data-run'));

/** Clicks Write and waits until a new run has started writing (or ended already). */
async function clickWrite(page) {
  const prev = await runNumber(page);
  await page.click('#write');
  await page.waitForFunction((p) => Number(document.querySelector('#result-card').dataset.run) > p, prev);
  return prev + 1;
}

/** Waits until run `n` has ended; its state as the page reports it (window.writeDemo.state). */
async function ended(page, n) {
  await page.waitForFunction((k) => {
    const card = document.querySelector('#result-card');
    return Number(card.dataset.run) === k && card.dataset.state !== 'writing';
  }, n, { timeout: 30000 });
  return page.evaluate(() => window.writeDemo.state);
}

/** Clicks Write and waits for the end of the run; its state. */
async function write(page) {
  return ended(page, await clickWrite(page));
}

/**
 * Records, every animation frame from now until the next run ends, the
 * length of the written text and the run's state (window.__frames).
 */
function recordFrames(page) {
  return page.evaluate(() => {
    const out = document.getElementById('out-gen');
    const card = document.getElementById('result-card');
    const from = Number(card.dataset.run);
    window.__frames = [];
    const tick = () => {
      const run = Number(card.dataset.run);
      window.__frames.push({ t: performance.now(), length: out.textContent.length, run, state: card.dataset.state });
      if (!(run > from && card.dataset.state !== 'writing')) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

test('write page: type, Write, tokens stream in with their times, the attention heatmap by layer and head', { skip: noLm }, async (t) => {
  const { page, problems } = await openPage('/web/write/');
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  await assertInWorker(page);
  assert.match(await page.textContent('#runs-in'), /^The model runs in a Web Worker; this page only draws what it writes\. run it in the page instead$/);
  assert.equal(await page.getAttribute('#runs-in a', 'href'), '?runtime=page');
  assert.equal(await page.isEnabled('#write'), true);
  assert.equal(await page.isEnabled('#stop'), false);
  assert.match(await page.textContent('[data-cap="model"]'), /MB$/);
  assert.deepEqual(await page.$$eval('#layer option', (o) => o.map((x) => x.value)), ['0', '1', '2', '3']);
  assert.deepEqual(await page.$$eval('#head option', (o) => o.map((x) => x.value)), ['mean', '0', '1', '2', '3']);

  // 400 tokens (several frames' worth on any machine), not stopped at the end of a fortune.
  await setControls(page, { tokens: 400, temperature: 0.8, topK: 0, topP: 0.95, seed: 11, stopAtEnd: false });
  await typePrompt(page, PROMPT_20);
  await recordFrames(page);
  const s = await write(page);
  assert.equal(s.stopReason, 'length');
  assert.equal(s.tokens, 400);
  assert.equal(s.promptIds, 21);
  assert.equal(s.seed, 11);
  assert.equal(await page.textContent('#out-prompt'), PROMPT_20);
  assert.ok(s.text.length >= 300, `written text: ${JSON.stringify(s.text)}`);

  // Streamed: the text grew over several frames, not all at once.
  const frames = (await page.evaluate(() => window.__frames)).filter((f) => f.run === s.run);
  const lengths = new Set(frames.filter((f) => f.state === 'writing').map((f) => f.length));
  const partial = [...lengths].filter((n) => n > 0 && n < s.text.length);
  assert.ok(partial.length >= 3, `the text should grow over several frames; lengths seen while writing: ${[...lengths]}`);

  // The stats line and the per-token strip.
  assert.match(await page.textContent('[data-stat="first"]'), /^first token [\d.]+ ms$/);
  assert.match(await page.textContent('[data-stat="rate"]'), /^speed [\d,]+ tokens\/s$/);
  assert.match(await page.textContent('[data-stat="last"]'), /^last token [\d.]+ ms$/);
  assert.equal(await page.textContent('[data-stat="count"]'), 'tokens 400');
  assert.equal(await page.textContent('[data-stat="end"]'), 'ended: the token limit');
  assert.equal(await page.textContent('[data-stat="seed"]'), 'seed 11');
  assert.match(await page.textContent('[data-cap="last"]'), /ms$/);
  assert.equal(s.stepMs.length, 400);
  assert.ok(s.stepMs.every((ms) => ms > 0 && Number.isFinite(ms)));
  const strip = await nonBlankPixels(page, '#steps');
  assert.ok(strip.differing > 500, `per-token strip looks blank: ${JSON.stringify(strip)}`);
  await page.locator('#steps').scrollIntoViewIfNeeded();
  const box = await page.locator('#steps').boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height - 2);
  assert.match(await page.textContent('#steps-hover'), /^token \d+ “.+”: [\d.]+ ms$/);

  // The heatmap: the newest token's attention; every layer / head draws another picture.
  assert.equal(await page.getAttribute('#heatmap', 'data-token'), '399');
  const pictures = new Map();
  for (const [layer, head] of [['3', 'mean'], ['3', '0'], ['3', '1'], ['0', 'mean'], ['0', '2']]) {
    await page.selectOption('#layer', { value: layer });  // by value: the labels are 1 … 4
    await page.selectOption('#head', { value: head });
    await page.waitForFunction((v) => document.querySelector('#heatmap').dataset.view === v, `${layer}/${head}`);
    const px = await nonBlankPixels(page, '#heatmap');
    assert.ok(px.differing > 2000 && px.colours > 20, `heatmap ${layer}/${head} looks blank: ${JSON.stringify(px)}`);
    pictures.set(`${layer}/${head}`, px.signature);
  }
  assert.equal(new Set(pictures.values()).size, pictures.size, `each view should differ: ${JSON.stringify([...pictures])}`);
  assert.match(await page.textContent('#heat-caption'), /^Token 400, “.+” \(outlined\), was chosen looking at positions 0–419: layer 1, head 3\./);

  // Clicking a written character shows the attention that chose it.
  await page.locator('#heatmap').scrollIntoViewIfNeeded();
  const cell = await page.evaluate(() => window.writeDemo.cellBox(21 + 50));  // token 50's character
  await page.mouse.click(cell.x + cell.width / 2, cell.y + cell.height / 2);
  await page.waitForFunction(() => document.querySelector('#heatmap').dataset.token === '50');
  assert.match(await page.textContent('#heat-caption'), /^Token 51, .* was chosen looking at positions 0–70:/);
  assert.equal(await page.isChecked('#follow'), false);
  await page.check('#follow');
  await page.waitForFunction(() => document.querySelector('#heatmap').dataset.token === '399');

  t.diagnostic(`first run: first token ${s.firstTokenMs.toFixed(1)} ms after Write (on screen ${s.firstPaintMs.toFixed(1)} ms), ` +
    `${s.tokensPerSecond.toFixed(0)} tokens/s, ${s.frames} frames drawn (mean ${s.renderMeanMs.toFixed(2)} ms, max ${s.renderMaxMs.toFixed(2)} ms)`);

  // The screenshot (docs/write.png): a fortune written to its end.
  await page.selectOption('#layer', { value: '3' });
  await page.selectOption('#head', { value: 'mean' });
  await setControls(page, { tokens: 300, temperature: 0.8, topP: 0.95, seed: 7, stopAtEnd: true });
  await typePrompt(page, 'Computers are ');
  const shot = await write(page);
  assert.ok(['stop', 'length'].includes(shot.stopReason));
  await page.screenshot({ path: join(ARTIFACTS, 'write.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('write page: Stop ends a run, Write while writing starts over, the prompt takes keystrokes while it writes', { skip: noLm }, async (t) => {
  const { page, problems } = await openPage('/web/write/');
  // As long a run as the page allows (it goes on past the end of a fortune), on a CPU made 4×
  // slower (a phone's): the keystrokes and Stop below must come while it writes, on any machine.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  await setControls(page, { tokens: 1000, temperature: 0.8, topP: 0.95, seed: '', stopAtEnd: false });
  await typePrompt(page, 'Q: What is ');
  await page.evaluate(() => {
    window.__keys = [];
    document.getElementById('prompt').addEventListener('input', () => {
      window.__keys.push({ state: document.getElementById('result-card').dataset.state, tokens: window.writeDemo.state?.tokens });
    });
  });
  const first = await clickWrite(page);
  await page.waitForFunction(() => Number(document.querySelector('#result-card').dataset.tokens) >= 20);
  assert.equal(await page.getAttribute('#result-card', 'data-state'), 'writing');
  assert.equal(await page.isEnabled('#stop'), true);
  assert.equal(await page.isEnabled('#write'), true);

  // Keystrokes while it writes: each lands in the textarea while the run is still
  // writing, and the run goes on after them (the page is not blocked until it ends).
  await page.click('#prompt');
  await page.keyboard.press('End');
  await page.keyboard.type(' abc');
  const keys = await page.evaluate(() => window.__keys);
  assert.equal(await page.inputValue('#prompt'), 'Q: What is  abc');
  assert.equal(keys.length, 4);
  assert.ok(keys.every((k) => k.state === 'writing'), `keystrokes handled while writing: ${JSON.stringify(keys)}`);
  await page.waitForFunction((n) => Number(document.querySelector('#result-card').dataset.tokens) > n, keys.at(-1).tokens);
  t.diagnostic(`4 keystrokes handled while writing (CPU throttled 4×), when it had written ${keys.map((k) => k.tokens).join(', ')} of 1000 tokens`);

  // Stop: aborted, Write enabled again, Stop disabled, and no token after it.
  await page.click('#stop');
  const s = await ended(page, first);
  assert.equal(s.stopReason, 'aborted');
  assert.ok(s.tokens >= 20 && s.tokens < 1000, `${s.tokens} tokens`);
  assert.equal(await page.getAttribute('#result-card', 'data-stop-reason'), 'aborted');
  assert.equal(await page.textContent('[data-stat="end"]'), 'stopped');
  assert.equal(await page.isEnabled('#write'), true);
  assert.equal(await page.isEnabled('#stop'), false);
  const text = await page.textContent('#out-gen');
  const memory = await page.evaluate(() => window.writeDemo.memory());
  await page.waitForTimeout(300);
  assert.equal((await page.evaluate(() => window.writeDemo.state)).tokens, s.tokens);
  assert.equal(await page.textContent('#out-gen'), text);

  // Write while writing: the running one stops first, then one new run writes.
  await typePrompt(page, 'Never trust ');
  const second = await clickWrite(page);
  await page.waitForFunction(() => Number(document.querySelector('#result-card').dataset.tokens) >= 10);
  const third = await clickWrite(page);
  assert.equal(third, second + 1);
  await page.waitForFunction(() => Number(document.querySelector('#result-card').dataset.tokens) >= 10);
  assert.equal(await runNumber(page), third);
  await page.click('#stop');
  const s3 = await ended(page, third);
  assert.equal(s3.stopReason, 'aborted');
  assert.equal(await page.textContent('#out-prompt'), 'Never trust ');
  assert.equal(s3.text, await page.textContent('#out-gen'));
  // Each run's KV cache is freed, whether it ended, was stopped or was replaced.
  const after = await page.evaluate(() => window.writeDemo.memory());
  assert.equal(after.inUseBytes, memory.inUseBytes, "malloc'd bytes after three runs");
  assert.deepEqual(problems, []);
  await page.close();
});

test('write page: a seed writes the same text twice, in the worker and in the page; greedy decoding writes torch\'s text', { skip: noLm }, async () => {
  const { page, problems } = await openPage('/web/write/');
  // A random seed is shown after the run; "use this seed" puts it in the field; it writes the same text.
  await setControls(page, { tokens: 150, temperature: 0.9, topK: 40, topP: 0.9, seed: '', stopAtEnd: true });
  await typePrompt(page, 'Love is ');
  const a = await write(page);
  const seedShown = await page.getAttribute('#result-card', 'data-seed');
  assert.equal(seedShown, String(a.seed));
  assert.equal(await page.textContent('[data-stat="seed"]'), `seed ${a.seed}`);
  await page.click('#reuse-seed');
  assert.equal(await page.inputValue('#seed'), String(a.seed));
  const b = await write(page);
  assert.equal(b.seed, a.seed);
  assert.equal(b.text, a.text);
  assert.ok(['stop', 'length'].includes(a.stopReason));
  // A typed seed, twice.
  await setControls(page, { seed: '12345' });
  const c = await write(page);
  const d = await write(page);
  assert.equal(c.seed, 12345);
  assert.equal(d.text, c.text);
  // The link writes it again.
  const link = await page.getAttribute('#permalink', 'href');
  assert.match(link, /seed=12345/);

  // Temperature 0: greedy; top-k, top-p and seed do not apply (disabled). From an
  // empty prompt the page writes what torch wrote from these weights.
  const ref = JSON.parse(readFileSync(LM_REF, 'utf8')).items.find((it) => it.prompt === '');
  await setControls(page, { tokens: ref.greedyIds.length, temperature: 0, stopAtEnd: false });
  assert.equal(await page.isDisabled('#seed'), true);
  assert.equal(await page.isDisabled('#top-k'), true);
  assert.match(await page.textContent('#sampling-note'), /greedy/);
  await typePrompt(page, '');
  const g = await write(page);
  assert.equal(g.text, ref.greedyText);
  assert.equal(await page.textContent('[data-stat="seed"]'), 'greedy');
  assert.equal(await page.textContent('#out-prompt'), '');
  assert.deepEqual(problems, []);
  await page.close();

  // The model in the page (?runtime=page): the same text for the same prompt, settings and seed, and greedy.
  const inPage = await openPage('/web/write/?runtime=page');
  assert.equal(await inPage.page.evaluate(() => window.writeDemo.runtime), 'page');
  assert.match(await inPage.page.textContent('#runs-in'), /^The model runs in this page, on its main thread, between the frames it draws\. run it in a worker$/);
  const fetched = await inPage.page.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname));
  assert.ok(fetched.some((p) => p.endsWith('.wasm')) && fetched.includes('/models/lm/lm.safetensors'), fetched.join(', '));
  await setControls(inPage.page, { tokens: 150, temperature: 0.9, topK: 40, topP: 0.9, seed: 12345, stopAtEnd: true });
  await typePrompt(inPage.page, 'Love is ');
  const cPage = await write(inPage.page);
  assert.equal(cPage.seed, 12345);
  assert.equal(cPage.text, c.text);
  await setControls(inPage.page, { tokens: ref.greedyIds.length, temperature: 0, stopAtEnd: false });
  await typePrompt(inPage.page, '');
  assert.equal((await write(inPage.page)).text, ref.greedyText);
  assert.deepEqual(inPage.problems, []);
  await inPage.page.close();
});

test('write page without COOP/COEP: the worker runs one thread and writes the same text', { skip: noLm }, async () => {
  const home = await openPage('/web/');  // (for the browser's context)
  const context = home.page.context();
  await home.page.close();
  const { page, problems } = await openDemoPage(context, plainServer.url, '/web/write/');
  assert.equal(await page.evaluate(() => crossOriginIsolated), false);
  await assertInWorker(page);
  assert.equal(await page.textContent('[data-cap="coi"]'), 'no');
  assert.equal(await page.textContent('[data-cap="threads"]'), 'off');
  const ref = JSON.parse(readFileSync(LM_REF, 'utf8')).items.find((it) => it.prompt === '');
  await setControls(page, { tokens: ref.greedyIds.length, temperature: 0, stopAtEnd: false });
  await typePrompt(page, '');
  const g = await write(page);
  assert.equal(g.text, ref.greedyText);
  assert.deepEqual(problems, []);
  await page.close();
});

test('write page: characters the model cannot write are explained next to the prompt', { skip: noLm }, async () => {
  const { page, problems } = await openPage('/web/write/');
  await setControls(page, { tokens: 30, temperature: 0.8, seed: 3, stopAtEnd: false });
  // What a phone or a word processor types: curly quotes and an em dash.
  await typePrompt(page, 'It’s “fine” — really');
  assert.ok(await page.isVisible('#error'));
  const message = await page.textContent('#error-text');
  assert.match(message, /^This model's vocabulary has no '’' \(U\+2019, character 2\); it writes printable ASCII, tab and newline only\./);
  assert.match(message, /“ \(U\+201C\), ” \(U\+201D\), — \(U\+2014\)/);
  assert.equal(await page.getAttribute('#prompt', 'aria-invalid'), 'true');
  assert.equal(await page.textContent('#fix'), 'Replace ’ “ ” — with \' " --');
  // Write does not write it (and says why, still).
  const before = await runNumber(page);
  await page.click('#write');
  await page.waitForTimeout(200);
  assert.equal(await runNumber(page), before);
  assert.ok(await page.isVisible('#error'));
  // The offered replacement makes it ASCII, and then it writes.
  await page.click('#fix');
  await checked(page);
  assert.equal(await page.inputValue('#prompt'), 'It\'s "fine" -- really');
  assert.ok(!(await page.isVisible('#error')));
  assert.equal(await page.getAttribute('#prompt', 'aria-invalid'), null);
  const s = await write(page);
  assert.equal(s.prompt, 'It\'s "fine" -- really');
  assert.equal(s.tokens, 30);
  // A letter with no ASCII twin: named, no replacement offered.
  await page.click('#prompt');
  await page.keyboard.press('End');
  await page.keyboard.type(' café');
  await checked(page);
  assert.match(await page.textContent('#error-text'), /^This model's vocabulary has no 'é' \(U\+00E9, character 25\).* Remove or replace it\.$/);
  assert.ok(!(await page.isVisible('#fix')));
  await page.keyboard.press('Backspace');
  await checked(page);
  assert.ok(!(await page.isVisible('#error')));
  // A setting out of range: the API's message, nothing written.
  await setControls(page, { topP: 0 });
  const n = await runNumber(page);
  await page.click('#write');
  await page.waitForSelector('#error:not(.hidden)');
  assert.match(await page.textContent('#error-text'), /^topP: expected a number in \(0, 1\]/);
  assert.equal(await runNumber(page), n);
  assert.deepEqual(problems, []);
  await page.close();
});

test('write page: first token after Write for a 20-character prompt, and tokens/s, in the worker and in the page (measured, not asserted)', { skip: noLm }, async (t) => {
  // The two pages take turns (worker, page, page, worker, …) so that both see the same load of a shared machine.
  const pages = {};
  for (const [name, path] of [['worker', '/web/write/'], ['page', '/web/write/?runtime=page']]) {
    pages[name] = await openPage(path);
    await setControls(pages[name].page, { tokens: 200, temperature: 0.8, topP: 0.95, seed: '', stopAtEnd: false });
    await typePrompt(pages[name].page, PROMPT_20);
  }
  const runs = { worker: [], page: [] };
  for (let i = 0; i < TIMING_RUNS; i++) {
    for (const name of i % 2 ? ['page', 'worker'] : ['worker', 'page']) {
      const { page } = pages[name];
      await page.bringToFront();
      await recordFrames(page);
      const s = await write(page);
      assert.equal(s.tokens, 200);
      const frames = (await page.evaluate(() => window.__frames)).filter((f) => f.run === s.run && f.state === 'writing');
      let gap = 0;
      for (let k = 1; k < frames.length; k++) gap = Math.max(gap, frames[k].t - frames[k - 1].t);
      for (const v of [s.firstTokenMs, s.firstPaintMs, s.tokensPerSecond]) assert.ok(Number.isFinite(v) && v > 0);
      runs[name].push({ ...s, gap });
    }
  }
  for (const [name, rs] of Object.entries(runs)) {
    const m = (k) => median(rs.map((r) => r[k]));
    t.diagnostic(`${name === 'worker' ? 'in the worker' : 'in the page'}: ${TIMING_RUNS} runs of 200 tokens after "${PROMPT_20}" (21 ids with the <eos>): `
      + `median first token ${m('firstTokenMs').toFixed(1)} ms after the Write click (on screen ${m('firstPaintMs').toFixed(1)} ms), `
      + `median ${m('tokensPerSecond').toFixed(0)} tokens/s, median longest gap between frames while writing ${m('gap').toFixed(1)} ms, `
      + `median frame drawing ${m('renderMeanMs').toFixed(2)} ms`);
    t.diagnostic(`  per run: ${rs.map((r) => `${r.firstTokenMs.toFixed(1)} ms / ${r.tokensPerSecond.toFixed(0)} tok/s`).join(', ')}`);
  }
  const ratio = median(runs.worker.map((r) => r.tokensPerSecond)) / median(runs.page.map((r) => r.tokensPerSecond));
  t.diagnostic(`tokens/s in the worker / in the page: ${ratio.toFixed(3)} (medians)`);
  for (const { page, problems } of Object.values(pages)) {
    assert.deepEqual(problems, []);
    await page.close();
  }
});
