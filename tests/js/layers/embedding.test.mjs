// Embedding (bindings/layers.js; src/layers/embedding.*): the PyTorch goldens
// (tests/data/goldens/transformer/embedding*) and the error cases.
//
// Elsewhere:
//   tests/js/hostile.test.mjs: 'hostile table' (new Embedding, Embedding.forward),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   threads: no test of its own (a gather: the same code in both builds)
//   native: no test
import { init } from '../../../bindings/index.js';
import { errorTests, randomTensor, transformerGoldenTests, transformerProbe } from '../helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

transformerGoldenTests(aw, 'Embedding', 2);

const { stillWorks } = transformerProbe(aw);
const emb = new aw.Embedding(10, 4);
errorTests('layer error', [
  ['embedding id out of range', () => emb.forward({ data: Int32Array.from([1, 12, 3]), shape: [3] }), 'ERR_INVALID_ARGUMENT', /input: id 12 at index 1 is out of range \[0, 10\)/],
  ['embedding ids as floats', () => emb.forward(f32([3])), 'ERR_DTYPE', /input\.data: expected an Int32Array of token ids, got Float32Array/],
], stillWorks);
