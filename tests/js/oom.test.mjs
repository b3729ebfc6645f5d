// Out of memory: a request the 2 GiB wasm heap cannot satisfy is a clear
// ERR_OUT_OF_MEMORY error, not an abort, and the instance keeps working.
// (Its own file: node --test runs each file in its own process, so the grown
// memory does not affect other tests.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { randomTensor } from './helpers.mjs';

const aw = await init();

test('an allocation too large for wasm memory throws ERR_OUT_OF_MEMORY and the module survives', () => {
  const mha = new aw.MultiheadAttention(8, 8);
  // Averaged weights (2, 16384, 16384) = 2^29 elements, within the element
  // limit, but 2 GiB: the 2 GiB wasm heap (which also holds everything else)
  // cannot allocate them → out of memory, before any work starts.
  const x = randomTensor([16384, 2, 8], 1);
  assert.throws(
    () => mha.forward(x, x, x, { needWeights: true, averageAttnWeights: true }),
    (e) => e.code === 'ERR_OUT_OF_MEMORY' && /out of memory: cannot allocate/.test(e.message),
  );
  const small = randomTensor([3, 1, 8], 2);
  const { output } = mha.forward(small, small, small);
  assert.equal(output.data.length, 24);
  assert.ok(output.data.every(Number.isFinite));
  mha.dispose();
});
