// MultiheadAttention (bindings/layers.js; src/layers/multihead_attention.*):
// the PyTorch goldens, the non-finite goldens, the error table, dispose, and
// the threads tests.
//
// Elsewhere (suites over every class, or about the runtime as a whole):
//   tests/js/hostile.test.mjs: 'hostile table' (new MultiheadAttention, .forward, .loadStateDict),
//     'disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless'
//   tests/js/memory.test.mjs: 'heap stays flat over 3000 mixed calls', 'dispose returns the parameters to the heap'
//   tests/js/oom.test.mjs: 'an allocation too large for wasm memory throws ERR_OUT_OF_MEMORY and the module survives'
//   tests/js/threads.test.mjs: init({ threads }) and the pthreads build (fallbacks, process exit), run with MHA
//   tests/js/determinism.test.mjs, tests/js/soak.test.mjs, tests/browser/threads.test.mjs
//   native: tests/layers/multihead_attention_test.cpp; tests/core/module_test.cpp (Module's state_dict, through MHA)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, AttnWasmError } from '../../../bindings/index.js';
import {
  assertSameBits, attentionProbe, boolMask as bool, causalMask, check, decodeTensor, errorTests, loadGoldens,
  maxAbsDiff, mhaGoldenArgs, mhaGoldenCall, nonFiniteTests, randomTensor, ATOL,
} from '../helpers.mjs';

const aw = await init();
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

// ---- PyTorch parity (tests/data/goldens/mha.json, tests/data/make_goldens.py) ----

test('MultiheadAttention matches the PyTorch goldens', async (t) => {
  const g = loadGoldens('mha.json');
  assert.ok(g.cases.length >= 40);
  const worst = { value: 0 };
  for (const c of g.cases) {
    await t.test(c.name, () => {
      const mha = new aw.MultiheadAttention(...mhaGoldenArgs(c));
      try {
        const { sd, args } = mhaGoldenCall(c);
        mha.loadStateDict(sd);
        const { output, weights } = mha.forward(...args);
        check(c.name, 'output', output, decodeTensor(c.expected.output), worst);
        if (c.expected.weights === null) assert.equal(weights, null);
        else check(c.name, 'weights', weights, decodeTensor(c.expected.weights), worst);
      } finally {
        mha.dispose();
      }
    });
  }
  t.diagnostic(`mha: ${g.cases.length} cases, worst max abs error ${worst.value.toExponential(2)}`);
});

nonFiniteTests(aw, ['mha']);

// ---- errors ----

const { mha, x, mem, stillWorks } = attentionProbe(aw);

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

errorTests('error', mhaCases, stillWorks, AttnWasmError);

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

// ---- threads: 2 threads bit-identical to the single-thread build ----
// Shapes above the split thresholds (src/ops/parallel_gemm.cpp, the attention
// row blocks), with odd lengths so that register-tile tails land in the last block.
const MHA_CASES = [
  { E: 64, H: 4, N: 3, L: 67, S: 45, opts: { batchFirst: true } },
  { E: 96, H: 3, N: 2, L: 130, S: 130, opts: {}, fwd: { attnMask: causalMask(130), needWeights: true } },
  { E: 64, H: 8, N: 1, L: 129, S: 77, opts: { addBiasKv: true, addZeroAttn: true }, fwd: { needWeights: true, averageAttnWeights: false } },
  { E: 256, H: 8, N: 1, L: 256, S: 256, opts: {}, fwd: { needWeights: false } }, // bench S3
];

test('MultiheadAttention: 2 threads are bit-identical to the single-thread build', () => {
  for (const c of MHA_CASES) {
    const name = `E${c.E} H${c.H} N${c.N} L${c.L} S${c.S}`;
    const q = randomTensor(c.opts.batchFirst ? [c.N, c.L, c.E] : [c.L, c.N, c.E], 1);
    const kv = randomTensor(c.opts.batchFirst ? [c.N, c.S, c.E] : [c.S, c.N, c.E], 2);
    const a = new st.MultiheadAttention(c.E, c.H, c.opts);
    const b = new mt.MultiheadAttention(c.E, c.H, c.opts);
    try {
      const sd = a.stateDict();
      for (const t of Object.values(sd)) t.data.set(randomTensor([t.data.length], 7 + t.data.length).data);
      a.loadStateDict(sd);
      b.loadStateDict(sd);
      const kvIn = c.S === c.L && !c.opts.batchFirst && c.fwd?.attnMask ? q : kv;
      const ra = a.forward(q, kvIn, kvIn, c.fwd);
      const rb = b.forward(q, kvIn, kvIn, c.fwd);
      assertSameBits(rb.output, ra.output, `${name} output`);
      if (ra.weights) assertSameBits(rb.weights, ra.weights, `${name} weights`);
      else assert.equal(rb.weights, null);
    } finally {
      a.dispose();
      b.dispose();
    }
  }
});

test('the pthreads build with 1 and 2 threads agrees bit for bit (S4-sized MHA)', () => {
  const rt = mt;
  const mha = new rt.MultiheadAttention(512, 8);
  try {
    const x = randomTensor([512, 2, 512], 5);
    const two = mha.forward(x, x, x, { needWeights: false }).output;
    assert.equal(rt._setThreads(1), 1);
    assert.equal(rt.capabilities().threads, false);
    assert.equal(rt.capabilities().threadsReason, 'threads: 1 set');
    const one = mha.forward(x, x, x, { needWeights: false }).output;
    assertSameBits(two, one, 'MHA 512');
  } finally {
    assert.equal(rt._setThreads(2), 2);
    mha.dispose();
  }
  assert.throws(() => rt._setThreads(3), { name: 'RangeError' });
});

// The goldens above through init({ threads: 2 }): within the same tolerance of
// torch, and bit-identical to the single-thread build.
test('the MHA goldens pass through init({ threads: 2 })', () => {
  for (const c of loadGoldens('mha.json').cases) {
    const a = new mt.MultiheadAttention(...mhaGoldenArgs(c));
    const b = new st.MultiheadAttention(...mhaGoldenArgs(c));
    try {
      const { sd, args } = mhaGoldenCall(c);
      a.loadStateDict(sd);
      b.loadStateDict(sd);
      const r = a.forward(...args);
      assert.ok(maxAbsDiff(r.output, decodeTensor(c.expected.output)) <= ATOL, `mha ${c.name} output`);
      if (c.expected.weights !== null) assert.ok(maxAbsDiff(r.weights, decodeTensor(c.expected.weights)) <= ATOL, `mha ${c.name} weights`);
      assertSameBits(r.output, b.forward(...args).output, `mha ${c.name}`);
    } finally {
      a.dispose();
      b.dispose();
    }
  }
});
