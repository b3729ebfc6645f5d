// TransformerDecoder, the stack (bindings/transformer.js;
// src/layers/transformer.*): the PyTorch goldens
// (tests/data/goldens/transformer/dec_stack*) and the threads test of the
// goldens.
//
// Elsewhere:
//   errors: no case of its own; tests/js/hostile.test.mjs: 'hostile table' (new TransformerDecoder,
//     TransformerDecoder.forward), 'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless';
//     the stack checks it shares with TransformerEncoder: tests/js/layers/transformer_encoder.test.mjs
//   native: the copy of its layers (LayerStack::CopyFrom, shared with TransformerEncoder):
//     tests/layers/transformer_encoder_test.cpp
import { test } from 'node:test';
import { init } from '../../../bindings/index.js';
import { assertGoldensThroughThreads, transformerGoldenTests } from '../helpers.mjs';

const aw = await init();
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });

transformerGoldenTests(aw, 'TransformerDecoder', 2);

test('the TransformerDecoder goldens pass through init({ threads: 2 })', () => {
  assertGoldensThroughThreads(mt, st, 'TransformerDecoder', 2);
});
