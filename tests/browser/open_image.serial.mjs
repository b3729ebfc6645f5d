// The open page (web/open/) with image models (issue 39), in headless Chromium against tools/serve.mjs: golden
// folders picked as a person picks a folder, images picked as files (Files: the page never decodes them, the worker
// does). An image classifier (tests/data/goldens/vision/vit_classifier) labels three fixture images, the five best
// labels under each thumbnail, as Node labels them; a thumbnail clicked and a patch clicked show that patch's
// attention (the mean of the heads, then one head of another layer) as Node's forward({ outputAttentions }) gives it.
// A CLIP model without tokenizer files (clip/clip_model) says so, embeds a folder picked (the 63 image fixtures) in
// the worker in batches with its progress, and ranks them by an image ("similar") by the cosine Node computes;
// SigLIP's vision tower (no class token) shows the attention of a patch of an image dropped on the page; a bare
// DeiT (vision/deit_model: a class and a distillation token) loaded next runs the same images again, ranks them by
// an image and shows a patch's attention as Node does. CLIP with its slow tokenizer files (clip/clip_zero_shot) ranks the images for a
// typed query as Node does — or, where this runtime cannot read those files yet, refuses the folder in the words
// Node's loadModel uses. No console error, no 404, and no task over LONG_TASK_FAIL_MS on the page from the load on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../tools/serve.mjs';
import { init } from '../../bindings/index.js';
import { launchChromium, watchedPage, LONG_TASK_FAIL_MS } from './chromium.mjs';
import { ARTIFACTS, nonBlankPixels } from './demo_pages.mjs';

const GOLDENS = fileURLToPath(new URL('../data/goldens/', import.meta.url));
const FIXTURES = join(GOLDENS, 'images/fixtures');
/**
 * Scores and weights from the same runtime in Chromium's worker and in Node: float32 numbers, equal but for the last
 * bits (the page's runtime has relaxed SIMD and threads, Node's here neither: sums in another order).
 */
const close = (a, b) => Math.abs(a - b) <= 1e-6 + 1e-6 * Math.abs(b);
let server, browser, aw;

before(async () => {
  aw = await init({ threads: 1 });
  server = await startServer({ port: 0 });
  browser = await launchChromium({ viewport: { width: 1280, height: 1200 } });
}, { timeout: 60_000 });
after(async () => {
  await browser?.close();
  await server?.close();
  await aw?.close();
});

