// Text classifiers and cross-encoders (issue 42) against transformers 4.40.2 itself
// (tests/data/make_classifier_goldens.py): each folder loaded as a user loads it (its path), its slow or fast
// tokenizer's ids, the head's logits, the text-classification pipeline's scores for each (top_k,
// function_to_apply), sentence-transformers' CrossEncoder scores and rank; the refusals and bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { init } from '../../bindings/index.js';
import * as boundary from '../../bindings/boundary.js';

const DIR = new URL('../data/goldens/classifiers/', import.meta.url);
const aw = await init({ threads: 1 });
const golden = (name) => JSON.parse(readFileSync(new URL(`${name}/expected.json`, DIR), 'utf8'));
const path = (name) => new URL(name, DIR).pathname;

/** |got − want| ≤ atol + rtol·|want| everywhere; the worst ratio to the tolerance. */
function close(got, want, tol, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const r = Math.abs(got[i] - want[i]) / (tol.atol + tol.rtol * Math.abs(want[i]));
    assert.ok(r <= 1, `${what}[${i}]: ${got[i]} vs ${want[i]}`);
    worst = Math.max(worst, r);
  }
  return worst;
}

/** The pipeline's output (a list per input of {label, score}, or one dict per input for top_k 1 legacy) vs ours. */
function samePipeline(got, want, tol, what) {
  assert.equal(got.length, want.length, `${what}: inputs`);
  want.forEach((w, i) => {
    const list = Array.isArray(w) ? w : [w];
    assert.deepEqual(got[i].map((r) => r.label), list.map((r) => r.label), `${what}[${i}] labels`);
    close(got[i].map((r) => r.score), list.map((r) => r.score), tol, `${what}[${i}] scores`);
  });
}

// The token classifiers (*_ner) have their own tests: bert_ner below, roberta_ner and xlmr_ner in
// token_classifier_goldens.test.mjs.
const CLASSIFIERS = readdirSync(DIR).filter((n) => !n.endsWith('_ner')).sort();

test('the golden folders are there', () => {
  assert.deepEqual(CLASSIFIERS, ['bert_multilabel', 'bert_reranker', 'bert_sentiment', 'distilbert_sst2', 'roberta_nli', 'xlmr_reranker']);
});

for (const name of CLASSIFIERS) {
  test(`golden ${name}`, async (t) => {
    const x = golden(name);
    const m = await aw.loadModel(path(name));
    const reranker = name.endsWith('reranker');
    assert.ok(m instanceof aw.TextClassifier);
    assert.equal(m instanceof aw.CrossEncoder, reranker, 'a reranker loads as a CrossEncoder');
    assert.equal((await aw.inspect(path(name))).family.className, m.constructor.name, 'inspect names the face a load gives');
    assert.deepEqual(m.labels, x.labels);
    assert.equal(m.problemType, x.problemType);
    // The tokenizer (slow files or tokenizer.json): transformers' slow class's ids, pairs truncated only_second.
    for (const [k, s] of x.singles.entries()) {
      const r = m.tokenizer.encodeInputs(s.text, { maxLength: x.maxLength });
      assert.deepEqual(Array.from(r.inputIds), s.ids, `singles[${k}] ids`);
    }
    for (const [k, p] of x.pairs.entries()) {
      const r = m.tokenizer.encodeInputs(p.text, { pair: p.pair, maxLength: x.maxLength, truncation: 'only_second' });
      assert.deepEqual(Array.from(r.inputIds), p.ids, `pairs[${k}] ids`);
      if (x.labels.length && name.startsWith('bert')) assert.deepEqual(Array.from(r.tokenTypeIds), p.types, `pairs[${k}] types`);
    }
    // Logits: from ids, and from the texts (the same ids, so the same numbers).
    const tol = x.tolerance;
    const fromIds = await m.logitsOfIds(x.singles.map((s) => s.ids), x.singles.map((s) => s.types));
    assert.deepEqual(fromIds.shape, [x.singles.length, x.labels.length]);
    const worst = close(fromIds.data, x.logitsSingles.flat(), tol, 'logitsSingles');
    const pairs = await m.logits(x.pairs.map((p) => [p.text, p.pair]), { batchSize: 3 });
    assert.equal(m.maxTokens, x.maxLength, "maxTokens: tokenizer_config.json's model_max_length");
    close(pairs.data, x.logitsPairs.flat(), tol, 'logitsPairs');
    const pairsAt = await m.logitsOfIds(x.pairs.map((p) => p.ids), x.pairs.map((p) => (p.types)));
    const worstPairs = close(pairsAt.data, x.logitsPairs.flat(), tol, 'logitsPairs (ids)');
    t.diagnostic(`worst |logit − transformers| / tolerance: ${Math.max(worst, worstPairs).toFixed(4)}`);
    // The pipeline, option by option (texts short enough to need no truncation).
    for (const run of x.pipeline) {
      const inputs = run.inputs;
      if (run.input === 'pairs') assert.ok(inputs.length >= 1, 'a pair fits whole');
      const o = { topK: run.options.top_k };
      if (run.options.function_to_apply) o.functionToApply = run.options.function_to_apply;
      samePipeline(await m.classify(inputs, o), run.output, tol, `pipeline ${JSON.stringify(run.options)} ${run.input}`);
    }
    if (reranker) {
      assert.equal(m.activation, x.crossEncoder.activation);
      const scores = await m.predict(x.pairs.map((p) => [p.text, p.pair]), { batchSize: 2 });
      close(scores, x.crossEncoder.scores.flat(), tol, 'predict');
      const rk = x.crossEncoder.rank;
      const ranked = await m.rank(rk.query, rk.documents, { returnDocuments: true });
      assert.deepEqual(ranked.map((r) => r.corpusId), rk.output.map((r) => r.corpus_id), 'rank order');
      close(ranked.map((r) => r.score), rk.output.map((r) => r.score), tol, 'rank scores');
      assert.deepEqual(ranked.map((r) => r.text), rk.output.map((r) => rk.documents[r.corpus_id]));
      const top2 = await m.rank(rk.query, rk.documents, { topK: 2 });
      assert.deepEqual(top2, ranked.slice(0, 2).map(({ corpusId, score }) => ({ corpusId, score })));
    }
    m.dispose();
  });
}

