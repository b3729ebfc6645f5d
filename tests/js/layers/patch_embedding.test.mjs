// PatchEmbedding (bindings/layers.js; src/layers/patch_embedding.*): the
// PyTorch goldens (tests/data/goldens/transformer/patch_embed_*, and
// vit_tiny: patch embedding → learned positions → TransformerEncoder → Linear
// head, the stack the digit classifier uses) and the error cases.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new PatchEmbedding, PatchEmbedding.forward),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   threads: no test of its own; its GEMM is split over threads by src/ops/parallel_gemm (tests/ops/parallel_gemm_test.cpp)
//   native: no test
import { init } from '../../../bindings/index.js';
import { errorTests, randomTensor, transformerGoldenTests, transformerProbe } from '../helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'PatchEmbedding', 4);

const { stillWorks } = transformerProbe(aw);
errorTests('layer error', [
  ['patch channels', () => new aw.PatchEmbedding(1, 8, 4).forward(f32([1, 3, 28, 28])), 'ERR_SHAPE', /images: expected C = inChannels = 1 channels, got \(1, 3, 28, 28\)/],
  ['image smaller than a patch', () => new aw.PatchEmbedding(1, 8, 4).forward(f32([1, 1, 3, 28])), 'ERR_SHAPE', /images: expected H and W >= patchSize = 4/],
], stillWorks);
