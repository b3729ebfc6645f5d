// Transformer, the encoder–decoder (bindings/transformer.js;
// src/layers/transformer.*): the PyTorch goldens
// (tests/data/goldens/transformer/transformer_*, parameters in F32, F16 and
// BF16), the error cases and the threads test of the goldens.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new Transformer, Transformer.forward, Transformer.loadStateDict),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/memory.test.mjs: 'Transformer layers: forwards keep the heap flat (weights resident, scratch reused)'
//   tests/js/determinism.test.mjs
//   native: no test
import { test } from 'node:test';
import { init } from '../../../bindings/index.js';
import { assertGoldensThroughThreads, errorTests, randomTensor, transformerGoldenTests, transformerProbe } from '../helpers.mjs';

const aw = await init();
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'Transformer', 5);

const { stillWorks } = transformerProbe(aw);
const tf = new aw.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 16 });
errorTests('layer error', [
  ['Transformer batch mismatch', () => tf.forward(f32([5, 2, 8]), f32([4, 3, 8])), 'ERR_SHAPE', /tgt: the batch number of src and tgt must be equal/],
  ['Transformer state dict', () => tf.loadStateDict({ 'encoder.layers.0.linear1.weight': f32([16, 8]) }), 'ERR_STATE_DICT', /error\(s\) loading state_dict for Transformer: missing key\(s\): "encoder\.layers\.0\.self_attn\.in_proj_weight"/],
], stillWorks);

test('the Transformer goldens pass through init({ threads: 2 })', () => {
  assertGoldensThroughThreads(mt, st, 'Transformer', 5);
});
