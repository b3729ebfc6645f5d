// A decoder-based embedder (issue 42): a Qwen3-Embedding-shaped folder (tests/data/make_decoder_embedder_goldens.py:
// Qwen3Model's tensor names without "model.", a tokenizer that appends <|endoftext|>, last-token pooling, Normalize,
// the query instruction prompt) loads as an aw.DecoderEmbedder and embeds as sentence-transformers does, against the
// Qwen3 twin of tools/families.py in float64: within 1e-4 + 1e-4·|x|. Then the same hidden rows pooled by mean with
// the prompt left out (a variant folder), embedIds, and the refusals.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { worstOfCases } from './helpers.mjs';

const DIR = fileURLToPath(new URL('../data/goldens/decoder_embedders/qwen3_embedding/', import.meta.url));
const x = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8'));
const aw = await init({ threads: 1 });
after(() => aw.close());

/** The worst |got − want| / (atol + rtol·|want|) over rows. */
const worst = (data, rows, key) => worstOfCases(data, rows, key, x);

/** The folder's files as a Map, with `edit` applied (name → JSON or null to leave a file out). */
function folder(edit = {}) {
  const files = new Map();
  for (const name of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'modules.json', '1_Pooling/config.json',
    'config_sentence_transformers.json', 'sentence_bert_config.json']) {
    if (edit[name] === null) continue;
    files.set(name, edit[name] !== undefined ? new TextEncoder().encode(JSON.stringify(edit[name])) : readFileSync(join(DIR, name)));
  }
  return files;
}

test('a Qwen3-Embedding folder loads as a DecoderEmbedder and embeds as sentence-transformers does (last token, prompts, truncation)', async (t) => {
  const m = await aw.loadModel(DIR);
  assert.ok(m instanceof aw.DecoderEmbedder && m instanceof aw.Embedder);
  assert.equal(m.modelType, 'qwen3');
  assert.equal(m.pooling, 'lasttoken');
  assert.equal(m.normalize, true);
  assert.equal(m.dimension, 32);
  assert.equal(m.maxTokens, x.maxSeqLength);
  assert.deepEqual(m.prompts, x.prompts);
  assert.equal((await aw.inspect(DIR)).family.className, 'DecoderEmbedder', 'inspect names the face a load gives');
  // the ids: prompt + text, stripped, the tokenizer's <|endoftext|> last (kept when the text is cut to max_seq_length)
  const eot = m.tokenizer.tokenToId('<|endoftext|>');
  for (const c of x.cases) {
    const text = `${c.prompt ? x.prompts[c.prompt] : ''}${c.text}`.trim();
    assert.deepEqual([...m.tokenizer.encodeInputs(text, { maxLength: m.maxTokens }).inputIds], c.ids, JSON.stringify(c.text));
    assert.equal(c.ids.at(-1), eot);
  }
  assert.ok(x.cases.some((c) => c.ids.length === x.maxSeqLength), 'a text cut to max_seq_length');
  const queries = x.cases.filter((c) => c.prompt === 'query');
  const plain = x.cases.filter((c) => c.prompt === null);
  const q = await m.embed(queries.map((c) => c.text), { promptName: 'query', batchSize: 3 });
  const d = await m.embed(plain.map((c) => c.text));
  assert.deepEqual(q.shape, [queries.length, 32]);
  const w = Math.max(worst(q.data, queries, 'lasttoken'), worst(d.data, plain, 'lasttoken'));
  assert.ok(w <= 1, `worst ${w} of the tolerance`);
  t.diagnostic(`${x.cases.length} embeddings; worst / tolerance ${w.toFixed(4)}`);
  // the prompt given as text is the same as its name; embedIds of the same ids the same vectors
  const q2 = await m.embed(queries.map((c) => c.text), { prompt: x.prompts.query });
  assert.deepEqual(q2.data, q.data);
  const byIds = await m.embedIds(queries.map((c) => c.ids));
  assert.ok(worst(byIds.data, queries, 'lasttoken') <= 1);
  m.dispose();
});

test('the same rows pooled by mean with include_prompt false (a variant folder) and not normalized', async () => {
  const pooling = JSON.parse(readFileSync(join(DIR, '1_Pooling/config.json'), 'utf8'));
  const modules = JSON.parse(readFileSync(join(DIR, 'modules.json'), 'utf8')).filter((mod) => !mod.type.endsWith('Normalize'));
  const m = await aw.loadModel(folder({ '1_Pooling/config.json': { ...pooling, pooling_mode_lasttoken: false, pooling_mode_mean_tokens: true, include_prompt: false }, 'modules.json': modules }));
  assert.equal(m.pooling, 'mean');
  assert.equal(m.normalize, false);
  assert.equal(m.includePrompt, false);
  const queries = x.cases.filter((c) => c.prompt === 'query');
  const r = await m.embed(queries.map((c) => c.text), { promptName: 'query' });
  const w = worst(r.data, queries, 'meanWithoutPrompt');
  assert.ok(w <= 1, `worst ${w}`);
  m.dispose();
});

test('task and options: task embed on a plain causal LM folder; refusals name what is wrong; the module keeps working', async () => {
  // Without modules.json the folder is a CausalLM; task 'embed' makes it an embedder (sentence-transformers' defaults: mean).
  const lm = await aw.loadModel(folder({ 'modules.json': null }));
  assert.ok(lm instanceof aw.CausalLM);
  lm.dispose();
  // loadCausalLM asks for the generating face, sentence-transformers folder or not
  const gen = await aw.loadCausalLM(DIR);
  assert.ok(gen instanceof aw.CausalLM);
  gen.dispose();
  const e = await aw.loadModel(folder({ 'modules.json': null }), { task: 'embed', pooling: 'lasttoken', normalize: true });
  assert.ok(e instanceof aw.DecoderEmbedder);
  const plain = x.cases.filter((c) => c.prompt === null);
  assert.ok(worst((await e.embed(plain.map((c) => c.text))).data, plain, 'lasttoken') <= 1);
  assert.throws(() => e.forward({ inputIds: { data: Int32Array.of(1), shape: [1, 1] } }), { code: 'ERR_UNSUPPORTED', message: /forward: a decoder embedder/ });
  assert.throws(() => e.tokenize(['a']), { code: 'ERR_UNSUPPORTED' });
  await assert.rejects(e.embedIds([[1, 2], Array(200).fill(1)]), (err) => err instanceof RangeError && /idsList\[1\]: 200 tokens, more than the model's 128 positions/.test(err.message));
  await assert.rejects(e.embedIds([[1, 99999]]), (err) => /idsList\[0\]\[1\]: id 99999 is out of range/.test(err.message));
  assert.equal((await e.embedIds([[1, 2]])).shape[1], 32, 'still working');
  e.dispose();
  await assert.rejects(aw.loadModel(DIR, { task: 'classify' }), { code: 'ERR_INVALID_ARGUMENT', message: /task: 'classify' needs an encoder with a classification head; a causal LM/ });
  await assert.rejects(aw.loadModel(folder({ 'modules.json': null }), { pooling: 'mean' }), { code: 'ERR_INVALID_ARGUMENT', message: /pooling: only an embedder takes it/ });
});
