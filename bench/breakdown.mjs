// Where attnwasm's time goes, one thread, one process, against the same run's
// single-core SIMD peak (lib.mjs peakProbe, probed beside every kernel sample):
//   1. MultiheadAttention S1–S4 split into its projections (Linear) and its
//      attention core (scaledDotProductAttention), as a user calls them;
//   2. the packed GEMM alone (no JS copies) on 512³ and the MHA projections,
//      as a fraction of the peak;
//   3. the attention core alone (no JS copies) with the head dim swept at a
//      fixed number of scores: a straight-line fit t = a + b·flops separates
//      the cost per score (masks, online softmax, packing: a) from the matmul
//      work that grows with hd (b); plus hd = 64 as a fraction of the peak,
//      and a causal run (skipped chunks: about half the time);
//   4. a large batched attention, q = k = v of (128, 512, 1024), through the
//      public scaledDotProductAttention.
// Not part of run.sh's engine comparison; a diagnostic and the source of the
// README's "where the time goes" figures. Prints a table and one JSON line.
// Usage: node bench/breakdown.mjs [--no-large]
import { init } from '../bindings/index.js';
import { besidePeak, kernelBench, median, peakProbe } from './lib.mjs';

const aw = await init({ threads: 1 }); // the single-thread build, whatever the default
const kb = await kernelBench();
const data = (n) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37));
const probe = await peakProbe(); // probe(ms) → the single-core SIMD peak now, GFLOP/s
const peaks = [];
/** f() between two peak probes (lib.mjs besidePeak), the peak kept for the summary. */
function beside(f) {
  const r = besidePeak(probe, f);
  peaks.push(r.peak);
  return r;
}
function ms(f, { warm = 1000, reps = 30 } = {}) {
  for (const t0 = performance.now(); performance.now() - t0 < warm;) f();
  const t = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    f();
    t.push(performance.now() - t0);
  }
  return median(t);
}
const gf = (flops, t) => flops / t / 1e6;
const row = (name, flops, t, extra = '') => console.log(`${name.padEnd(40)} ${t.toFixed(3).padStart(9)} ms ${gf(flops, t).toFixed(1).padStart(6)} GFLOP/s${extra}`);
const out = { mha: {}, gemm: [], core: {} };


// 1. MHA and its parts.
for (const [name, L, E, H] of [['S1', 32, 128, 4], ['S2', 65, 192, 3], ['S3', 256, 256, 8], ['S4 (one batch)', 512, 512, 8]]) {
  const hd = E / H;
  console.log(`\n${name}: L = S = ${L}, E = ${E}, H = ${H}`);
  const x = { data: data(L * E), shape: [L, 1, E] };
  const mha = new aw.MultiheadAttention(E, H);
  const qkv = new aw.Linear(E, 3 * E), o = new aw.Linear(E, E);
  const q = { data: data(H * L * hd), shape: [H, L, hd] };
  const t = {
    mha: ms(() => mha.forward(x, x, x, { needWeights: false })),
    inProj: ms(() => qkv.forward(x)),
    outProj: ms(() => o.forward(x)),
    core: ms(() => aw.scaledDotProductAttention(q, q, q)),
  };
  row('MHA forward', 8 * L * E * E + 4 * L * L * E, t.mha);
  row('  in projection (Linear E → 3E)', 6 * L * E * E, t.inProj);
  row('  out projection (Linear E → E)', 2 * L * E * E, t.outProj);
  row('  attention core (SDPA)', 4 * L * L * E, t.core);
  out.mha[name.split(' ')[0]] = t;
  [mha, qkv, o].forEach((m) => m.dispose());
}

// 2. The GEMM alone.
console.log('\npacked GEMM alone (no JS copies), C(M, N) = A(M, K) · W(N, K)ᵀ:');
for (const [M, N, K] of [[512, 512, 512], [32, 384, 128], [65, 576, 192], [256, 768, 256], [512, 1536, 512], [256, 2048, 512]]) {
  const flops = 2 * M * N * K;
  const reps = Math.max(5, Math.min(200, Math.round(2e9 / flops)));
  kb.gemm(M, N, K, reps);
  const s = [0, 1, 2].map(() => beside(() => kb.gemm(M, N, K, reps)));
  const t = median(s.map((x) => x.t));
  row(`  ${M} × ${N} × ${K}`, flops, t);
  out.gemm.push({ M, N, K, gflops: gf(flops, t), fraction: median(s.map((x) => gf(flops, x.t) / x.peak)) });
}

