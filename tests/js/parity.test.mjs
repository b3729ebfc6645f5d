// Parity with PyTorch: every golden case of tests/data/goldens (written by
// tests/data/make_goldens.py from torch 1.13 with a fixed seed) through the
// public JS API. Tolerance: max |attnwasm − torch| ≤ 1e-5 for outputs of order 1.
// Why 1e-5: both sides compute in float32 but sum in different orders (SIMD
// lanes, blocked GEMM, q scaled before vs after the dot product); the observed
// differences are ~1e-7 to 1e-6, so 1e-5 leaves headroom yet catches any
// semantic error (a wrong mask, head or scale changes values by ≥ 1e-3).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { decodeTensor, loadGoldens, maxAbsDiff } from './helpers.mjs';

const ATOL = 1e-5;
const aw = await init();

function check(name, what, actual, expected, worst) {
  const d = maxAbsDiff(actual, expected);
  worst.value = Math.max(worst.value, d);
  assert.ok(
    d <= ATOL,
    `${name}: ${what} max abs error ${d} > ${ATOL} (shape ${JSON.stringify(actual.shape)} vs ${JSON.stringify(expected.shape)})`,
  );
}

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

test('MultiheadAttention matches the PyTorch goldens', async (t) => {
  const g = loadGoldens('mha.json');
  assert.ok(g.cases.length >= 40);
  const worst = { value: 0 };
  for (const c of g.cases) {
    await t.test(c.name, () => {
      const cfg = c.config;
      const mha = new aw.MultiheadAttention(cfg.embedDim, cfg.numHeads, {
        dropout: cfg.dropout ?? 0,
        bias: cfg.bias,
        addBiasKv: cfg.addBiasKv,
        addZeroAttn: cfg.addZeroAttn,
        kdim: cfg.kdim,
        vdim: cfg.vdim,
        batchFirst: cfg.batchFirst,
      });
      try {
        const sd = Object.fromEntries(Object.entries(c.stateDict).map(([k, v]) => [k, decodeTensor(v)]));
        mha.loadStateDict(sd);
        const query = decodeTensor(c.query);
        const key = c.selfAttention ? query : decodeTensor(c.key);
        const value = c.selfAttention ? query : decodeTensor(c.value);
        const { output, weights } = mha.forward(query, key, value, {
          keyPaddingMask: decodeTensor(c.keyPaddingMask),
          attnMask: decodeTensor(c.attnMask),
          needWeights: c.needWeights,
          averageAttnWeights: c.averageAttnWeights,
          isCausal: c.isCausal,
        });
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
