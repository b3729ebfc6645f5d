// The open page (web/open/) with a text classifier and a reranker (issue 42), in headless Chromium against
// tools/serve.mjs: a golden folder of tests/data/goldens/classifiers/ picked as a person picks a folder. The
// sentiment classifier (a BERT with a vocab.txt and no tokenizer.json) labels the typed texts and a typed pair;
// the reranker (ms-marco's layout, one label, Identity activation) ranks typed documents for a typed query. Both
// give what Node gives for the same folder and inputs (the same runtime in a worker); no console error, no 404.
// Then the entity tagger, and the embedders whose rows come from the causal LM's runtime (Qwen3-Embedding,
// EmbeddingGemma, ModernBERT).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ARTIFACTS, demoSession } from './demo_pages.mjs';
import { init } from '../../bindings/index.js';

const session = demoSession();
const GOLDENS = fileURLToPath(new URL('../data/goldens/classifiers/', import.meta.url));
const aw = await init({ threads: 1 });
after(() => aw.close());

/** The open page with `folder` picked and loaded. */
async function opened(folder) {
  const { page, problems } = await session.open('/web/open/');
  await page.setInputFiles('#pick-folder', join(GOLDENS, folder));
  await page.waitForSelector('#fit-card:not(.hidden)');
  await page.click('#load');
  await page.waitForFunction(() => document.body.dataset.loaded === 'true', null, { timeout: 30_000 });
  return { page, problems };
}

const close = (a, b) => Math.abs(a - b) <= 1e-5 + 1e-5 * Math.abs(b);

