// The packed GEMM on one thread against the same run's single-core SIMD peak
// (bench/simd_peak.mjs, measured before and after): 512³ and the projection
// shapes of issue 12 (M = 32, 256, 2048; K = 128 … 1024; N = K, 3K, 4K).
// Each shape twice: the kernel alone inside wasm (aw._benchGemm: no copies),
// and a Linear forward as a user calls it (copies in and out included).
// Not part of run.sh's engine comparison; prints a table and one JSON line.
// Usage: node bench/gemm.mjs [--quick]
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { init } from '../bindings/index.js';
import { BENCH_DIR, median } from './lib.mjs';

const quick = process.argv.includes('--quick');
const peak = () => JSON.parse(execFileSync(process.execPath, [join(BENCH_DIR, 'simd_peak.mjs'), '9'], { encoding: 'utf8' })).peakGflops;
const aw = await init({ threads: 1 });

const shapes = [[512, 512, 512]];
for (const M of quick ? [256] : [32, 256, 2048])
  for (const K of quick ? [256, 1024] : [128, 256, 512, 768, 1024])
    for (const N of [K, 3 * K, 4 * K]) shapes.push([M, N, K]);

function gflopsKernel(M, N, K) {
  const flops = 2 * M * N * K;
  const reps = Math.max(5, Math.min(200, Math.round(2e9 / flops)));
  aw._benchGemm(M, N, K, reps); // warm-up (V8 tiers up, buffers settle)
  return flops / aw._benchGemm(M, N, K, reps) / 1e6;
}

function gflopsLinear(M, N, K) {
  const lin = new aw.Linear(K, N);
  const x = { data: Float32Array.from({ length: M * K }, (_, i) => Math.sin(i)), shape: [M, K] };
  const flops = 2 * M * N * K;
  const t0 = performance.now();
  while (performance.now() - t0 < 300) lin.forward(x);
  const t = [];
  const reps = Math.max(5, Math.min(100, Math.round(1e9 / flops)));
  for (let r = 0; r < reps; r++) {
    const a = performance.now();
    lin.forward(x);
    t.push(performance.now() - a);
  }
  lin.dispose();
  return flops / median(t) / 1e6;
}

const before = peak();
const rows = shapes.map(([M, N, K]) => ({ M, N, K, kernel: gflopsKernel(M, N, K), linear: gflopsLinear(M, N, K) }));
const after = peak();
const p = Math.max(before, after);
console.log(`single-core SIMD peak (12 mul+add chains): ${before.toFixed(1)} before, ${after.toFixed(1)} after; using ${p.toFixed(1)} GFLOP/s`);
console.log('| M | N | K | kernel GFLOP/s | % of peak | Linear.forward GFLOP/s | % of peak |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.M} | ${r.N} | ${r.K} | ${r.kernel.toFixed(1)} | ${(100 * r.kernel / p).toFixed(0)} % | ${r.linear.toFixed(1)} | ${(100 * r.linear / p).toFixed(0)} % |`);
}
const kernelFractions = rows.map((r) => r.kernel / p);
console.log(`kernel: min ${(100 * Math.min(...kernelFractions)).toFixed(0)} %, median ${(100 * median(kernelFractions)).toFixed(0)} % of the peak`);
console.log(JSON.stringify({ peakGflops: p, rows }));
