// Browser tests of the demo pages (web/) in headless Chromium, driven by
// playwright-core, against tools/serve.mjs started in-process on a free port.
// Checks: no console or page errors, cross-origin isolation, right
// translations for held-out numbers (ground truth from models/translator/
// reference.json), typed variants (models/translator/typed_heldout.json) with
// the normalised input shown, refusal of non-numbers (a message and a
// suggestion), right classes for held-out digits (models/vit/reference.json
// + heldout.safetensors), heatmaps that are not blank. Screenshots go to
// test-artifacts/. Model-dependent tests skip when the model files are absent.
//
// Needs /usr/bin/chromium (bash tools/setup.sh installs it) and npm's
// playwright-core (never `npx playwright install`: it would download a browser).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'node:http';
import { ARTIFACTS, demoSession, nonBlankPixels } from './demo_pages.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TRANSLATOR = join(ROOT, 'models/translator/translator.safetensors');
const TRANSLATOR_REF = join(ROOT, 'models/translator/reference.json');
const TRANSLATOR_TYPED = join(ROOT, 'models/translator/typed_heldout.json');
const VIT = join(ROOT, 'models/vit/vit.safetensors');
const VIT_REF = join(ROOT, 'models/vit/reference.json');
const HELDOUT = join(ROOT, 'models/vit/heldout.safetensors');

const noTranslator = !(existsSync(TRANSLATOR) && existsSync(TRANSLATOR_REF)) && 'models/translator/ not trained yet';
const noVit = !(existsSync(VIT) && existsSync(VIT_REF) && existsSync(HELDOUT)) && 'models/vit/ not trained yet';

const session = demoSession();
const openPage = session.open;

function httpGet(url) {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
    }).on('error', reject).end();
  });
}

/** The U8 "images" and I64 "labels" of a safetensors file (little-endian). */
function readHeldout(path) {
  const buf = readFileSync(path);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const data = buf.subarray(8 + n);
  const img = header.images;
  const lab = header.labels;
  assert.equal(img.dtype, 'U8');
  const images = data.subarray(img.data_offsets[0], img.data_offsets[1]);
  const labelBytes = data.subarray(lab.data_offsets[0], lab.data_offsets[1]);
  const labels = [];
  for (let i = 0; i < lab.shape[0]; i++) labels.push(Number(labelBytes.readBigInt64LE(8 * i)));
  return { images, labels, count: img.shape[0] };
}

test('server: isolation headers, MIME types, only the four folders', async () => {
  const wasm = await httpGet(new URL('dist/attnwasm_core.wasm', session.url));
  assert.equal(wasm.status, 200);
  assert.equal(wasm.headers['content-type'], 'application/wasm');
  assert.ok(Number(wasm.headers['content-length']) > 1000);
  assert.equal(wasm.headers['cross-origin-opener-policy'], 'same-origin');
  assert.equal(wasm.headers['cross-origin-embedder-policy'], 'require-corp');
  assert.equal(wasm.headers['cross-origin-resource-policy'], 'same-origin');
  const js = await httpGet(new URL('bindings/index.js', session.url));
  assert.match(js.headers['content-type'], /^text\/javascript/);
  const root = await httpGet(session.url);
  assert.equal(root.status, 302);
  assert.equal(root.headers.location, '/web/');
  for (const bad of ['package.json', 'web/../package.json', 'web/%2e%2e/package.json', 'bindings/..%2fpackage.json',
    'src/', 'tools/serve.mjs', 'web/nope.html']) {
    const r = await httpGet(`${session.url}${bad}`);
    assert.equal(r.status, 404, bad);
    assert.equal(r.headers['cross-origin-embedder-policy'], 'require-corp', bad);
  }
});