/** A golden folder's files as a Map of path → bytes, config.json's keys replaced by `config`. */
function folderWith(name, config = {}) {
  const m = new Map();
  for (const f of readdirSync(new URL(name, DIR))) if (f !== 'expected.json') m.set(f, readFileSync(new URL(`${name}/${f}`, DIR)));
  const base = JSON.parse(m.get('config.json'));
  m.set('config.json', new TextEncoder().encode(JSON.stringify({ ...base, ...config })));
  return m;
}

test("task chooses the face: 'embed' keeps the encoder alone, 'rerank' a CrossEncoder of several labels", async () => {
  const e = await aw.loadModel(path('bert_sentiment'), { task: 'embed' });
  assert.ok(e instanceof aw.Embedder && !(e instanceof aw.TextClassifier));
  assert.deepEqual((await e.embed(['I loved this movie!'])).shape, [1, 32]);
  e.dispose();
  const ce = await aw.loadModel(path('bert_sentiment'), { task: 'rerank' });
  assert.ok(ce instanceof aw.CrossEncoder);
  assert.equal(ce.activation, 'torch.nn.modules.linear.Identity', 'several labels: Identity');
  const x = golden('bert_sentiment');
  const p = await ce.predict(x.pairs.slice(0, 2).map((q) => [q.text, q.pair]), { applySoftmax: true });
  assert.deepEqual(p.shape, [2, 3]);
  const want = x.pipeline.find((r) => r.input === 'pairs').output[0];
  for (const { label, score } of want) assert.ok(Math.abs(p.data[x.labels.indexOf(label)] - score) < 1e-4, label);
  await assert.rejects(ce.rank('q', ['a']), (err) => err.code === 'ERR_INVALID_ARGUMENT' && /one label/.test(err.message));
  ce.dispose();
  const c = await aw.loadModel(path('bert_reranker'), { task: 'classify' });
  assert.ok(c instanceof aw.TextClassifier && !(c instanceof aw.CrossEncoder));
  c.dispose();
  await assert.rejects(aw.loadModel(path('bert_sentiment'), { task: 'summarize' }), (err) => err instanceof TypeError && /task: expected 'embed', 'classify', 'rerank', got 'summarize'/.test(err.message));
  await assert.rejects(aw.loadModel(path('bert_sentiment'), { pooling: 'cls' }), (err) => err.code === 'ERR_INVALID_ARGUMENT' && /pooling: only an embedder/.test(err.message));
});

