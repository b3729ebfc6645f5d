// LayerNorm (bindings/layers.js; src/layers/layer_norm.*): the PyTorch
// goldens (tests/data/goldens/transformer/layernorm_*), the non-finite golden
// and the error case.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new LayerNorm, LayerNorm.forward),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/layers/transformer_encoder.test.mjs: 'layer error: stack with a mismatched norm'
//   tests/js/soak.test.mjs
//   threads: no test of its own (elementwise: the same code in both builds)
//   native: no layer test; its kernel: tests/kernels/layernorm_test.cpp
import { init } from '../../../bindings/index.js';
import { errorTests, nonFiniteTests, randomTensor, transformerGoldenTests, transformerProbe } from '../helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'LayerNorm', 2);
nonFiniteTests(aw, ['layernorm']);

const { stillWorks } = transformerProbe(aw);
errorTests('layer error', [
  ['layernorm size', () => new aw.LayerNorm(4).forward(f32([3, 5])), 'ERR_SHAPE', /input: expected \(…, normalizedShape\) with normalizedShape = 4, got \(3, 5\)/],
], stillWorks);