test('landing page: loads cleanly, cross-origin isolated, runtime panel', async () => {
  const { page, problems } = await openPage('/web/');
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  assert.equal(await page.textContent('[data-cap="simd"]'), 'on');
  assert.equal(await page.textContent('[data-cap="relaxed"]'), 'on');  // Chromium runs the relaxed-SIMD build
  assert.equal(await page.textContent('[data-cap="coi"]'), 'yes');
  assert.equal(await page.locator('a.demo').count(), 4);  // translate, digits, write, open a model
  await page.screenshot({ path: join(ARTIFACTS, 'index.png'), fullPage: true });
  // The page asks for the model sizes; while a model is not trained yet that request 404s.
  const missing = noTranslator || noVit;
  assert.deepEqual(problems.filter((p) => !(missing && p.includes('/models/'))), []);
  await page.close();
});

/** Held-out numbers the PyTorch model translates correctly (reference.json): the page must give the same words. */
function translationCases(perLanguage) {
  const ref = JSON.parse(readFileSync(TRANSLATOR_REF, 'utf8'));
  const pick = (lang) => ref.items.filter((it) => it.lang === lang && it.text === it.expected).slice(0, perLanguage);
  const cases = [...pick('fr'), ...pick('de')];
  assert.ok(cases.length >= 4, 'reference.json has too few correct items');
  return cases;
}

/** Types `english` into the translate page, picks language and beam size, presses Enter; returns the output text. */
async function translateOnPage(page, english, lang, beam = '1') {
  await page.selectOption('#lang', lang);
  await page.selectOption('#beam', beam);
  await page.fill('#text', english);
  const prev = Number(await page.getAttribute('#result-card', 'data-run'));
  await page.press('#text', 'Enter');
  await page.waitForFunction((p) => Number(document.querySelector('#result-card').dataset.run) > p, prev);
  return page.textContent('#output');
}

