// sentence-transformers' Dense modules after the pooling (issue 42; tests/data/make_dense_goldens.py): an encoder
// golden folder with one Dense (tanh) and Normalize, and one with two Dense (identity, no bias) and no Normalize,
// loaded as a user loads them; embed() against Dense.forward (and F.normalize) applied by torch to the folder's
// pooled embeddings. Bad modules are refused by file and key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { init } from '../../bindings/index.js';

const DIR = new URL('../data/goldens/dense/', import.meta.url);
const aw = await init({ threads: 1 });

function tensor(t) {
  const b = Buffer.from(t.base64, 'base64');
  return { data: new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)), shape: t.shape };
}

/** A golden folder's files as a Map (path → bytes), with `replace` (path → object, bytes, or null to drop). */
function folderMap(name, replace = {}) {
  const m = new Map();
  const walk = (rel) => {
    for (const e of readdirSync(new URL(`${name}/${rel}`, DIR))) {
      const p = `${rel}${e}`;
      if (statSync(new URL(`${name}/${p}`, DIR)).isDirectory()) walk(`${p}/`);
      else if (p !== 'expected.json') m.set(p, readFileSync(new URL(`${name}/${p}`, DIR)));
    }
  };
  walk('');
  for (const [k, v] of Object.entries(replace)) {
    if (v === null) m.delete(k);
    else m.set(k, v instanceof Uint8Array ? v : new TextEncoder().encode(JSON.stringify(v)));
  }
  return m;
}

for (const name of ['bert_dense_tanh_norm', 'bert_two_dense']) {
  test(`golden ${name}`, async () => {
    const x = JSON.parse(readFileSync(new URL(`${name}/expected.json`, DIR), 'utf8'));
    const e = await aw.loadModel(new URL(name, DIR).pathname);
    assert.ok(e instanceof aw.Embedder);
    assert.deepEqual(e.dense.map((d) => [d.inFeatures, d.outFeatures, d.activation]), x.dense.map((d) => [d.in, d.out, d.activation]));
    assert.equal(e.normalize, x.normalize);
    const want = tensor(x.sentenceEmbedding);
    assert.equal(e.dimension, want.shape[1]);
    const got = await e.embed(x.texts, { batchSize: 3 });
    assert.deepEqual(got.shape, want.shape);
    let worst = 0;
    want.data.forEach((w, i) => {
      const r = Math.abs(got.data[i] - w) / (x.tolerance.atol + x.tolerance.rtol * Math.abs(w));
      assert.ok(r <= 1, `[${i}] ${got.data[i]} vs ${w}`);
      worst = Math.max(worst, r);
    });
    // normalize: false leaves the Dense output as it is; true normalizes it.
    const raw = await e.embed(x.texts.slice(0, 2), { normalize: false });
    const norm = await e.embed(x.texts.slice(0, 2), { normalize: true });
    const d = e.dimension;
    for (let i = 0; i < 2; i++) {
      const row = raw.data.subarray(i * d, (i + 1) * d);
      const n = Math.hypot(...row);
      row.forEach((v, k) => assert.ok(Math.abs(v / n - norm.data[i * d + k]) < 1e-6));
    }
    e.dispose();
  });
}

test('Dense modules that cannot be run as saved are refused by file and key', async () => {
  const name = 'bert_dense_tanh_norm';
  const cfg = JSON.parse(readFileSync(new URL(`${name}/2_Dense/config.json`, DIR), 'utf8'));
  const cases = [
    [{ '2_Dense/config.json': { ...cfg, activation_function: 'torch.nn.modules.activation.Softplus' } }, 'ERR_UNSUPPORTED', /2_Dense\/config\.json: activation_function: expected one of .*Softplus/],
    [{ '2_Dense/config.json': { ...cfg, in_features: 31 } }, 'ERR_INVALID_ARGUMENT', /2_Dense\/config\.json: in_features: expected the vectors' size before it \(32\), got 31/],
    [{ '2_Dense/config.json': null }, 'ERR_INVALID_ARGUMENT', /2_Dense\/config\.json, the Dense module's config named by modules\.json, is not in the folder/],
    [{ '2_Dense/model.safetensors': null, '2_Dense/pytorch_model.bin': new Uint8Array([0x80, 2]) }, 'ERR_UNSUPPORTED', /2_Dense\/pytorch_model\.bin: a pickle is not read/],
    [{ '2_Dense/model.safetensors': null }, 'ERR_INVALID_ARGUMENT', /2_Dense\/model\.safetensors, the Dense module's weights, is not in the folder/],
    [{ '2_Dense/config.json': { ...cfg, out_features: 17 } }, 'ERR_INVALID_ARGUMENT', /linear\.weight: expected a float tensor of shape \[17,32\]/],
    [{ '2_Dense/model.safetensors': new Uint8Array(8) }, 'ERR_INVALID_ARGUMENT', /2_Dense\/model\.safetensors: /],
  ];
  for (const [replace, code, re] of cases) {
    await assert.rejects(aw.loadModel(folderMap(name, replace)), (err) => err.code === code && re.test(err.message), `${Object.keys(replace)}: ${re}`);
  }
  // Dense before Pooling: the order is sentence-transformers' only.
  const modules = JSON.parse(readFileSync(new URL(`${name}/modules.json`, DIR), 'utf8'));
  await assert.rejects(aw.loadModel(folderMap(name, { 'modules.json': [modules[0], modules[2], modules[1], modules[3]] })),
    (err) => err.code === 'ERR_UNSUPPORTED' && /expected the modules Transformer, Pooling, any Dense and optionally Normalize, in that order, got Transformer, Dense, Pooling, Normalize/.test(err.message));
  // Still loads as it is.
  const e = await aw.loadModel(folderMap(name));
  assert.equal(e.dimension, 16);
  e.dispose();
});
