// Causal LMs loaded with quantized weights, aw.loadModel(bytes, { config, dtype: 'q8' | 'q4' | 'q4a16' }), against the
// torch twin of tests/data/make_lm_quant_goldens.py (tools/causal_lm.py quantize_model: the arithmetic of
// src/kernels/qgemm.h): forward's logits within each golden's tolerance, generate()'s greedy ids, the weight
// types and bytes reported; in the baseline and the relaxed-SIMD builds, with 1 and 2 threads. The f32 load
// of the same checkpoints matches the float goldens and not the q4 ones (so the comparison can fail); dtype's
// refusals by name. Tolerance (the golden's "tolerance", per dtype): max(1e-4, 2 × the twin's own spread
// when its activations move by a float32 ulp) — an activation a rounding error from a half-step rounds to
// either int16 neighbour, and those flips compound over layers (make_lm_quant_goldens.py says more).
// The relaxed build fuses each group's multiply-add for q8 and q4a16 (one rounding less): the same tolerance
// holds; q4 (int8 activations per group) gives the same bits in both builds. q4's int8 steps are 256× int16's, so
// where the twin's activations sit near a half-step its spread is wide (0.08–0.32 in two cases, 1e-4 in the
// others): there the q4 load must also miss the q4a16 golden, which the arithmetic's difference does by far.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../bindings/index.js';

const QUANT = new URL('../data/goldens/lm/quant/', import.meta.url);
const read = (rel) => readFileSync(new URL(rel, QUANT));
const CASES = ['llama_tied_hd64_e72_bf16', 'qwen2_untied_bias_hd20_e60', 'llama_untied_obias_hd16_e48_f16', 'llama_untied_ffn544_bf16'];
const DTYPES = ['q8', 'q4', 'q4a16'];
const BUILDS = [
  { relaxedSimd: false, threads: 1 }, { relaxedSimd: false, threads: 2 },
  { relaxedSimd: true, threads: 1 }, { relaxedSimd: true, threads: 2 },
];
const label = (b) => `${b.relaxedSimd ? 'relaxed-SIMD' : 'baseline'} build, ${b.threads} thread${b.threads > 1 ? 's' : ''}`;

/** The golden of a case: { t: name → {data, shape}, spec, bytes, config }. */
function golden(aw, name) {
  const { tensors, metadata } = aw.loadSafetensors(read(`${name}/expected.safetensors`), { metadata: true });
  return { t: tensors, spec: JSON.parse(metadata.case), bytes: read(`${name}/model.safetensors`),
    config: JSON.parse(read(`${name}/config.json`)) };
}

/** { worst: max |got − want|, ratio: max |got − want| / (atol + rtol·|want|) (≤ 1 passes), at: its index }. */
function compare(got, want, { atol, rtol }) {
  let worst = 0, ratio = 0, at = -1;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    const r = d / (atol + rtol * Math.abs(want[i]));
    if (!(r <= ratio)) { ratio = Number.isNaN(r) ? Infinity : r; at = i; }
    if (!(d <= worst)) worst = Number.isNaN(d) ? Infinity : d;
  }
  return { worst, ratio, at };
}

/**
 * The bytes of each weight type a model of this config holds: every matrix as kernels/qgemm.h's layout
 * (ceil(n / 8) panels × ceil(k / 32) groups × (32 + 256 | 128) bytes; src/layers/packed_weight.cpp reserves
 * up to 64 bytes more each, so a range), norms and biases as float32.
 */
function expectedBytes(c, dtype) {
  const E = c.hidden_size, F = c.intermediate_size, V = c.vocab_size, L = c.num_hidden_layers;
  const H = c.num_attention_heads, Hkv = c.num_key_value_heads, D = c.head_dim ?? E / H;
  const qkvBias = c.model_type === 'qwen2' || c.attention_bias, oBias = c.model_type === 'llama' && c.attention_bias;
  const mats = [[V, E]];
  if (!c.tie_word_embeddings) mats.push([V, E]);
  for (let l = 0; l < L; l++) mats.push([H * D, E], [Hkv * D, E], [Hkv * D, E], [E, H * D], [F, E], [F, E], [E, F]);
  const group = dtype === 'q8' ? 32 + 256 : 32 + 128;
  const packed = mats.reduce((a, [n, k]) => a + Math.ceil(n / 8) * Math.ceil(k / 32) * group, 0);
  const floats = 4 * (E * (2 * L + 1) + L * ((qkvBias ? (H + 2 * Hkv) * D : 0) + (oBias ? E : 0)));
  return { packed: [packed, packed + 64 * mats.length], floats };
}

