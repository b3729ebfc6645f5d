// Issue 31's causal-LM families through the JS API, against the PyTorch twins of tools/families.py (goldens written
// by tests/data/make_family_goldens.py into tests/data/goldens/families/): for every golden and every config.json
// generation it carries (transformers 4.x, 5.x and variants), aw.loadModel(bytes, { config }) must give forward's
// logits within atol + rtol·|x| (1e-4 + 1e-4·|x|) and, through generate (the KV-cache path), the greedy ids up to
// the first near tie (margin < greedyMinMargin); where the golden says forwardMatchesSteps, forward of prompt + ids
// must also reproduce the logits that chose each id. refusals.json: what the runtime must refuse before using any
// weight, the message naming the config key. The goldens' kvCache.logits (teacher-forced prefill + single tokens)
// are for the native test of the append path; the JS API does not expose per-step logits.
// Until the families land, every model test fails with "loadModel refused it" and the runtime's own message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { init } from '../../bindings/index.js';

const DIR = new URL('../data/goldens/families/', import.meta.url);
const FAMILIES = ['llama', 'qwen3', 'mistral', 'gemma3_text', 'phi3', 'smollm3'];
const aw = await init({ threads: 1 });
const read = (name) => JSON.parse(readFileSync(new URL(name, DIR), 'utf8'));
const NAMES = readdirSync(DIR).filter((f) => f.endsWith('.json') && f !== 'refusals.json').map((f) => f.slice(0, -5)).sort();
const GOLDENS = NAMES.map((n) => read(`${n}.json`));

/** The bytes of a base64 string (a fresh Uint8Array, owned by the caller). */
const bytesOf = (b64) => new Uint8Array(Buffer.from(b64, 'base64'));

/** A golden float tensor {dtype: 'F32', shape, base64} → { data: Float32Array, shape }. */
function f32(t) {
  assert.equal(t.dtype, 'F32');
  const b = Buffer.from(t.base64, 'base64');
  const data = new Float32Array(b.length / 4);
  new Uint8Array(data.buffer).set(b);
  return { data, shape: t.shape };
}

/** max over i of |got − want| / (atol + rtol·|want|) and where: ≤ 1 passes. */
function worst(got, want, atol, rtol) {
  let r = 0, at = -1;
  for (let i = 0; i < want.length; i++) {
    const x = Math.abs(got[i] - want[i]) / (atol + rtol * Math.abs(want[i]));
    if (!(x <= r)) { r = Number.isNaN(x) ? Infinity : x; at = i; }
  }
  return { r, at, got: got[at], want: want[at] };
}

/** Loads a golden with one of its configs; a refusal becomes an error saying which family and features are missing. */
async function load(g, gen) {
  try {
    return await aw.loadModel(bytesOf(g.weights.base64), { config: g.configs[gen] });
  } catch (e) {
    throw new Error(`${g.name} (${gen} config.json): loadModel refused it; the ${g.family} family of issue 31 `
      + `(${g.features.join('; ')}) is not supported yet? ${e.code}: ${e.message}`);
  }
}

/** Greedy ids through generate (prefill, then one token per step against the KV cache). */
async function generateIds(lm, prompt, n) {
  const out = [];
  for await (const t of lm.generate(prompt, { maxNewTokens: n, stopTokens: [] })) out.push(t.id);
  return out;
}

test('the goldens cover issue 31: six families, both config generations, BF16 in each family, tied and untied, windows shorter than the prompt, every RoPE type', () => {
  assert.deepEqual([...new Set(GOLDENS.map((g) => g.family))].sort(), [...FAMILIES].sort());
  for (const f of FAMILIES) {
    const mine = GOLDENS.filter((g) => g.family === f);
    assert.ok(mine.some((g) => g.weights.dtype === 'BF16'), `${f}: a BF16 checkpoint`);
  }
  for (const g of GOLDENS) {
    assert.ok('v4' in g.configs && 'v5' in g.configs, `${g.name}: 4.x and 5.x config.json`);
    assert.ok(!('rope_parameters' in g.configs.v4) && 'rope_parameters' in g.configs.v5, `${g.name}: the generations differ`);
    assert.equal(g.configs.v4.model_type, g.family);
    const [B, T] = [g.forward.ids.length, g.forward.ids[0].length];
    assert.deepEqual(f32(g.forward.logits).shape, [B, T, g.shape.vocab]);
    assert.ok(g.kvCache.prefill > 0 && g.kvCache.prefill < T);
    assert.ok(Buffer.from(g.weights.base64, 'base64').length === g.weights.bytes);
  }
  const shapes = GOLDENS.map((g) => g.shape);
  assert.deepEqual(new Set(shapes.map((s) => s.tied)), new Set([true, false]));
  assert.deepEqual(new Set(shapes.map((s) => s.dtype)), new Set(['F32', 'F16', 'BF16']));
  const rope = new Set(shapes.flatMap((s) => s.ropeTypes));
  for (const t of ['default', 'linear', 'dynamic', 'yarn', 'llama3', 'longrope', null]) assert.ok(rope.has(t), `rope ${t}`);
  assert.ok(GOLDENS.some((g) => g.shape.windows.some((w) => w !== null && w < g.forward.ids[0].length)), 'a window shorter than the prompt');
  assert.ok(shapes.some((s) => s.rotaryDim < s.headDim), 'partial rotary');
  assert.ok(shapes.some((s) => s.gqaRatio === 1) && shapes.some((s) => s.gqaRatio >= 3), 'GQA ratios');
  assert.ok(GOLDENS.some((g) => !g.kvCache.equalsForward), 'a KV path that differs from the recomputation (dynamic, longrope)');
});

