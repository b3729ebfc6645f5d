// scaledDotProductAttention, the functional API (bindings/runtime.js;
// src/ops/scaled_dot_product_attention.*): the PyTorch goldens (sdpa.json;
// and tests/data/goldens/lm/blocks/sdpa_*: grouped-query heads with
// aw.causalLowerRight / causalUpperLeft as attnMask), the non-finite goldens,
// the causal mask objects against the masks they stand for, the error table
// and the threads tests.
//
// Elsewhere (suites over every entry point, or about the runtime as a whole):
//   tests/js/hostile.test.mjs: 'hostile table' (scaledDotProductAttention)
//   tests/js/memory.test.mjs: 'heap stays flat over 3000 mixed calls'
//   tests/js/determinism.test.mjs, tests/js/soak.test.mjs, tests/browser/threads.test.mjs
//   native: tests/layers/scaled_dot_product_attention_test.cpp; the attention core under it:
//     tests/ops/attention_test.cpp, tests/fuzz/fuzz_attention.cpp (corpus replayed by tests/fuzz/corpus_replay_test.cpp)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, AttnWasmError } from '../../../bindings/index.js';
import {
  assertGoldensThroughThreads, assertSameBits, attentionProbe, boolMask as bool, check, decodeTensor, errorTests,
  lmBlockGoldenTests, loadGoldens, maxAbsDiff, nonFiniteTests, randomTensor, ATOL,
} from '../helpers.mjs';
import { CausalBias } from '../../../bindings/index.js';

const aw = await init();
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });
const f32 = (shape, seed = 1) => randomTensor(shape, seed);

// ---- PyTorch parity (tests/data/goldens/sdpa.json, tests/data/make_goldens.py) ----

test('scaledDotProductAttention matches the PyTorch goldens', async (t) => {
  const g = loadGoldens('sdpa.json');
  assert.ok(g.cases.length >= 40);
  const worst = { value: 0 };
  for (const c of g.cases) {
    await t.test(c.name, () => {
      const { output, weights } = aw.scaledDotProductAttention(
        decodeTensor(c.query), decodeTensor(c.key), decodeTensor(c.value),
        {
          attnMask: decodeTensor(c.attnMask),
          isCausal: c.isCausal,
          scale: c.scale,
          enableGqa: c.enableGqa,
          needWeights: true,
        },
      );
      check(c.name, 'output', output, decodeTensor(c.expected.output), worst);
      check(c.name, 'weights', weights, decodeTensor(c.expected.weights), worst);
      // Without weights the same output must come back.
      const again = aw.scaledDotProductAttention(
        decodeTensor(c.query), decodeTensor(c.key), decodeTensor(c.value),
        { attnMask: decodeTensor(c.attnMask), isCausal: c.isCausal, scale: c.scale, enableGqa: c.enableGqa },
      );
      assert.equal(again.weights, null);
      assert.deepEqual(again.output.data, output.data);
    });
  }
  t.diagnostic(`sdpa: ${g.cases.length} cases, worst max abs error ${worst.value.toExponential(2)}`);
});

nonFiniteTests(aw, ['sdpa']);

// ---- causal masks as objects (torch.nn.attention.bias) ----

lmBlockGoldenTests(aw, 'scaledDotProductAttention', 10);

test('causalLowerRight / causalUpperLeft: the same bits as the bool masks they stand for, never materialised', () => {
  const upper = aw.causalUpperLeft(3, 7), lower = aw.causalLowerRight(3, 7);
  assert.ok(lower instanceof CausalBias && Object.isFrozen(lower));
  assert.deepEqual({ ...lower }, { variant: 'lowerRight', seqLenQ: 3, seqLenKv: 7 });
  assert.deepEqual({ ...upper }, { variant: 'upperLeft', seqLenQ: 3, seqLenKv: 7 });
  for (const [L, S] of [[3, 7], [7, 3], [6, 4], [1, 9], [5, 5], [13, 33], [70, 130], [130, 70]]) {
    const q = f32([2, 6, L, 16], 1), k = f32([2, 2, S, 16], 2), v = f32([2, 2, S, 8], 3);
    for (const [make, off] of [[aw.causalUpperLeft, 0], [aw.causalLowerRight, S - L]]) {
      const mask = { data: Uint8Array.from({ length: L * S }, (_, t) => (t % S <= Math.floor(t / S) + off ? 1 : 0)), shape: [L, S] };
      const o = { enableGqa: true, needWeights: true };
      const got = aw.scaledDotProductAttention(q, k, v, { ...o, attnMask: make(L, S) });
      const want = aw.scaledDotProductAttention(q, k, v, { ...o, attnMask: mask });
      assertSameBits(got.output, want.output, `(${L}, ${S}) offset ${off} output`);
      assertSameBits(got.weights, want.weights, `(${L}, ${S}) offset ${off} weights`);
      if (off < 0) assert.ok(got.output.data.subarray(0, 8).every((x) => x === 0), 'a row with no key gives zeros');
    }
  }
  // Upper-left with L = S is isCausal.
  const x = f32([2, 9, 8], 4);
  assertSameBits(aw.scaledDotProductAttention(x, x, x, { attnMask: aw.causalUpperLeft(9, 9) }).output,
    aw.scaledDotProductAttention(x, x, x, { isCausal: true }).output, 'upper-left = isCausal');
});

