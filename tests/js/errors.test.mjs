// Bad input gets a clear error, never a crash: each case must throw an Error
// with a stable `code` and a message naming the argument (and the expected and
// received shape where there is one); after every case a valid call succeeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, AttnWasmError } from '../../bindings/index.js';
import { randomTensor } from './helpers.mjs';

const aw = await init();
const f32 = (shape, seed = 1) => randomTensor(shape, seed);
const bool = (shape, fill = 0) => ({ data: new Uint8Array(shape.reduce((a, b) => a * b, 1)).fill(fill), shape });

// A valid SDPA and MHA call, run after every error case.
const q = f32([2, 3, 5, 8], 1), k = f32([2, 3, 7, 8], 2), v = f32([2, 3, 7, 4], 3);
const mha = new aw.MultiheadAttention(8, 2, { batchFirst: true });
const x = f32([2, 5, 8], 4), mem = f32([2, 7, 8], 5);
const goodSdpa = () => aw.scaledDotProductAttention(q, k, v).output;
const goodMha = () => mha.forward(x, mem, mem).output;
const refSdpa = goodSdpa(), refMha = goodMha();

const sdpaCases = [
  // [name, () => call, code, message regex]
  ['query not a tensor', () => aw.scaledDotProductAttention(null, k, v), 'ERR_INVALID_TYPE', /query: expected a tensor object/],
  ['query data plain array', () => aw.scaledDotProductAttention({ data: [1, 2], shape: [1, 2] }, k, v), 'ERR_DTYPE', /query\.data: expected a Float32Array, got Array/],
  ['key data Float64Array', () => aw.scaledDotProductAttention(q, { data: new Float64Array(2), shape: [1, 2] }, v), 'ERR_DTYPE', /key\.data: expected a Float32Array, got Float64Array/],
  ['value shape not array', () => aw.scaledDotProductAttention(q, k, { data: new Float32Array(4), shape: 4 }), 'ERR_INVALID_TYPE', /value\.shape: expected an array/],
  ['shape has a fraction', () => aw.scaledDotProductAttention({ data: new Float32Array(3), shape: [1.5, 2] }, k, v), 'ERR_INVALID_TYPE', /query\.shape\[0\]: expected an integer, got 1\.5/],
  ['negative dim', () => aw.scaledDotProductAttention({ data: new Float32Array(0), shape: [-1, 2] }, k, v), 'ERR_OUT_OF_RANGE', /query\.shape: dims must be >= 0/],
  ['data length vs shape', () => aw.scaledDotProductAttention({ data: new Float32Array(5), shape: [2, 3] }, k, v), 'ERR_SHAPE', /query: data has 5 elements but shape \(2, 3\) needs 6/],
  ['huge shape', () => aw.scaledDotProductAttention({ data: new Float32Array(1), shape: [1 << 20, 1 << 20] }, k, v), 'ERR_OUT_OF_RANGE', /query\.shape: .* more than the limit/],
  ['rank 1 query', () => aw.scaledDotProductAttention(f32([8]), k, v), 'ERR_SHAPE', /query: expected at least 2 dims .* got \(8,\)/],
  ['E mismatch', () => aw.scaledDotProductAttention(q, f32([2, 3, 7, 6]), v), 'ERR_SHAPE', /key: expected last dim E = 8 \(query's\), got \(2, 3, 7, 6\)/],
  ['S mismatch', () => aw.scaledDotProductAttention(q, k, f32([2, 3, 6, 4])), 'ERR_SHAPE', /value: expected dim -2 S = 7 \(key's\), got \(2, 3, 6, 4\)/],
  ['batch mismatch', () => aw.scaledDotProductAttention(q, f32([3, 3, 7, 8]), v), 'ERR_SHAPE', /key: batch dims \(3, 3\) do not broadcast with query's \(2, 3\)/],
  ['mask wrong shape', () => aw.scaledDotProductAttention(q, k, v, { attnMask: bool([5, 6], 1) }), 'ERR_SHAPE', /attnMask: expected a shape broadcastable to the attention weights \(2, 3, 5, 7\).*got \(5, 6\)/],
  ['mask more dims than scores', () => aw.scaledDotProductAttention(q, k, v, { attnMask: bool([1, 2, 3, 5, 7], 1) }), 'ERR_SHAPE', /attnMask: .*no more dims, got \(1, 2, 3, 5, 7\)/],
  ['mask Int32Array', () => aw.scaledDotProductAttention(q, k, v, { attnMask: { data: new Int32Array(35), shape: [5, 7] } }), 'ERR_DTYPE', /attnMask\.data: expected a Uint8Array \(bool, 0\/1\) or Float32Array/],
  ['causal with mask', () => aw.scaledDotProductAttention(q, k, v, { isCausal: true, attnMask: bool([5, 7], 1) }), 'ERR_INVALID_ARGUMENT', /attnMask: must not be set when isCausal/],
  ['dropout', () => aw.scaledDotProductAttention(q, k, v, { dropoutP: 0.1 }), 'ERR_INVALID_ARGUMENT', /dropoutP: expected 0/],
  ['gqa heads', () => aw.scaledDotProductAttention(f32([1, 6, 5, 8]), f32([1, 4, 7, 8]), f32([1, 4, 7, 8]), { enableGqa: true }), 'ERR_SHAPE', /key: with enableGqa the query heads \(6\) must be a multiple of the key heads/],
  ['gqa 2-D', () => aw.scaledDotProductAttention(f32([5, 8]), f32([7, 8]), f32([7, 8]), { enableGqa: true }), 'ERR_SHAPE', /enableGqa: expected query, key and value with a heads dim/],
  ['unknown option', () => aw.scaledDotProductAttention(q, k, v, { attn_mask: null }), 'ERR_INVALID_TYPE', /unknown option 'attn_mask'/],
  ['isCausal not bool', () => aw.scaledDotProductAttention(q, k, v, { isCausal: 1 }), 'ERR_INVALID_TYPE', /isCausal: expected a boolean, got number/],
  ['scale string', () => aw.scaledDotProductAttention(q, k, v, { scale: '2' }), 'ERR_INVALID_TYPE', /scale: expected a number or null, got string/],
];

const mhaCases = [
  ['embedDim not divisible', () => new aw.MultiheadAttention(10, 3), 'ERR_INVALID_ARGUMENT', /embedDim: must be divisible by numHeads \(3\), got 10/],
  ['embedDim zero', () => new aw.MultiheadAttention(0, 1), 'ERR_OUT_OF_RANGE', /embedDim: expected an integer in \[1/],
  ['numHeads string', () => new aw.MultiheadAttention(8, '2'), 'ERR_INVALID_TYPE', /numHeads: expected an integer, got string/],
  ['dropout out of range', () => new aw.MultiheadAttention(8, 2, { dropout: 2 }), 'ERR_OUT_OF_RANGE', /dropout: expected a probability/],
  ['impossible size', () => new aw.MultiheadAttention(1 << 20, 1), 'ERR_INVALID_ARGUMENT', /in_proj_weight of shape \(3145728, 1048576\) exceeds/],
  ['unknown ctor option', () => new aw.MultiheadAttention(8, 2, { batch_first: true }), 'ERR_INVALID_TYPE', /unknown option 'batch_first'/],
  ['query rank 4', () => mha.forward(f32([1, 2, 5, 8]), mem, mem), 'ERR_SHAPE', /query: expected a 3-D \(batched\) or 2-D \(unbatched\) tensor, got \(1, 2, 5, 8\)/],
  ['query E', () => mha.forward(f32([2, 5, 6]), mem, mem), 'ERR_SHAPE', /query: expected last dim embedDim = 8, got \(2, 5, 6\)/],
  ['key 2-D with 3-D query', () => mha.forward(x, f32([7, 8]), mem), 'ERR_SHAPE', /key: expected 3-D \(N, S, kdim\) for a 3-D query, got \(7, 8\)/],
  ['key batch', () => mha.forward(x, f32([3, 7, 8]), f32([3, 7, 8])), 'ERR_SHAPE', /key: expected batch size N = 2 \(query's\), got \(3, 7, 8\)/],
  ['value S', () => mha.forward(x, mem, f32([2, 6, 8])), 'ERR_SHAPE', /value: expected \(2, 7, 8\).*got \(2, 6, 8\)/],
  ['kpm shape', () => mha.forward(x, mem, mem, { keyPaddingMask: bool([7, 2]) }), 'ERR_SHAPE', /keyPaddingMask: expected \(2, 7\) = \(N, S\), got \(7, 2\)/],
  ['attn mask shape', () => mha.forward(x, mem, mem, { attnMask: bool([5, 8]) }), 'ERR_SHAPE', /attnMask: expected \(L, S\) = \(5, 7\) or \(N\*numHeads, L, S\) = \(4, 5, 7\), got \(5, 8\)/],
  ['attn mask dtype', () => mha.forward(x, mem, mem, { attnMask: { data: new Int8Array(35), shape: [5, 7] } }), 'ERR_DTYPE', /attnMask\.data: expected a Uint8Array/],
  ['isCausal without mask', () => mha.forward(x, x, x, { isCausal: true }), 'ERR_INVALID_ARGUMENT', /isCausal: .*needs attnMask/],
  ['state dict missing/unexpected', () => mha.loadStateDict({ in_proj_weight: f32([24, 8]), bogus: f32([1]) }), 'ERR_STATE_DICT', /missing key\(s\): "in_proj_bias", "out_proj\.weight", "out_proj\.bias"\. unexpected key\(s\): "bogus"/],
  ['state dict mis-shaped', () => mha.loadStateDict({ ...mha.stateDict(), in_proj_weight: f32([8, 8]) }), 'ERR_STATE_DICT', /size mismatch for in_proj_weight: expected shape \(24, 8\).*got \(8, 8\)/],
  ['state dict not an object', () => mha.loadStateDict([1, 2]), 'ERR_INVALID_TYPE', /stateDict: expected an object or Map/],
  ['state dict entry dtype', () => mha.loadStateDict({ ...mha.stateDict(), in_proj_bias: { data: new Uint8Array(24), shape: [24] } }), 'ERR_DTYPE', /stateDict\['in_proj_bias'\]\.data: expected a Float32Array/],
];

for (const [name, call, code, re] of [...sdpaCases, ...mhaCases]) {
  test(`error: ${name}`, () => {
    assert.throws(call, (e) => {
      assert.ok(e instanceof Error, 'an Error subclass');
      assert.equal(e.code, code, `code of: ${e.message}`);
      assert.match(e.message, re);
      if (code.startsWith('ERR_') && !['ERR_INVALID_TYPE', 'ERR_OUT_OF_RANGE'].includes(code)) assert.ok(e instanceof AttnWasmError);
      return true;
    });
    // The module keeps working, with the same results.
    assert.deepEqual(goodSdpa().data, refSdpa.data);
    assert.deepEqual(goodMha().data, refMha.data);
  });
}

test('a failed loadStateDict changes nothing (all or nothing)', () => {
  const before = mha.stateDict();
  assert.throws(() => mha.loadStateDict({ ...before, 'out_proj.bias': f32([7]) }), /out_proj\.bias/);
  assert.deepEqual(mha.stateDict(), before);
});

test('dispose is idempotent and use after dispose throws ERR_DISPOSED', () => {
  const m = new aw.MultiheadAttention(4, 1);
  m.dispose();
  m.dispose();
  assert.throws(() => m.forward(f32([3, 1, 4]), f32([3, 1, 4]), f32([3, 1, 4])), (e) => e.code === 'ERR_DISPOSED' && /after dispose/.test(e.message));
  assert.throws(() => m.stateDict(), { code: 'ERR_DISPOSED' });
  const m2 = new aw.MultiheadAttention(4, 1);
  m2[Symbol.dispose ?? Symbol.for('Symbol.dispose')]();
  assert.throws(() => m2.parameterShapes(), { code: 'ERR_DISPOSED' });
});

test('init() leaves the Node process alone: no uncaughtException/unhandledRejection handlers', async () => {
  // Emscripten's default glue installs handlers that rethrow from inside the
  // minified module; the build turns them off (NODEJS_CATCH_EXIT/REJECTION=0).
  // Checked in a fresh process: the test runner has handlers of its own.
  const { execFileSync } = await import('node:child_process');
  const entry = new URL('../../bindings/index.js', import.meta.url).href;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', `
    const counts = () => [process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')];
    const before = counts();
    const { init } = await import(${JSON.stringify(entry)});
    await init();
    console.log(JSON.stringify([before, counts()]));`], { encoding: 'utf8' });
  const [before, after] = JSON.parse(out);
  assert.deepEqual(after, before);
});
