// The activations relu and gelu (functions and the ReLU / GELU modules;
// bindings/layers.js, bindings/runtime.js): the PyTorch goldens
// (tests/data/goldens/transformer/relu*, gelu*), the non-finite goldens and
// the error case.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (relu, gelu, new GELU, ReLU.forward, GELU.forward)
//   threads: no test of its own (elementwise: the same code in both builds)
//   native: no layer test; the kernel: tests/kernels/activation_test.cpp
import { init } from '../../../bindings/index.js';
import { errorTests, nonFiniteTests, randomTensor, transformerGoldenTests, transformerProbe } from '../helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'activations', 3);
nonFiniteTests(aw, ['relu', 'gelu', 'gelu_tanh']);

const { stillWorks } = transformerProbe(aw);
errorTests('layer error', [
  ['gelu approximate', () => aw.gelu(f32([3]), { approximate: 'sigmoid' }), 'ERR_OUT_OF_RANGE', /approximate: expected 'none' or 'tanh'/],
], stillWorks);
