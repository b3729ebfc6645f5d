// bindings/native_constants.js is generated from the C++ headers (tools/gen_native_constants.mjs): the error
// codes, element types, causal biases and thread limit the JS layer uses are the native ones, never a copy
// kept by hand. The committed file must be what the generator writes from the headers as they are now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generate } from '../../tools/gen_native_constants.mjs';
import { NATIVE_CODES, DTYPE, CAUSAL_BIAS, MAX_THREADS } from '../../bindings/native_constants.js';

test('bindings/native_constants.js is what the generator writes from the headers now', () => {
  assert.equal(readFileSync(new URL('../../bindings/native_constants.js', import.meta.url), 'utf8'), generate());
});

test('the generated tables read the headers: codes in order, dtypes, biases, threads', () => {
  const status = readFileSync(new URL('../../src/core/status.h', import.meta.url), 'utf8');
  assert.equal(NATIVE_CODES.length, (status.match(/^\s*k\w+ = \d+,/gm) || []).length);
  assert.equal(NATIVE_CODES[0], 'OK');
  assert.equal(NATIVE_CODES[6], 'ERR_OUT_OF_RANGE');
  assert.deepEqual(DTYPE, { F32: 0, BOOL: 1, I32: 2 });
  assert.deepEqual(CAUSAL_BIAS, { NONE: 0, UPPER_LEFT: 1, LOWER_RIGHT: 2 });
  assert.ok(Number.isInteger(MAX_THREADS) && MAX_THREADS >= 2);
});

test('the family registry: FAMILIES (generated) is what the runtime reports, and every family has a JS row', async () => {
  const { init } = await import('../../bindings/index.js');
  const { FAMILIES } = await import('../../bindings/native_constants.js');
  const { ROWS, rowOfConfig } = await import('../../bindings/families.js');
  const boundary = await import('../../bindings/boundary.js');
  const aw = await init();
  try {
    const native = boundary.families(aw);
    assert.deepEqual(native.map((f) => f.kind), FAMILIES.map((f) => f.kind));
    for (const f of FAMILIES) {
      const n = native.find((x) => x.kind === f.kind);
      assert.deepEqual(n.modelTypes, [...f.modelTypes], f.kind);
      assert.equal(n.className, f.className, f.kind);
      assert.equal(ROWS[f.kind].face.name, f.className, `${f.kind}: its face`);
      for (const t of f.modelTypes) assert.equal(rowOfConfig({ model_type: t }), ROWS[f.kind], t);
      assert.equal(aw[f.className], ROWS[f.kind].face, `aw.${f.className}`);
    }
    assert.equal(rowOfConfig({ model_type: 'gpt2' }), null);
  } finally {
    await aw.close();
  }
});
