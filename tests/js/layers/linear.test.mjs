// Linear (bindings/layers.js; src/layers/linear.*): the PyTorch goldens
// (tests/data/goldens/transformer/linear_*), the non-finite golden and the
// error case.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new Linear, Linear.forward, Linear.loadStateDict),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/safetensors.test.mjs: 'a loaded state dict feeds loadStateDict; integer tensors are rejected by name'
//   tests/js/soak.test.mjs
//   threads: no test of its own; its GEMM is split over threads by src/ops/parallel_gemm (tests/ops/parallel_gemm_test.cpp)
//   native: no layer test; its GEMM: tests/kernels/gemm_test.cpp, tests/ops/parallel_gemm_test.cpp;
//     loading it from a file: tests/io/load_params_test.cpp
import { init } from '../../../bindings/index.js';
import { errorTests, nonFiniteTests, randomTensor, transformerGoldenTests, transformerProbe } from '../helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'Linear', 3);
nonFiniteTests(aw, ['linear']);

const { stillWorks } = transformerProbe(aw);
errorTests('layer error', [
  ['linear in features', () => new aw.Linear(4, 2).forward(f32([3, 5])), 'ERR_SHAPE', /input: expected \(…, inFeatures\) with inFeatures = 4, got \(3, 5\)/],
], stillWorks);