test('the LM SDPA goldens pass through init({ threads: 2 })', () => {
  assertGoldensThroughThreads(mt, st, 'scaledDotProductAttention', 10, 'lm');
});

// ---- errors ----

const { q, k, v, stillWorks } = attentionProbe(aw);

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
  ['causal bias L mismatch', () => aw.scaledDotProductAttention(q, k, v, { attnMask: aw.causalLowerRight(4, 7) }), 'ERR_SHAPE', /attnMask: causalLowerRight\(4, 7\) does not match the call's \(L, S\) = \(5, 7\)/],
  ['causal bias S mismatch', () => aw.scaledDotProductAttention(q, k, v, { attnMask: aw.causalUpperLeft(5, 8) }), 'ERR_SHAPE', /attnMask: causalUpperLeft\(5, 8\) does not match the call's \(L, S\) = \(5, 7\)/],
  ['causal bias with isCausal', () => aw.scaledDotProductAttention(q, k, v, { attnMask: aw.causalLowerRight(5, 7), isCausal: true }), 'ERR_INVALID_ARGUMENT', /attnMask: must not be set when isCausal/],
  ['causal bias negative L', () => aw.causalLowerRight(-1, 7), 'ERR_OUT_OF_RANGE', /L: expected an integer in \[0, 536870912\], got -1/],
  ['causal bias S a fraction', () => aw.causalUpperLeft(5, 7.5), 'ERR_INVALID_TYPE', /S: expected an integer, got 7\.5/],
  ['causal bias made by hand', () => aw.scaledDotProductAttention(q, k, v, { attnMask: { variant: 'lowerRight', seqLenQ: 5, seqLenKv: 7 } }), 'ERR_INVALID_TYPE', /attnMask.shape: expected an array/],
];

errorTests('error', sdpaCases, stillWorks, AttnWasmError);

// ---- threads: 2 threads bit-identical to the single-thread build ----

test('scaledDotProductAttention: 2 threads are bit-identical to the single-thread build', () => {
  const mask = (L, S) => ({ data: Uint8Array.from({ length: L * S }, (_, i) => (i % 7 === 3 ? 0 : 1)), shape: [L, S] });
  const cases = [
    { q: [2, 3, 37, 16], k: [2, 3, 41, 16], v: [2, 3, 41, 8], o: { attnMask: mask(37, 41), needWeights: true } },
    { q: [1, 4, 130, 32], k: [1, 4, 130, 32], v: [1, 4, 130, 32], o: { isCausal: true } },
    { q: [3, 65, 24], k: [3, 70, 24], v: [3, 70, 24], o: { scale: 0.3 } },
    { q: [4, 8, 33, 16], k: [4, 2, 33, 16], v: [4, 2, 33, 16], o: { enableGqa: true, needWeights: true } },
    { q: [5, 9], k: [7, 9], v: [4, 7, 6], o: { needWeights: true } }, // value widens the batch
    { q: [2, 6, 97, 16], k: [2, 2, 140, 16], v: [2, 2, 140, 16], o: { enableGqa: true, needWeights: true, attnMask: aw.causalLowerRight(97, 140) } },
  ];
  for (const c of cases) {
    const q = randomTensor(c.q, 1), k = randomTensor(c.k, 2), v = randomTensor(c.v, 3);
    const a = st.scaledDotProductAttention(q, k, v, c.o);
    const b = mt.scaledDotProductAttention(q, k, v, c.o);
    assertSameBits(b.output, a.output, `sdpa ${JSON.stringify(c.q)} output`);
    if (a.weights) assertSameBits(b.weights, a.weights, `sdpa ${JSON.stringify(c.q)} weights`);
  }
});

// The goldens above through init({ threads: 2 }): within the same tolerance of
// torch, and bit-identical to the single-thread build.
test('the SDPA goldens pass through init({ threads: 2 })', () => {
  for (const c of loadGoldens('sdpa.json').cases) {
    const args = [decodeTensor(c.query), decodeTensor(c.key), decodeTensor(c.value),
      { attnMask: decodeTensor(c.attnMask), isCausal: c.isCausal, scale: c.scale, enableGqa: c.enableGqa, needWeights: true }];
    const r = mt.scaledDotProductAttention(...args);
    assert.ok(maxAbsDiff(r.output, decodeTensor(c.expected.output)) <= ATOL, `sdpa ${c.name} output`);
    assert.ok(maxAbsDiff(r.weights, decodeTensor(c.expected.weights)) <= ATOL, `sdpa ${c.name} weights`);
    assertSameBits(r.output, st.scaledDotProductAttention(...args).output, `sdpa ${c.name}`);
  }
});
