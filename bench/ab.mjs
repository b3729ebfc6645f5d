// A / B: the bench/ workloads (the shapes of bench/export_onnx.py: MHA S1–S5,
// encoder layers S1–S4, matmul 512³) through this checkout's API and another
// checkout's (`--root DIR`, its dist/ built), in one process, one thread,
// calls alternated in blocks so that a noisy machine slows both alike; the
// same weights and inputs in both. Prints per case both medians and B / A
// (above 1: this checkout is faster). A check while changing code; the
// figures to quote come from bench/run.sh.
// Usage: node bench/ab.mjs --root ../old-checkout [--only mha_S1,encoder_S3] [--calls 40] [--threads 1]
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeMachine, median } from './lib.mjs';

const argv = process.argv.slice(2);
const opt = (n) => { const i = argv.indexOf(n); return i < 0 ? null : argv[i + 1]; };
const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const other = opt('--root');
if (!other) throw new Error('usage: node bench/ab.mjs --root DIR [--only a,b] [--calls N] [--threads T]');
const CALLS = Number(opt('--calls') ?? 40);
const threads = Number(opt('--threads') ?? 1);
const only = opt('--only')?.split(',');

const load = async (root) => (await import(pathToFileURL(join(root, 'bindings/index.js')).href)).init({ threads });
const A = await load(here), B = await load(resolve(other));

const SHAPES = { S1: [1, 32, 32, 128, 4], S2: [1, 65, 65, 192, 3], S3: [1, 256, 256, 256, 8], S4: [4, 512, 512, 512, 8], S5: [1, 1, 128, 256, 4] };
let seed = 3;
const tensor = (shape) => {
  const data = new Float32Array(shape.reduce((a, b) => a * b));
  for (let i = 0; i < data.length; i++) { seed = (seed * 1664525 + 1013904223) >>> 0; data[i] = seed / 2 ** 32 - 0.5; }
  return { data, shape };
};
const cases = [];
for (const [sn, [b, l, s, e, h]] of Object.entries(SHAPES)) {
  const x = tensor([l, b, e]), mem = tensor([s, b, e]);
  cases.push({ name: `mha_${sn}`, make: (aw) => new aw.MultiheadAttention(e, h), call: (m) => m.forward(x, l === s ? x : mem, l === s ? x : mem, { needWeights: false }) });
  if (l === s) cases.push({ name: `encoder_${sn}`, make: (aw) => new aw.TransformerEncoderLayer(e, h, { dimFeedforward: 4 * e }), call: (m) => m.forward(x) });
}
const mx = tensor([512, 512]);
cases.push({ name: 'matmul', make: (aw) => new aw.Linear(512, 512, { bias: false }), call: (m) => m.forward(mx) });

console.log(`# A = ${here}, B = ${resolve(other)}; ${threads} thread(s); ${describeMachine()}`);
console.log('| case | A ms | B ms | B / A |');
console.log('|---|---:|---:|---:|');
for (const c of cases) {
  if (only && !only.includes(c.name)) continue;
  const ma = c.make(A), mb = c.make(B);
  mb.loadStateDict(ma.stateDict());
  const ta = [], tb = [];
  const calls = c.name.endsWith('S4') ? Math.max(8, CALLS / 4) : CALLS;
  const BLOCK = 5;
  for (let blk = 0; blk < calls / (BLOCK - 1) + 2; blk++) {
    for (const [m, t] of blk % 2 ? [[ma, ta], [mb, tb]] : [[mb, tb], [ma, ta]]) {
      for (let i = 0; i < BLOCK; i++) {
        const t0 = performance.now();
        c.call(m);
        if (blk >= 2 && i > 0) t.push(performance.now() - t0);
      }
    }
  }
  const a = median(ta), b = median(tb);
  console.log(`| ${c.name} | ${a.toFixed(3)} | ${b.toFixed(3)} | ${(b / a).toFixed(3)} |`);
  ma.dispose();
  mb.dispose();
}
