// onnxruntime-web runner: the wasm execution provider in Node, on the ONNX
// file export_onnx.py traced from the same torch module.
// Usage: node bench/run_ort.mjs <case> check|time <threads: 1|2>  (see lib.mjs)
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { loadCase, runCase, ONNX_DIR } from './lib.mjs';

const job = loadCase();
const { c, io } = job;
const threads = Number(process.argv[4] ?? 1);
if (threads !== 1 && threads !== 2) throw new Error(`threads: expected 1 or 2, got ${process.argv[4]}`);
ort.env.wasm.numThreads = threads;
ort.env.logLevel = 'error';
const session = await ort.InferenceSession.create(join(ONNX_DIR, `${c.name}.onnx`), {
  executionProviders: ['wasm'],
  graphOptimizationLevel: 'all',
  logSeverityLevel: 3,
});
const feeds = {};
for (const [name, shape] of Object.entries(c.inputs)) feeds[name] = new ort.Tensor('float32', io[name].data, shape);
const forward = async () => {
  const out = await session.run(feeds);
  const y = out.y;
  const data = y.data;
  y.dispose?.();
  return data;
};
await runCase(`ort${threads}`, job, forward, { threads, version: ort.env.versions?.web ?? null });
await session.release();
// Worker threads (numThreads 2) would keep Node alive.
process.exit(0);