async function greedyIds(lm, prompt, n) {
  const got = [];
  for await (const tok of lm.generate(prompt, { maxNewTokens: n, stopTokens: [] })) got.push(tok.id);
  return got;
}

const WORST = [];  // [build, case, dtype, worst |Δ|, fraction of the tolerance], printed at the end

for (const build of BUILDS) {
  test(`${label(build)}: q8 and q4 loads equal the torch twin (logits, greedy ids), report their weight types and bytes`, async (t) => {
    const aw = await init(build);
    try {
      const caps = aw.capabilities();
      if (build.relaxedSimd && !caps.relaxedSimd) return t.skip(`relaxed SIMD not run here: ${caps.relaxedSimdReason}`);
      assert.equal(caps.relaxedSimd, build.relaxedSimd);
      assert.equal(caps.threads || 1, build.threads, caps.threadsReason);
      for (const name of CASES) {
        const { t: g, spec, bytes, config } = golden(aw, name);
        const ids = g['input.ids'];
        const f32 = await aw.loadModel(bytes, { config, dtype: 'f32' });
        const f32Bytes = f32.weightBytes;
        const f32Logits = f32.forward(ids).logits.data;
        f32.dispose();
        for (const dtype of DTYPES) {
          const lm = await aw.loadModel(bytes, { config, dtype });
          try {
            // Weight types: every matrix in the dtype asked for, norms and biases float32, and nothing else.
            const want = expectedBytes(config, dtype);
            assert.deepEqual(Object.keys(lm.weightTypes).sort(), ['f32', dtype], `${name} ${dtype}: ${JSON.stringify(lm.weightTypes)}`);
            assert.equal(lm.weightTypes.f32, want.floats, `${name} ${dtype}: float32 bytes (norms, biases)`);
            const q = lm.weightTypes[dtype];
            assert.ok(q >= want.packed[0] && q <= want.packed[1], `${name} ${dtype}: ${q} bytes, expected ${want.packed.join('–')}`);
            assert.equal(lm.weightBytes, q + lm.weightTypes.f32);
            assert.ok(lm.weightBytes < f32Bytes, `${name} ${dtype}: ${lm.weightBytes} bytes, not below f32's ${f32Bytes}`);
            // Logits of every position.
            const { logits } = lm.forward(ids);
            assert.deepEqual(logits.shape, [...ids.shape, lm.vocabSize]);
            const tol = spec.tolerance[dtype];
            const r = compare(logits.data, g[`expected.logits.${dtype}`].data, tol);
            WORST.push([label(build), name, dtype, r.worst, r.ratio]);
            assert.ok(r.ratio <= 1, `${name} ${dtype}: logit ${r.at} off by ${r.worst.toExponential(2)}, ${r.ratio.toFixed(2)} of the tolerance (atol ${tol.atol})`);
            if (dtype === 'q4') {  // int8 activations, not int16: q4a16's golden is missed by far
              const a16 = compare(logits.data, g['expected.logits.q4a16'].data, spec.tolerance.q4a16);
              assert.ok(a16.ratio > 5, `${name}: q4's logits within ${a16.ratio.toFixed(1)}× q4a16's tolerance of the q4a16 golden`);
            }
            // Greedy ids (KV cache) up to the first near tie of the twin's.
            for (const gr of spec.greedy[dtype]) {
              const wantIds = [...g[gr.ids].data], margins = g[gr.margins].data;
              const got = await greedyIds(lm, g[gr.prompt].data, wantIds.length);
              const n = margins.findIndex((m) => m < spec.greedyMinMargin[dtype]);
              const upTo = n < 0 ? wantIds.length : n;
              assert.ok(upTo >= 1, `${name} ${dtype} ${gr.prompt}: the twin's first step is a near tie`);
              assert.deepEqual(got.slice(0, upTo), wantIds.slice(0, upTo), `${name} ${dtype} ${gr.prompt}: greedy ids`);
            }
          } finally {
            lm.dispose();
          }
        }
        // The f32 load matches the float golden and misses the quantized ones by far: the comparisons above can fail.
        const rf = compare(f32Logits, g['expected.logits.f32'].data, spec.tolerance.f32);
        assert.ok(rf.ratio <= 1, `${name} f32: ${rf.ratio.toFixed(2)} of the tolerance`);
        for (const dtype of DTYPES) {
          const miss = compare(f32Logits, g[`expected.logits.${dtype}`].data, spec.tolerance[dtype]);
          assert.ok(miss.ratio > (dtype === 'q4' ? 5 : 20), `${name}: f32's logits within ${miss.ratio.toFixed(1)}× ${dtype}'s tolerance of the ${dtype} golden`);
        }
      }
    } finally {
      await aw.close();
    }
  });
}

