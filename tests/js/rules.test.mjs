// Every range and divisibility rule of the API, broken once through a JS
// call: each rule lives once, natively (src/core/rules.h and the Init /
// Forward that apply it; tests/layers/rules_test.cpp), and its error must
// reach JS with the rule's code and class (ERR_OUT_OF_RANGE a RangeError,
// anything else an AttnWasmError) and a message that names the argument,
// what was expected and what was received. After every case the module
// keeps working: the same valid calls give the same results and no wasm
// memory is left allocated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, AttnWasmError } from '../../bindings/index.js';
import { randomTensor } from './helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);
// Data of `n` elements under a shape whose product is n but which is not a
// shape (negative dims): JS cannot tell, the native shape rule refuses it.
const negative = (shape, n, Data = Float32Array) => ({ data: new Data(n), shape });

const enc = new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 });
const dec = new aw.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 });
const lin = new aw.Linear(3, 2);
const mha = new aw.MultiheadAttention(8, 2);
const emb = new aw.Embedding(10, 4);
const sinus = new aw.SinusoidalPositionalEncoding(8, { maxLen: 16 });
const rope4 = new aw.RotaryPositionalEmbeddings(8, { maxSeqLen: 4 });
const x = f32([5, 1, 8], 7);
const good = () => [
  aw.scaledDotProductAttention(f32([2, 5, 8]), f32([2, 7, 8], 2), f32([2, 7, 4], 3)).output.data,
  enc.forward(x).data, lin.forward(f32([4, 3], 5)).data, mha.forward(x, x, x).output.data,
];
const ref = good();
const OUT = 'ERR_OUT_OF_RANGE', ARG = 'ERR_INVALID_ARGUMENT';
const INT32 = 'expected an integer in [1, 2147483647]';
// A stack built with a final norm made for the call (and disposed after it).
const withNorm = (makeNorm, makeStack) => () => {
  const norm = makeNorm();
  try {
    return makeStack(norm);
  } finally {
    norm.dispose();
  }
};

