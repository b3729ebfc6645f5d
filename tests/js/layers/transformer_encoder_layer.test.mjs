// TransformerEncoderLayer (bindings/transformer.js;
// src/layers/transformer_encoder_layer.*): the PyTorch goldens
// (tests/data/goldens/transformer/enc_layer_*), the non-finite golden, the
// error cases and the threads tests.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new TransformerEncoderLayer, .forward, .loadStateDict),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/determinism.test.mjs, tests/js/soak.test.mjs
//   native: tests/layers/transformer_encoder_layer_test.cpp
import { test } from 'node:test';
import { init } from '../../../bindings/index.js';
import {
  assertGoldensThroughThreads, assertSameBits, boolMask as bool, causalMask, errorTests, nonFiniteTests, randomTensor,
  transformerGoldenTests, transformerProbe,
} from '../helpers.mjs';

const aw = await init();
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'TransformerEncoderLayer', 7);
nonFiniteTests(aw, ['encoder_layer']);

// ---- errors: a message naming the argument with the layer's own names (srcMask rather than attnMask) ----

const { enc, src, stillWorks } = transformerProbe(aw);
errorTests('layer error', [
  ['nhead does not divide dModel', () => new aw.TransformerEncoderLayer(10, 3), 'ERR_INVALID_ARGUMENT', /dModel: must be divisible by nhead \(3\), got 10/],
  ['unknown activation', () => new aw.TransformerEncoderLayer(8, 2, { activation: 'tanh' }), 'ERR_OUT_OF_RANGE', /activation: expected 'relu', 'gelu', 'gelu_tanh' or 'silu', got 'tanh'/],
  ['torch option name', () => new aw.TransformerEncoderLayer(8, 2, { dim_feedforward: 16 }), 'ERR_INVALID_TYPE', /unknown option 'dim_feedforward'/],
  ['src dModel', () => enc.forward(f32([2, 5, 6])), 'ERR_SHAPE', /src: expected last dim dModel = 8, got \(2, 5, 6\)/],
  ['src rank', () => enc.forward(f32([5, 8, 2, 8])), 'ERR_SHAPE', /src: expected a 3-D \(N, S, dModel\) or 2-D \(S, dModel\) tensor, got \(5, 8, 2, 8\)/],
  ['srcMask shape', () => enc.forward(src, { srcMask: bool([5, 4]) }), 'ERR_SHAPE', /srcMask: expected \(L, S\) = \(5, 5\) or \(N\*numHeads, L, S\) = \(4, 5, 5\), got \(5, 4\)/],
  ['srcKeyPaddingMask shape', () => enc.forward(src, { srcKeyPaddingMask: bool([5, 2]) }), 'ERR_SHAPE', /srcKeyPaddingMask: expected \(2, 5\) = \(N, S\), got \(5, 2\)/],
  ['isCausal without srcMask', () => enc.forward(src, { isCausal: true }), 'ERR_INVALID_ARGUMENT', /isCausal: is a hint that srcMask is the causal mask and needs srcMask/],
], stillWorks);

// ---- threads ----

test('TransformerEncoderLayer: 2 threads are bit-identical to the single-thread build', () => {
  const cases = [
    { E: 64, H: 4, FF: 160, shape: [75, 2, 64], opts: { dimFeedforward: 160 } },
    { E: 96, H: 6, FF: 384, shape: [3, 41, 96], opts: { dimFeedforward: 384, batchFirst: true, normFirst: true, activation: 'gelu' } },
    { E: 256, H: 8, FF: 1024, shape: [256, 1, 256], opts: { dimFeedforward: 1024, activation: 'relu' } }, // bench S3
  ];
  for (const c of cases) {
    const a = new st.TransformerEncoderLayer(c.E, c.H, c.opts);
    const b = new mt.TransformerEncoderLayer(c.E, c.H, c.opts);
    try {
      const sd = a.stateDict();
      b.loadStateDict(sd);
      const x = randomTensor(c.shape, 3);
      assertSameBits(b.forward(x), a.forward(x), `encoder ${JSON.stringify(c.shape)}`);
      const L = c.opts.batchFirst ? c.shape[1] : c.shape[0];
      const withMask = { srcMask: causalMask(L), isCausal: true };
      assertSameBits(b.forward(x, withMask), a.forward(x, withMask), `encoder ${JSON.stringify(c.shape)} causal`);
    } finally {
      a.dispose();
      b.dispose();
    }
  }
});

test('the TransformerEncoderLayer goldens pass through init({ threads: 2 })', () => {
  assertGoldensThroughThreads(mt, st, 'TransformerEncoderLayer', 7);
});