test('a token-classification head: its logits are transformers\' (the native head, through task \'embed\'s encoder)', async () => {
  const x = golden('bert_ner');
  const e = await aw.loadModel(path('bert_ner'), { task: 'embed' });
  assert.ok(e instanceof aw.Embedder);
  const ids = Int32Array.from(x.singles.flatMap((s) => s.ids));
  const lengths = Int32Array.from(x.singles, (s) => s.ids.length);
  const [out] = boundary.models.embedderEmbed(e._rt, e._handle(), { ids: { data: ids, shape: [ids.length] }, lengths: { data: lengths, shape: [lengths.length] } }, { modes: 0, normalize: false, head: true });
  assert.deepEqual(out.shape, [ids.length, x.labels.length]);
  close(out.data, x.tokenLogits.flat(2), x.tolerance, 'tokenLogits');
  e.dispose();
});

test('bad input: clear errors naming the argument, and the model keeps working', async () => {
  const m = await aw.loadModel(path('bert_reranker'));
  const x = golden('bert_reranker');
  await assert.rejects(m.rank('q', []), (err) => err.code === 'ERR_INVALID_ARGUMENT' && /documents: expected at least one document/.test(err.message));
  await assert.rejects(m.rank('q', ['a', 7]), (err) => err instanceof TypeError && /documents\[1\]: expected a string, got/.test(err.message));
  await assert.rejects(m.rank(3, ['a']), (err) => err instanceof TypeError && /^query:/.test(err.message));
  await assert.rejects(m.predict([['a', 'b'], 'c']), (err) => err instanceof TypeError && /pairs\[1\]/.test(err.message));
  await assert.rejects(m.classify(['a', ['b']]), (err) => err instanceof TypeError && /inputs\[1\]: expected a string or a \[text, pair\]/.test(err.message));
  await assert.rejects(m.classify(['a', ['b', 2]]), (err) => err instanceof TypeError && /inputs\[1\]\[1\]: expected a string/.test(err.message));
  await assert.rejects(m.classify(['a'], { topK: 0 }), (err) => err instanceof RangeError && /topK/.test(err.message));
  await assert.rejects(m.classify(['a'], { functionToApply: 'relu' }), (err) => err instanceof TypeError && /functionToApply: expected 'softmax', 'sigmoid', 'none', got 'relu'/.test(err.message));
  await assert.rejects(m.classify(['a'], { truncation: 'longest' }), (err) => err instanceof TypeError && /truncation/.test(err.message));
  await assert.rejects(m.predict([['a', 'b']], { activation: 'gelu' }), (err) => err instanceof TypeError && /activation/.test(err.message));
  // A query that alone fills maxTokens cannot be kept whole with 'only_second': an error, not a silent cut.
  const long = Array(40).fill('cats').join(' ');
  await assert.rejects(m.predict([[long, 'the cat sat']]), (err) => err instanceof RangeError && /maxLength/.test(err.message));
  await assert.rejects(m.logitsOfIds([[2, 99999, 3]]), (err) => /idsList\[0\]\[1\]: id 99999 is out of range/.test(err.message));
  // Still working, the same numbers.
  const scores = await m.predict(x.pairs.map((p) => [p.text, p.pair]));
  close(scores, x.crossEncoder.scores.flat(), x.tolerance, 'predict after errors');
  m.dispose();
  await assert.rejects(m.rank('q', ['a']), (err) => err.code === 'ERR_DISPOSED');
});