/** The open page with golden folder `dir` picked and loaded (state 'true' or 'error'). */
async function opened(dir, state = 'true') {
  const { page, problems } = await watchedPage(browser.context);
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${new URL(r.url()).pathname}`); });
  await page.goto(`${server.url}web/open/`);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
  await page.setInputFiles('#pick-folder', join(GOLDENS, dir));
  await page.waitForSelector('#fit-card:not(.hidden)');
  await page.click('#load');
  await page.waitForFunction((s) => document.body.dataset.loaded === s, state, { timeout: 30_000 });
  return { page, problems };
}

const imagesDone = (page) => page.waitForFunction(() => document.getElementById('image-stats').dataset.state === 'done'
  && document.getElementById('image-results').dataset.shown !== undefined, null, { timeout: 30_000 });

/** Clicks patch (r, c) of the patch card's canvas (a grid of gh × gw) and waits for its attention. */
async function clickPatch(page, r, c, [gh, gw], extra) {
  const box = await page.locator('#patch-canvas').boundingBox();
  await page.locator('#patch-canvas').click({ position: { x: (c + 0.5) * box.width / gw, y: (r + 0.5) * box.height / gh } });
  await page.waitForFunction((t) => document.getElementById('patch-canvas').dataset.token === String(t), extra + r * gw + c);
}

/** Node's attention row of `token` at layer l, head h (or the heads' mean, in float32 as the page sums it). */
function nodeRow({ data, shape: [, , H, T] }, token, l, h) {
  const at = (hh) => ((l * H + hh) * T + token) * T;
  if (h !== 'mean') return Array.from(data.subarray(at(h), at(h) + T));
  const w = new Float32Array(T);
  for (let hh = 0; hh < H; hh++) for (let j = 0; j < T; j++) w[j] += data[at(hh) + j];
  return Array.from(w, (x) => Math.fround(x / H));
}

/** Node's forward of one image with its attentions. */
async function nodeAttentions(m, path) {
  const pixelValues = await m.preprocess([path]);
  const inputs = { pixelValues, outputAttentions: true };
  return (typeof m.visionForward === 'function' ? m.visionForward(inputs) : m.forward(inputs)).attentions;
}

test('open page: an image classifier labels picked images as Node does; a patch clicked shows its attention', async (t) => {
  const { page, problems } = await opened('vision/vit_classifier');
  assert.equal(await page.textContent('#model-title'), 'A vit image classifier');
  assert.match(await page.textContent('#facts'), /cat, dog, bird, fish, horse/);
  assert.equal(await page.textContent('#image-title'), 'Classify images');
  const names = ['rgb8_64x48.png', 'j420_q90.jpg', 'rgba8.png'];
  const t0 = await page.evaluate(() => performance.now());
  await page.setInputFiles('#image-files', names.map((n) => join(FIXTURES, n)));
  await imagesDone(page);
  const shown = (await page.evaluate(() => window.openDemo.state)).imageTask;
  assert.equal(shown.mode, 'classify');
  const sorted = [...names].sort();
  assert.deepEqual(shown.images, sorted, 'the images in name order');
  const m = await aw.loadModel(join(GOLDENS, 'vision/vit_classifier'));
  const want = await m.classify(sorted.map((n) => join(FIXTURES, n)), { topK: 5 });
  assert.deepEqual(shown.results.map((r) => r.map((x) => x.label)), want.map((r) => r.map((x) => x.label)));
  shown.results.forEach((r, i) => r.forEach((x, k) => assert.ok(close(x.score, want[i][k].score), `${i}/${k}: ${x.score} vs ${want[i][k].score}`)));
  const cards = await page.$$eval('#image-results figure.thumb', (fs) => fs.map((f) => ({
    name: f.querySelector('.name').textContent, labels: [...f.querySelectorAll('ol.labels li')].map((li) => li.textContent), src: f.querySelector('img').src,
  })));
  assert.deepEqual(cards.map((c) => c.name), sorted);
  cards.forEach((c, i) => assert.deepEqual(c.labels, want[i].map((x) => `${x.label} ${x.score.toFixed(4)}`)));
  assert.ok(cards.every((c) => c.src.startsWith('blob:')), 'thumbnails of the Files themselves');
  t.diagnostic(`classify: ${(await page.textContent('#image-stats')).replace(/\s+/g, ' ').trim()}`);

  // The second image's patches: 32 × 32 pixels, 4 × 4 patches of 8, a class token; patch (2, 3) clicked.
  await page.click('#image-results figure.thumb[data-index="1"] img');
  await page.waitForFunction(() => window.openDemo.state.imageTask?.patch?.shape);
  const before = await nonBlankPixels(page, '#patch-canvas');
  const attn = await nodeAttentions(m, join(FIXTURES, sorted[1]));
  const p0 = (await page.evaluate(() => window.openDemo.state.imageTask.patch));
  assert.deepEqual(p0.shape, attn.shape);
  assert.deepEqual(p0.grid, [4, 4]);
  assert.equal(p0.extraTokens, 1);
  await clickPatch(page, 1, 2, p0.grid, 1);
  let p = (await page.evaluate(() => window.openDemo.state.imageTask.patch));
  assert.deepEqual([p.token, p.patch, p.layer, p.head], [7, 6, 1, 'mean'], 'the last layer, the mean of the heads');
  nodeRow(attn, 7, 1, 'mean').forEach((w, j) => assert.ok(close(p.weights[j], w), `mean ${j}: ${p.weights[j]} vs ${w}`));
  assert.match(await page.textContent('#patch-top'), /^Patch \(2, 3\), layer 2, mean of heads: most attention on /);
  const after1 = await nonBlankPixels(page, '#patch-canvas');
  assert.notEqual(after1.signature, before.signature, 'the attention is drawn over the image');
  await page.selectOption('#patch-layer', { value: '0' });
  await page.selectOption('#patch-head', { value: '2' });
  p = (await page.evaluate(() => window.openDemo.state.imageTask.patch));
  assert.deepEqual([p.token, p.layer, p.head], [7, 0, 2]);
  nodeRow(attn, 7, 0, 2).forEach((w, j) => assert.ok(close(p.weights[j], w), `head 3, ${j}: ${p.weights[j]} vs ${w}`));
  assert.match(await page.textContent('#patch-top'), /^Patch \(2, 3\), layer 1, head 3: /);
  await page.click('#patch-cls');
  await page.waitForFunction(() => document.getElementById('patch-canvas').dataset.token === '0');
  const cls = (await page.evaluate(() => window.openDemo.state.imageTask.patch)).weights;
  nodeRow(attn, 0, 0, 2).forEach((w, j) => assert.ok(close(cls[j], w), `the class token, ${j}: ${cls[j]} vs ${w}`));
  m.dispose();
  await page.screenshot({ path: join(ARTIFACTS, 'open_image_classify.png'), fullPage: true });
  const long = await page.evaluate((from) => window.longTasks.filter((e) => e.start >= from), t0);
  assert.deepEqual(long.filter((e) => e.ms > LONG_TASK_FAIL_MS), []);
  assert.deepEqual(problems, []);
  await page.close();
});

/** 24 fixture images under distinct names, as files a person picks (their bytes as they are on disk). */
const SEARCH = ['rgb8_64x48.png', 'j420_q90.jpg', 'rgba8.png', 'rgb8_checker.png', 'j444_q95.jpg', 'p8.png', 'g8.png', 'jprog.jpg'];
const searchFiles = () => Array.from({ length: 24 }, (_, k) => {
  const n = SEARCH[k % SEARCH.length];
  return { name: `${String(k).padStart(2, '0')}_${n}`, mimeType: n.endsWith('.png') ? 'image/png' : 'image/jpeg', buffer: readFileSync(join(FIXTURES, n)) };
});

test('open page: CLIP without tokenizer files embeds a folder of 63 images in the worker and ranks them by an image as Node does', async (t) => {
  const { page, problems } = await opened('clip/clip_model');
  assert.equal(await page.textContent('#model-title'), 'A clip CLIP model');
  assert.equal(await page.textContent('#image-title'), 'Search images');
  assert.match(await page.textContent('#image-query-note'), /^No tokenizer files: /);
  assert.equal(await page.isDisabled('#image-query'), true);
  const names = readdirSync(FIXTURES).sort();
  const t0 = await page.evaluate(() => performance.now());
  await page.setInputFiles('#image-folder', FIXTURES);
  await imagesDone(page);
  const run = (await page.evaluate(() => window.openDemo.state)).imageTask;
  assert.equal(run.mode, 'search');
  assert.deepEqual(run.images, names.map((n) => `fixtures/${n}`));
  assert.deepEqual(run.shape, [names.length, 24]);
  assert.deepEqual(run.progress, [8, 16, 24, 32, 40, 48, 56, 63], 'the progress of each batch of 8, from the worker');
  assert.equal(await page.$$eval('#image-results figure.thumb', (f) => f.length), names.length);
  const long = await page.evaluate((from) => window.longTasks.filter((e) => e.start >= from), t0);
  t.diagnostic(`${names.length} images embedded in ${run.ms.toFixed(0)} ms (${(run.ms / names.length).toFixed(1)} ms an image: decoding, preprocessing and `
    + `the forward in the worker, batches of 8); main-thread tasks over 50 ms: ${long.length ? long.map((e) => `${Math.round(e.ms)} ms at +${Math.round(e.start - t0)} ms`).join(", ") : "none"}`);
  assert.deepEqual(long.filter((e) => e.ms > LONG_TASK_FAIL_MS), []);

  // "similar" under image 5: the images ranked by their cosine with it, as Node's normalized embeddings give it.
  await page.click('#image-results figure.thumb[data-index="5"] button.similar');
  await page.waitForFunction(() => window.openDemo.state.imageTask?.results);
  const ranked = (await page.evaluate(() => window.openDemo.state.imageTask));
  assert.deepEqual(ranked.query, { image: 5 });
  assert.equal(ranked.scoreKind, 'cosine');
  const m = await aw.loadModel(join(GOLDENS, 'clip/clip_model'));
  const v = await m.embedImages(names.map((n) => join(FIXTURES, n)));
  m.dispose();
  const D = v.shape[1];
  const cos = Array.from({ length: names.length }, (_, i) => {
    let s = 0;
    for (let k = 0; k < D; k++) s += v.data[i * D + k] * v.data[5 * D + k];
    return Math.fround(s);
  });
  const order = [...cos.keys()].sort((a, b) => cos[b] - cos[a] || a - b);
  ranked.results.forEach((r) => assert.ok(close(r.score, cos[r.index]), `${r.index}: ${r.score} vs ${cos[r.index]}`));
  // The order as the scores give it (two scores within the tolerance may swap between the runtimes).
  ranked.results.forEach((r, k) => assert.ok(k === 0 || r.score <= ranked.results[k - 1].score, `rank ${k}`));
  assert.equal(ranked.results[0].index, order[0]);
  assert.ok(Math.abs(ranked.results[0].score - 1) < 1e-5, 'the image itself first');
  const firstShown = await page.$$eval('#image-results figure.thumb', (f) => f.slice(0, 3).map((x) => Number(x.dataset.index)));
  assert.deepEqual(firstShown, ranked.results.slice(0, 3).map((r) => r.index));
  assert.match(await page.textContent('#image-results-note'), /^Ranked for image 6, fixtures\/\S+ by cosine; the best 60 of 63 shown\.$/);
  await page.screenshot({ path: join(ARTIFACTS, 'open_image_search.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('open page: SigLIP\'s vision tower (no class token) shows a patch\'s attention as Node\'s visionForward; a bare DeiT then ranks the same images by an image, and its patches', async () => {
  const { page, problems } = await opened('clip/siglip_model');
  assert.equal(await page.textContent('#model-title'), 'A siglip SigLIP model');
  // Three images dropped on the zone, as a drag from the desktop brings them: a DataTransfer holding Files.
  const dropped = ['rgb8_64x48.png', 'j420_q90.jpg', 'rgb8_checker.png'];
  const dt = await page.evaluateHandle((files) => {
    const d = new DataTransfer();
    for (const [name, b] of files) d.items.add(new File([new Uint8Array(b)], name, { type: name.endsWith('.png') ? 'image/png' : 'image/jpeg' }));
    return d;
  }, dropped.map((n) => [n, [...readFileSync(join(FIXTURES, n))]]));
  await page.dispatchEvent('#image-drop', 'drop', { dataTransfer: dt });
  await imagesDone(page);
  const sorted = [...dropped].sort();
  assert.deepEqual((await page.evaluate(() => window.openDemo.state.imageTask)).images, sorted);
  const i = sorted.indexOf('rgb8_64x48.png');
  await page.click(`#image-results figure.thumb[data-index="${i}"] img`);
  await page.waitForFunction(() => window.openDemo.state.imageTask?.patch?.shape);
  assert.equal(await page.isVisible('#patch-cls'), false, 'no class token to pick');
  await clickPatch(page, 3, 0, [4, 4], 0);
  const p = (await page.evaluate(() => window.openDemo.state.imageTask.patch));
  assert.deepEqual([p.image, p.extraTokens, p.token, p.patch], [i, 0, 12, 12]);
  const m = await aw.loadModel(join(GOLDENS, 'clip/siglip_model'));
  const attn = await nodeAttentions(m, join(FIXTURES, 'rgb8_64x48.png'));
  m.dispose();
  assert.deepEqual(p.shape, attn.shape);
  nodeRow(attn, 12, attn.shape[1] - 1, 'mean').forEach((w, j) => assert.ok(close(p.weights[j], w), `${j}: ${p.weights[j]} vs ${w}`));

  // Another model loaded, a bare DeiT: the images given run again with it (embedded, normalized), then "similar".
  await page.setInputFiles('#pick-folder', join(GOLDENS, 'vision/deit_model'));
  await page.waitForFunction(() => /model_type "deit"/.test(document.getElementById('source-summary').textContent));
  await page.click('#load');
  await page.waitForFunction(() => document.body.dataset.loaded === 'true' && window.openDemo.state.kind === 'VisionModel');
  assert.equal(await page.textContent('#model-title'), 'A deit image encoder');
  assert.equal(await page.isVisible('#patch-card'), false);
  assert.match(await page.textContent('#image-query-note'), /^No text tower: /);
  await imagesDone(page);
  await page.click('#image-results figure.thumb[data-index="2"] button.similar');
  await page.waitForFunction(() => window.openDemo.state.imageTask?.results);
  const ranked = await page.evaluate(() => window.openDemo.state.imageTask);
  const deit = await aw.loadModel(join(GOLDENS, 'vision/deit_model'));
  const v = await deit.embed(sorted.map((n) => join(FIXTURES, n)), { normalize: true });
  const D = v.shape[1];
  assert.deepEqual(ranked.shape, [3, D]);
  const cos = [0, 1, 2].map((k) => {
    let s = 0;
    for (let d = 0; d < D; d++) s += v.data[k * D + d] * v.data[2 * D + d];
    return Math.fround(s);
  });
  assert.deepEqual(ranked.results.map((r) => r.index), [0, 1, 2].sort((a, b) => cos[b] - cos[a]));
  ranked.results.forEach((r) => assert.ok(close(r.score, cos[r.index]), `${r.index}: ${r.score} vs ${cos[r.index]}`));
  // DeiT's two extra tokens: the class token's and the distillation token's attention, a patch's attention past them.
  await page.click(`#image-results figure.thumb[data-index="${i}"] img`);
  await page.waitForFunction(() => window.openDemo.state.imageTask?.patch?.shape);
  await clickPatch(page, 0, 3, [4, 4], 2);
  const dp = await page.evaluate(() => window.openDemo.state.imageTask.patch);
  assert.deepEqual([dp.extraTokens, dp.token, dp.patch], [2, 5, 3]);
  const dattn = await nodeAttentions(deit, join(FIXTURES, 'rgb8_64x48.png'));
  deit.dispose();
  nodeRow(dattn, 5, dattn.shape[1] - 1, 'mean').forEach((w, j) => assert.ok(close(dp.weights[j], w), `DeiT ${j}: ${dp.weights[j]} vs ${w}`));
  assert.match(await page.textContent('#patch-top'), /^Patch \(1, 4\), layer \d+, mean of heads: most attention on /);
  assert.equal(await page.textContent('#patch-cls'), 'class and distillation tokens: the class token');
  assert.deepEqual(problems, []);
  await page.close();
});

