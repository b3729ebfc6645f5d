// EmbeddingGemma (issue 42): a gemma3_text checkpoint with use_bidirectional_attention (tests/data/
// make_decoder_embedder_goldens.py gemma_main: Gemma3TextModel's tensor names, sliding layers whose stored window 10
// is |i − j| < 6 once Gemma3TextConfig halves it, <bos> text <eos>, mean pooling, 2_Dense and 3_Dense, Normalize,
// its prompts) loads as an aw.DecoderEmbedder and embeds as sentence-transformers does, against tools/families.py's
// gemma3_text twin in float64: within 1e-4 + 1e-4·|x|. The same weights read causally, or without the window, miss
// the goldens (so the test sees the attention's direction and band); generating from it is refused; its tokenizer's
// added token past vocab_size (Gemma 3's <image_soft_token>) loads, and is refused by name when a text spells it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { worstOfCases } from './helpers.mjs';

const DIR = fileURLToPath(new URL('../data/goldens/decoder_embedders/embeddinggemma/', import.meta.url));
const x = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8'));
const aw = await init({ threads: 1 });
after(() => aw.close());

const FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'modules.json', '1_Pooling/config.json',
  '2_Dense/config.json', '2_Dense/model.safetensors', '3_Dense/config.json', '3_Dense/model.safetensors',
  'config_sentence_transformers.json', 'sentence_bert_config.json'];

/** The folder as a Map with config.json's keys patched. */
function folder(patch = {}) {
  const files = new Map(FILES.map((n) => [n, readFileSync(join(DIR, n))]));
  const config = { ...JSON.parse(readFileSync(join(DIR, 'config.json'), 'utf8')), ...patch };
  files.set('config.json', new TextEncoder().encode(JSON.stringify(config)));
  return files;
}

/** The worst |got − want| / (atol + rtol·|want|) over the cases. */
const worst = (data, cases) => worstOfCases(data, cases, 'embedding', x);

/** Every case's embedding, each group of prompts in one call. */
async function embedAll(m) {
  const out = new Float32Array(x.cases.length * m.dimension);
  for (const prompt of ['query', 'document', null]) {
    const idx = x.cases.flatMap((c, i) => (c.prompt === prompt ? [i] : []));
    const r = await m.embed(idx.map((i) => x.cases[i].text), prompt ? { promptName: prompt, batchSize: 4 } : {});
    idx.forEach((i, k) => out.set(r.data.subarray(k * m.dimension, (k + 1) * m.dimension), i * m.dimension));
  }
  return out;
}

test('an EmbeddingGemma folder loads as a DecoderEmbedder and embeds as sentence-transformers does (bidirectional, window, Dense)', async (t) => {
  const m = await aw.loadModel(DIR);
  assert.ok(m instanceof aw.DecoderEmbedder);
  assert.equal(m.modelType, 'gemma3_text');
  assert.equal(m.pooling, 'mean');
  assert.equal(m.normalize, true);
  assert.equal(m.dimension, 32);
  assert.deepEqual(m.prompts, x.prompts);
  assert.equal((await aw.inspect(DIR)).family.className, 'DecoderEmbedder');
  const bos = m.tokenizer.tokenToId('<bos>'), eos = m.tokenizer.tokenToId('<eos>');
  for (const c of x.cases) {
    const text = `${c.prompt ? x.prompts[c.prompt] : ''}${c.text}`.trim();
    assert.deepEqual([...m.tokenizer.encodeInputs(text, { maxLength: m.maxTokens }).inputIds], c.ids, JSON.stringify(c.text));
    assert.equal(c.ids[0], bos);
    assert.equal(c.ids.at(-1), eos);
  }
  const w = worst(await embedAll(m), x.cases);
  assert.ok(w <= 1, `worst ${w} of the tolerance`);
  t.diagnostic(`${x.cases.length} embeddings of 3 to ${Math.max(...x.cases.map((c) => c.ids.length))} tokens; worst / tolerance ${w.toFixed(4)}`);
  // embedIds: the same ids, the same vectors
  const byIds = await m.embedIds(x.cases.map((c) => c.ids));
  assert.ok(worst(byIds.data, x.cases) <= 1);
  m.dispose();
});

test('the same weights read causally, or with a window wider than every text, miss the goldens', async () => {
  for (const [patch, what] of [[{ use_bidirectional_attention: false }, 'causal'], [{ sliding_window: 200 }, 'no band']]) {
    const m = await aw.loadModel(folder(patch), { task: 'embed' });
    const w = worst(await embedAll(m), x.cases);
    assert.ok(w > 100, `${what}: worst ${w} of the tolerance, expected far outside it`);
    m.dispose();
  }
});

test('a bidirectional checkpoint does not generate: loadCausalLM and other tasks are refused; the module keeps working', async () => {
  await assert.rejects(aw.loadCausalLM(folder()), (e) => e.code === 'ERR_INVALID_ARGUMENT' &&
    /^loadCausalLM: this checkpoint's attention is bidirectional \(config\.use_bidirectional_attention, as EmbeddingGemma's\): it embeds and does not generate; aw\.loadModel gives its DecoderEmbedder/.test(e.message));
  await assert.rejects(aw.loadModel(folder(), { task: 'classify' }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^task 'classify': this checkpoint's attention is bidirectional/.test(e.message));
  await assert.rejects(aw.loadModel(folder({ use_bidirectional_attention: 'yes' })), (e) => /config\.use_bidirectional_attention: expected a boolean, got "yes"/.test(e.message));
  const m = await aw.loadModel(folder());
  // its tokenizer has an added token past vocab_size (as Gemma 3's <image_soft_token>): loads, and a text that spells it is refused by name
  await assert.rejects(m.embed(['fine', 'see <image_soft_token> here']), (e) => e.code === 'ERR_INVALID_ARGUMENT' &&
    /^texts\[1\]\[\d+\]: id \d+ is out of range \[0, \d+\) \(the tokenizer's "<image_soft_token>", which the model's vocabulary does not have\)$/.test(e.message));
  const r = await m.embed(['still works']);
  assert.equal(r.shape[1], 32);
  m.dispose();
});
