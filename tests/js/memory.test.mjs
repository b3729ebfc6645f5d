// Memory: thousands of calls (create, forward, errors, dispose) must leave the
// wasm heap where it was after warm-up — malloc'd bytes and memory size alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { randomTensor } from './helpers.mjs';

const aw = await init();

test('heap stays flat over 3000 mixed calls', () => {
  const mha = new aw.MultiheadAttention(32, 4, { batchFirst: true });
  const x = randomTensor([2, 9, 32], 1);
  const mem = randomTensor([2, 13, 32], 2);
  const kpm = { data: new Uint8Array(26).map((_, i) => (i % 13 > 10 ? 1 : 0)), shape: [2, 13] };
  const q = randomTensor([2, 4, 9, 8], 3);
  const round = (i) => {
    mha.forward(x, mem, mem, { keyPaddingMask: kpm, needWeights: i % 2 === 0 });
    aw.scaledDotProductAttention(q, q, q, { isCausal: true, needWeights: i % 3 === 0 });
    try { mha.forward(x, x, randomTensor([2, 8, 32], 4)); } catch { /* expected */ }
    if (i % 10 === 0) {
      const m = new aw.MultiheadAttention(16, 2);
      m.loadStateDict(m.stateDict());
      m.forward(randomTensor([3, 1, 16], 5), randomTensor([3, 1, 16], 6), randomTensor([3, 1, 16], 7));
      m.dispose();
    }
  };
  for (let i = 0; i < 50; i++) round(i);
  const before = aw.memory();
  for (let i = 0; i < 3000; i++) round(i);
  const after = aw.memory();
  mha.dispose();
  assert.equal(after.heapBytes, before.heapBytes, 'wasm memory grew');
  assert.equal(after.inUseBytes, before.inUseBytes, `malloc'd bytes grew from ${before.inUseBytes} to ${after.inUseBytes}`);
});

test('Transformer layers: forwards keep the heap flat (weights resident, scratch reused)', () => {
  const tf = new aw.Transformer({ dModel: 16, nhead: 4, numEncoderLayers: 2, numDecoderLayers: 2, dimFeedforward: 32, batchFirst: true });
  const src = randomTensor([2, 7, 16], 1), tgt = randomTensor([2, 5, 16], 2);
  const tgtMask = aw.generateSquareSubsequentMask(5);
  const kpm = { data: Uint8Array.from({ length: 14 }, (_, i) => (i % 7 === 6 ? 1 : 0)), shape: [2, 7] };
  const run = () => tf.forward(src, tgt, { tgtMask, srcKeyPaddingMask: kpm, memoryKeyPaddingMask: kpm });
  for (let i = 0; i < 20; i++) run();
  const before = aw.memory();
  for (let i = 0; i < 1000; i++) run();
  const after = aw.memory();
  tf.dispose();
  assert.equal(after.heapBytes, before.heapBytes);
  assert.equal(after.inUseBytes, before.inUseBytes, `malloc'd bytes grew from ${before.inUseBytes} to ${after.inUseBytes}`);
});

test('dispose returns the parameters to the heap', () => {
  const before = aw.memory().inUseBytes;
  const m = new aw.MultiheadAttention(256, 8);
  const during = aw.memory().inUseBytes;
  assert.ok(during - before >= 4 * 256 * 256 * 4, `parameters should take ≥ 1 MiB, took ${during - before}`);
  m.dispose();
  assert.ok(aw.memory().inUseBytes <= before + 64, 'parameters were not freed');
});
