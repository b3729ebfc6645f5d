// The open page (web/open/) with a sentence embedder, in headless Chromium, served by tools/serve.mjs as
// `npm run demo` serves it: a random checkpoint folder at all-MiniLM-L6-v2's shape (a BertModel of hidden 384,
// 6 layers, 12 heads, intermediate 1536, F32; BERT uncased's WordPiece tokenizer.json of 30522 ids;
// sentence-transformers' modules.json, 1_Pooling/config.json (mean), sentence_bert_config.json, 2_Normalize/)
// made by tools/make_checkpoint.mjs. The folder is picked (its 1_Pooling/config.json beside config.json); the
// default sentences are embedded; the similarity matrix has a diagonal of 1 (the folder normalizes), is
// symmetric, and equals the cosine similarities of the embeddings Node computes from the same folder; a token
// clicked shows its attention by layer and head (layers × heads rows, a column per token), the picked row's
// most attended tokens as Node's forward gives them. Typed sentences follow; 16 sentences are a table of
// values, 120 a canvas of colors; a sentence past max_seq_length is cut at 256 tokens. The same folder from its
// base URL (a mount of the server) gives the same matrix; a modules.json naming a Dense module whose folder is not
// there is refused with the runtime's message. No console error, no 404 (the base URL's one file is found by a HEAD request, so no
// index is probed, by the page's inspect or the worker's load) and no long task (> 50 ms) on the page from the
// load on. Saves docs/open_embedder.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readdirSync, mkdirSync, linkSync, copyFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../tools/serve.mjs';
import { writeCheckpoint } from '../../tools/make_checkpoint.mjs';
import { init, cosineSimilarity } from '../../bindings/index.js';
import { launchChromium, watchedPage, LONG_TASK_FAIL_MS } from './chromium.mjs';

