// Bad input to the Transformer layers: each case throws an Error with a
// stable code and a message naming the argument (with the layer's own
// argument names, e.g. srcMask rather than attnMask); after every case a
// valid call still gives the same result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { randomTensor } from './helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);
const bool = (shape) => ({ data: new Uint8Array(shape.reduce((a, b) => a * b, 1)), shape });

const enc = new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, batchFirst: true });
const dec = new aw.TransformerDecoderLayer(8, 2, { dimFeedforward: 16, batchFirst: true });
const tf = new aw.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 16 });
const emb = new aw.Embedding(10, 4);
const src = f32([2, 5, 8], 2), mem = f32([2, 7, 8], 3);
const good = () => [enc.forward(src).data, dec.forward(src, mem).data];
const ref = good();

const cases = [
  ['nhead does not divide dModel', () => new aw.TransformerEncoderLayer(10, 3), 'ERR_INVALID_ARGUMENT', /dModel: must be divisible by nhead \(3\), got 10/],
  ['unknown activation', () => new aw.TransformerEncoderLayer(8, 2, { activation: 'tanh' }), 'ERR_OUT_OF_RANGE', /activation: expected 'relu', 'gelu' or 'gelu_tanh', got 'tanh'/],
  ['negative layerNormEps', () => new aw.TransformerDecoderLayer(8, 2, { layerNormEps: -1 }), 'ERR_OUT_OF_RANGE', /layerNormEps: expected a finite number >= 0/],
  ['torch option name', () => new aw.TransformerEncoderLayer(8, 2, { dim_feedforward: 16 }), 'ERR_INVALID_TYPE', /unknown option 'dim_feedforward'/],
  ['src dModel', () => enc.forward(f32([2, 5, 6])), 'ERR_SHAPE', /src: expected last dim dModel = 8, got \(2, 5, 6\)/],
  ['src rank', () => enc.forward(f32([5, 8, 2, 8])), 'ERR_SHAPE', /src: expected a 3-D \(N, S, dModel\) or 2-D \(S, dModel\) tensor, got \(5, 8, 2, 8\)/],
  ['srcMask shape', () => enc.forward(src, { srcMask: bool([5, 4]) }), 'ERR_SHAPE', /srcMask: expected \(L, S\) = \(5, 5\) or \(N\*numHeads, L, S\) = \(4, 5, 5\), got \(5, 4\)/],
  ['srcKeyPaddingMask shape', () => enc.forward(src, { srcKeyPaddingMask: bool([5, 2]) }), 'ERR_SHAPE', /srcKeyPaddingMask: expected \(2, 5\) = \(N, S\), got \(5, 2\)/],
  ['isCausal without srcMask', () => enc.forward(src, { isCausal: true }), 'ERR_INVALID_ARGUMENT', /isCausal: is a hint that srcMask is the causal mask and needs srcMask/],
  ['memory batch', () => dec.forward(src, f32([3, 7, 8])), 'ERR_SHAPE', /memory: expected batch size N = 2 \(tgt's\), got \(3, 7, 8\)/],
  ['memoryKeyPaddingMask', () => dec.forward(src, mem, { memoryKeyPaddingMask: bool([2, 5]) }), 'ERR_SHAPE', /memoryKeyPaddingMask: expected \(2, 7\) = \(N, S\), got \(2, 5\)/],
  ['tgtIsCausal without tgtMask', () => dec.forward(src, mem, { tgtIsCausal: true }), 'ERR_INVALID_ARGUMENT', /tgtIsCausal: .* needs tgtMask/],
  ['Transformer batch mismatch', () => tf.forward(f32([5, 2, 8]), f32([4, 3, 8])), 'ERR_SHAPE', /tgt: the batch number of src and tgt must be equal/],
  ['stack of a non-layer', () => new aw.TransformerEncoder({ dModel: 8 }, 2), 'ERR_INVALID_TYPE', /encoderLayer: expected a TransformerEncoderLayer/],
  ['stack with a mismatched norm', () => new aw.TransformerEncoder(enc, 2, { norm: new aw.LayerNorm(6) }), 'ERR_INVALID_ARGUMENT', /norm: expected LayerNorm\(8\)/],
  ['embedding id out of range', () => emb.forward({ data: Int32Array.from([1, 12, 3]), shape: [3] }), 'ERR_INVALID_ARGUMENT', /input: id 12 at index 1 is out of range \[0, 10\)/],
  ['embedding ids as floats', () => emb.forward(f32([3])), 'ERR_DTYPE', /input\.data: expected an Int32Array of token ids, got Float32Array/],
  ['linear in features', () => new aw.Linear(4, 2).forward(f32([3, 5])), 'ERR_SHAPE', /input: expected \(…, inFeatures\) with inFeatures = 4, got \(3, 5\)/],
  ['layernorm size', () => new aw.LayerNorm(4).forward(f32([3, 5])), 'ERR_SHAPE', /input: expected \(…, normalizedShape\) with normalizedShape = 4, got \(3, 5\)/],
  ['positions beyond maxLen', () => new aw.SinusoidalPositionalEncoding(8, { maxLen: 4 }).forward(f32([5, 1, 8])), 'ERR_SHAPE', /input: sequence length 5 exceeds maxLen = 4/],
  ['patch channels', () => new aw.PatchEmbedding(1, 8, 4).forward(f32([1, 3, 28, 28])), 'ERR_SHAPE', /images: expected C = inChannels = 1 channels, got \(1, 3, 28, 28\)/],
  ['image smaller than a patch', () => new aw.PatchEmbedding(1, 8, 4).forward(f32([1, 1, 3, 28])), 'ERR_SHAPE', /images: expected H and W >= patchSize = 4/],
  ['gelu approximate', () => aw.gelu(f32([3]), { approximate: 'sigmoid' }), 'ERR_OUT_OF_RANGE', /approximate: expected 'none' or 'tanh'/],
  ['Transformer state dict', () => tf.loadStateDict({ 'encoder.layers.0.linear1.weight': f32([16, 8]) }), 'ERR_STATE_DICT', /error\(s\) loading state_dict for Transformer: missing key\(s\): "encoder\.layers\.0\.self_attn\.in_proj_weight"/],
];

for (const [name, call, code, re] of cases) {
  test(`layer error: ${name}`, () => {
    assert.throws(call, (e) => {
      assert.ok(e instanceof Error);
      assert.equal(e.code, code, e.message);
      assert.match(e.message, re);
      return true;
    });
    const now = good();
    assert.deepEqual(now[0], ref[0]);
    assert.deepEqual(now[1], ref[1]);
  });
}

test('stacks copy the layer weights like torch deepcopy, then own them', () => {
  const layer = new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 });
  const stack = new aw.TransformerEncoder(layer, 2);
  const sd = stack.stateDict();
  assert.deepEqual(sd['layers.1.linear1.weight'].data, layer.stateDict()['linear1.weight'].data);
  layer.dispose();  // the stack keeps working: it holds copies
  assert.equal(stack.forward(f32([3, 1, 8])).data.length, 24);
  stack.dispose();
});