// [rule (its native home), call, code, argument, expectation, received]
const RULES = [
  // layers/multihead_attention.cpp MultiheadAttention::Init
  ['MHA embedDim in [1, 2^29]', () => new aw.MultiheadAttention(0, 1), OUT, 'embedDim', 'expected an integer in [1, 536870912]', '0'],
  ['MHA embedDim at most 2^29', () => new aw.MultiheadAttention(2 ** 30, 1), OUT, 'embedDim', 'expected an integer in [1, 536870912]', '1073741824'],
  ['MHA numHeads >= 1', () => new aw.MultiheadAttention(8, -2), OUT, 'numHeads', INT32, '-2'],
  ['MHA embedDim % numHeads', () => new aw.MultiheadAttention(10, 3), ARG, 'embedDim', 'must be divisible by numHeads (3)', '10'],
  ['MHA kdim >= 1', () => new aw.MultiheadAttention(8, 2, { kdim: 0 }), OUT, 'kdim', INT32, '0'],
  ['MHA vdim >= 1', () => new aw.MultiheadAttention(8, 2, { vdim: -1 }), OUT, 'vdim', INT32, '-1'],
  ['MHA dropout in [0, 1]', () => new aw.MultiheadAttention(8, 2, { dropout: 1.5 }), OUT, 'dropout', 'expected a probability in [0, 1]', '1.5'],
  ['MHA dropout NaN', () => new aw.MultiheadAttention(8, 2, { dropout: NaN }), OUT, 'dropout', 'expected a probability in [0, 1]', 'NaN'],
  // layers/linear.cpp Linear::Init
  ['Linear inFeatures >= 1', () => new aw.Linear(0, 2), OUT, 'inFeatures', INT32, '0'],
  ['Linear outFeatures <= 2^31 - 1', () => new aw.Linear(2, 2 ** 31), OUT, 'outFeatures', INT32, '2147483648'],
  // layers/layer_norm.cpp LayerNorm::Init
  ['LayerNorm normalizedShape >= 1', () => new aw.LayerNorm([0]), OUT, 'normalizedShape', INT32, '0'],
  ['LayerNorm eps >= 0', () => new aw.LayerNorm(4, { eps: -1e-7 }), OUT, 'eps', 'expected a finite number >= 0', '-1e-7'],
  ['LayerNorm eps finite', () => new aw.LayerNorm(4, { eps: Infinity }), OUT, 'eps', 'expected a finite number >= 0', 'Infinity'],
  // layers/embedding.cpp Embedding::Init
  ['Embedding numEmbeddings >= 1', () => new aw.Embedding(0, 4), OUT, 'numEmbeddings', INT32, '0'],
  ['Embedding embeddingDim >= 1', () => new aw.Embedding(4, -1), OUT, 'embeddingDim', INT32, '-1'],
  ['Embedding paddingIdx in [-n, n)', () => new aw.Embedding(10, 4, { paddingIdx: -11 }), OUT, 'paddingIdx', 'expected an integer in [-10, 9]', '-11'],
  ['Embedding paddingIdx = n', () => new aw.Embedding(10, 4, { paddingIdx: 10 }), OUT, 'paddingIdx', 'expected an integer in [-10, 9]', '10'],
  // layers/positional_encoding.cpp CheckDims
  ['SinusoidalPositionalEncoding dModel >= 1', () => new aw.SinusoidalPositionalEncoding(0), OUT, 'dModel', INT32, '0'],
  ['SinusoidalPositionalEncoding maxLen >= 1', () => new aw.SinusoidalPositionalEncoding(8, { maxLen: 0 }), OUT, 'maxLen', INT32, '0'],
  ['LearnedPositionalEmbedding maxLen >= 1', () => new aw.LearnedPositionalEmbedding(-3, 8), OUT, 'maxLen', INT32, '-3'],
  // layers/patch_embedding.cpp PatchEmbedding::Init
  ['PatchEmbedding inChannels >= 1', () => new aw.PatchEmbedding(0, 8, 4), OUT, 'inChannels', INT32, '0'],
  ['PatchEmbedding embedDim >= 1', () => new aw.PatchEmbedding(1, 0, 4), OUT, 'embedDim', INT32, '0'],
  ['PatchEmbedding patchSize in [1, 4096]', () => new aw.PatchEmbedding(1, 8, 4097), OUT, 'patchSize', 'expected an integer in [1, 4096]', '4097'],
  // layers/transformer_encoder_layer.cpp CheckLayerConfig (+ MHA's dropout, ParseActivation)
  ['layer dModel >= 1', () => new aw.TransformerEncoderLayer(0, 1), OUT, 'dModel', INT32, '0'],
  ['layer nhead >= 1', () => new aw.TransformerDecoderLayer(8, 0), OUT, 'nhead', INT32, '0'],
  ['layer dModel % nhead', () => new aw.TransformerEncoderLayer(10, 3), ARG, 'dModel', 'must be divisible by nhead (3)', '10'],
  ['layer dimFeedforward >= 1', () => new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 0 }), OUT, 'dimFeedforward', INT32, '0'],
  ['layer dropout in [0, 1]', () => new aw.TransformerDecoderLayer(8, 2, { dropout: -0.5 }), OUT, 'dropout', 'expected a probability in [0, 1]', '-0.5'],
  ['layer layerNormEps >= 0', () => new aw.TransformerEncoderLayer(8, 2, { layerNormEps: NaN }), OUT, 'layerNormEps', 'expected a finite number >= 0', 'NaN'],
  ['layer activation name', () => new aw.TransformerEncoderLayer(8, 2, { activation: 'swish' }), OUT, 'activation', "expected 'relu', 'gelu', 'gelu_tanh' or 'silu'", "'swish'"],
  ['Transformer activation name', () => new aw.Transformer({ dModel: 8, nhead: 2, activation: 'GELU' }), OUT, 'activation', "expected 'relu', 'gelu', 'gelu_tanh' or 'silu'", "'GELU'"],
  // layers/transformer.cpp CheckNumLayers
  ['TransformerEncoder numLayers <= 1000', () => new aw.TransformerEncoder(enc, 1001), OUT, 'numLayers', 'expected an integer in [0, 1000]', '1001'],
  ['TransformerDecoder numLayers >= 0', () => new aw.TransformerDecoder(dec, -1), OUT, 'numLayers', 'expected an integer in [0, 1000]', '-1'],
  ['Transformer numEncoderLayers', () => new aw.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1001 }), OUT, 'numEncoderLayers', 'expected an integer in [0, 1000]', '1001'],
  ['Transformer numDecoderLayers', () => new aw.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: -1 }), OUT, 'numDecoderLayers', 'expected an integer in [0, 1000]', '-1'],
  // layers/transformer.cpp CheckFinalNorm (LayerStack::CopyFrom)
  ['stack norm size', withNorm(() => new aw.LayerNorm(6), (norm) => new aw.TransformerEncoder(enc, 1, { norm })), ARG, 'norm', 'expected LayerNorm(8) with elementwiseAffine', 'LayerNorm(6)'],
  ['stack norm affine', withNorm(() => new aw.LayerNorm(8, { elementwiseAffine: false }), (norm) => new aw.TransformerDecoder(dec, 1, { norm })), ARG, 'norm', 'expected LayerNorm(8) with elementwiseAffine', 'LayerNorm(8) without elementwiseAffine'],
  ['stack norm bias', withNorm(() => new aw.LayerNorm(8, { bias: false }), (norm) => new aw.TransformerEncoder(enc, 2, { norm })), ARG, 'norm', "bias must match the layer's bias option (true)", 'false'],
  // layers/rms_norm.cpp RMSNorm::Init
  ['RMSNorm normalizedShape >= 1', () => new aw.RMSNorm(0), OUT, 'normalizedShape', INT32, '0'],
  ['RMSNorm normalizedShape[i] >= 1', () => new aw.RMSNorm([3, -2]), OUT, 'normalizedShape[1]', INT32, '-2'],
  ['RMSNorm normalizedShape not empty', () => new aw.RMSNorm([]), OUT, 'normalizedShape', 'expected at least one dim', '()'],
  ['RMSNorm eps >= 0', () => new aw.RMSNorm(8, { eps: -1e-6 }), OUT, 'eps', 'expected a finite number >= 0', '-0.000001'],
  // layers/rotary.cpp RotaryPositionalEmbeddings::Init and Forward
  ['RoPE dim >= 1', () => new aw.RotaryPositionalEmbeddings(0), OUT, 'dim', INT32, '0'],
  ['RoPE dim even', () => new aw.RotaryPositionalEmbeddings(9), ARG, 'dim', 'expected an even number', '9'],
  ['RoPE maxSeqLen >= 1', () => new aw.RotaryPositionalEmbeddings(8, { maxSeqLen: -4 }), OUT, 'maxSeqLen', INT32, '-4'],
  ['RoPE base > 0', () => new aw.RotaryPositionalEmbeddings(8, { base: -10000 }), OUT, 'base', 'expected a finite number > 0', '-10000'],
  ['RoPE base within float32', () => new aw.RotaryPositionalEmbeddings(8, { base: 1e39 }), OUT, 'base', "expected a number within float32's range", '1e+39'],
  ['RoPE positions in [0, maxSeqLen)', () => rope4.forward(f32([1, 2, 1, 8]), { inputPos: { data: Int32Array.from([1, 4]), shape: [2] } }), OUT, 'inputPos', 'is out of range [0, maxSeqLen = 4)', 'position 4 at index (1)'],
  // ops/scaled_dot_product_attention.cpp CheckCausalBias
  ['causal bias L in [0, 2^29]', () => aw.causalLowerRight(-3, 4), OUT, 'L', 'expected an integer in [0, 536870912]', '-3'],
  ['causal bias S in [0, 2^29]', () => aw.causalUpperLeft(3, 2 ** 30), OUT, 'S', 'expected an integer in [0, 536870912]', '1073741824'],
  // core/rules.cpp CheckShape, applied by every forward (data that fits the product of the dims)
  ['shape dims >= 0 (Linear.forward)', () => lin.forward(negative([-2, -3], 6)), OUT, 'input.shape', 'dims must be >= 0', '(-2, -3)'],
  ['shape dims >= 0 (relu)', () => aw.relu(negative([-1, -1], 1)), OUT, 'input.shape', 'dims must be >= 0', '(-1, -1)'],
  ['shape dims >= 0 (scaledDotProductAttention)', () => aw.scaledDotProductAttention(negative([-1, -2, 8], 16), f32([2, 8]), f32([2, 8])), OUT, 'query.shape', 'dims must be >= 0', '(-1, -2, 8)'],
  ['shape dims >= 0 (attnMask)', () => aw.scaledDotProductAttention(f32([2, 8]), f32([3, 8]), f32([3, 8]), { attnMask: negative([-2, -3], 6, Uint8Array) }), OUT, 'attnMask.shape', 'dims must be >= 0', '(-2, -3)'],
  ['shape dims >= 0 (MHA keyPaddingMask)', () => mha.forward(x, x, x, { keyPaddingMask: negative([-1, -5], 5, Uint8Array) }), OUT, 'keyPaddingMask.shape', 'dims must be >= 0', '(-1, -5)'],
  ['shape dims >= 0 (encoder layer src)', () => enc.forward(negative([-5, -1, 8], 40)), OUT, 'src.shape', 'dims must be >= 0', '(-5, -1, 8)'],
  ['shape dims >= 0 (Embedding ids)', () => emb.forward(negative([-2, -3], 6, Int32Array)), OUT, 'input.shape', 'dims must be >= 0', '(-2, -3)'],
  ['shape dims >= 0 (positions)', () => sinus.forward(negative([-2, -1, 8], 16)), OUT, 'input.shape', 'dims must be >= 0', '(-2, -1, 8)'],
  ['shape dims >= 0 (Dropout, a JS layer)', () => new aw.Dropout(0.1).forward(negative([-2, -3], 6)), OUT, 'input.shape', 'dims must be >= 0', '(-2, -3)'],
  ['shape dims >= 0 (loadStateDict)', () => lin.loadStateDict({ ...lin.stateDict(), weight: negative([-2, -3], 6) }), OUT, "stateDict['weight'].shape", 'dims must be >= 0', '(-2, -3)'],
  // core/rules.cpp CheckShape, asked by the JS checks when data and shape disagree
  ['shape at most 2^29 elements', () => aw.relu({ data: new Float32Array(1), shape: [2 ** 15, 2 ** 15] }), OUT, 'input.shape', 'more than the limit 2^29', '(32768, 32768) has 1073741824 elements'],
  ['shape dims >= 0, data short', () => lin.forward({ data: new Float32Array(0), shape: [-1, 3] }), OUT, 'input.shape', 'dims must be >= 0', '(-1, 3)'],
];

const ESC = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

for (const [rule, call, code, arg, expectation, received] of RULES) {
  test(`rule: ${rule}`, () => {
    const base = aw.memory().inUseBytes;
    assert.throws(call, (e) => {
      assert.equal(e.code, code, e.message);
      assert.ok(code === OUT ? e instanceof RangeError : e instanceof AttnWasmError, `class of ${code}: ${e.name}`);
      assert.match(e.message, new RegExp(`^${ESC(arg)}: `), 'names the argument first');
      assert.ok(e.message.includes(expectation), `states the expectation '${expectation}': ${e.message}`);
      assert.ok(e.message.includes(received), `states the received '${received}': ${e.message}`);
      return true;
    });
    assert.equal(aw.memory().inUseBytes, base, 'nothing left allocated');
    const now = good();
    for (let i = 0; i < ref.length; i++) assert.deepEqual(now[i], ref[i]);
  });
}

test('each rule case above breaks a different rule or reaches it another way', () => {
  assert.equal(new Set(RULES.map(([rule]) => rule)).size, RULES.length);
  assert.ok(RULES.length >= 45);
});