test('config.json: labels and activations the code cannot honour are refused by key', async () => {
  await assert.rejects(aw.loadModel(folderWith('bert_sentiment', { id2label: { 0: 'a', 1: 'b', 5: 'c' } })),
    (err) => err.code === 'ERR_INVALID_ARGUMENT' && /id2label: expected the keys "0" … "2" \(the head's 3 outputs\), got "5"/.test(err.message));
  await assert.rejects(aw.loadModel(folderWith('bert_sentiment', { id2label: { 0: 'a', 1: 'b' } })),
    (err) => /classifier\.weight/.test(err.message) && /\b2\b/.test(err.message));
  await assert.rejects(aw.loadModel(folderWith('bert_reranker', { sentence_transformers: { activation_fn: 'mypackage.MyActivation' } })),
    (err) => err.code === 'ERR_UNSUPPORTED' && /sentence_transformers\.activation_fn: expected one of/.test(err.message) && /mypackage\.MyActivation/.test(err.message));
  const legacy = await aw.loadModel(folderWith('bert_reranker', { sentence_transformers: undefined, sbert_ce_default_activation_function: 'torch.nn.modules.activation.Sigmoid' }));
  assert.equal(legacy.activation, 'torch.nn.modules.activation.Sigmoid');
  legacy.dispose();
});

test('a token classifier: the token-classification pipeline\'s entities for every aggregation strategy', async (t) => {
  const x = golden('bert_ner');
  const m = await aw.loadModel(path('bert_ner'));
  assert.ok(m instanceof aw.TokenClassifier);
  assert.deepEqual(m.labels, x.labels);
  const ner = x.ner;
  // The goldens count code points (Python's str); attnwasm gives UTF-16 indices (one text has emoji and 𝔾).
  const unitsOf = (text) => {
    const at = [0];
    for (const c of text) at.push(at.at(-1) + c.length);
    return (k) => at[k];
  };
  assert.ok(ner.texts.some((t) => [...t].length !== t.length), 'a text with characters beyond U+FFFF');
  // The tokenizer's ids and character offsets: Hugging Face's Rust tokenizers'.
  ner.texts.forEach((text, i) => {
    const r = m.tokenizer.encode(text, { returnOffsets: true });
    const u = unitsOf(text);
    assert.deepEqual(Array.from(r.ids), ner.encodings[i].ids, `texts[${i}] ids`);
    assert.deepEqual(r.offsets, ner.encodings[i].offsets.map(([s, e]) => [u(s), u(e)]), `texts[${i}] offsets`);
  });
  let worst = 0;
  for (const [strategy, want] of Object.entries(ner.outputs)) {
    const got = await m.classify(ner.texts, { aggregationStrategy: strategy, batchSize: 4 });
    assert.equal(got.length, want.length);
    want.forEach((w, i) => {
      const u = unitsOf(ner.texts[i]);
      assert.deepEqual(got[i].map(({ score, ...rest }) => rest), w.map(({ score, ...rest }) => ({ ...rest, start: u(rest.start), end: u(rest.end) })), `${strategy} texts[${i}]`);
      // start / end slice the JS string: after an emoji, the entity's text is its word
      const norm = (t) => t.toLowerCase().normalize('NFD').replace(/\p{Mn}/gu, '');
      if ([...ner.texts[i]].length !== ner.texts[i].length) for (const e of got[i]) assert.equal(norm(ner.texts[i].slice(e.start, e.end)), norm(e.word.replace(/^##/, '')), `${strategy} texts[${i}] slice`);
      w.forEach((e, k) => {
        const r = Math.abs(got[i][k].score - e.score) / (x.tolerance.atol + x.tolerance.rtol * Math.abs(e.score));
        assert.ok(r <= 1, `${strategy} texts[${i}][${k}] score ${got[i][k].score} vs ${e.score}`);
        worst = Math.max(worst, r);
      });
    });
  }
  t.diagnostic(`entities: ${Object.values(ner.outputs).flat(2).length}; worst score / tolerance ${worst.toFixed(4)}`);
  // ignoreLabels: [] keeps the 'O' tokens; a bad strategy is named.
  const all = await m.classify(ner.texts.slice(0, 1), { ignoreLabels: [] });
  assert.equal(all[0].length, ner.encodings[0].ids.length - 2, 'every token but [CLS] and [SEP]');
  await assert.rejects(m.classify(['x'], { aggregationStrategy: 'longest' }), (e) => e instanceof TypeError && /aggregationStrategy: expected 'none', 'simple', 'first', 'average', 'max', got 'longest'/.test(e.message));
  await assert.rejects(m.classify(['x', 3]), (e) => e instanceof TypeError && /texts\[1\]: expected a string/.test(e.message));
  await assert.rejects(aw.loadModel(path('bert_ner'), { task: 'rerank' }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /a token-classification head/.test(e.message));
  m.dispose();
});

test('a token classifier whose folder has vocab.txt, not tokenizer.json, gives the same entities (the converted fast tokenizer\'s offsets)', async () => {
  const x = golden('bert_ner');
  const dir = path('bert_ner');
  const vocab = Object.entries(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')).model.vocab).sort((a, b) => a[1] - b[1]);
  const files = new Map([
    ['config.json', readFileSync(join(dir, 'config.json'))],
    ['model.safetensors', readFileSync(join(dir, 'model.safetensors'))],
    ['tokenizer_config.json', readFileSync(join(dir, 'tokenizer_config.json'))],
    ['vocab.txt', new TextEncoder().encode(vocab.map(([t]) => `${t}\n`).join(''))],
  ]);
  const m = await aw.loadModel(files);
  assert.ok(m instanceof aw.TokenClassifier);
  assert.equal(m.tokenizer.tokenizerClass, 'BertTokenizer');
  const fast = await aw.loadModel(dir);
  for (const strategy of ['none', 'simple', 'first', 'average', 'max']) {
    assert.deepEqual(await m.classify(x.ner.texts, { aggregationStrategy: strategy }), await fast.classify(x.ner.texts, { aggregationStrategy: strategy }), strategy);
  }
  m.dispose();
  fast.dispose();
});
