// TransformerDecoderLayer (bindings/transformer.js;
// src/layers/transformer_decoder_layer.*): the PyTorch goldens
// (tests/data/goldens/transformer/dec_layer_*), the error cases and the
// threads test of the goldens.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new TransformerDecoderLayer, .forward),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/soak.test.mjs
//   native: no test
import { test } from 'node:test';
import { init } from '../../../bindings/index.js';
import {
  assertGoldensThroughThreads, boolMask as bool, errorTests, randomTensor, transformerGoldenTests, transformerProbe,
} from '../helpers.mjs';

const aw = await init();
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'TransformerDecoderLayer', 6);

const { dec, src, mem, stillWorks } = transformerProbe(aw);
errorTests('layer error', [
  ['negative layerNormEps', () => new aw.TransformerDecoderLayer(8, 2, { layerNormEps: -1 }), 'ERR_OUT_OF_RANGE', /layerNormEps: expected a finite number >= 0/],
  ['memory batch', () => dec.forward(src, f32([3, 7, 8])), 'ERR_SHAPE', /memory: expected batch size N = 2 \(tgt's\), got \(3, 7, 8\)/],
  ['memoryKeyPaddingMask', () => dec.forward(src, mem, { memoryKeyPaddingMask: bool([2, 5]) }), 'ERR_SHAPE', /memoryKeyPaddingMask: expected \(2, 7\) = \(N, S\), got \(2, 5\)/],
  ['tgtIsCausal without tgtMask', () => dec.forward(src, mem, { tgtIsCausal: true }), 'ERR_INVALID_ARGUMENT', /tgtIsCausal: .* needs tgtMask/],
], stillWorks);

test('the TransformerDecoderLayer goldens pass through init({ threads: 2 })', () => {
  assertGoldensThroughThreads(mt, st, 'TransformerDecoderLayer', 6);
});
