// CLIP ViT-B/32's shape (151 M parameters; random weights from bench/export_clip_onnx.py): attnwasm's CLIPModel
// (imageFeatures, textFeatures) against onnxruntime-web (wasm EP, float32) on the same weights and inputs, in one
// Node process, 1 thread, their calls alternated so that a noisy machine slows both alike. Not a test. Workloads
// (issue 39): the image tower on a batch of 1 and of 8 (50 tokens each; pixel_values given), and the text tower on
// 100 labels of 7 to 12 tokens, padded to the longest with an attention mask (as the zero-shot pipeline's processor
// pads them). Also the first call of each in this fresh process, and the share of the same run's SIMD peak.
// Needs bench/onnx/clip (/usr/bin/python3 bench/export_clip_onnx.py) and bench/node_modules (npm ci).
// Usage: node bench/clip.mjs [--rounds 5] [--json]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, describeMachine, median, peakProbe, rng } from './lib.mjs';

const DIR = join(BENCH_DIR, 'onnx', 'clip');
const S = 224, LABELS = 100;

function args() {
  const a = process.argv.slice(2);
  const i = a.indexOf('--rounds');
  const rounds = i >= 0 ? Number(a[i + 1]) : 5;
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError(`--rounds: expected an integer >= 1, got ${a[i + 1]}`);
  return { rounds, json: a.includes('--json') };
}

const tensor = (c) => {
  const b = Buffer.from(c.base64, 'base64');
  return { data: new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)), shape: c.shape };
};
const maxDiff = (got, want) => Math.max(...Array.from(want, (w, i) => Math.abs(got[i] - w)));

// FLOPs of one tower's pass over T tokens: the layers' projections and MLP, attention's two products.
const towerFlops = (E, I, L, T) => 2 * L * ((4 * E * E + 2 * E * I) * T + 2 * T * T * E);

