// The whole 32-bit address space: the heap grows past 2 GiB (to 4 GiB where
// the engine allows) and calls whose inputs, outputs and scratch lie above
// 2 GiB give the same results as below (pointers read as unsigned in JS, in
// embind's memory views and in the glue). Its own file: node --test runs each
// file in its own process, so the grown memory stays here. The pages above
// 2 GiB are reserved by malloc but never written, so the process's RSS stays
// small. In Chromium: tests/browser/memory.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { randomTensor, assertSameBits } from './helpers.mjs';

for (const threads of [1, 2]) {
  test(`calls with their tensors above 2 GiB give the results they give below (${threads} thread(s))`, async () => {
    const aw = await init({ threads });
    const q = randomTensor([2, 4, 9, 16], 1);
    const mha = new aw.MultiheadAttention(16, 4, { batchFirst: true });
    const x = randomTensor([3, 5, 16], 2);
    const run = () => ({
      sdpa: aw.scaledDotProductAttention(q, q, q, { isCausal: true, needWeights: true }),
      mha: mha.forward(x, x, x, { needWeights: true }),
    });
    const low = run();
    // Fill the heap up to past 2 GiB with blocks that are never written.
    const core = aw._core;
    const held = [];
    for (let p = 0; p <= 2 ** 31 + 2 ** 28;) {
      p = core._malloc(64 * 2 ** 20) >>> 0;
      assert.notEqual(p, 0, `malloc failed at heap ${aw.memory().heapBytes}`);
      held.push(p);
    }
    for (let p = 0; p <= 2 ** 31;) { // and every small hole below
      p = core._malloc(256) >>> 0;
      held.push(p);
    }
    const seen = [];
    const malloc = core._malloc;
    core._malloc = (n) => { const p = malloc(n); seen.push(p >>> 0); return p; };
    const high = run();
    core._malloc = malloc;
    assert.ok(seen.length > 0 && seen.every((p) => p > 2 ** 31), `inputs should be above 2 GiB: ${seen}`);
    assert.ok(aw.memory().heapBytes > 2 ** 31 + 2 ** 28);
    assertSameBits(high.sdpa.output, low.sdpa.output, 'sdpa output');
    assertSameBits(high.sdpa.weights, low.sdpa.weights, 'sdpa weights');
    assertSameBits(high.mha.output, low.mha.output, 'mha output');
    assertSameBits(high.mha.weights, low.mha.weights, 'mha weights');
    for (const p of held) core._free(p);
    await aw.close();
  });
}
