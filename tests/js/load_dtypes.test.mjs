// Weights kept as stored are the same numbers as the file's (src/models/load_model.cpp, layers/packed_weight.h):
// a checkpoint whose matrices are stored BF16 (or F16) and the same values widened and stored F32 give
// bitwise identical forward logits and generate() ids (greedy and seeded sampling), kept as stored or
// converted with dtype ('f32' on the BF16 file, 'bf16' on the F32 one); and dtype 'bf16' / 'f16' asked on an
// F32 file of arbitrary values gives the model of its matrices rounded to nearest even (norms and biases
// stay float32), written as F32. Shapes chosen awkward: hidden 40 and 72 (not multiples of 16), vocab 77,
// 101, 93, intermediate 100 (and hidden 264, intermediate 700, vocab 2003: products the threads split);
// Llama untied, Qwen2 tied without lm_head, Llama tied with its copy of the embedding. For threads 1, 2 and 3 and both builds (baseline; relaxed SIMD when this Node runs it): every
// result of a build equal to that build's own result with 1 thread (builds may differ from each other).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';
import { RELAXED_SIMD_SUPPORTED } from '../../bindings/wasm_load.js';
import { lmConfig, lmTensors, safetensors, roundTo, sampleIds, sameBits } from './lm_checkpoint.mjs';

const SHAPES = [
  { name: 'llama E40 untied', config: lmConfig({ hidden: 40, inter: 100, vocab: 77, heads: 4, kvHeads: 2 }) },
  { name: 'qwen2 E72 tied', config: lmConfig({ modelType: 'qwen2', hidden: 72, inter: 100, vocab: 101, heads: 6, kvHeads: 3, tied: true }) },
  { name: 'llama E72 tied + lm_head copy', config: lmConfig({ hidden: 72, inter: 100, vocab: 93, heads: 6, kvHeads: 2, tied: true }), lmHead: true },
  // Large enough for the products to be split between threads.
  { name: 'llama E264 untied', config: lmConfig({ hidden: 264, inter: 700, vocab: 2003, heads: 6, kvHeads: 2 }) },
];
const STORED = ['BF16', 'F16'];

/** Logits of forward(ids) and the ids of a greedy and a sampled generation. */
async function run(lm, vocab) {
  const ids = sampleIds(vocab, 2, 9, 17);
  const logits = lm.forward(ids).logits.data;
  const prompt = ids.data.subarray(0, 9);
  const greedy = [], sampled = [];
  for await (const t of lm.generate(prompt, { maxNewTokens: 12, stopTokens: [] })) greedy.push(t.id);
  for await (const t of lm.generate(prompt, { maxNewTokens: 12, stopTokens: [], temperature: 1.4, topK: 20, seed: 9 })) sampled.push(t.id);
  return { logits, greedy, sampled };
}

function assertSame(a, b, what) {
  const d = sameBits(a.logits, b.logits);
  assert.equal(d, null, `${what}: logits differ at ${d}`);
  assert.deepEqual(a.greedy, b.greedy, `${what}: greedy ids`);
  assert.deepEqual(a.sampled, b.sampled, `${what}: sampled ids`);
}

const cache = new Map();
/**
 * The files of one shape and stored type: `low` (matrices in it) and `wide` (the same values as F32); `raw`
 * (arbitrary F32 values) and `rounded` (its matrices rounded to the type, stored F32).
 */
function files(name, config, lmHead, stored) {
  const key = `${name} ${stored}`;
  if (!cache.has(key)) {
    const t = lmTensors(config, { seed: 21, exact: stored, lmHead });
    const raw = lmTensors(config, { seed: 22, exact: 'F32', lmHead });
    const rounded = raw.map((x) => ({ ...x, values: x.shape.length >= 2 ? roundTo(x.values, stored) : x.values }));
    cache.set(key, { low: safetensors(t, { dtype: stored }), wide: safetensors(t, { dtype: 'F32' }), raw: safetensors(raw), rounded: safetensors(rounded) });
  }
  return cache.get(key);
}

/** Every comparison of one shape in one runtime; returns the results by case for the cross-thread check. */
async function checkShape(aw, { name, config, lmHead }) {
  const out = {};
  const load = async (bytes, dtype, types) => {
    const lm = await aw.loadModel(bytes, { config, ...(dtype ? { dtype } : {}) });
    try {
      assert.deepEqual(Object.keys(lm.weightTypes).sort(), types, `${name} ${dtype ?? 'as stored'}: weightTypes ${JSON.stringify(lm.weightTypes)}`);
      return await run(lm, config.vocab_size);
    } finally {
      lm.dispose();
    }
  };
  for (const stored of STORED) {
    const { low, wide, raw, rounded } = files(name, config, lmHead, stored);
    const lower = stored.toLowerCase();
    const ref = await load(wide, null, ['f32']);
    assertSame(await load(low, null, [lower, 'f32'].sort()), ref, `${name}: ${stored} as stored vs widened to F32`);
    assertSame(await load(low, 'f32', ['f32']), ref, `${name}: ${stored} file with dtype 'f32'`);
    assertSame(await load(wide, lower, [lower, 'f32'].sort()), ref, `${name}: F32 file with dtype '${lower}'`);
    out[stored] = ref;
    // Arbitrary float32 values converted while loading = the rounded values (matrices only) stored as F32.
    const conv = await load(raw, lower, [lower, 'f32'].sort());
    const want = await load(rounded, null, ['f32']);
    assertSame(conv, want, `${name}: dtype '${lower}' on an F32 file vs its matrices rounded to ${stored}`);
    const unrounded = await load(raw, null, ['f32']);
    assert.notEqual(sameBits(unrounded.logits, conv.logits), null, `${name}: rounding to ${stored} changed nothing: the test proves nothing`);
    out[`${stored} rounded`] = conv;
  }
  return out;
}

for (const relaxedSimd of [false, true]) {
  const build = relaxedSimd ? 'relaxed SIMD' : 'baseline';
  test(`${build} build: BF16/F16 stored = widened to F32 = converted, bit for bit, for threads 1, 2 and 3`,
    { skip: relaxedSimd && !RELAXED_SIMD_SUPPORTED && 'this Node runs no relaxed SIMD (--experimental-wasm-relaxed-simd)' },
    async () => {
      const first = {};
      for (const threads of [1, 2, 3]) {
        const aw = await init({ threads, relaxedSimd });
        try {
          const caps = aw.capabilities();
          assert.equal(caps.relaxedSimd, relaxedSimd, `capabilities().relaxedSimd (${caps.relaxedSimdReason ?? ''})`);
          assert.equal(caps.threads === false ? 1 : caps.threads, threads);
          for (const shape of SHAPES) {
            const got = await checkShape(aw, shape);
            if (!first[shape.name]) { first[shape.name] = got; continue; }
            for (const k of Object.keys(got)) assertSame(got[k], first[shape.name][k], `${shape.name} ${k}: ${threads} threads vs 1`);
          }
        } finally {
          await aw.close();
        }
      }
    });
}