async function main() {
  const o = args();
  if (!existsSync(join(DIR, 'text.onnx'))) throw new Error(`${DIR} is missing: run /usr/bin/python3 bench/export_clip_onnx.py`);
  const probe = await peakProbe();
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 };
  const vision = await ort.InferenceSession.create(join(DIR, 'vision.onnx'), opts);
  const text = await ort.InferenceSession.create(join(DIR, 'text.onnx'), opts);
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads: 1 });
  const m = await aw.loadModel(join(DIR, 'base'));
  const big = (a) => BigInt64Array.from(a, (v) => BigInt(v));
  const engines = {
    image: {
      attnwasm: (px) => m.imageFeatures({ pixelValues: px }).data,
      ort: async (px) => (await vision.run({ pixel_values: new ort.Tensor('float32', px.data, px.shape) })).image_embeds.data,
    },
    text: {
      attnwasm: (t) => m.textFeatures({ inputIds: t.ids, attentionMask: t.mask }).data,
      ort: async (t) => (await text.run({ input_ids: new ort.Tensor('int64', big(t.ids.data), t.ids.shape),
        attention_mask: new ort.Tensor('int64', big(t.mask.data), t.mask.shape) })).text_embeds.data,
    },
  };
  const c = JSON.parse(readFileSync(join(DIR, 'check.json'), 'utf8'));
  const px = tensor(c.pixelValues);
  const ids = { ids: { data: Int32Array.from(c.inputIds), shape: c.idsShape }, mask: { data: Int32Array.from(c.attentionMask), shape: c.idsShape } };
  const check = {}, first = {};
  for (const [tower, input, want] of [['image', px, tensor(c.imageEmbeds).data], ['text', ids, tensor(c.textEmbeds).data]]) {
    for (const [k, run] of Object.entries(engines[tower])) {
      const t0 = performance.now();
      const got = await run(input);
      first[`${tower} ${k}`] = performance.now() - t0;  // the first call in this process
      check[`${tower} ${k}`] = maxDiff(got, want);
      if (!(check[`${tower} ${k}`] < 1e-3)) throw new Error(`${tower} ${k}: max |embeds - torch| ${check[`${tower} ${k}`]}`);
    }
  }
  const r = rng(39);
  const images = (n) => ({ data: Float32Array.from({ length: n * 3 * S * S }, () => r() * 2 - 1), shape: [n, 3, S, S] });
  const lens = Array.from({ length: LABELS }, () => 7 + Math.floor(r() * 6));
  const T = Math.max(...lens);
  const labelIds = { data: new Int32Array(LABELS * T).fill(49407), shape: [LABELS, T] };
  const labelMask = { data: new Int32Array(LABELS * T), shape: [LABELS, T] };
  lens.forEach((n, i) => {
    labelIds.data[i * T] = 49406;
    for (let t = 1; t < n - 1; t++) labelIds.data[i * T + t] = Math.floor(r() * 49405);
    labelMask.data.fill(1, i * T, i * T + n);
  });
  const workloads = [
    ['image tower, batch 1', 'image', images(1), towerFlops(768, 3072, 12, 50) + 2 * 3 * 32 * 32 * 768 * 49],
    ['image tower, batch 8', 'image', images(8), 8 * (towerFlops(768, 3072, 12, 50) + 2 * 3 * 32 * 32 * 768 * 49)],
    [`text tower, ${LABELS} labels`, 'text', { ids: labelIds, mask: labelMask }, lens.reduce((a, n) => a + towerFlops(512, 2048, 12, n), 0)],
  ];
  const result = { machine: describeMachine(), rounds: o.rounds, check, firstCallMs: first, workloads: {} };
  for (const [name, tower, input, flops] of workloads) {
    const times = { attnwasm: [], ort: [] };
    for (let k = 0; k < o.rounds; k++) {
      for (const e of k % 2 ? ['ort', 'attnwasm'] : ['attnwasm', 'ort']) {
        const t0 = performance.now();
        await engines[tower][e](input);
        times[e].push(performance.now() - t0);
      }
    }
    const med = { attnwasm: median(times.attnwasm), ort: median(times.ort) };
    result.workloads[name] = { medianMs: med, ratio: med.ort / med.attnwasm, flops };
  }
  const peak = median(Array.from({ length: 5 }, () => probe(40)));
  result.peakGflops = peak;
  for (const w of Object.values(result.workloads)) w.ofPeak = w.flops / (peak * 1e6) / w.medianMs.attnwasm;
  // q8 (every projection as int8 with per-row scales): the cosine of its embeddings to the f32 model's, on the
  // check inputs and the timed ones.
  const q = await aw.loadModel(join(DIR, 'base'), { dtype: 'q8' });
  const cosines = (a, b, D) => Array.from({ length: a.length / D }, (_, i) => {
    let ab = 0, aa = 0, bb = 0;
    for (let k = i * D; k < (i + 1) * D; k++) { ab += a[k] * b[k]; aa += a[k] * a[k]; bb += b[k] * b[k]; }
    return ab / Math.sqrt(aa * bb);
  });
  const x8 = workloads[1][2], labelsIn = workloads[2][2];
  const cos = [
    ...cosines(q.imageFeatures({ pixelValues: x8 }).data, m.imageFeatures({ pixelValues: x8 }).data, 512),
    ...cosines(q.textFeatures({ inputIds: labelsIn.ids, attentionMask: labelsIn.mask }).data, m.textFeatures({ inputIds: labelsIn.ids, attentionMask: labelsIn.mask }).data, 512),
  ];
  result.q8 = { minCosine: Math.min(...cos), medianCosine: median(cos), weightBytes: q.weightBytes, f32WeightBytes: m.weightBytes };
  q.dispose();
  m.dispose();
  await vision.release();
  await text.release();
  aw.close();
  if (o.json) return console.log(JSON.stringify(result));
  console.log(result.machine);
  console.log(`CLIP ViT-B/32 shape (151 M), 1 thread, median of ${o.rounds}; max |embeds - torch|: ${Object.entries(check).map(([k, v]) => `${k} ${v.toExponential(1)}`).join(', ')}`);
  for (const [name, w] of Object.entries(result.workloads)) {
    console.log(`  ${name}: attnwasm ${w.medianMs.attnwasm.toFixed(1)} ms (${(100 * w.ofPeak).toFixed(0)} % of this run's SIMD peak, ${peak.toFixed(1)} GFLOP/s), onnxruntime-web ${w.medianMs.ort.toFixed(1)} ms: ${w.ratio.toFixed(2)}x`);
  }
  console.log(`  q8: weights ${(result.q8.weightBytes / 1e6).toFixed(1)} MB (f32 ${(result.q8.f32WeightBytes / 1e6).toFixed(1)} MB); cosine of its embeddings to f32's over 8 images and ${LABELS} labels: min ${result.q8.minCosine.toFixed(5)}, median ${result.q8.medianCosine.toFixed(5)}`);
  console.log(`  first calls (fresh process): ${Object.entries(first).map(([k, v]) => `${k} ${v.toFixed(0)} ms`).join(', ')}`);
  console.log(`  (the text tower's labels: ${Math.min(...lens)} to ${T} tokens, padded to ${T} for onnxruntime-web; attnwasm runs each at its own length under the causal mask)`);
}

await main();