for (const g of GOLDENS) {
  for (const gen of Object.keys(g.configs)) {
    test(`${g.name} (${gen} config.json): forward's logits and greedy ids through the KV cache equal the twin's`, async () => {
      const lm = await load(g, gen);
      try {
        assert.equal(lm.modelType, g.family);
        assert.equal(lm.vocabSize, g.shape.vocab);
        const ids = g.forward.ids;
        const [B, T] = [ids.length, ids[0].length];
        const want = f32(g.forward.logits).data;
        const { logits } = lm.forward({ data: Int32Array.from(ids.flat()), shape: [B, T] });
        assert.deepEqual(logits.shape, [B, T, g.shape.vocab]);
        const w = worst(logits.data, want, g.atol, g.rtol);
        const V = g.shape.vocab;
        assert.ok(w.r <= 1, `forward: ${w.r.toFixed(2)} tolerances at (b ${Math.floor(w.at / (T * V))}, t ${Math.floor(w.at / V) % T}, `
          + `id ${w.at % V}): ${w.got} vs ${w.want}`);
        for (const [k, gr] of g.greedy.entries()) {
          const got = await generateIds(lm, gr.prompt, gr.ids.length);
          const n = gr.margins.findIndex((m) => m < g.greedyMinMargin);
          const upTo = n < 0 ? gr.ids.length : n;
          assert.deepEqual(got.slice(0, upTo), gr.ids.slice(0, upTo), `greedy ${k}: ids (resets at ${JSON.stringify(gr.resets)})`);
          if (gr.forwardMatchesSteps) {
            const seq = [...gr.prompt, ...gr.ids.slice(0, -1)];
            const rows = lm.forward({ data: Int32Array.from(seq), shape: [1, seq.length] }).logits.data
              .subarray((gr.prompt.length - 1) * V);
            const s = worst(rows, f32(gr.stepLogits).data, g.atol, g.rtol);
            assert.ok(s.r <= 1, `greedy ${k}: forward of prompt + ids vs the step logits: ${s.r.toFixed(2)} tolerances`);
          }
        }
      } finally {
        lm.dispose();
      }
    });
  }
}

test('refusals.json: what a family cannot run exactly is refused by its config key before any weight is used; the runtime keeps working', async () => {
  const { cases, checkpoints, baseConfigs } = read('refusals.json');
  assert.ok(cases.length >= 30);
  assert.deepEqual(Object.keys(checkpoints).sort(), [...FAMILIES].sort());
  const failures = [];
  for (const c of cases) {
    const weights = bytesOf((c.weights ?? checkpoints[c.family]).base64);
    try {
      const lm = await aw.loadModel(weights, { config: c.config });
      lm.dispose();
      if (c.expect !== 'accepted') failures.push(`${c.name}: accepted; expected a refusal naming ${c.errorMentions}`);
    } catch (e) {
      if (c.expect === 'accepted') failures.push(`${c.name}: refused (${e.code}: ${e.message}); expected it to load`);
      else if (!e.message.includes(c.errorMentions)) failures.push(`${c.name}: the message does not name ${c.errorMentions}: ${e.message}`);
      else if (!['ERR_INVALID_ARGUMENT', 'ERR_STATE_DICT', 'ERR_SHAPE'].includes(e.code)) failures.push(`${c.name}: code ${e.code}`);
    }
  }
  assert.deepEqual(failures, []);
  // Still usable: a plain tiny Llama (default RoPE) loads and runs.
  const lm = await aw.loadModel(bytesOf(checkpoints.llama.base64), { config: baseConfigs.llama });
  assert.equal(lm.forward({ data: Int32Array.of(1, 2, 3), shape: [1, 3] }).logits.shape[2], lm.vocabSize);
  lm.dispose();
});