for (const [folder, kind] of [['clip_zero_shot', 'cosine'], ['siglip_zero_shot', 'sigmoid']]) test(`open page: ${folder} (slow tokenizer files) ranks images for a typed query as Node does`, async (t) => {
  const dir = join(GOLDENS, `clip/${folder}`);
  const m = await aw.loadModel(dir);
  const { page, problems } = await opened(`clip/${folder}`);
  assert.equal(await page.isDisabled('#image-query'), false);
  const files = searchFiles().slice(0, 8);
  await page.fill('#image-query', 'a photo of a cat');
  await page.setInputFiles('#image-files', files);
  await imagesDone(page);
  await page.waitForFunction(() => window.openDemo.state.imageTask?.results);  // the query typed runs once embedded
  await page.fill('#image-query', 'a red square');
  await page.click('#image-search');
  await page.waitForFunction(() => window.openDemo.state.imageTask?.query?.text === 'a red square');
  const ranked = (await page.evaluate(() => window.openDemo.state.imageTask));
  assert.equal(ranked.scoreKind, kind);
  const img = await m.embedImages(files.map((f) => new Uint8Array(f.buffer)));
  const txt = await m.embedTexts(['a red square']);
  const { logitScale, logitBias } = m;
  m.dispose();
  const D = img.shape[1];
  // CLIP: the cosine; SigLIP: its probability, sigmoid(cosine · exp(logit_scale) + logit_bias).
  const score = Array.from({ length: files.length }, (_, i) => {
    let s = 0;
    for (let k = 0; k < D; k++) s += img.data[i * D + k] * txt.data[k];
    const cos = Math.fround(s);
    return kind === 'cosine' ? cos : 1 / (1 + Math.exp(-(cos * logitScale + logitBias)));
  });
  assert.deepEqual(ranked.results.map((r) => r.index), [...score.keys()].sort((a, b) => score[b] - score[a] || a - b));
  ranked.results.forEach((r) => assert.ok(close(r.score, score[r.index]), `${r.index}: ${r.score} vs ${score[r.index]}`));
  assert.match(await page.textContent('#image-results-note'), /^Ranked for "a red square" by /);
  t.diagnostic(`"a red square": ${ranked.results.slice(0, 3).map((r) => `${r.name} ${r.score.toFixed(4)}`).join(', ')}`);
  assert.deepEqual(problems, []);
  await page.close();
});
