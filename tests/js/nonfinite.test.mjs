// NaN and ±Infinity in input data are not errors: they propagate as in PyTorch.
// Goldens: tests/data/make_nonfinite_goldens.py (torch 1.13, fixed seed). The
// output must have NaN exactly where torch has NaN, the same infinities, and
// the finite values within 1e-5.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { decodeTensor, loadGoldens } from './helpers.mjs';

const aw = await init();
const TOL = 1e-5;
const golden = loadGoldens('nonfinite.json');

function run(c) {
  const x = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, decodeTensor(v)]));
  const state = c.state && Object.fromEntries(Object.entries(c.state).map(([k, v]) => [k, decodeTensor(v)]));
  const withModule = (m, f) => { try { m.loadStateDict(state); return f(m); } finally { m.dispose(); } };
  switch (c.op) {
    case 'sdpa': return aw.scaledDotProductAttention(x.query, x.key, x.value, { attnMask: x.attnMask ?? null }).output;
    case 'mha': return withModule(new aw.MultiheadAttention(c.args.embedDim, c.args.numHeads, { batchFirst: true }),
      (m) => m.forward(x.query, x.key, x.value, { needWeights: false }).output);
    case 'linear': return withModule(new aw.Linear(c.args.inFeatures, c.args.outFeatures), (m) => m.forward(x.input));
    case 'layernorm': return withModule(new aw.LayerNorm(c.args.normalizedShape), (m) => m.forward(x.input));
    case 'relu': return aw.relu(x.input);
    case 'gelu': return aw.gelu(x.input);
    case 'gelu_tanh': return aw.gelu(x.input, { approximate: 'tanh' });
    case 'encoder_layer': return withModule(new aw.TransformerEncoderLayer(c.args.dModel, c.args.nhead,
      { dimFeedforward: c.args.dimFeedforward, dropout: 0, batchFirst: true }), (m) => m.forward(x.src));
    default: throw new Error(`unknown op ${c.op}`);
  }
}

for (const c of golden.cases) {
  test(`non-finite: ${c.name}`, () => {
    const want = decodeTensor(c.expected);
    const got = run(c);
    assert.deepEqual(got.shape, want.shape);
    let nan = 0, inf = 0, worst = 0;
    for (let i = 0; i < want.data.length; i++) {
      const w = want.data[i], g = got.data[i];
      if (Number.isNaN(w)) { assert.ok(Number.isNaN(g), `[${i}]: torch NaN, got ${g}`); nan++; continue; }
      if (!Number.isFinite(w)) { assert.equal(g, w, `[${i}]: torch ${w}, got ${g}`); inf++; continue; }
      assert.ok(Number.isFinite(g), `[${i}]: torch ${w}, got ${g}`);
      worst = Math.max(worst, Math.abs(g - w));
    }
    assert.ok(worst <= TOL, `max abs error ${worst} > ${TOL}`);
    assert.ok(nan + inf > 0, 'the case must exercise a non-finite output');
  });
}
