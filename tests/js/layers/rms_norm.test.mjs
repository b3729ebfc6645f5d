// RMSNorm (bindings/blocks.js; src/layers/rms_norm.*): the PyTorch goldens
// (tests/data/goldens/lm/blocks/rmsnorm_*, tests/data/make_lm_goldens.py:
// torch.nn.RMSNorm's formula in float64, as torch 1.13 has no RMSNorm), its
// defaults and state dict, and the error cases.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new RMSNorm, RMSNorm.forward),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/rules.test.mjs: its range rules (normalizedShape, eps)
//   threads: no test of its own (rows normalised one by one, the same code in both builds)
//   native: tests/layers/rms_norm_test.cpp; its kernel: tests/kernels/rmsnorm_test.cpp
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../../bindings/index.js';
import { errorTests, lmBlockGoldenTests, randomTensor, transformerProbe } from '../helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

lmBlockGoldenTests(aw, 'RMSNorm', 9);

test('RMSNorm: torch defaults, the state dict, and normalizing over several trailing dims', () => {
  const n = new aw.RMSNorm([3, 8]);
  assert.equal(n.eps, null);  // torch's None: float32's epsilon 2^-23 at run time
  assert.equal(n.elementwiseAffine, true);
  assert.deepEqual(n.normalizedShape, [3, 8]);
  assert.deepEqual(n.parameterShapes(), { weight: [3, 8] });
  const sd = n.stateDict();
  assert.deepEqual(Array.from(sd.weight.data), new Array(24).fill(1));  // ones, as torch
  // One mean of squares over the 24 trailing elements of each row.
  const x = f32([2, 3, 8], 5);
  const y = n.forward(x);
  for (let r = 0; r < 2; r++) {
    let ss = 0;
    for (let j = 0; j < 24; j++) ss += x.data[r * 24 + j] ** 2;
    const inv = 1 / Math.sqrt(ss / 24 + 2 ** -23);
    for (let j = 0; j < 24; j++) assert.ok(Math.abs(y.data[r * 24 + j] - x.data[r * 24 + j] * inv) < 1e-6);
  }
  // A weight loaded scales each element; no weight without elementwiseAffine.
  sd.weight.data.fill(2);
  n.loadStateDict(sd);
  const y2 = n.forward(x);
  for (let i = 0; i < y.data.length; i++) assert.equal(y2.data[i], y.data[i] * 2);
  const plain = new aw.RMSNorm(8, { eps: 1e-6, elementwiseAffine: false });
  assert.deepEqual(plain.parameterShapes(), {});
  assert.deepEqual(plain.forward(f32([4, 8])).shape, [4, 8]);
  n.dispose();
  plain.dispose();
});

const { stillWorks } = transformerProbe(aw);
const norm = new aw.RMSNorm([3, 8]);
errorTests('layer error', [
  ['rmsnorm trailing dims', () => norm.forward(f32([2, 8, 3])), 'ERR_SHAPE', /input: expected \(…, normalizedShape\) with normalizedShape = \[3, 8\], got \(2, 8, 3\)/],
  ['rmsnorm rank too low', () => norm.forward(f32([8])), 'ERR_SHAPE', /input: expected \(…, normalizedShape\) .* got \(8,\)/],
  ['rmsnorm float64 input', () => norm.forward({ data: new Float64Array(24), shape: [3, 8] }), 'ERR_DTYPE', /input\.data: expected a Float32Array, got Float64Array/],
  ['rmsnorm shape not an int', () => new aw.RMSNorm([3, 'x']), 'ERR_INVALID_TYPE', /normalizedShape\[1\]: expected an integer, got string/],
  ['rmsnorm empty shape', () => new aw.RMSNorm([]), 'ERR_OUT_OF_RANGE', /normalizedShape: expected at least one dim, got \(\)/],
  ['rmsnorm zero dim', () => new aw.RMSNorm(0), 'ERR_OUT_OF_RANGE', /normalizedShape: expected an integer in \[1, 2147483647\], got 0/],
  ['rmsnorm eps negative', () => new aw.RMSNorm(8, { eps: -1 }), 'ERR_OUT_OF_RANGE', /eps: expected a finite number >= 0, got -1/],
  ['rmsnorm eps a string', () => new aw.RMSNorm(8, { eps: '1e-6' }), 'ERR_INVALID_TYPE', /eps: expected a number, got string/],
  ['rmsnorm unknown option', () => new aw.RMSNorm(8, { bias: true }), 'ERR_INVALID_TYPE', /unknown option 'bias'/],
  ['rmsnorm weight mis-shaped', () => norm.loadStateDict({ weight: f32([24]) }), 'ERR_STATE_DICT', /size mismatch for weight/],
], stillWorks);
