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

// ---- Working memory bounded by a budget, scratch given back (README "Memory") ----

const MiB = 2 ** 20;

test('memory() reports the heap, its limit, the bytes in use, their peak and the budget', () => {
  const m = aw.memory();
  assert.deepEqual(Object.keys(m).sort(), ['heapBytes', 'heapLimitBytes', 'inUseBytes', 'peakInUseBytes', 'workingMemoryBytes']);
  assert.equal(m.heapLimitBytes, 4 * 1024 * MiB - 64 * 1024, 'the heap may grow to 4 GiB (minus one wasm page)');
  assert.equal(m.workingMemoryBytes, 32 * MiB);
  assert.ok(m.inUseBytes > 0 && m.inUseBytes <= m.peakInUseBytes && m.peakInUseBytes <= m.heapBytes);
  aw.resetPeakMemory();
  assert.equal(aw.memory().peakInUseBytes, aw.memory().inUseBytes);
});

test('a batch larger than the budget runs in pieces: peak = inputs + outputs + budget, scratch given back', async () => {
  // Same runtime, small budget (1 MiB), so that a few MiB of batch need pieces.
  const small = await init({ threads: 2, workingMemory: MiB });
  assert.equal(small.memory().workingMemoryBytes, MiB);
  const E = 128, N = 16, L = 64;
  const mha = new small.MultiheadAttention(E, 4, { batchFirst: true });
  const big = new aw.MultiheadAttention(E, 4, { batchFirst: true });
  big.loadStateDict(mha.stateDict());
  const x = randomTensor([N, L, E], 11); // 512 KiB in, 512 KiB out; without pieces the projections alone take 2 MiB
  const mask = aw.generateSquareSubsequentMask(L);
  const want = big.forward(x, x, x, { attnMask: mask, needWeights: true, averageAttnWeights: false });
  mha.forward(x, x, x, { attnMask: mask }); // warm-up: the first call sizes the kept block
  const before = small.memory();
  small.resetPeakMemory();
  const got = mha.forward(x, x, x, { attnMask: mask, needWeights: true, averageAttnWeights: false });
  const after = small.memory();
  const io = x.data.byteLength + mask.data.byteLength + x.data.byteLength + want.weights.data.byteLength;
  const extra = after.peakInUseBytes - before.inUseBytes;
  assert.ok(extra <= io + MiB + 256 * 1024, `peak above the call's inputs and outputs + budget: ${extra} > ${io} + 1 MiB`);
  assert.ok(after.inUseBytes <= before.inUseBytes, `scratch kept after the call: ${after.inUseBytes - before.inUseBytes} bytes`);
  assert.deepEqual(Array.from(got.output.data), Array.from(want.output.data), 'pieces change no bit of the output');
  assert.deepEqual(Array.from(got.weights.data), Array.from(want.weights.data), 'nor of the weights');
  big.dispose();
  await small.close();
});

test('scaledDotProductAttention writes its output over its copy of the query: peak = inputs + scratch', () => {
  // q, k, v of 4 MiB each (distinct arrays), causal: the attention scratch is
  // well under 1 MiB, so an output buffer (4 MiB) would show in the peak.
  const [N, L, E] = [8, 256, 512];
  const q = randomTensor([N, L, E], 13), k = randomTensor([N, L, E], 14), v = randomTensor([N, L, E], 15);
  const want = aw.scaledDotProductAttention(q, k, v, { isCausal: true }).output;
  const before = aw.memory().inUseBytes;
  aw.resetPeakMemory();
  const got = aw.scaledDotProductAttention(q, k, v, { isCausal: true }).output;
  const extra = aw.memory().peakInUseBytes - before;
  const inputs = 3 * q.data.byteLength;
  assert.ok(extra < inputs + q.data.byteLength / 2, `peak ${extra} bytes: inputs ${inputs} + an output buffer?`);
  assert.deepEqual(Array.from(got.data), Array.from(want.data));
  // The same call with q = k = v in one array (copied in once) cannot write over it, and is exact too.
  const self = aw.scaledDotProductAttention(q, q, q, { isCausal: true }).output;
  const ref = aw.scaledDotProductAttention(q, { ...q, data: q.data.slice() }, { ...q, data: q.data.slice() }, { isCausal: true }).output;
  assert.deepEqual(Array.from(self.data), Array.from(ref.data));
});

test('a large call gives its scratch back: the heap in use returns to where it was', () => {
  const enc = new aw.TransformerEncoderLayer(256, 4, { dimFeedforward: 512, batchFirst: true });
  const x = randomTensor([48, 128, 256], 12); // 6 MiB; the layer's scratch without pieces: about 60 MiB
  enc.forward(x);
  const before = aw.memory().inUseBytes;
  aw.resetPeakMemory();
  enc.forward(x);
  const m = aw.memory();
  assert.ok(m.inUseBytes <= before, `in use grew by ${m.inUseBytes - before}`);
  assert.ok(m.peakInUseBytes - before <= 2 * x.data.byteLength + 32 * MiB + 256 * 1024,
    `peak ${(m.peakInUseBytes - before) / MiB} MiB above inputs + outputs + the 32 MiB budget`);
  enc.dispose();
});

test('workingMemory: a budget outside [64 KiB, 1 GiB] is refused by name; a fraction is a TypeError', async () => {
  await assert.rejects(init({ threads: 1, workingMemory: 1000 }),
    (e) => e instanceof RangeError && e.code === 'ERR_OUT_OF_RANGE' && e.message === 'workingMemory: expected an integer in [65536, 1073741824], got 1000');
  await assert.rejects(init({ threads: 1, workingMemory: MiB + 0.5 }),
    (e) => e instanceof TypeError && e.message === 'workingMemory: expected an integer, got 1048576.5');
});
