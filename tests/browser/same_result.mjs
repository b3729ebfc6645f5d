// The check of every page that runs fixtures/compute.js: the same numbers as
// compute() with the repository's own bindings in Node (within 1e-6; the
// diagnostic says whether they are bit-identical).
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { compute } from './fixtures/compute.js';

let expected;

/** compute() in Node, once. */
export async function expectedResult() {
  expected ??= compute(await init({ threads: 1 }));
  return expected;
}

function maxDiff(a, b) {
  assert.equal(a.length, b.length, 'length');
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Asserts a page's compute() result equals Node's; returns whether it is bit-identical. */
export async function checkResult(got, label) {
  const want = await expectedResult();
  assert.ok(got && got.sdpa && got.mha, `${label}: no result`);
  for (const op of ['sdpa', 'mha']) {
    assert.deepEqual(got[op].shape, want[op].shape, `${label} ${op} shape`);
    for (const part of ['output', 'weights']) {
      const d = maxDiff(got[op][part], want[op][part]);
      assert.ok(d <= 1e-6, `${label} ${op}.${part}: max |diff| ${d} vs Node`);
    }
  }
  return JSON.stringify(got) === JSON.stringify(want);
}
