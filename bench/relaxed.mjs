// The relaxed-SIMD build against the baseline build, in one process, and both
// against onnxruntime-web with 1 thread: the GEMM kernel alone on 512³ (each
// build paired with its own peak probe: mul + add for the baseline,
// relaxed_madd for the relaxed build), then per case (default: matmul, i.e.
// Linear 512³ x·Wᵀ, and mha_S3) the call a user makes, with the three engines'
// calls alternated in blocks so that a noisy machine slows them alike.
// Prints a table and one JSON line; results.md's "Relaxed SIMD" section
// comes from it (bench/README.md).
// Needs bench/onnx and bench/node_modules (run.sh makes both) and relaxed SIMD:
// Usage: node --experimental-wasm-relaxed-simd bench/relaxed.mjs [matmul,mha_S3,…] [--rounds N] [--calls N]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { init } from '../bindings/index.js';
import { ONNX_DIR, RELAXED_SIMD, besidePeak, describeMachine, kernelBench, loadManifest, median, peakProbe, readSafetensors } from './lib.mjs';
import { attnwasmCase } from './attnwasm_case.mjs';

if (!RELAXED_SIMD) {
  console.error('bench/relaxed.mjs: this Node does not run WebAssembly relaxed SIMD: run it as node --experimental-wasm-relaxed-simd bench/relaxed.mjs');
  process.exit(2);
}
const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i < 0 ? dflt : Number(argv[i + 1]); };
const only = argv[0] && !argv[0].startsWith('--') ? argv[0].split(',') : ['matmul', 'mha_S3'];
const ROUNDS = opt('--rounds', 7);
const CALLS = opt('--calls', 40);

const base = await init({ threads: 1, relaxedSimd: false });
const rs = await init({ threads: 1 });
if (base.capabilities().relaxedSimd || !rs.capabilities().relaxedSimd) throw new Error(`builds: ${JSON.stringify([base.capabilities(), rs.capabilities()])}`);
const probe = { base: await peakProbe(), rs: await peakProbe({ relaxed: true }) };
const kb = { base: await kernelBench(), rs: await kernelBench({ relaxed: true }) };

// ---- 1. the GEMM kernel alone, 512³, inside wasm (kernelBench: no copies) ----
const M = 512, N = 512, K = 512, FLOPS = 2 * M * N * K, REPS = 20;
for (const k of ['base', 'rs']) kb[k].gemm(M, N, K, REPS); // warm-up: V8 tiers up
const gemm = { base: { g: [], f: [], peak: [] }, rs: { g: [], f: [], peak: [] } };
for (let r = 0; r < ROUNDS; r++) {
  for (const k of r % 2 ? ['rs', 'base'] : ['base', 'rs']) {
    const { t, peak } = besidePeak(probe[k], () => kb[k].gemm(M, N, K, REPS));
    const g = FLOPS / t / 1e6;
    gemm[k].g.push(g); gemm[k].f.push(g / peak); gemm[k].peak.push(peak);
  }
}
const gemmRow = (k) => ({ gflops: median(gemm[k].g), fraction: median(gemm[k].f), peak: median(gemm[k].peak) });
const kernel = { base: gemmRow('base'), rs: gemmRow('rs') };
// Ratios of the pairs of one round (same moment of the machine), then their median.
kernel.speedup = median(gemm.rs.g.map((g, i) => g / gemm.base.g[i]));

// ---- 2. the cases through the public API, against onnxruntime-web 1 thread ----
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
const manifest = loadManifest();
const cases = [];
for (const c of manifest.cases.filter((x) => only.includes(x.name))) {
  const io = readSafetensors(join(ONNX_DIR, `${c.name}.io.safetensors`));
  const weights = readFileSync(join(ONNX_DIR, `${c.name}.safetensors`));
  const a = attnwasmCase(base, c, io, base.loadSafetensors(weights));
  const b = attnwasmCase(rs, c, io, rs.loadSafetensors(weights));
  const session = await ort.InferenceSession.create(join(ONNX_DIR, `${c.name}.onnx`), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  const feeds = {};
  for (const [name, shape] of Object.entries(c.inputs)) feeds[name] = new ort.Tensor('float32', io[name].data, shape);
  const engines = {
    base: async () => a.forward(),
    rs: async () => b.forward(),
    ort1: async () => { const out = await session.run(feeds); const d = out.y.data; out.y.dispose?.(); return d; },
  };
  // The same numbers first (the baseline against torch's output, the others against the baseline).
  const want = io.expected.data;
  const outs = {};
  for (const [k, f] of Object.entries(engines)) outs[k] = Float32Array.from(await f());
  const diff = (x, y) => x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i])), 0);
  const diffs = { base: diff(outs.base, want), rs: diff(outs.rs, outs.base), ort1: diff(outs.ort1, outs.base) };
  for (const [k, d] of Object.entries(diffs)) if (!(d <= 1e-3)) throw new Error(`${c.name}: ${k}: max abs diff ${d}`);
  // Blocks of BLOCK calls, engines alternated (order rotated per block); the
  // first call of a block and the first two blocks are not counted.
  const BLOCK = 5, times = { base: [], rs: [], ort1: [] }, keys = Object.keys(engines);
  for (let blk = 0; blk < CALLS / (BLOCK - 1) + 2; blk++) {
    for (let j = 0; j < keys.length; j++) {
      const k = keys[(blk + j) % keys.length];
      for (let i = 0; i < BLOCK; i++) {
        const t0 = performance.now();
        await engines[k]();
        if (blk >= 2 && i > 0) times[k].push(performance.now() - t0);
      }
    }
  }
  const ms = Object.fromEntries(keys.map((k) => [k, median(times[k])]));
  cases.push({ case: c.name, flops: c.flops, ms, calls: times.base.length, diffs, speedup: ms.base / ms.rs, ortOverRs: ms.ort1 / ms.rs, ortOverBase: ms.ort1 / ms.base });
  a.module.dispose(); b.module.dispose();
  await session.release();
}

const machine = describeMachine();
const pc = (x) => `${(100 * x).toFixed(0)} %`;
console.log(`Machine: ${machine}; Node ${process.version}; onnxruntime-web ${ort.env.versions?.web ?? '?'}`);
console.log(`GEMM kernel 512³ (kernelBench, ${ROUNDS} rounds): baseline ${kernel.base.gflops.toFixed(1)} GFLOP/s = ${pc(kernel.base.fraction)} of the mul+add peak `
  + `(${kernel.base.peak.toFixed(1)}); relaxed ${kernel.rs.gflops.toFixed(1)} GFLOP/s = ${pc(kernel.rs.fraction)} of the relaxed-madd peak (${kernel.rs.peak.toFixed(1)}); `
  + `relaxed / baseline ${kernel.speedup.toFixed(2)}×`);
console.log('| case | baseline ms | relaxed ms | onnxruntime-web 1 thread ms | baseline / relaxed | ort1 / relaxed | ort1 / baseline |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const r of cases) {
  console.log(`| ${r.case} | ${r.ms.base.toFixed(3)} | ${r.ms.rs.toFixed(3)} | ${r.ms.ort1.toFixed(3)} | ${r.speedup.toFixed(2)}× | ${r.ortOverRs.toFixed(2)}× | ${r.ortOverBase.toFixed(2)}× |`);
}
console.log(JSON.stringify({ machine, node: process.version, rounds: ROUNDS, kernel, cases }));