const SCREENSHOT = fileURLToPath(new URL('../../docs/open_embedder.png', import.meta.url));
/** Cosine similarities computed in two runtimes from float32 vectors: float64 sums of 384 terms, stored as float32. */
const TOL = 1e-6;
let tmp, minilm, dense, server, browser, aw, ref;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'attnwasm-open-embedder-'));
  minilm = join(tmp, 'all-MiniLM-L6-v2');
  writeCheckpoint('all-minilm-l6-v2', minilm);
  // The same folder with a Dense module after the pooling named by modules.json, its folder missing: refused.
  dense = join(tmp, 'dense');
  mkdirSync(join(dense, '1_Pooling'), { recursive: true });
  for (const f of readdirSync(minilm)) {
    if (statSync(join(minilm, f)).isFile()) (f === 'model.safetensors' ? linkSync : copyFileSync)(join(minilm, f), join(dense, f));
  }
  copyFileSync(join(minilm, '1_Pooling/config.json'), join(dense, '1_Pooling/config.json'));
  writeFileSync(join(dense, 'modules.json'), JSON.stringify([
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    { idx: 2, name: '2', path: '2_Dense', type: 'sentence_transformers.models.Dense' },
  ]));
  aw = await init({ threads: 1 });
  ref = await aw.loadModel(minilm);
  server = await startServer({ mounts: { '/ckpt/': tmp } });
  browser = await launchChromium({ viewport: { width: 1200, height: 1500 } });
}, { timeout: 120_000 });
after(async () => {
  await browser?.close();
  await server?.close();
  ref?.dispose();
  await aw?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Node's similarity matrix of `sentences` (n, n) as arrays, from the same folder's embeddings. */
async function nodeSimilarity(sentences) {
  const v = await ref.embed(sentences);
  const { data, shape: [n] } = cosineSimilarity(v, v);
  return Array.from({ length: n }, (_, i) => Array.from(data.subarray(i * n, (i + 1) * n)));
}

function assertMatrix(got, want, what) {
  const n = want.length;
  assert.equal(got.length, n, `${what}: rows`);
  for (let i = 0; i < n; i++) {
    assert.ok(Math.abs(got[i][i] - 1) <= TOL, `${what}: diagonal (${i}, ${i}) = ${got[i][i]}`);
    for (let j = 0; j < n; j++) {
      assert.ok(Math.abs(got[i][j] - got[j][i]) <= TOL, `${what}: (${i}, ${j}) = ${got[i][j]} but (${j}, ${i}) = ${got[j][i]}`);
      assert.ok(Math.abs(got[i][j] - want[i][j]) <= TOL, `${what}: (${i}, ${j}) = ${got[i][j]}, Node's ${want[i][j]}`);
    }
  }
}

const waitLoaded = (page, state = 'true') => page.waitForFunction((s) => document.body.dataset.loaded === s, state, { timeout: 60_000 });
const waitEmbedded = (page) => page.waitForFunction(() => document.getElementById('embed-stats').dataset.state === 'done'
  && document.querySelectorAll('#tokens button.token').length > 0, null, { timeout: 60_000 });

test('open page: an all-MiniLM-L6-v2-shaped folder — load, embed, the similarity matrix, a token\'s attention, its URL, a refusal', async (t) => {
  const { page, problems } = await watchedPage(browser.context);
  // HTTP errors, the page's and the worker's: none (Chromium logs a page's as a console error, "Failed to load resource").
  const missing = [];
  page.on('response', (r) => { if (r.status() >= 400) missing.push(`${r.status()} ${new URL(r.url()).pathname}`); });
  try {
    await page.goto(`${server.url}web/open/`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });

    // The folder picked: its top-level config.json read (not 1_Pooling/config.json), the weights' header.
    await page.setInputFiles('#pick-folder', minilm);
    await page.waitForSelector('#fit-card:not(.hidden)');
    const summary = await page.textContent('#source-summary');
    assert.match(summary, /1 weight file\(s\), 103 tensors — config.json: model_type "bert"/);
    assert.match(summary, /1_Pooling\/config\.json/);
    assert.match(summary, /modules\.json/);

    const t0 = await page.evaluate(() => performance.now());
    await page.click('#load');
    await waitLoaded(page);
    const facts = await page.textContent('#facts');
    assert.match(facts, /6 × 12/);
    assert.match(facts, /384 numbers, mean pooling, normalized/);
    assert.match(facts, /30522 ids/);
    assert.equal(await page.textContent('#model-title'), 'A bert sentence embedder');
    assert.equal(await page.isVisible('#lm-card'), false);
    t.diagnostic(`load: ${await page.textContent('#progress-text')}, ${await page.textContent('#progress-rate')}`);

    // Embed the default sentences.
    await page.click('#embed');
    await waitEmbedded(page);
    const state = (await page.evaluate(() => window.openDemo.state)).embed;
    const sentences = (await page.inputValue('#sentences')).split('\n').map((s) => s.trim()).filter(Boolean);
    assert.deepEqual(state.sentences, sentences);
    assert.ok(sentences.length >= 4, `${sentences.length} default sentences`);
    assert.deepEqual(state.shape, [sentences.length, 384]);
    assertMatrix(state.similarity, await nodeSimilarity(sentences), 'page');
    // The grid shows the same numbers.
    const cells = await page.$$eval('#sim tr[data-row]', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => [Number(td.dataset.value), td.textContent])));
    assert.equal(cells.length, sentences.length);
    cells.forEach((row, i) => row.forEach(([v, text], j) => {
      assert.equal(v, state.similarity[i][j]);
      assert.equal(text, v.toFixed(2));
    }));
    const stats = await page.textContent('#embed-stats');
    assert.match(stats, /sentences\/s/);
    t.diagnostic(`embed: ${stats.replace(/\s+/g, ' ').trim()}`);

    // A token of the first sentence: its attention by layer and head, as Node's forward gives it.
    const tokens = await page.$$eval('#tokens button.token', (b) => b.map((x) => x.textContent));
    const batch = ref.tokenize([sentences[0]]);
    const T = batch.inputIds.shape[1];
    assert.deepEqual(tokens, [...batch.inputIds.data].map((id) => ref.tokenizer.idToToken(id)));
    assert.equal(tokens[0], '[CLS]');
    assert.equal(tokens.at(-1), '[SEP]');
    const k = 2;
    await page.click(`#tokens button.token[data-index="${k}"]`);
    await page.waitForSelector('#tok-heat-wrap:not(.hidden)');
    const grid = await page.$eval('#tok-heat', (c) => ({ ...c.dataset, width: c.width, height: c.height }));
    assert.deepEqual({ rows: grid.rows, cols: grid.cols, layers: grid.layers, heads: grid.heads }, { rows: '72', cols: String(T), layers: '6', heads: '12' });
    assert.equal(grid.height, 72);
    assert.equal(grid.width, T);
    assert.equal(await page.$$eval('#tok-labels span', (s) => s.length), T);
    assert.equal(await page.$$eval('#tok-layers span', (s) => s.length), 6);
    // The token labels stand over the columns.
    const [label, heat] = await Promise.all(['#tok-labels span', '#tok-heat'].map((q) => page.locator(q).first().boundingBox()));
    assert.ok(Math.abs(label.x - heat.x) <= 1, `the first label at x ${label.x}, the grid at ${heat.x}`);
    assert.ok(Math.abs(label.width - heat.width / T) <= 1, `a label ${label.width} px wide, a column ${heat.width / T}`);
    const attn = ref.forward({ ...batch, outputAttentions: true }).attentions;
    const topOf = (r) => {
      const row = attn.data.subarray((r * T + k) * T, (r * T + k + 1) * T);
      return [...row.keys()].sort((a, b) => row[b] - row[a]).slice(0, 3).map((j) => `${JSON.stringify(tokens[j])} (${row[j].toFixed(3)})`).join(', ');
    };
    assert.equal(await page.textContent('#tok-top'), `Token ${k + 1} ${JSON.stringify(tokens[k])}, layer 1, head 1: most attention on ${topOf(0)}`);
    // Another row: the last head of the last layer, clicked in the grid.
    const box = await page.locator('#tok-heat').boundingBox();
    await page.locator('#tok-heat').click({ position: { x: box.width / 2, y: box.height - 1 } });
    await page.waitForFunction(() => window.openDemo.state.tokenAttention?.row === 71);
    assert.equal(await page.textContent('#tok-top'), `Token ${k + 1} ${JSON.stringify(tokens[k])}, layer 6, head 12: most attention on ${topOf(71)}`);
    await page.evaluate(() => window.scrollTo(0, 0));  // the runtime panel is sticky: at the top, as a visitor first sees it
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // Another sentence, picked by its row in the matrix: its tokens.
    await page.click('#sim tr[data-row="3"] th');
    await page.waitForFunction(() => document.getElementById('tokens').dataset.sentence === '3' && document.querySelectorAll('#tokens button.token').length > 0);
    const tokens3 = await page.$$eval('#tokens button.token', (b) => b.map((x) => x.textContent));
    const ids3 = ref.tokenize([sentences[3]]).inputIds.data;
    assert.deepEqual(tokens3, [...ids3].map((id) => ref.tokenizer.idToToken(id)));
    assert.equal(await page.inputValue('#sentence'), '3');

    // Sentences typed: the matrix follows.
    const typed = ['the cat sat on the mat', 'a dog ran in the park', 'the cat sat on the mat', 'stocks fell sharply today'];
    await page.fill('#sentences', typed.join('\n'));
    await page.click('#embed');
    await page.waitForFunction((n) => window.openDemo.state.embed?.sentences.length === n
      && document.getElementById('embed-stats').dataset.state === 'done', typed.length);
    const typedSim = (await page.evaluate(() => window.openDemo.state.embed)).similarity;
    assertMatrix(typedSim, await nodeSimilarity(typed), 'typed');
    assert.ok(Math.abs(typedSim[0][2] - 1) <= TOL, 'the same sentence twice');

    // Many sentences: a table of values up to 16, past it a canvas of colors (a pixel a pair); no long task either way.
    const many = (n) => Array.from({ length: n }, (_, i) => `sentence number ${i + 1} says ${['yes', 'no', 'maybe'][i % 3]} to the cat`);
    for (const [n, table] of [[16, true], [17, false], [120, false]]) {
      await page.fill('#sentences', many(n).join('\n'));
      await page.click('#embed');
      await page.waitForFunction((m) => window.openDemo.state.embed?.sentences.length === m
        && document.getElementById('embed-stats').dataset.state === 'done', n, { timeout: 60_000 });
      assert.equal(await page.isVisible('#sim'), table);
      assert.equal(await page.isVisible('#sim-map'), !table);
      if (table) assert.equal(await page.$$eval('#sim td', (c) => c.length), n * n);
      else assert.equal(await page.getAttribute('#sim-map', 'data-n'), String(n));
      t.diagnostic(`${n} sentences: ${(await page.textContent('#embed-stats')).replace(/\s+/g, ' ').trim()}`);
    }
    const simBox = await page.locator('#sim-map').boundingBox();
    await page.locator('#sim-map').click({ position: { x: 2, y: simBox.height - 2 } });
    await page.waitForFunction(() => document.getElementById('tokens').dataset.sentence === '119');

    // A sentence past max_seq_length (256): cut there, as embed() cuts it; its last token's attention over 256 columns.
    const longText = many(60).join(' ');
    await page.fill('#sentences', longText);
    await page.click('#embed');
    await page.waitForFunction(() => window.openDemo.state.embed?.sentences.length === 1 && document.getElementById('embed-stats').dataset.state === 'done'
      && document.querySelectorAll('#tokens button.token').length > 0, null, { timeout: 60_000 });
    assert.equal(await page.$$eval('#tokens button.token', (b) => b.length), 256);
    await page.click('#tokens button.token[data-index="255"]');
    await page.waitForFunction(() => window.openDemo.state.tokenAttention?.token === 255);
    assert.equal(await page.getAttribute('#tok-heat', 'data-cols'), '256');
    assert.match(await page.textContent('#tok-top'), /^Token 256 "\[SEP\]", layer 1, head 1: most attention on /);

    const long = await page.evaluate((from) => window.longTasks.filter((e) => e.start >= from), t0);
    if (long.length) t.diagnostic(`long tasks (> 50 ms) during the load, the embeddings and the attention: ${long.map((e) => `${Math.round(e.ms)} ms at ${Math.round(e.start)}`).join(', ')}`);
    assert.deepEqual(long.filter((e) => e.ms > LONG_TASK_FAIL_MS), [], `tasks over ${LONG_TASK_FAIL_MS} ms on the page during the load, the embeddings and the attention`);

    // The same folder from its base URL (served by the mount): the same matrix.
    await page.fill('#url', `${server.url}ckpt/all-MiniLM-L6-v2/`);
    await page.click('#url-open');
    await page.waitForFunction(() => /model_type "bert"/.test(document.getElementById('source-summary').textContent));
    await page.click('#load');
    await waitLoaded(page);
    await page.fill('#sentences', sentences.join('\n'));
    await page.click('#embed');
    await waitEmbedded(page);
    assertMatrix((await page.evaluate(() => window.openDemo.state.embed)).similarity, state.similarity, 'from the URL');

    // A refusal: modules.json naming a Dense module that is not there, in the runtime's words.
    await page.setInputFiles('#pick-folder', dense);
    await page.waitForSelector('#fit-card:not(.hidden)');
    await page.click('#load');
    await waitLoaded(page, 'error');
    const refused = await page.textContent('#load-error');
    const expected = await aw.loadModel(dense).then((m) => { m.dispose(); return null; }, (e) => e.message);
    assert.equal(refused, `Cannot run this checkpoint: ${expected}`);
    assert.match(refused, /Dense/);
    assert.equal(await page.isVisible('#embed-card'), false);
    t.diagnostic(refused);
    assert.deepEqual(missing, []);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
