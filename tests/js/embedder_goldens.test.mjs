// aw.Embedder against the torch twin (tools/bert.py) on the hub-style folders of tests/data/goldens/encoders/
// (tests/data/make_encoder_goldens.py): each folder loaded as a user loads it (its path), the tokenizer's ids,
// forward()'s lastHiddenState and poolerOutput (the padded batch, pads included, and hand-made batches: left
// padding, token types 1), embed()'s embeddings before and after Normalize, every pooling mode and a
// concatenation, sentence-transformers' prompt with include_prompt false, the config.json of other
// transformers generations, dtype q8's cost; refusals.json through loadEmbedder, a test per case.
// Tolerance: |got − expected| ≤ 1e-4 + 1e-4·|expected| (expected.json's), the references being float64
// forwards rounded to float32; float32 torch itself is within 0.7 % of that (checks.float32MaxRatio).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { init } from '../../bindings/index.js';

const DIR = new URL('../data/goldens/encoders/', import.meta.url);
const CASES = existsSync(DIR) ? readdirSync(DIR).filter((n) => existsSync(new URL(`${n}/expected.json`, DIR))).sort() : [];
const aw = await init({ threads: 1 });

/** A golden tensor {dtype F32, shape, base64} → { data: Float32Array, shape }. */
function tensor(t) {
  const b = Buffer.from(t.base64, 'base64');
  return { data: new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)), shape: t.shape };
}
/** (n, T) nested arrays → an Int32 tensor. */
const ids = (rows) => ({ data: Int32Array.from(rows.flat()), shape: [rows.length, rows[0].length] });

/**
 * Elementwise |got − want| ≤ atol + rtol·|want|, the first mismatches named by index; returns the worst ratio
 * to the tolerance (≤ 1 passes).
 */
function close(got, want, tol, what) {
  assert.deepEqual(got.shape, want.shape, `${what}: shape`);
  let worst = 0;
  const bad = [];
  for (let i = 0; i < want.data.length; i++) {
    const r = Math.abs(got.data[i] - want.data[i]) / (tol.atol + tol.rtol * Math.abs(want.data[i]));
    if (!(r <= 1) && bad.length < 5) bad.push(`[${i}] ${got.data[i]} vs ${want.data[i]}`);
    worst = Math.max(worst, Number.isNaN(r) ? Infinity : r);
  }
  assert.equal(bad.length, 0, `${what}: beyond the tolerance at ${bad.join(', ')}`);
  return worst;
}

/** The folder's files as a Map of path → bytes (to load it with one file replaced). */
function folderMap(name, replace = {}) {
  const m = new Map();
  const walk = (rel) => {
    for (const e of readdirSync(new URL(`${name}/${rel}`, DIR), { withFileTypes: true })) {
      if (e.isDirectory()) walk(`${rel}${e.name}/`);
      else if (e.name !== 'expected.json') m.set(`${rel}${e.name}`, readFileSync(new URL(`${name}/${rel}${e.name}`, DIR)));
    }
  };
  walk('');
  for (const [k, v] of Object.entries(replace)) m.set(k, new TextEncoder().encode(JSON.stringify(v)));
  return m;
}

const ORDER = ['cls', 'max', 'mean', 'mean_sqrt_len', 'weightedmean', 'lasttoken'];
const modeName = (m) => (m === 'mean_sqrt_len_tokens' ? 'mean_sqrt_len' : m);
const poolingOf = (modes) => ORDER.filter((m) => modes.map(modeName).includes(m)).join('+');

test('goldens are present', { skip: CASES.length ? false : 'tests/data/goldens/encoders/ not made yet' }, () => {
  assert.ok(CASES.length >= 5, CASES.join(', '));
});

