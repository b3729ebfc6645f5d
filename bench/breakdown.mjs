// Where attnwasm's MultiheadAttention time goes (attnwasm only, one process):
// the projections as Linear layers, the attention core as scaledDotProductAttention,
// and the core with the head dim swept at a fixed number of scores, which separates
// the cost per score (softmax, score buffer) from the matmul work that grows with hd.
// Not part of run.sh; a diagnostic for reading results.md.
// Usage: node bench/breakdown.mjs
import { init } from '../bindings/index.js';
import { median } from './lib.mjs';

const aw = await init({ threads: 1 }); // the single-thread build, whatever the default
const data = (n) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37));
function ms(f) {
  for (const t0 = performance.now(); performance.now() - t0 < 1000;) f();
  const t = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    f();
    t.push(performance.now() - t0);
  }
  return median(t);
}
const row = (name, flops, t) => console.log(`${name.padEnd(34)} ${t.toFixed(3).padStart(8)} ms ${(flops / t / 1e6).toFixed(1).padStart(6)} GFLOP/s`);

for (const [name, L, E, H] of [['S1', 32, 128, 4], ['S2', 65, 192, 3], ['S3', 256, 256, 8], ['S4 (one batch)', 512, 512, 8]]) {
  const hd = E / H;
  console.log(`\n${name}: L = S = ${L}, E = ${E}, H = ${H}`);
  const x = { data: data(L * E), shape: [L, 1, E] };
  const mha = new aw.MultiheadAttention(E, H);
  const qkv = new aw.Linear(E, 3 * E), out = new aw.Linear(E, E);
  const q = { data: data(H * L * hd), shape: [H, L, hd] };
  row('MHA forward', 8 * L * E * E + 4 * L * L * E, ms(() => mha.forward(x, x, x, { needWeights: false })));
  row('  in projection (Linear E → 3E)', 6 * L * E * E, ms(() => qkv.forward(x)));
  row('  out projection (Linear E → E)', 2 * L * E * E, ms(() => out.forward(x)));
  row('  attention core (SDPA)', 4 * L * L * E, ms(() => aw.scaledDotProductAttention(q, q, q)));
  [mha, qkv, out].forEach((m) => m.dispose());
}

console.log('\nattention core, H = 8, L = S = 256 (524288 scores), head dim swept:');
const pts = [];
for (const hd of [8, 16, 32, 64]) {
  const q = { data: data(8 * 256 * hd), shape: [8, 256, hd] };
  const t = ms(() => aw.scaledDotProductAttention(q, q, q));
  pts.push([4 * 8 * 256 * 256 * hd, t]);
  row(`  hd = ${hd}`, pts.at(-1)[0], t);
}
// Least-squares line t = a + b·flops: a is the part that does not grow with hd.
const n = pts.length, sx = pts.reduce((s, p) => s + p[0], 0), sy = pts.reduce((s, p) => s + p[1], 0);
const sxx = pts.reduce((s, p) => s + p[0] * p[0], 0), sxy = pts.reduce((s, p) => s + p[0] * p[1], 0);
const b = (n * sxy - sx * sy) / (n * sxx - sx * sx), a = (sy - b * sx) / n;
console.log(`  fit: ${a.toFixed(2)} ms fixed = ${(a * 1e6 / 524288).toFixed(1)} ns per score; matmul part at ${(1 / b / 1e6).toFixed(1)} GFLOP/s`);
