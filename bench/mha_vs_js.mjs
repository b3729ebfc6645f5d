// MultiheadAttention forward, attnwasm vs plain JS, same process, same inputs
// and weights. B=1, L=128, E=256, 8 heads, self-attention, need_weights false.
// Prints median ms of each and the ratio (medians of RUNS runs after warm-up).
// Usage: node bench/mha_vs_js.mjs [runs]
import { init } from '../bindings/index.js';
import { plainMha } from './plain_js_mha.mjs';

const RUNS = Number(process.argv[2] ?? 30);
const L = 128, N = 1, E = 256, H = 8;
const aw = await init({ threads: 1 }); // the single-thread build, whatever the default
const mha = new aw.MultiheadAttention(E, H);
const sd = Object.fromEntries(Object.entries(mha.stateDict()).map(([k, t]) => [k, t.data]));
const x = { data: Float32Array.from({ length: L * N * E }, (_, i) => Math.sin(i * 0.37)), shape: [L, N, E] };

function median(fn) {
  for (let i = 0; i < 5; i++) fn();
  const t = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    fn();
    t.push(performance.now() - t0);
  }
  t.sort((a, b) => a - b);
  return t[Math.floor(t.length / 2)];
}

// Same numbers first: a benchmark of a wrong result is worthless.
const ours = mha.forward(x, x, x, { needWeights: false }).output.data;
const theirs = plainMha(x.data, L, N, E, H, sd);
let maxDiff = 0;
for (let i = 0; i < ours.length; i++) maxDiff = Math.max(maxDiff, Math.abs(ours[i] - theirs[i]));
if (!(maxDiff < 1e-4)) throw new Error(`attnwasm and plain JS disagree: max abs diff ${maxDiff}`);

const tAw = median(() => mha.forward(x, x, x, { needWeights: false }));
const tJs = median(() => plainMha(x.data, L, N, E, H, sd));
const flops = 2 * L * E * E * 4 + 2 * 2 * H * L * L * (E / H);
console.log(`MHA forward B=${N} L=${L} E=${E} H=${H}, median of ${RUNS} runs (max |diff| ${maxDiff.toExponential(1)})`);
console.log(`| engine | median ms | GFLOP/s |`);
console.log(`|---|---|---|`);
console.log(`| attnwasm | ${tAw.toFixed(3)} | ${(flops / tAw / 1e6).toFixed(1)} |`);
console.log(`| plain JS | ${tJs.toFixed(3)} | ${(flops / tJs / 1e6).toFixed(1)} |`);
console.log(`ratio plain JS / attnwasm: ${(tJs / tAw).toFixed(2)}x`);
mha.dispose();