for (const name of CASES) {
  test(`golden ${name}`, async (t) => {
    const x = JSON.parse(readFileSync(new URL(`${name}/expected.json`, DIR), 'utf8'));
    const tol = x.tolerance, st = x.sentenceTransformers;
    const path = new URL(name, DIR).pathname;
    const e = await aw.loadModel(path, st.loadOptions);
    assert.ok(e instanceof aw.Embedder);
    const worst = {};
    // The model and the folder as read.
    assert.deepEqual([e.modelType, e.hiddenSize, e.numLayers, e.numHeads, e.vocabSize, e.maxPositions, e.typeVocabSize, e.padTokenId, e.hasPooler],
      [x.model.modelType, x.model.hidden, x.model.layers, x.model.heads, x.model.vocab, x.model.maxPositions, x.model.typeVocab, x.model.padTokenId, x.model.pooler]);
    assert.deepEqual([e.maxTokens, e.doLowerCase, e.pooling, e.normalize, e.includePrompt],
      [st.maxSeqLength, st.doLowerCase, poolingOf(st.pooling.modes), st.normalize, st.pooling.includePrompt]);
    // The tokenizer: the padded batch as transformers' tokenizer gives it (the Rust library's ids).
    const batch = e.tokenize(x.texts);
    for (const k of ['inputIds', 'attentionMask', 'tokenTypeIds']) assert.deepEqual(batch[k], ids(x.tokens.padded[k]), `tokens.padded.${k}`);
    // forward(): every position, pads included.
    const f = e.forward(batch);
    worst.lastHiddenState = close(f.lastHiddenState, tensor(x.lastHiddenState), tol, 'lastHiddenState');
    if (x.poolerOutput) worst.poolerOutput = close(f.poolerOutput, tensor(x.poolerOutput), tol, 'poolerOutput');
    else assert.equal(f.poolerOutput, null);
    x.forwardCases.forEach((c, i) => {
      const o = e.forward({ inputIds: ids(c.inputIds), attentionMask: ids(c.attentionMask), tokenTypeIds: ids(c.tokenTypeIds) });
      worst[`forwardCases[${i}]`] = close(o.lastHiddenState, tensor(c.lastHiddenState), tol, `forwardCases[${i}].lastHiddenState`);
      if (c.poolerOutput) close(o.poolerOutput, tensor(c.poolerOutput), tol, `forwardCases[${i}].poolerOutput`);
    });
    // embed(): what SentenceTransformer.encode returns, and the pooled vectors before Normalize.
    const emb = await e.embed(x.texts);
    worst.sentenceEmbedding = close(emb, tensor(x.sentenceEmbedding), tol, 'sentenceEmbedding');
    worst.pooled = close(await e.embed(x.texts, { normalize: false, batchSize: 3 }), tensor(x.pooled), tol, 'pooled');
    // The same ids through embedIds: the same bits.
    const same = await e.embedIds(x.tokens.ids);
    assert.deepEqual(same, emb, 'embedIds(tokens.ids)');
    e.dispose();
    // Every pooling mode and a concatenation on the same texts (not normalized); the include_prompt variant
    // is `prompted` below (a prompt is how a user reaches it).
    for (const [k, v] of Object.entries(x.poolingVariants ?? {})) {
      if (v.promptLength != null) continue;
      const modes = Object.entries(v.pooling).filter(([key, on]) => key.startsWith('pooling_mode_') && on)
        .map(([key]) => ({ pooling_mode_cls_token: 'cls', pooling_mode_mean_tokens: 'mean', pooling_mode_max_tokens: 'max',
          pooling_mode_mean_sqrt_len_tokens: 'mean_sqrt_len', pooling_mode_weightedmean_tokens: 'weightedmean', pooling_mode_lasttoken: 'lasttoken' })[key]);
      const m = await aw.loadModel(path, { pooling: modes.join('+'), normalize: false });
      worst[`poolingVariants.${k}`] = close(await m.embed(x.texts), tensor(v.embedding), tol, `poolingVariants.${k}`);
      m.dispose();
    }
    // encode(texts, prompt=…) with include_prompt false: the folder with that Pooling config.
    if (x.prompted) {
      const p = x.prompted;
      const m = await aw.loadModel(folderMap(name, { '1_Pooling/config.json': p.pooling }));
      const texts = p.texts.map((s) => s.slice(p.prompt.length));
      const tk = m.tokenize(texts, { prompt: p.prompt });
      assert.deepEqual(tk.inputIds, ids(p.tokens.inputIds), 'prompted.tokens.inputIds');
      assert.equal(m._promptLength(p.prompt), p.promptLength, 'promptLength');
      close(m.forward(tk).lastHiddenState, tensor(p.lastHiddenState), tol, 'prompted.lastHiddenState');
      worst.prompted = close(await m.embed(texts, { prompt: p.prompt }), tensor(p.embedding), tol, 'prompted.embedding');
      m.dispose();
    }
    // config.json as other transformers generations write it: the same model, the same bits.
    for (const [gen, config] of Object.entries(x.configVariants ?? {})) {
      const m = await aw.loadModel(folderMap(name, { 'config.json': config }), st.loadOptions);
      assert.deepEqual(await m.embed(x.texts), emb, `configVariants.${gen}`);
      m.dispose();
    }
    // dtype q8: its cost on the embeddings, the mean cosine to float32's.
    const q = await aw.loadModel(path, { ...st.loadOptions, dtype: 'q8' });
    const qe = await q.embed(x.texts, { normalize: false });
    const fe = await aw.loadModel(path, st.loadOptions).then(async (m) => { const r = await m.embed(x.texts, { normalize: false }); m.dispose(); return r; });
    const cos = aw.cosineSimilarity(qe, fe);
    const n = x.texts.length;
    let mean = 0, min = 1;
    for (let i = 0; i < n; i++) { mean += cos.data[i * n + i] / n; min = Math.min(min, cos.data[i * n + i]); }
    q.dispose();
    assert.ok(mean > 0.99, `q8: mean cosine ${mean}`);
    t.diagnostic(`worst error / tolerance: ${Object.entries(worst).map(([k, v]) => `${k} ${v.toFixed(4)}`).join(', ')}`);
    t.diagnostic(`q8: mean cosine to float32 ${mean.toFixed(6)}, min ${min.toFixed(6)}`);
  });
}

const REFUSALS = new URL('refusals.json', DIR);
// Cases the native loader (src/io/encoder_config.cpp, src/models/load_model.cpp) does not meet yet.
const refusals = existsSync(REFUSALS) ? JSON.parse(readFileSync(REFUSALS, 'utf8')) : { cases: [] };
for (const c of refusals.cases) {
  test(`refusals.json: ${c.name} (${c.expect})`, async () => {
    const weights = new Uint8Array(Buffer.from(c.weights ?? refusals.checkpoint, 'base64'));
    let error = null;
    try {
      (await aw.loadEmbedder(weights, { config: c.config })).dispose();
    } catch (err) {
      error = err;
    }
    if (c.expect === 'accepted') assert.equal(error, null, `refused: ${error?.message}`);
    else {
      assert.ok(error, 'accepted');
      assert.ok(c.errorMentions.some((m) => error.message.includes(m)), `the message names none of ${c.errorMentions.join(', ')}: ${error.message}`);
    }
  });
}
