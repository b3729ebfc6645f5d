// RotaryPositionalEmbeddings (bindings/blocks.js; src/layers/rotary.*): the
// PyTorch goldens (tests/data/goldens/lm/blocks/rope_*, tests/data/
// make_lm_goldens.py: torchtune's and Hugging Face's formulas, float32 angles,
// float64 cos/sin; positions near 65 535 that a float64 angle fails), the
// errors (shapes, dtypes, positions out of [0, maxSeqLen): a RangeError naming
// inputPos and the index, the module still usable), and 2 threads
// bit-identical to the single-thread build.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new RotaryPositionalEmbeddings, .forward),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/rules.test.mjs: its range rules (dim, maxSeqLen, base)
//   native: tests/layers/rotary_test.cpp (theta bit for bit, the model's entry points, pieces, threads);
//     the rotation kernels: tests/kernels/rope_test.cpp
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../../bindings/index.js';
import { assertGoldensThroughThreads, assertSameBits, errorTests, lmBlockGoldenTests, randomTensor } from '../helpers.mjs';

const aw = await init();
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });
const f32 = (shape, seed = 1) => randomTensor(shape, seed);
const pos = (shape, f) => ({ data: Int32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => f(i)), shape });

lmBlockGoldenTests(aw, 'RotaryPositionalEmbeddings', 11);

test('RotaryPositionalEmbeddings: torchtune defaults, no parameters, positions default to 0 … S-1', () => {
  const rope = new aw.RotaryPositionalEmbeddings(8);
  assert.deepEqual([rope.dim, rope.maxSeqLen, rope.base, rope.interleaved], [8, 4096, 10000, true]);
  assert.deepEqual(rope.stateDict(), {});
  rope.loadStateDict({});
  const x = f32([2, 5, 3, 8], 3);
  assertSameBits(rope.forward(x), rope.forward(x, { inputPos: pos([5], (i) => i) }), 'absent = arange(S)');
  assertSameBits(rope.forward(x), rope.forward(x, { inputPos: pos([2, 5], (i) => i % 5) }), '(S) = (B, S) repeated');
  // Position 0 is the identity.
  assertSameBits(rope.forward(f32([1, 1, 2, 8], 4)), f32([1, 1, 2, 8], 4), 'position 0');
  rope.dispose();
});

test('RotaryPositionalEmbeddings: 2 threads are bit-identical to the single-thread build', () => {
  for (const interleaved of [true, false]) {
    const x = f32([3, 200, 4, 64], 7);
    const inputs = [undefined, { inputPos: pos([200], (i) => (i * 37) % 4096) }, { inputPos: pos([3, 200], (i) => (i * 53) % 4096) }];
    for (const o of inputs) {
      const [a, b] = [st, mt].map((rt) => {
        const rope = new rt.RotaryPositionalEmbeddings(64, { interleaved });
        try { return rope.forward(x, o); } finally { rope.dispose(); }
      });
      assertSameBits(b, a, `interleaved ${interleaved}, inputPos ${o ? o.inputPos.shape : 'absent'}`);
    }
  }
});

test('the RoPE goldens pass through init({ threads: 2 })', () => {
  assertGoldensThroughThreads(mt, st, 'RotaryPositionalEmbeddings', 11, 'lm');
});

const rope = new aw.RotaryPositionalEmbeddings(8, { maxSeqLen: 16 });
const x = f32([2, 5, 3, 8], 9);
const ref = rope.forward(x, { inputPos: pos([2, 5], (i) => i) });
const stillWorks = () => assertSameBits(rope.forward(x, { inputPos: pos([2, 5], (i) => i) }), ref, 'after the error');
errorTests('layer error', [
  ['rope position = maxSeqLen', () => rope.forward(x, { inputPos: pos([2, 5], (i) => (i === 7 ? 16 : i)) }), 'ERR_OUT_OF_RANGE', /inputPos: position 16 at index \(1, 2\) is out of range \[0, maxSeqLen = 16\)/],
  ['rope negative position', () => rope.forward(x, { inputPos: pos([5], (i) => i - 1) }), 'ERR_OUT_OF_RANGE', /inputPos: position -1 at index \(0\) is out of range \[0, maxSeqLen = 16\)/],
  ['rope S past maxSeqLen without inputPos', () => rope.forward(f32([1, 17, 1, 8])), 'ERR_OUT_OF_RANGE', /input: S = 17 positions .* exceed maxSeqLen = 16/],
  ['rope positions as floats', () => rope.forward(x, { inputPos: f32([2, 5]) }), 'ERR_DTYPE', /inputPos\.data: expected an Int32Array/],
  ['rope positions shape', () => rope.forward(x, { inputPos: pos([5, 2], (i) => i) }), 'ERR_SHAPE', /inputPos: expected \(B, S\) = \(2, 5\) or \(S\) = \(5,\), got \(5, 2\)/],
  ['rope x rank 3', () => rope.forward(f32([2, 5, 24])), 'ERR_SHAPE', /input: expected \(B, S, H, dim\) with dim = 8, got \(2, 5, 24\)/],
  ['rope x last dim', () => rope.forward(f32([2, 5, 3, 6])), 'ERR_SHAPE', /input: expected \(B, S, H, dim\) with dim = 8, got \(2, 5, 3, 6\)/],
  ['rope x float64', () => rope.forward({ data: new Float64Array(240), shape: [2, 5, 3, 8] }), 'ERR_DTYPE', /input\.data: expected a Float32Array/],
  ['rope odd dim', () => new aw.RotaryPositionalEmbeddings(7), 'ERR_INVALID_ARGUMENT', /dim: expected an even number \(RoPE rotates pairs of elements\), got 7/],
  ['rope base 0', () => new aw.RotaryPositionalEmbeddings(8, { base: 0 }), 'ERR_OUT_OF_RANGE', /base: expected a finite number > 0, got 0/],
  ['rope maxSeqLen 0', () => new aw.RotaryPositionalEmbeddings(8, { maxSeqLen: 0 }), 'ERR_OUT_OF_RANGE', /maxSeqLen: expected an integer in \[1, 2147483647\], got 0/],
  ['rope interleaved not bool', () => new aw.RotaryPositionalEmbeddings(8, { interleaved: 'yes' }), 'ERR_INVALID_TYPE', /interleaved: expected a boolean, got string/],
  ['rope unknown forward option', () => rope.forward(x, { input_pos: null }), 'ERR_INVALID_TYPE', /unknown option 'input_pos'/],
], stillWorks);
