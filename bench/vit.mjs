// ViT-B/16's shape (86 M parameters, 224 x 224, 197 tokens; random weights from bench/export_vit_onnx.py): attnwasm's
// VisionModel.forward against onnxruntime-web (wasm EP, float32) on the same weights and pixel_values, in one Node
// process, 1 thread, their calls alternated so that a noisy machine slows both alike. Not a test. Workloads (issue
// 39): a batch of 1 and a batch of 8 images (pixel_values given: preprocessing is timed by bench/image.mjs). Also the
// first call of each in this fresh process, and the share of the same run's SIMD peak.
// Needs bench/onnx/vit (/usr/bin/python3 bench/export_vit_onnx.py) and bench/node_modules (npm ci).
// Usage: node bench/vit.mjs [--rounds 5] [--json]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, describeMachine, median, peakProbe, rng } from './lib.mjs';

const DIR = join(BENCH_DIR, 'onnx', 'vit');
const E = 768, T = 197, S = 224;

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

async function main() {
  const o = args();
  if (!existsSync(join(DIR, 'base.onnx'))) throw new Error(`${DIR} is missing: run /usr/bin/python3 bench/export_vit_onnx.py`);
  const probe = await peakProbe();
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(join(DIR, 'base.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 });
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads: 1 });
  const m = await aw.loadModel(join(DIR, 'base'));
  const engines = {
    attnwasm: (px) => m.forward({ pixelValues: px }).poolerOutput.data,
    ort: async (px) => (await session.run({ pixel_values: new ort.Tensor('float32', px.data, px.shape) })).pooler_output.data,
  };
  const c = JSON.parse(readFileSync(join(DIR, 'check.json'), 'utf8'));
  const px = tensor(c.pixelValues), want = tensor(c.poolerOutput).data;
  const check = {}, first = {};
  for (const [k, run] of Object.entries(engines)) {
    const t0 = performance.now();
    const got = await run(px);
    first[k] = performance.now() - t0;  // the first call in this process: batch 2
    check[k] = Math.max(...Array.from(want, (w, i) => Math.abs(got[i] - w)));
    if (!(check[k] < 1e-3)) throw new Error(`${k}: max |pooler_output - torch| ${check[k]}`);
  }
  const r = rng(39);
  const batch = (n) => ({ data: Float32Array.from({ length: n * 3 * S * S }, () => r() * 2 - 1), shape: [n, 3, S, S] });
  const result = { machine: describeMachine(), rounds: o.rounds, check, firstCallMs: first, batches: {} };
  const flopsPerImage = 2 * (12 * (4 * E * E + 2 * E * 3072) * T + 12 * 2 * T * T * E + 768 * 768 * 196);
  for (const n of [1, 8]) {
    const x = batch(n), times = { attnwasm: [], ort: [] };
    for (let k = 0; k < o.rounds; k++) {
      for (const e of k % 2 ? ['ort', 'attnwasm'] : ['attnwasm', 'ort']) {
        const t0 = performance.now();
        await engines[e](x);
        times[e].push(performance.now() - t0);
      }
    }
    const med = { attnwasm: median(times.attnwasm), ort: median(times.ort) };
    result.batches[n] = { medianMs: med, ratio: med.ort / med.attnwasm, flops: n * flopsPerImage };
  }
  const peak = median(Array.from({ length: 5 }, () => probe(40)));
  result.peakGflops = peak;
  for (const b of Object.values(result.batches)) b.ofPeak = b.flops / (peak * 1e6) / b.medianMs.attnwasm;
  m.dispose();
  await session.release();
  aw.close();
  if (o.json) return console.log(JSON.stringify(result));
  console.log(result.machine);
  console.log(`ViT-B/16 shape (86 M, 197 tokens), 1 thread, median of ${o.rounds}; max |pooler_output - torch|: attnwasm ${check.attnwasm.toExponential(1)}, ort ${check.ort.toExponential(1)}`);
  for (const [n, b] of Object.entries(result.batches)) {
    console.log(`  batch ${n}: attnwasm ${b.medianMs.attnwasm.toFixed(0)} ms (${(100 * b.ofPeak).toFixed(0)} % of this run's SIMD peak, ${peak.toFixed(1)} GFLOP/s), onnxruntime-web ${b.medianMs.ort.toFixed(0)} ms: ${b.ratio.toFixed(2)}x`);
  }
  console.log(`  first call (batch 2, fresh process): attnwasm ${first.attnwasm.toFixed(0)} ms, onnxruntime-web ${first.ort.toFixed(0)} ms`);
}

await main();
