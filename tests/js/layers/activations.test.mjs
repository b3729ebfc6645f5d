// The activations relu, gelu and silu (functions and the ReLU / GELU / SiLU
// modules; bindings/layers.js, bindings/blocks.js, bindings/runtime.js): the
// PyTorch goldens (tests/data/goldens/transformer/relu*, gelu*;
// tests/data/goldens/lm/blocks/silu*), the non-finite goldens and torch's
// non-finite SiLU values, 'silu' as a Transformer layer's activation, and the
// error cases.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (relu, gelu, silu, new GELU, ReLU.forward, GELU.forward, SiLU.forward)
//   threads: no test of its own (elementwise: the same code in both builds)
//   native: no layer test; the kernels: tests/kernels/activation_test.cpp
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../../bindings/index.js';
import {
  assertSameBits, errorTests, lmBlockGoldenTests, nonFiniteTests, randomTensor, transformerGoldenTests, transformerProbe,
} from '../helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'activations', 3);
nonFiniteTests(aw, ['relu', 'gelu', 'gelu_tanh']);
lmBlockGoldenTests(aw, 'SiLU', 1);

test('silu: non-finite and extreme inputs as torch (float32 torch 1.13 values)', () => {
  // torch.nn.functional.silu: NaN → NaN, -inf → NaN (-inf / inf), inf → inf,
  // -100 → -0 (exp(100) overflows float), -88.7 → -2.667e-37 (it does not).
  const x = Float32Array.from([NaN, -Infinity, Infinity, -100, -88.7, 0, -0, 1, -1]);
  const y = aw.silu({ data: x, shape: [9] }).data;
  assert.ok(Number.isNaN(y[0]) && Number.isNaN(y[1]));
  assert.equal(y[2], Infinity);
  assert.ok(Object.is(y[3], -0));
  assert.ok(Math.abs(y[4] - -2.6668855444309843e-37) <= 1e-6 * 2.67e-37);
  assert.ok(Object.is(y[5], 0) && Object.is(y[6], -0));
  assert.ok(Math.abs(y[7] - 0.7310585975646973) <= 1e-6 * 0.731 && Math.abs(y[8] - -0.2689414322376251) <= 1e-6 * 0.269);
  assertSameBits(new aw.SiLU().forward({ data: x, shape: [3, 3] }), { data: y, shape: [3, 3] }, 'SiLU module = silu');
});

test("'silu' as a Transformer layer's activation: the feed-forward block with SiLU", () => {
  // torch: TransformerEncoderLayer(activation=F.silu). The layer against its
  // pieces with the same weights: x + linear2(silu(linear1(norm2(x + sa(norm1(x)))))) (pre-norm).
  const layer = new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, activation: 'silu', batchFirst: true, normFirst: true });
  const sd = layer.stateDict();
  const part = (prefix) => Object.fromEntries(Object.entries(sd).filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k.slice(prefix.length), v]));
  const sa = new aw.MultiheadAttention(8, 2, { batchFirst: true });
  const [l1, l2, n1, n2] = [new aw.Linear(8, 16), new aw.Linear(16, 8), new aw.LayerNorm(8), new aw.LayerNorm(8)];
  sa.loadStateDict(part('self_attn.'));
  l1.loadStateDict(part('linear1.'));
  l2.loadStateDict(part('linear2.'));
  n1.loadStateDict(part('norm1.'));
  n2.loadStateDict(part('norm2.'));
  const x = f32([2, 5, 8], 11);
  const add = (a, b) => ({ data: a.data.map((v, i) => v + b.data[i]), shape: a.shape });
  const h1 = n1.forward(x);
  const r1 = add(x, sa.forward(h1, h1, h1, { needWeights: false }).output);
  const want = add(r1, l2.forward(aw.silu(l1.forward(n2.forward(r1)))));
  const got = layer.forward(x);
  for (let i = 0; i < want.data.length; i++) assert.ok(Math.abs(got.data[i] - want.data[i]) <= 1e-5, `element ${i}: ${got.data[i]} vs ${want.data[i]}`);
  const relu = new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, batchFirst: true, normFirst: true });
  relu.loadStateDict(sd);
  assert.ok(relu.forward(x).data.some((v, i) => Math.abs(v - got.data[i]) > 1e-3), 'silu is not relu');
  for (const m of [layer, sa, l1, l2, n1, n2, relu]) m.dispose();
});

const { stillWorks } = transformerProbe(aw);
errorTests('layer error', [
  ['gelu approximate', () => aw.gelu(f32([3]), { approximate: 'sigmoid' }), 'ERR_OUT_OF_RANGE', /approximate: expected 'none' or 'tanh'/],
  ['silu float64 input', () => aw.silu({ data: new Float64Array(3), shape: [3] }), 'ERR_DTYPE', /input\.data: expected a Float32Array, got Float64Array/],
  ['silu not a tensor', () => new aw.SiLU().forward([1, 2]), 'ERR_INVALID_TYPE', /input: expected a tensor object/],
], stillWorks);