test('translate page: held-out numbers in French and German, heatmap, errors', { skip: noTranslator }, async () => {
  const cases = translationCases(3);
  const { page, problems } = await openPage('/web/translate/');
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  await page.waitForSelector('#result-card[data-state="done"]');
  const translate = (english, lang, beam) => translateOnPage(page, english, lang, beam);
  for (const it of cases) {
    assert.equal(await translate(it.english, it.lang), it.expected, `${it.english} → ${it.lang}`);
  }

  // A misspelling: a readable refusal on the page with a suggestion, nothing in the console.
  await translate('fourty-two', 'fr');
  assert.equal(await page.getAttribute('#result-card', 'data-state'), 'error');
  assert.equal(await page.textContent('#error-text'),
    "'fourty-two' is not a number from 0 to 999 999: 'fourty' is not an English number word. Did you mean 'forty-two'?");
  assert.ok(await page.isVisible('#error'));
  assert.equal(await page.textContent('#suggestion'), 'Try “forty-two”');
  const prev = Number(await page.getAttribute('#result-card', 'data-run'));
  await page.click('#suggestion');
  await page.waitForFunction((p) => Number(document.querySelector('#result-card').dataset.run) > p, prev);
  assert.equal(await page.textContent('#output'), 'quarante-deux');
  assert.ok(!(await page.isVisible('#error')));

  // A good translation again, all layers and heads selectable, heatmap drawn.
  assert.equal(await translate('three hundred seventy-one', 'fr'), 'trois cent soixante et onze');
  assert.ok(!(await page.isVisible('#error')));
  const layers = await page.$$eval('#layer option', (o) => o.map((x) => x.value));
  const heads = await page.$$eval('#head option', (o) => o.map((x) => x.value));
  assert.ok(layers.length >= 1 && heads[0] === 'avg' && heads.length >= 2);
  await page.selectOption('#head', heads[1]);
  const single = await nonBlankPixels(page, '#heatmap');
  await page.selectOption('#head', 'avg');
  const avg = await nonBlankPixels(page, '#heatmap');
  for (const px of [single, avg]) assert.ok(px.differing > 2000 && px.colours > 20, `heatmap looks blank: ${JSON.stringify(px)}`);
  assert.match(await page.textContent('#timing'), /per token · total/);
  assert.match(await page.textContent('[data-cap="last"]'), /ms$/);
  assert.match(await page.textContent('[data-cap="model"]'), /B$/);
  await page.screenshot({ path: join(ARTIFACTS, 'translate.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('translate page: typed variants are translated and the normalised input is shown; a non-number is refused', {
  skip: noTranslator || !existsSync(TRANSLATOR_TYPED),
}, async () => {
  const typed = JSON.parse(readFileSync(TRANSLATOR_TYPED, 'utf8'));
  const col = Object.fromEntries(typed.columns.map((c, i) => [c, i]));
  const rows = typed.items.map((r) => ({ typed: r[col.typed], words: r[col.words], n: r[col.n], fr: r[col.fr], de: r[col.de] }));
  // Typed items of every kind: digits, "eleven hundred", British "and", "a hundred", capitals, spaces, a comma.
  const kinds = [
    (r) => /\d/.test(r.typed), (r) => r.n >= 1100 && /^\S+( \S+)? hundred/.test(r.words) && !r.words.includes('thousand'),
    (r) => r.words.includes(' and '), (r) => /^a (hundred|thousand)/.test(r.words), (r) => /[A-Z]/.test(r.typed),
    (r) => / {2}|^ | $/.test(r.typed), (r) => r.typed.includes(','), (r) => /[a-z] [a-z]/.test(r.words) && !r.words.includes('-'),
  ];
  const picked = kinds.flatMap((k) => rows.filter(k).slice(0, 2));
  const handTyped = [
    { typed: 'Forty  Two', words: 'forty two', n: 42, fr: 'quarante-deux', de: 'zweiundvierzig' },
    { typed: 'twenty one', words: 'twenty one', n: 21, fr: 'vingt et un', de: 'einundzwanzig' },
    { typed: 'one hundred and five', words: 'one hundred and five', n: 105, fr: 'cent cinq', de: 'hundertfünf' },
    { typed: 'a hundred', words: 'a hundred', n: 100, fr: 'cent', de: 'hundert' },
    { typed: 'eleven hundred', words: 'eleven hundred', n: 1100, fr: 'mille cent', de: 'tausendhundert' },
    { typed: '42', words: 'forty-two', n: 42, fr: 'quarante-deux', de: 'zweiundvierzig' },
  ];
  const { page, problems } = await openPage('/web/translate/');
  await page.waitForSelector('#result-card[data-state="done"]');
  const wrong = [];
  [...handTyped, ...picked].forEach((r, i) => { r.lang = i % 2 ? 'de' : 'fr'; });
  for (const r of [...handTyped, ...picked]) {
    const got = await translateOnPage(page, r.typed, r.lang);
    const shown = await page.textContent('#normalized');
    const want = `Translated: “${r.words}” = ${r.n.toLocaleString('en-US')}`;
    if (got !== r[r.lang] || shown !== want) wrong.push(`${JSON.stringify(r.typed)} → ${r.lang}: "${got}" / ${shown}; want "${r[r.lang]}" / ${want}`);
  }
  assert.deepEqual(wrong, []);
  assert.ok(picked.length >= 12, `${picked.length} typed held-out items`);
  // The heatmap's columns are the typed words ("and", "a"), not a rewritten spelling.
  await translateOnPage(page, 'a hundred and five', 'fr');
  assert.equal(await page.$$eval('#tokens .src', (els) => els.map((e) => e.textContent).join(' ')), 'a hundred and five');

  // Not a number: refused with the reason; no translation, no heatmap, nothing in the console.
  for (const text of ['twenty twenty', 'one million', 'seventy eleven', 'two point five']) {
    assert.equal(await translateOnPage(page, text, 'fr'), '—', text);
    assert.equal(await page.getAttribute('#result-card', 'data-state'), 'error');
    assert.match(await page.textContent('#error-text'), new RegExp(`^'${text}' is not a number from 0 to 999 999: .+\\.`));
    assert.equal(await page.textContent('#normalized'), '\u00a0');
    assert.equal(await page.$$eval('#tokens span', (els) => els.length), 0);
  }
  assert.equal(await page.textContent('#suggestion'), '');
  await translateOnPage(page, 'twenty twenty', 'de');
  assert.equal(await page.textContent('#suggestion'), 'Try “two thousand twenty”');

  // The "Try" chips show both behaviours: a typed variant is translated, a non-number refused.
  const chips = await page.$$eval('#examples button', (els) => els.map((e) => e.textContent));
  for (const [chip, state] of [['Forty two', 'done'], ['twenty twenty', 'error'], ['1,234', 'done']]) {
    assert.ok(chips.includes(chip), `chip ${chip}`);
    const prev = Number(await page.getAttribute('#result-card', 'data-run'));
    await page.click(`#examples button:text-is("${chip}")`);
    await page.waitForFunction((p) => Number(document.querySelector('#result-card').dataset.run) > p, prev);
    assert.equal(await page.getAttribute('#result-card', 'data-state'), state, chip);
  }
  assert.equal(await page.textContent('#output'), 'tausendzweihundertvierunddreißig');
  assert.equal(await page.textContent('#normalized'), 'Translated: “one thousand two hundred thirty-four” = 1,234');
  await translateOnPage(page, 'Nineteen hundred and eighty-four', 'fr');
  await page.screenshot({ path: join(ARTIFACTS, 'translate-typed.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('translate page: beam search (2, 4) gives the right words too', {
  skip: noTranslator,
}, async () => {
  const cases = translationCases(4);
  const { page, problems } = await openPage('/web/translate/');
  await page.waitForSelector('#result-card[data-state="done"]');
  const wrong = [];
  for (const beam of ['2', '4']) {
    for (const it of cases) {
      const got = await translateOnPage(page, it.english, it.lang, beam);
      if (got !== it.expected) wrong.push(`beam ${beam}: ${it.english} → ${it.lang}: got "${got}", want "${it.expected}"`);
    }
  }
  assert.deepEqual(problems, []);
  await page.close();
  assert.deepEqual(wrong, []);
});

test('digits page: held-out digits, a drawing, the random button, attention maps', { skip: noVit }, async () => {
  const set = readHeldout(HELDOUT);
  // One held-out digit per class that the model gets right (the held-out set is
  // sorted by label, and the model is 98.7% accurate, not 100%). The page must
  // then classify it right too: exactly as stored, and redrawn at another size
  // and place. reference.json's samples (PyTorch's predictions) pass too.
  const ref = JSON.parse(readFileSync(VIT_REF, 'utf8'));
  const { init } = await import('../../bindings/index.js');
  const aw = await init();
  const clf = await aw.loadClassifier(VIT);
  const good = [];
  for (let c = 0; c < 10; c++) {
    for (let i = 0; i < set.count; i++) {
      if (set.labels[i] !== c) continue;
      const ink = Float32Array.from(set.images.subarray(i * 784, (i + 1) * 784), (v) => v / 255);
      if (clf.classify(ink).index === c) { good.push({ index: i, label: c }); break; }
    }
  }
  clf.dispose();
  assert.equal(good.length, 10);
  const fromRef = ref.samples.filter((s) => s.predicted === s.label).slice(0, 2);

  const { page, problems } = await openPage('/web/digits/');
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  const runNow = async () => Number(await page.getAttribute('#prediction-card', 'data-run') ?? 0);
  const waitRun = async (prev) => page.waitForFunction(
    (p) => Number(document.querySelector('#prediction-card').dataset.run ?? 0) > p, prev);

  // 1. Held-out digits exactly as stored (the #heldout=i link).
  for (const s of [...fromRef, ...good]) {
    const prev = await runNow();
    await page.evaluate((i) => { location.hash = `heldout=${i}`; }, s.index);
    await waitRun(prev);
    assert.equal(await page.getAttribute('#prediction-card', 'data-prediction'), String(s.label), `held-out #${s.index}`);
    assert.equal(await page.getAttribute('#prediction-card', 'data-truth'), String(s.label));
  }

  // 2. The same digits drawn on the pad smaller and off-centre: the MNIST-style
  //    preprocessing must undo that.
  const drawnWrong = [];
  for (const s of good) {
    const pixels = [...set.images.subarray(s.index * 784, (s.index + 1) * 784)];
    const prev = await runNow();
    await page.evaluate((px) => {
      const small = document.createElement('canvas');
      small.width = small.height = 28;
      const img = new ImageData(28, 28);
      px.forEach((v, k) => { img.data.set([v, v, v, 255], 4 * k); });
      small.getContext('2d').putImageData(img, 0, 0);
      const pad = document.getElementById('pad');
      const ctx = pad.getContext('2d');
      ctx.fillStyle = '#000';
      ctx.fillRect(0, 0, pad.width, pad.height);
      ctx.imageSmoothingEnabled = true;
      ctx.drawImage(small, 100, 20, 168, 168);
      window.digitsDemo.predictDrawing();
    }, pixels);
    await waitRun(prev);
    const got = await page.getAttribute('#prediction-card', 'data-prediction');
    if (got !== String(s.label)) drawnWrong.push(`#${s.index}: ${s.label} → ${got}`);
  }
  assert.deepEqual(drawnWrong, [], 'held-out digits redrawn smaller and off-centre');

  // 3. Real pointer drawings (mouse events on the pad, classified live and on release).
  const box = await page.locator('#pad').boundingBox();
  const strokes = {
    1: [[150, 50], [138, 230]],
    7: [[70, 60], [210, 60], [150, 160], [120, 240]],
  };
  for (const [digit, points] of Object.entries(strokes)) {
    await page.click('#clear');
    await page.mouse.move(box.x + points[0][0], box.y + points[0][1]);
    await page.mouse.down();
    for (const [x, y] of points.slice(1)) await page.mouse.move(box.x + x, box.y + y, { steps: 10 });
    const prev = await runNow();
    await page.mouse.up();
    await waitRun(prev);
    assert.equal(await page.getAttribute('#prediction-card', 'data-prediction'), digit, `a drawn ${digit}`);
  }

  // 4. The random held-out digit button shows a digit with its true label.
  const before = await runNow();
  await page.click('#random');
  await waitRun(before);
  assert.match(await page.textContent('#source'), /Held-out digit #\d+ .* true label \d/);
  assert.match(await page.getAttribute('#prediction-card', 'data-truth'), /^\d$/);
  assert.match(page.url(), /#heldout=\d+$/);

  // Show a well-classified digit for the screenshot and check every map draws.
  const shown = good[4];
  await page.evaluate((i) => { location.hash = `heldout=${i}`; }, shown.index);
  await page.waitForFunction((l) => document.querySelector('#prediction-card').dataset.truth === l, String(shown.label));
  const maps = await page.$$eval('#layer option', (o) => o.map((x) => x.value));
  assert.equal(maps[0], 'rollout');
  for (const m of [maps[1], maps[maps.length - 1], 'rollout']) {
    await page.selectOption('#layer', m);
    const px = await nonBlankPixels(page, '#overlay');
    assert.ok(px.differing > 5000 && px.colours > 20, `attention overlay (${m}) looks blank: ${JSON.stringify(px)}`);
  }
  const bars = await page.$$eval('.bar .fill', (els) => els.map((e) => parseFloat(e.style.width)));
  assert.equal(bars.length, 10);
  assert.ok(Math.abs(bars.reduce((a, b) => a + b, 0) - 100) < 1, `probabilities sum to ${bars.reduce((a, b) => a + b, 0)}%`);
  await page.screenshot({ path: join(ARTIFACTS, 'digits.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});
