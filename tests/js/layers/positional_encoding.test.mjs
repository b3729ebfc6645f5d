// The positional encodings SinusoidalPositionalEncoding and
// LearnedPositionalEmbedding (bindings/layers.js;
// src/layers/positional_encoding.*): the PyTorch goldens
// (tests/data/goldens/transformer/sinusoidal_pe_*, learned_pe_*) and the
// error case.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new SinusoidalPositionalEncoding, new LearnedPositionalEmbedding,
//     their .forward), 'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/layers/patch_embedding.test.mjs: 'golden vit_tiny.safetensors' (a LearnedPositionalEmbedding in the ViT stack)
//   threads: no test of its own (elementwise: the same code in both builds)
//   native: no test
import { init } from '../../../bindings/index.js';
import { errorTests, randomTensor, transformerGoldenTests, transformerProbe } from '../helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'positional encodings', 4);

const { stillWorks } = transformerProbe(aw);
errorTests('layer error', [
  ['positions beyond maxLen', () => new aw.SinusoidalPositionalEncoding(8, { maxLen: 4 }).forward(f32([5, 1, 8])), 'ERR_SHAPE', /input: sequence length 5 exceeds maxLen = 4/],
], stillWorks);
