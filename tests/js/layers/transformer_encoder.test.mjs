// TransformerEncoder, the stack (bindings/transformer.js;
// src/layers/transformer.*): the PyTorch goldens
// (tests/data/goldens/transformer/enc_stack*), the error cases, the copy of
// its layer, and the threads test of the goldens.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new TransformerEncoder, .forward, .forwardWithAttention),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/layers/patch_embedding.test.mjs: 'golden vit_tiny.safetensors' (the encoder of the ViT stack)
//   native: tests/layers/transformer_encoder_test.cpp
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../../bindings/index.js';
import { assertGoldensThroughThreads, errorTests, randomTensor, transformerGoldenTests, transformerProbe } from '../helpers.mjs';

const aw = await init();
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'TransformerEncoder', 4);

const { enc, stillWorks } = transformerProbe(aw);
errorTests('layer error', [
  ['stack of a non-layer', () => new aw.TransformerEncoder({ dModel: 8 }, 2), 'ERR_INVALID_TYPE', /encoderLayer: expected a TransformerEncoderLayer/],
  ['stack with a mismatched norm', () => new aw.TransformerEncoder(enc, 2, { norm: new aw.LayerNorm(6) }), 'ERR_INVALID_ARGUMENT', /norm: expected LayerNorm\(8\)/],
], stillWorks);

test('stacks copy the layer weights like torch deepcopy, then own them', () => {
  const layer = new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 });
  const stack = new aw.TransformerEncoder(layer, 2);
  const sd = stack.stateDict();
  assert.deepEqual(sd['layers.1.linear1.weight'].data, layer.stateDict()['linear1.weight'].data);
  layer.dispose();  // the stack keeps working: it holds copies
  assert.equal(stack.forward(f32([3, 1, 8])).data.length, 24);
  stack.dispose();
});

test('the TransformerEncoder goldens pass through init({ threads: 2 })', () => {
  assertGoldensThroughThreads(mt, st, 'TransformerEncoder', 4);
});
