// attnwasm runner: the package's public JS API (bindings/index.js), one wasm
// instance, weights from the same safetensors file the peers use.
// Usage: node bench/run_attnwasm.mjs <case> check|time [threads]  (see lib.mjs)
// threads: 1 (default: the single-thread build, engine id "attnwasm") or N > 1
// (the pthreads build with N threads, engine id "attnwasmN").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { init } from '../bindings/index.js';
import { loadCase, runCase, ONNX_DIR } from './lib.mjs';
import { attnwasmCase } from './attnwasm_case.mjs';

const job = loadCase();
const { c, io } = job;
const threads = Number(process.argv[4] ?? 1);
const engine = threads > 1 ? `attnwasm${threads}` : 'attnwasm';
const aw = await init({ threads });
if ((aw.capabilities().threads || 1) !== threads) throw new Error(`attnwasm: asked for ${threads} threads, got ${JSON.stringify(aw.capabilities())}`);
const sd = aw.loadSafetensors(readFileSync(join(ONNX_DIR, `${c.name}.safetensors`)));
const { module, forward } = attnwasmCase(aw, c, io, sd);
await runCase(engine, job, forward, { threads });
module.dispose();
