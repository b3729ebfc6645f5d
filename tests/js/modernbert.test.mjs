// ModernBERT (issue 42): a gte-modernbert-shaped folder (tests/data/make_modernbert_goldens.py: 4.x config keys,
// ModernBertModel's tensor names, CLS pooling and Normalize) loads as an embedder and embeds as sentence-transformers
// does, against tools/modernbert.py's twin in float64 (whose padded batch was checked to give each text's rows):
// within 1e-4 + 1e-4·|x|. A ModernBertForMaskedLM save of the same encoder with 5.x's keys gives the mean of the same
// rows; a ModernBertForSequenceClassification save of it (sharded: the encoder's shard and the head's) gives the
// twin's logits through its head, run in JS. The same weights with the window or the local RoPE base changed miss
// the goldens; a ModernBertForTokenClassification save gives the twin's logits on every row; what is not run is
// refused.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { worstOfCases } from './helpers.mjs';

const DIR = fileURLToPath(new URL('../data/goldens/modernbert/', import.meta.url));
const EMBED = join(DIR, 'embed'), MLM = join(DIR, 'mlm');
const x = JSON.parse(readFileSync(join(EMBED, 'expected.json'), 'utf8'));
const aw = await init({ threads: 1 });
after(() => aw.close());

/** embed/ as a Map with config.json's keys patched. */
function folder(patch = {}) {
  const names = ['model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'modules.json', '1_Pooling/config.json', 'sentence_bert_config.json'];
  const files = new Map(names.map((n) => [n, readFileSync(join(EMBED, n))]));
  const config = { ...JSON.parse(readFileSync(join(EMBED, 'config.json'), 'utf8')), ...patch };
  files.set('config.json', new TextEncoder().encode(JSON.stringify(config)));
  return files;
}

/** The worst |got − want| / (atol + rtol·|want|) of rows against the cases' `key`. */
const worst = (data, key, cases = x.cases) => worstOfCases(data, cases, key, x);

test('a gte-modernbert folder embeds as sentence-transformers does (CLS, Normalize; global and local layers)', async (t) => {
  const m = await aw.loadModel(EMBED);
  assert.ok(m instanceof aw.Embedder);
  assert.equal(m.modelType, 'modernbert');
  assert.equal(m.pooling, 'cls');
  assert.equal(m.normalize, true);
  assert.equal(m.dimension, 32);
  assert.equal(m.maxTokens, x.maxSeqLength);
  const info = await aw.inspect(EMBED);
  assert.deepEqual([info.family.kind, info.family.className], ['modernbert', 'Embedder']);
  for (const c of x.cases) assert.deepEqual([...m.tokenizer.encodeInputs(c.text.trim(), { maxLength: m.maxTokens }).inputIds], c.ids, c.text);
  const r = await m.embed(x.cases.map((c) => c.text), { batchSize: 4 });
  const w = worst(r.data, 'cls');
  assert.ok(w <= 1, `worst ${w} of the tolerance`);
  t.diagnostic(`${x.cases.length} embeddings of ${Math.min(...x.cases.map((c) => c.ids.length))} to ${x.maxSeqLength} tokens; worst / tolerance ${w.toFixed(4)}`);
  // pooling by option: the mean of the same rows
  const mean = await aw.loadEmbedder(EMBED, { pooling: 'mean', normalize: false });
  assert.ok(worst((await mean.embed(x.cases.map((c) => c.text))).data, 'mean') <= 1, 'aw.loadEmbedder takes ModernBERT; mean pooling');
  mean.dispose();
  m.dispose();
});

test('a ModernBertForMaskedLM save with 5.x keys: its head skipped, the encoder\'s rows mean-pooled', async () => {
  const m = await aw.loadModel(MLM);
  assert.equal(m.pooling, 'mean');
  assert.equal(m.normalize, false);
  assert.equal(m.maxTokens, 64, 'no sentence_bert_config.json: the model\'s positions');
  const cases = x.cases.filter((c) => c.ids.length < x.maxSeqLength);  // the golden cut one text to max_seq_length
  const r = await m.embed(cases.map((c) => c.text));
  const w = worst(r.data, 'mean', cases);
  assert.ok(w <= 1, `worst ${w} of the tolerance`);
  m.dispose();
});

/** classify/ (config, index, the head's shard) with embed/'s model.safetensors as the encoder's shard, as a Map. */
function classifier(patch = {}) {
  const dir = join(DIR, 'classify');
  const files = new Map([['model.safetensors.index.json', readFileSync(join(dir, 'model.safetensors.index.json'))],
    ['head.safetensors', readFileSync(join(dir, 'head.safetensors'))], ['model.safetensors', readFileSync(join(EMBED, 'model.safetensors'))],
    ['tokenizer.json', readFileSync(join(EMBED, 'tokenizer.json'))], ['tokenizer_config.json', readFileSync(join(dir, 'tokenizer_config.json'))]]);
  const config = { ...JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')), ...patch };
  files.set('config.json', new TextEncoder().encode(JSON.stringify(config)));
  return files;
}

test('a ModernBertForSequenceClassification checkpoint is a TextClassifier: its head in JS, by either pooling', async (t) => {
  const m = await aw.loadModel(classifier());
  assert.ok(m instanceof aw.TextClassifier);
  assert.equal((await aw.inspect(classifier())).family.className, 'TextClassifier', 'inspect names the face a load gives');
  assert.deepEqual([m.numLabels, [...m.labels]], [3, ['negative', 'neutral', 'positive']]);
  const texts = x.cases.map((c) => c.text);
  const mean = await m.logits(texts, { batchSize: 4 });
  const wm = worst(mean.data, 'logits_mean');
  assert.ok(wm <= 1, `mean pooling: worst ${wm} of the tolerance`);
  const top = await m.classify(texts.slice(0, 2), { topK: null });
  assert.equal(top[0].length, 3);
  assert.ok(Math.abs(top[0].reduce((s, r) => s + r.score, 0) - 1) < 1e-6, 'softmax over 3 labels');
  m.dispose();
  const cls = await aw.loadModel(classifier({ classifier_pooling: 'cls' }));
  const wc = worst((await cls.logits(texts)).data, 'logits_cls');
  assert.ok(wc <= 1, `cls pooling: worst ${wc} of the tolerance`);
  t.diagnostic(`logits of ${texts.length} texts; worst / tolerance: mean ${wm.toFixed(4)}, cls ${wc.toFixed(4)}`);
  cls.dispose();
  // a bad id is named where the caller put it (the head runs per run of one length: its places are the run's)
  const clf = await aw.loadModel(classifier());
  await assert.rejects(clf.logitsOfIds([[1, 2, 3, 4], [5, 6, 7], [8, 9, 99999]]), (e) => e.code === 'ERR_INVALID_ARGUMENT' &&
    /^idsList\[2\]\[2\]: id 99999 is out of range \[0, \d+\)$/.test(e.message));
  assert.deepEqual((await clf.logitsOfIds([[1, 2, 3]])).shape, [1, 3]);
  clf.dispose();
  // task 'rerank': a CrossEncoder of the same head; task 'embed': the encoder alone
  const ce = await aw.loadModel(classifier(), { task: 'rerank' });
  assert.ok(ce instanceof aw.CrossEncoder);
  const scores = await ce.predict([[texts[0], texts[1]]]);
  assert.deepEqual(scores.shape, [1, 3]);
  ce.dispose();
  const emb = await aw.loadModel(classifier(), { task: 'embed' });
  assert.ok(emb instanceof aw.Embedder);
  emb.dispose();
});

test('a ModernBertForTokenClassification checkpoint is a TokenClassifier: the head on every row', async () => {
  const dir = join(DIR, 'token');
  const files = classifier();
  for (const name of ['config.json', 'model.safetensors.index.json', 'head.safetensors']) files.set(name, readFileSync(join(dir, name)));
  const m = await aw.loadModel(files);
  assert.ok(m instanceof aw.TokenClassifier);
  assert.deepEqual([...m.labels], ['O', 'B-PER', 'I-PER', 'B-LOC', 'I-LOC']);
  const got = m._logits(x.cases.map((c) => ({ ids: Int32Array.from(c.ids) })));
  let w = 0;
  x.cases.forEach((c, i) => c.token_logits.forEach((v, k) => { w = Math.max(w, Math.abs(got[i][k] - v) / (x.atol + x.rtol * Math.abs(v))); }));
  assert.ok(w <= 1, `token logits: worst ${w} of the tolerance`);
  const entities = await m.classify(['Paris is where Marie lives.'], { ignoreLabels: [] });
  assert.ok(entities[0].length > 0 && entities[0].every((e) => typeof e.score === 'number' && e.start < e.end));
  m.dispose();
});

test('the same weights with another window or local RoPE base miss the goldens', async () => {
  for (const [patch, what] of [[{ local_attention: 128 }, 'no band'], [{ local_rope_theta: 160000 }, 'global base on local layers'],
    [{ global_attn_every_n_layers: 1 }, 'every layer global']]) {
    const m = await aw.loadModel(folder(patch));
    const w = worst((await m.embed(x.cases.map((c) => c.text))).data, 'cls');
    assert.ok(w > 10, `${what}: worst ${w} of the tolerance, expected far outside it`);
    m.dispose();
  }
});

test('what is not run is refused by name; the module keeps working', async () => {
  const refused = [
    [{ hidden_activation: 'silu' }, /^config\.hidden_activation: expected "gelu", got "silu"/],
    [{ norm_bias: true }, /^config\.norm_bias: expected false \(LayerNorms without bias/],
    [{ local_attention: 1 }, /^config\.local_attention: expected an integer in \[2, 1073741824\], got 1/],
    [{ num_attention_heads: 5 }, /^config\.num_attention_heads: expected a divisor of hidden_size \(32\) giving an even head size/],
    [{ layer_types: ['full_attention'] }, /^config\.layer_types: expected a list of num_hidden_layers \(4\) layer types/],
    [{ rope_parameters: { full_attention: { rope_type: 'yarn', rope_theta: 1 } } }, /^config\.rope_parameters\.full_attention: expected an object \{"rope_type": "default"/],
  ];
  for (const [patch, re] of refused) {
    await assert.rejects(aw.loadModel(folder(patch)), (e) => e.code === 'ERR_INVALID_ARGUMENT' && re.test(e.message), JSON.stringify(patch));
  }
  await assert.rejects(aw.loadModel(folder({ architectures: ['ModernBertForTokenClassification'] })),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^config\.architectures: ModernBertForTokenClassification, but the checkpoint has no classifier\.weight \(task: 'embed' loads its encoder\)/.test(e.message));
  await assert.rejects(aw.loadModel(EMBED, { task: 'classify' }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^task: 'classify' needs a classification checkpoint; this one has no classification head/.test(e.message));
  await assert.rejects(aw.loadModel(classifier({ classifier_pooling: 'max' })), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^config\.classifier_pooling: expected "cls" or "mean", got "max"/.test(e.message));
  await assert.rejects(aw.loadCausalLM(EMBED), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /modernbert/.test(e.message));
  const m = await aw.loadModel(folder({ architectures: ['ModernBertForTokenClassification'] }), { task: 'embed' });
  assert.equal((await m.embed(['still works'])).shape[1], 32);
  assert.throws(() => m.forward(), (e) => e.code === 'ERR_UNSUPPORTED' && /^forward: a ModernBERT embedder has no padded-batch forward/.test(e.message));
  m.dispose();
});