// 3. The attention core alone: hd swept at H = 8, L = S = 256.
const H = 8, L = 256, scores = H * L * L;
console.log(`\nattention core alone (no JS copies), H = ${H}, L = S = ${L} (${scores} scores), head dim swept:`);
const pts = [];
let hd64Fractions = [];
for (const hd of [8, 16, 32, 64]) {
  kb.attention(H, L, hd, false, 5);
  const s = [0, 1, 2, 3, 4].map(() => beside(() => kb.attention(H, L, hd, false, 15)));
  const t = median(s.map((x) => x.t));
  pts.push([4 * scores * hd, t, hd]);
  if (hd === 64) hd64Fractions = s.map((x) => gf(4 * scores * hd, x.t) / x.peak);
  row(`  hd = ${hd}`, pts.at(-1)[0], t);
}
// Least-squares line t = a + b·flops: a is the part that does not grow with hd.
const fit = (p) => {
  const n = p.length, sx = p.reduce((s, q) => s + q[0], 0), sy = p.reduce((s, q) => s + q[1], 0);
  const sxx = p.reduce((s, q) => s + q[0] * q[0], 0), sxy = p.reduce((s, q) => s + q[0] * q[1], 0);
  const b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return { a: (sy - b * sx) / n, b };
};
const f = fit(pts);
out.core.nsPerScore = (f.a * 1e6) / scores;
out.core.matmulGflops = 1 / f.b / 1e6;
out.core.hd64Gflops = gf(pts[3][0], pts[3][1]);
out.core.hd64Fraction = median(hd64Fractions);
console.log(`  fit: ${f.a.toFixed(3)} ms fixed = ${out.core.nsPerScore.toFixed(2)} ns per score; matmul part at ${out.core.matmulGflops.toFixed(1)} GFLOP/s`);
const tc = median([0, 1, 2].map(() => { kb.attention(H, L, 64, true, 5); return kb.attention(H, L, 64, true, 15); }));
out.core.causalRatio = tc / pts[3][1];
console.log(`  hd = 64, causal: ${tc.toFixed(3)} ms = ${out.core.causalRatio.toFixed(2)} × the full attention`);

// 4. Large batched attention through the public API.
if (!process.argv.includes('--no-large')) {
  const [B, Ll, E] = [128, 512, 1024];
  const qq = { data: data(B * Ll * E), shape: [B, Ll, E] };
  const flops = 4 * B * Ll * Ll * E;
  aw.scaledDotProductAttention(qq, qq, qq);
  const s = [0, 1, 2].map(() => beside(() => { const a = performance.now(); aw.scaledDotProductAttention(qq, qq, qq); return performance.now() - a; }));
  const t = median(s.map((x) => x.t));
  console.log('\nlarge batched attention:');
  row(`  SDPA q = k = v (${B}, ${Ll}, ${E})`, flops, t);
  out.large = { ms: t, gflops: gf(flops, t), fraction: median(s.map((x) => gf(flops, x.t) / x.peak)) };
}

const peak = median(peaks);
out.peakGflops = peak;
console.log(`\nsingle-core SIMD peak, probed beside the samples: median ${peak.toFixed(1)} GFLOP/s`);
console.log(`GEMM alone: ${out.gemm.map((g) => `${g.M}×${g.N}×${g.K} ${(100 * g.fraction).toFixed(0)} %`).join(', ')}`);
console.log(`attention core at hd = 64: ${(100 * out.core.hd64Fraction).toFixed(0)} % of the peak; fixed cost ${out.core.nsPerScore.toFixed(2)} ns per score`);
if (out.large) console.log(`large SDPA: ${out.large.gflops.toFixed(1)} GFLOP/s = ${(100 * out.large.fraction).toFixed(0)} % of the peak`);
console.log(JSON.stringify(out));
