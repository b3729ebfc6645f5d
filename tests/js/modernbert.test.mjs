// ModernBERT (issue 42): a gte-modernbert-shaped folder (tests/data/make_modernbert_goldens.py: 4.x config keys,
// ModernBertModel's tensor names, CLS pooling and Normalize) loads as an embedder and embeds as sentence-transformers
// does, against tools/modernbert.py's twin in float64 (whose padded batch was checked to give each text's rows):
// within 1e-4 + 1e-4·|x|. A ModernBertForMaskedLM save of the same encoder with 5.x's keys gives the mean of the same
// rows. The same weights with the window or the local RoPE base changed miss the goldens; what is not run is refused.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';

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
function worst(data, key, cases = x.cases) {
  let w = 0;
  cases.forEach((c, i) => {
    const want = c[key];
    for (let k = 0; k < want.length; k++) w = Math.max(w, Math.abs(data[i * want.length + k] - want[k]) / (x.atol + x.rtol * Math.abs(want[k])));
  });
  return w;
}

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
  await assert.rejects(aw.loadModel(folder({ architectures: ['ModernBertForSequenceClassification'] })),
    (e) => e.code === 'ERR_UNSUPPORTED' && /^config\.architectures: ModernBertForSequenceClassification: ModernBERT's classification heads are not run yet; task: 'embed'/.test(e.message));
  await assert.rejects(aw.loadModel(EMBED, { task: 'classify' }), (e) => e.code === 'ERR_UNSUPPORTED' && /^task: 'classify': ModernBERT's classification heads/.test(e.message));
  await assert.rejects(aw.loadCausalLM(EMBED), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /modernbert/.test(e.message));
  const m = await aw.loadModel(folder({ architectures: ['ModernBertForSequenceClassification'] }), { task: 'embed' });
  assert.equal((await m.embed(['still works'])).shape[1], 32);
  assert.throws(() => m.forward(), (e) => e.code === 'ERR_UNSUPPORTED' && /^forward: a ModernBERT embedder has no padded-batch forward/.test(e.message));
  m.dispose();
});
