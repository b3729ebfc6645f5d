// attnwasm and onnxruntime-web (1 thread) in one process, calls alternated, so
// that a noisy machine slows both alike: prints per case the min and p25 of each
// and their ratios. A quick check while working on a kernel; run.sh gives the
// figures to quote (separate processes, medians). Needs bench/onnx and
// bench/node_modules (run.sh makes both).
// Usage: node bench/vs_ort.mjs [mha_S2,encoder_S3,...] [--calls N]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { init } from '../bindings/index.js';
import { ONNX_DIR, loadManifest, readSafetensors, quantile } from './lib.mjs';
import { attnwasmCase } from './attnwasm_case.mjs';

const manifest = loadManifest();
const only = process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2].split(',') : null;
const callsArg = process.argv.indexOf('--calls');
const CALLS = callsArg > 0 ? Number(process.argv[callsArg + 1]) : 60;
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
const aw = await init({ threads: 1 });

for (const c of manifest.cases) {
  if (only ? !only.includes(c.name) : c.kind === 'matmul') continue;
  const io = readSafetensors(join(ONNX_DIR, `${c.name}.io.safetensors`));
  const sd = aw.loadSafetensors(readFileSync(join(ONNX_DIR, `${c.name}.safetensors`)));
  const { module: m, forward: fwd } = attnwasmCase(aw, c, io, sd);
  const session = await ort.InferenceSession.create(join(ONNX_DIR, `${c.name}.onnx`), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const feeds = {};
  for (const [name, shape] of Object.entries(c.inputs)) feeds[name] = new ort.Tensor('float32', io[name].data, shape);
  const times = { aw: [], ort: [] };
  // Blocks of BLOCK calls each, alternated; the first call of a block (caches
  // just filled by the other engine) and the first two blocks are not counted.
  const BLOCK = 5;
  for (let b = 0; b < CALLS / (BLOCK - 1) + 2; b++) {
    for (let i = 0; i < BLOCK; i++) {
      const a = performance.now();
      fwd();
      if (b >= 2 && i > 0) times.aw.push(performance.now() - a);
    }
    for (let i = 0; i < BLOCK; i++) {
      const a = performance.now();
      const out = await session.run(feeds);
      if (b >= 2 && i > 0) times.ort.push(performance.now() - a);
      out.y.dispose?.();
    }
  }
  const s = (x) => x.slice().sort((p, q) => p - q);
  const [A, O] = [s(times.aw), s(times.ort)];
  const q = (x, p) => quantile(x, p);
  console.log(`${c.name.padEnd(12)} attnwasm min ${A[0].toFixed(3)} p25 ${q(A, 0.25).toFixed(3)}  ort1 min ${O[0].toFixed(3)} p25 ${q(O, 0.25).toFixed(3)}  ratio min ${(O[0] / A[0]).toFixed(2)}× p25 ${(q(O, 0.25) / q(A, 0.25)).toFixed(2)}×`);
  m.dispose();
  await session.release();
}
