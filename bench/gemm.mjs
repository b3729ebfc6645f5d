// The packed GEMM on one thread against the same run's single-core SIMD peak:
// 512³ and the projection shapes of issue 12 (M = 32, 256, 2048; K = 128 …
// 1024; N = K, 3K, 4K). Each shape twice: the kernel alone inside wasm
// (kernelBench: no copies), and a Linear forward as a user calls it (copies
// in and out included). Every sample is timed between two probes of the peak
// (lib.mjs peakProbe, the simd_peak.wat kernel, in this process), and the
// fraction of the peak is taken per sample: on a shared machine that slows
// down and speeds up by the second, the pair moves together.
// Not part of run.sh's engine comparison; prints a table and one JSON line.
// Usage: node bench/gemm.mjs [--quick]
import { init } from '../bindings/index.js';
import { besidePeak, kernelBench, median, peakProbe } from './lib.mjs';

const quick = process.argv.includes('--quick');
const ROUNDS = 5;
const aw = await init({ threads: 1 });
const kb = await kernelBench();
const probe = await peakProbe();

const shapes = [[512, 512, 512]];
for (const M of quick ? [256] : [32, 256, 2048])
  for (const K of quick ? [256, 1024] : [128, 256, 512, 768, 1024])
    for (const N of [K, 3 * K, 4 * K]) shapes.push([M, N, K]);

// One timed sample of the kernel alone: ms per call (median of `reps` inside wasm).
function kernelSampler(M, N, K) {
  const reps = Math.max(3, Math.min(100, Math.round(5e8 / (2 * M * N * K))));
  kb.gemm(M, N, K, reps); // warm-up (V8 tiers up, buffers settle)
  return { sample: () => kb.gemm(M, N, K, reps), dispose() {} };
}

// One timed sample of Linear.forward as a user calls it: median ms of a few calls.
function linearSampler(M, N, K) {
  const lin = new aw.Linear(K, N);
  const x = { data: Float32Array.from({ length: M * K }, (_, i) => Math.sin(i)), shape: [M, K] };
  const reps = Math.max(3, Math.min(50, Math.round(5e8 / (2 * M * N * K))));
  for (const t0 = performance.now(); performance.now() - t0 < 200;) lin.forward(x);
  return {
    sample() {
      const t = [];
      for (let r = 0; r < reps; r++) {
        const a = performance.now();
        lin.forward(x);
        t.push(performance.now() - a);
      }
      return median(t);
    },
    dispose: () => lin.dispose(),
  };
}

// ROUNDS samples, each between two peak probes; the fraction of a round is the
// sample's GFLOP/s over the mean of its two probes. Medians over the rounds.
function paired(sampler, flops) {
  const g = [], f = [], pk = [];
  for (let r = 0; r < ROUNDS; r++) {
    const { t, peak } = besidePeak(probe, () => sampler.sample());
    const gf = flops / t / 1e6;
    g.push(gf); pk.push(peak); f.push(gf / peak);
  }
  sampler.dispose();
  return { gflops: median(g), peak: median(pk), fraction: median(f) };
}

const rows = shapes.map(([M, N, K]) => {
  const flops = 2 * M * N * K;
  const k = paired(kernelSampler(M, N, K), flops);
  const l = paired(linearSampler(M, N, K), flops);
  return { M, N, K, kernel: k.gflops, kernelFraction: k.fraction, linear: l.gflops, linearFraction: l.fraction, peak: median([k.peak, l.peak]) };
});
const p = median(rows.map((r) => r.peak));
console.log(`single-core SIMD peak (12 mul+add chains, probed beside every sample): median ${p.toFixed(1)} GFLOP/s`);
console.log('| M | N | K | kernel GFLOP/s | % of peak | Linear.forward GFLOP/s | % of peak |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.M} | ${r.N} | ${r.K} | ${r.kernel.toFixed(1)} | ${(100 * r.kernelFraction).toFixed(0)} % | ${r.linear.toFixed(1)} | ${(100 * r.linearFraction).toFixed(0)} % |`);
}
const kf = rows.map((r) => r.kernelFraction);
console.log(`kernel: min ${(100 * Math.min(...kf)).toFixed(0)} %, median ${(100 * median(kf)).toFixed(0)} % of the peak`);
console.log(JSON.stringify({ peakGflops: p, rows }));
