// attnwasm classify-text and attnwasm rerank (issue 42) on the classifier goldens (tests/data/goldens/classifiers/):
// what they print equals what the API gives for the same folder and inputs; texts from the line, lines from
// --input or stdin, --pairs, --top-k, --json; usage errors exit 2 naming the flag, a model that cannot rank exits 1.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';

const CLI = fileURLToPath(new URL('../../bin/attnwasm.mjs', import.meta.url));
const G = fileURLToPath(new URL('../data/goldens/classifiers/', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'attnwasm-cli-text-'));
const aw = await init({ threads: 1 });
after(async () => { rmSync(tmp, { recursive: true, force: true }); await aw.close(); });

const cli = (args, input) => spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', timeout: 60_000 });
const near = (a, b) => Math.abs(a - b) < 5e-6 + 1e-6 * Math.abs(b);

test('classify-text: labels per text, as classify() gives them; --pairs, --input, --json, --top-k', async () => {
  const m = await aw.loadModel(join(G, 'bert_sentiment'));
  const texts = ['I loved this movie!', 'terrible, awful plot.'];
  const want = await m.classify(texts, { topK: null });
  const r = cli(['classify-text', '--model', join(G, 'bert_sentiment'), ...texts, '--top-k', 'all']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
  assert.equal(lines.length, 2);
  lines.forEach((cols, i) => {
    assert.deepEqual(cols.filter((_, k) => k % 2 === 0), want[i].map((x) => x.label));
    cols.filter((_, k) => k % 2 === 1).forEach((s, k) => assert.ok(near(Number(s), want[i][k].score), `${s} vs ${want[i][k].score}`));
  });
  // Pairs, one a line with a tab, from a file; JSON out, top 1.
  const pairs = [['a man eats', 'someone is eating'], ['hello', 'world']];
  writeFileSync(join(tmp, 'pairs.tsv'), pairs.map((p) => p.join('\t')).join('\n') + '\n');
  const j = cli(['classify-text', '--model', join(G, 'bert_sentiment'), '--input', join(tmp, 'pairs.tsv'), '--pairs', '--json']);
  assert.equal(j.status, 0, j.stderr);
  const got = j.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
  const wantPairs = await m.classify(pairs);
  assert.deepEqual(got.map((r) => r.map((x) => x.label)), wantPairs.map((r) => r.map((x) => x.label)));
  got.forEach((r, i) => assert.ok(near(r[0].score, wantPairs[i][0].score)));
  m.dispose();
  // Usage errors.
  let e = cli(['classify-text', '--model', join(G, 'bert_sentiment'), 'x', '--function', 'relu']);
  assert.equal(e.status, 2);
  assert.match(e.stderr, /--function: expected softmax, sigmoid or none, got 'relu'/);
  e = cli(['classify-text', '--model', join(G, 'bert_sentiment'), '--pairs'], 'no tab here\n');
  assert.equal(e.status, 2);
  assert.match(e.stderr, /--pairs: line 1 has no tab between its two texts/);
  e = cli(['classify-text', 'x']);
  assert.equal(e.status, 2);
  assert.match(e.stderr, /classify-text: --model is needed/);
});

test('rerank: documents from stdin, best first with their line numbers, as rank() gives them', async () => {
  const docs = ['cats eat fish and mice.', '', 'the capital of france is paris.', 'a cat eats meat, mostly.'];
  const m = await aw.loadModel(join(G, 'bert_reranker'));
  const want = await m.rank('what do cats eat', docs.filter(Boolean));
  m.dispose();
  const r = cli(['rerank', '--model', join(G, 'bert_reranker'), '--query', 'what do cats eat'], docs.join('\n') + '\n');
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
  const lineOf = [1, 3, 4];  // the blank line 2 skipped
  assert.deepEqual(rows.map((x) => Number(x[1])), want.map((w) => lineOf[w.corpusId]));
  assert.deepEqual(rows.map((x) => x[2]), want.map((w) => docs.filter(Boolean)[w.corpusId]));
  rows.forEach((x, i) => assert.ok(near(Number(x[0]), want[i].score)));
  const j = cli(['rerank', '--model', join(G, 'bert_reranker'), '--query', 'what do cats eat', '--top-k', '1', '--json'], docs.join('\n'));
  assert.equal(j.status, 0, j.stderr);
  const top = JSON.parse(j.stdout);
  assert.equal(top.length, 1);
  assert.equal(top[0].corpusId, want[0].corpusId);
  // A query is needed; a three-label model cannot rank.
  let e = cli(['rerank', '--model', join(G, 'bert_reranker')], 'a\n');
  assert.equal(e.status, 2);
  assert.match(e.stderr, /rerank: --query is needed/);
  e = cli(['rerank', '--model', join(G, 'bert_sentiment'), '--query', 'q'], 'a\n');
  assert.equal(e.status, 1);
  assert.match(e.stderr, /rank: needs a model with one label/);
});

test('entities: one line per entity as classify() finds them (UTF-16 start / end); --input, --aggregation, --json; errors', async () => {
  const texts = ['My name is Wolfgang and I live in Berlin.', '😀 hello marie, welcome to paris!'];
  const m = await aw.loadModel(join(G, 'bert_ner'));
  const want = await m.classify(texts, { aggregationStrategy: 'simple' });
  const first = await m.classify(texts, { aggregationStrategy: 'first' });
  m.dispose();
  const r = cli(['entities', '--model', join(G, 'bert_ner'), ...texts]);
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
  const flat = want.flatMap((es, i) => es.map((e) => [String(i + 1), e.entity_group, String(e.start), String(e.end), e.word, e.score]));
  assert.deepEqual(rows.map((x) => [x[0], x[1], x[2], x[3], x[5]]), flat.map((x) => x.slice(0, 5)));
  rows.forEach((x, k) => assert.ok(near(Number(x[4]), flat[k][5])));
  writeFileSync(join(tmp, 'texts.txt'), `${texts.join('\n')}\n`);
  const j = cli(['entities', '--model', join(G, 'bert_ner'), '--input', join(tmp, 'texts.txt'), '--aggregation', 'first', '--json']);
  assert.equal(j.status, 0, j.stderr);
  const got = j.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(got.map((es) => es.map(({ score, ...e }) => e)), first.map((es) => es.map(({ score, ...e }) => e)));
  let e = cli(['entities', '--model', join(G, 'bert_ner'), 'x', '--aggregation', 'longest']);
  assert.equal(e.status, 2);
  assert.match(e.stderr, /--aggregation: expected none, simple, first, average or max, got 'longest'/);
  e = cli(['entities', '--model', join(G, 'bert_sentiment'), 'x']);
  assert.equal(e.status, 2);
  assert.match(e.stderr, /is a TextClassifier, not a token classifier/);
});