test('open page: a sentiment classifier labels typed texts and a pair as Node does', async () => {
  const { page, problems } = await opened('bert_sentiment');
  assert.equal(await page.textContent('#model-title'), 'A bert text classifier');
  assert.match(await page.textContent('#facts'), /negative, neutral, positive/);
  const lines = ['I loved this movie!', 'terrible, awful plot.', 'a man eats | someone is eating'];
  await page.fill('#texts', lines.join('\n'));
  await page.click('#classify');
  await page.waitForFunction(() => document.getElementById('classify-stats').dataset.state === 'done', null, { timeout: 30_000 });
  const shown = await page.evaluate(() => window.openDemo.state.textTask);
  assert.equal(shown.mode, 'classify');
  const m = await aw.loadModel(join(GOLDENS, 'bert_sentiment'));
  const want = await m.classify(['I loved this movie!', 'terrible, awful plot.', ['a man eats', 'someone is eating']], { topK: 3 });
  m.dispose();
  assert.deepEqual(shown.results.map((r) => r.map((x) => x.label)), want.map((r) => r.map((x) => x.label)));
  shown.results.forEach((r, i) => r.forEach((x, k) => assert.ok(close(x.score, want[i][k].score), `${i}/${k}: ${x.score} vs ${want[i][k].score}`)));
  const rows = await page.$$eval('#results tr', (trs) => trs.slice(1).map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.deepEqual(rows.map((r) => [r[0], r[1]]), lines.map((l, i) => [l, want[i][0].label]));
  await page.screenshot({ path: join(ARTIFACTS, 'open_classify.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('open page: a reranker ranks typed documents for a query as Node does; an empty query is said', async () => {
  const { page, problems } = await opened('bert_reranker');
  assert.equal(await page.textContent('#model-title'), 'A bert reranker (cross-encoder)');
  assert.equal(await page.textContent('#classify'), 'Rank');
  const docs = ['cats eat fish and mice.', 'the capital of france is paris.', 'a cat eats meat, mostly.'];
  await page.fill('#query', '');
  await page.fill('#texts', docs.join('\n'));
  await page.click('#classify');
  assert.equal(await page.textContent('#classify-error'), 'Type a query.');
  await page.fill('#query', 'what do cats eat');
  await page.click('#classify');
  await page.waitForFunction(() => document.getElementById('classify-stats').dataset.state === 'done', null, { timeout: 30_000 });
  const shown = await page.evaluate(() => window.openDemo.state.textTask);
  const m = await aw.loadModel(join(GOLDENS, 'bert_reranker'));
  const want = await m.rank('what do cats eat', docs);
  m.dispose();
  assert.deepEqual(shown.results.map((r) => r.corpusId), want.map((r) => r.corpusId));
  shown.results.forEach((r, i) => assert.ok(close(r.score, want[i].score), `${i}: ${r.score} vs ${want[i].score}`));
  const firstDoc = await page.$eval('#results tr:nth-child(2) td.text', (td) => td.textContent);
  assert.equal(firstDoc, docs[want[0].corpusId]);
  assert.deepEqual(problems, []);
  await page.close();
});

test('open page: an entity tagger marks the entities of typed texts as Node finds them (one text with an emoji first)', async () => {
  const { page, problems } = await opened('bert_ner');
  assert.equal(await page.textContent('#model-title'), 'A bert entity tagger (token classifier)');
  assert.equal(await page.textContent('#classify'), 'Find');
  const lines = ['john smith lives in new york and works for acme corporation.', '😀 hello marie, welcome to paris!'];
  await page.fill('#texts', lines.join('\n'));
  await page.click('#classify');
  await page.waitForFunction(() => document.getElementById('classify-stats').dataset.state === 'done', null, { timeout: 30_000 });
  const shown = await page.evaluate(() => window.openDemo.state.textTask);
  assert.equal(shown.mode, 'entities');
  const m = await aw.loadModel(join(GOLDENS, 'bert_ner'));
  const want = await m.classify(lines, { aggregationStrategy: 'simple' });
  m.dispose();
  assert.deepEqual(shown.results.map((r) => r.map(({ score, ...e }) => e)), want.map((r) => r.map(({ score, ...e }) => e)));
  shown.results.forEach((r, i) => r.forEach((e, k) => assert.ok(close(e.score, want[i][k].score), `${i}/${k}`)));
  // the marks are the texts' slices at the entities' start / end (UTF-16 indices: right after the emoji too)
  const marks = await page.$$eval('#results tr', (trs) => trs.slice(1).map((tr) => [...tr.querySelectorAll('mark')].map((m) => m.textContent)));
  assert.deepEqual(marks, want.map((r, i) => r.map((e) => lines[i].slice(e.start, e.end))));
  assert.ok(marks.flat().length > 0, 'some entities were marked');
  const cells = await page.$$eval('#results tr td.text', (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(cells, lines, 'the texts shown whole (the tags are CSS, not text)');
  await page.screenshot({ path: join(ARTIFACTS, 'open_entities.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

// The embedders whose rows come from the causal LM's runtime: Qwen3-Embedding and EmbeddingGemma (decoders), and
// ModernBERT (an encoder run on the same bidirectional stack): no padded forward, so no attention card.
const ROW_EMBEDDERS = [
  ['decoder_embedders/qwen3_embedding', 'A qwen3 sentence embedder (decoder)', /lasttoken pooling, normalized/],
  ['decoder_embedders/embeddinggemma', 'A gemma3_text sentence embedder (decoder)', /mean pooling, normalized/],
  ['modernbert/embed', 'A modernbert sentence embedder', /cls pooling, normalized/],
];
for (const [folder, title, facts] of ROW_EMBEDDERS) {
  test(`open page: ${title.slice(2)} (${folder}) embeds typed sentences as Node does`, async () => {
    const dir = join(fileURLToPath(new URL('../data/goldens/', import.meta.url)), folder);
    const { page, problems } = await session.open('/web/open/');
    await page.setInputFiles('#pick-folder', dir);
    await page.waitForSelector('#fit-card:not(.hidden)');
    await page.click('#load');
    await page.waitForFunction(() => document.body.dataset.loaded === 'true', null, { timeout: 30_000 });
    assert.equal(await page.textContent('#model-title'), title);
    assert.match(await page.textContent('#facts'), facts);
    const lines = ['What is the capital of China?', 'The capital of China is Beijing.', 'Gravity attracts bodies.'];
    await page.fill('#sentences', lines.join('\n'));
    await page.click('#embed');
    await page.waitForFunction(() => document.getElementById('embed-stats').dataset.state === 'done', null, { timeout: 30_000 });
    const cells = await page.$$eval('#sim td[data-value]', (tds) => tds.map((td) => Number(td.dataset.value)));
    const m = await aw.loadModel(dir);
    const v = await m.embed(lines);
    const want = aw.cosineSimilarity(v, v).data;
    m.dispose();
    assert.equal(cells.length, 9);
    cells.forEach((c, k) => assert.ok(close(c, want[k]), `${k}: ${c} vs ${want[k]}`));
    assert.ok(await page.$eval('#token-card', (el) => el.classList.contains('hidden')), 'no attention card');
    assert.deepEqual(problems, []);
    await page.close();
  });
}

