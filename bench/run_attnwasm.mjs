// attnwasm runner: the package's public JS API (bindings/index.js), one wasm
// instance, weights from the same safetensors file the peers use.
// Usage: node bench/run_attnwasm.mjs <case> check|time [threads] [relaxed]  (see lib.mjs)
// threads: 1 (default: the single-thread build, engine id "attnwasm") or N > 1
// (the pthreads build with N threads, engine id "attnwasmN"). Always the
// baseline build, except with `relaxed` (engine id "attnwasm-relaxed", or
// "attnwasmN-relaxed"): the relaxed-SIMD build, which needs
// node --experimental-wasm-relaxed-simd.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { init } from '../bindings/index.js';
import { loadCase, runCase, ONNX_DIR } from './lib.mjs';
import { attnwasmCase } from './attnwasm_case.mjs';

const job = loadCase();
const { c, io } = job;
const threads = Number(process.argv[4] ?? 1);
const relaxedSimd = process.argv[5] === 'relaxed';
const engine = `${threads > 1 ? `attnwasm${threads}` : 'attnwasm'}${relaxedSimd ? '-relaxed' : ''}`;
const aw = await init({ threads, relaxedSimd });
const caps = aw.capabilities();
if ((caps.threads || 1) !== threads) throw new Error(`attnwasm: asked for ${threads} threads, got ${JSON.stringify(caps)}`);
if (caps.relaxedSimd !== relaxedSimd) throw new Error(`attnwasm: relaxedSimd ${relaxedSimd} asked, got ${JSON.stringify(caps)}`);
const sd = aw.loadSafetensors(readFileSync(join(ONNX_DIR, `${c.name}.safetensors`)));
const { module, forward } = attnwasmCase(aw, c, io, sd);
await runCase(engine, job, forward, { threads, relaxedSimd });
module.dispose();