test('the goldens cover: tied and untied heads, q/k/v and o_proj biases, head_dim 64 and odd ones, input widths off a multiple of 32 and past one block of 512, both families', async () => {
  const aw = await init({ threads: 1, relaxedSimd: false });
  const specs = CASES.map((n) => golden(aw, n).spec);
  await aw.close();
  assert.deepEqual(new Set(specs.map((s) => s.shape.tied)), new Set([true, false]));
  assert.deepEqual(new Set(specs.map((s) => s.shape.modelType)), new Set(['llama', 'qwen2']));
  assert.ok(specs.some((s) => s.shape.qkvBias) && specs.some((s) => s.shape.oBias));
  assert.ok(specs.some((s) => s.shape.headDim === 64) && specs.some((s) => s.shape.headDim % 32 !== 0));
  assert.ok(specs.some((s) => s.shape.hidden % 32 !== 0 && s.shape.intermediate % 32 !== 0));
  assert.ok(specs.some((s) => s.shape.intermediate > 512), 'an input of more than one block of 16 groups (qgemm.h)');
  for (const s of specs) for (const d of DTYPES) assert.ok(s.tolerance[d].atol <= (d === 'q4' ? 0.35 : 3e-3) && s.tolerance[d].rtol === 0, s.name);
});

test('dtype: anything but f32, bf16, f16, q8, q4, q4a16 is refused by name; the runtime keeps working', async () => {
  const aw = await init({ threads: 1, relaxedSimd: false });
  try {
    const { bytes, config } = golden(aw, CASES[2]);
    for (const dtype of ['q5', 'Q8', 'int8', 'float32', 'q8 ', 'q4a8', 'Q4A16']) {
      await assert.rejects(aw.loadModel(bytes, { config, dtype }), (e) => {
        assert.equal(e.code, 'ERR_INVALID_ARGUMENT');
        assert.equal(e.message, `dtype: expected 'f32', 'bf16', 'f16', 'q8', 'q4' or 'q4a16' (or nothing: the weights as stored), got '${dtype}'`);
        return true;
      }, dtype);
    }
    for (const dtype of [8, null, {}]) {
      await assert.rejects(aw.loadModel(bytes, { config, dtype }),
        (e) => e.code === 'ERR_INVALID_TYPE' && /^dtype: expected 'f32', 'bf16', 'f16', 'q8', 'q4' or 'q4a16', got /.test(e.message), String(dtype));
    }
    const lm = await aw.loadModel(bytes, { config, dtype: 'q4' });
    assert.equal(lm.forward({ data: Int32Array.of(1, 2, 3), shape: [1, 3] }).logits.shape[2], lm.vocabSize);
    lm.dispose();
  } finally {
    await aw.close();
  }
});

test('worst |logit − twin| per build and dtype', (t) => {
  const by = new Map();
  for (const [b, name, d, w, r] of WORST) {
    const k = `${b}, ${d}`;
    if (!by.has(k)) by.set(k, []);
    by.get(k).push(`${name} ${w.toExponential(1)} (${(r * 100).toFixed(0)} %)`);
  }
  for (const [k, v] of by) t.diagnostic(`${k}: max |Δ| per case (of its tolerance): ${v.join(', ')}`);
});
