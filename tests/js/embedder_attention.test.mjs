// Embedder#forward({ …, outputAttentions: true }) (bindings/embedder.js, src/models/encoder.h Forward): every
// layer's softmax weights (B, layers, heads, T, T), as HF's output_attentions: each row sums to 1 over the
// sentence's real keys, its padded keys get exactly 0, and a sentence padded in a batch has the weights (and the
// hidden states) it has alone, bit for bit — the same numbers the sentence's rows are computed from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { encoderFolder } from './embedder_checkpoint.mjs';

const aw = await init({ threads: 1 });
const e = await aw.loadModel(encoderFolder());

test('attentions: rows of softmax weights over the real keys, padded keys 0, the bits of the sentence alone', () => {
  const batch = e.tokenize(['the cat sat on the mat', 'a dog']);
  const [B, T] = batch.inputIds.shape;
  const out = e.forward({ ...batch, outputAttentions: true });
  const L = e.numLayers, H = e.numHeads;
  assert.deepEqual(out.attentions.shape, [B, L, H, T, T]);
  const real = (b) => batch.attentionMask.data.subarray(b * T, (b + 1) * T).reduce((a, m) => a + m, 0);
  for (let b = 0; b < B; b++) {
    const n = real(b);
    for (let l = 0; l < L; l++)
      for (let h = 0; h < H; h++)
        for (let i = 0; i < n; i++) {
          const row = out.attentions.data.subarray((((b * L + l) * H + h) * T + i) * T, (((b * L + l) * H + h) * T + i + 1) * T);
          const sum = row.subarray(0, n).reduce((a, v) => a + v, 0);
          assert.ok(Math.abs(sum - 1) < 1e-5, `row (${b}, ${l}, ${h}, ${i}) sums to ${sum}`);
          for (let j = n; j < T; j++) assert.equal(row[j], 0, `padded key ${j}`);
        }
  }
  // The short sentence alone: its weights and hidden states are the padded batch's, bit for bit.
  const n = real(1);
  const alone = e.forward({ inputIds: { data: batch.inputIds.data.slice(T, T + n), shape: [1, n] }, outputAttentions: true });
  for (let l = 0; l < L; l++)
    for (let h = 0; h < H; h++)
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++)
          assert.equal(out.attentions.data[(((1 * L + l) * H + h) * T + i) * T + j], alone.attentions.data[((l * H + h) * n + i) * n + j]);
  for (let i = 0; i < n * e.hiddenSize; i++)
    assert.equal(out.lastHiddenState.data[T * e.hiddenSize + i], alone.lastHiddenState.data[i]);
  // Without the option: no attentions (and none computed).
  assert.equal(e.forward(batch).attentions, undefined);
  assert.throws(() => e.forward({ ...batch, outputAttentions: 1 }), /^TypeError: outputAttentions: expected a boolean, got number$/);
});
