// Memory at full size (README "Memory"): the seed document's two examples in
// one process, in its order, at its sizes, then an encoder layer and
// nn.Transformer at the same size, each scenario in a fresh Node process, one
// thread, as a user runs them. Prints per step the time (a first call), the
// heap size, the bytes in use after the call and the call's peak above what
// was in use before it, against inputs + outputs + the working-memory budget;
// then the process's RSS before init(), with everything loaded, and after
// close() + garbage collection. Exit code 1 when a target misses:
//   the pair succeeds; heap after both <= 1280 MiB; every call's peak <= its
//   inputs + outputs + budget (+ 1 MiB of slack: block tails, small buffers);
//   RSS after close() within 96 MiB of RSS before init().
// Usage: node --expose-gc bench/memory.mjs [--quick]   (--quick: a quarter of the batch)
// Takes about 3 minutes (1 minute with --quick).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describeMachine } from './lib.mjs';

const MiB = 2 ** 20;
const quick = process.argv.includes('--quick');
const N = quick ? 32 : 128, L = 512, E = 1024;

if (process.argv[2] === '--child') {
  const { init } = await import('../bindings/index.js');
  const scenario = process.argv[3];
  const gc = async () => { for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 30)); } };
  await gc();
  const rssBefore = process.memoryUsage().rss;
  const aw = await init({ threads: 1 });
  const budget = aw.memory().workingMemoryBytes;
  const steps = [];
  let seed = 1;
  const rand = (n) => { const a = new Float32Array(n); for (let i = 0; i < n; i++) { seed = (seed * 1664525 + 1013904223) >>> 0; a[i] = seed / 2 ** 32 - 0.5; } return a; };
  const tensor = (shape) => ({ data: rand(shape.reduce((a, b) => a * b)), shape });
  const bytes = (...ts) => ts.reduce((s, t) => s + (t ? t.data.byteLength : 0), 0);
  // Runs f (which returns its outputs), recording time, heap and peak.
  const step = (name, inputs, f) => {
    const base = aw.memory().inUseBytes;
    aw.resetPeakMemory();
    const t0 = performance.now();
    const outs = f();
    const ms = performance.now() - t0;
    const m = aw.memory();
    const io = bytes(...inputs) + bytes(...outs);
    steps.push({ name, ms, heap: m.heapBytes, inUse: m.inUseBytes, peak: m.peakInUseBytes - base, io, budget });
    return outs;
  };
  const causal = { data: Uint8Array.from({ length: L * L }, (_, i) => (i % L > Math.floor(i / L) ? 1 : 0)), shape: [L, L] };
  if (scenario === 'seed') {
    // 1. softmax(q kᵀ / √d) v on q, k, v of (N, L, E).
    let q = tensor([N, L, E]), k = tensor([N, L, E]), v = tensor([N, L, E]);
    step('SDPA q, k, v (N, L, E)', [q, k, v], () => [aw.scaledDotProductAttention(q, k, v).output]);
    q = k = v = null;
    // 2. nn.MultiheadAttention(1024, 8, batch_first=True), causal bool mask, need_weights=False.
    const mha = new aw.MultiheadAttention(E, 8, { batchFirst: true });
    const x = tensor([N, L, E]);
    step('MHA(1024, 8) causal, x (N, L, E)', [x, causal], () => [mha.forward(x, x, x, { attnMask: causal, needWeights: false }).output]);
  } else if (scenario === 'encoder') {
    const enc = new aw.TransformerEncoderLayer(E, 8, { batchFirst: true });
    const x = tensor([N, L, E]);
    step('TransformerEncoderLayer(1024, 8), src (N, L, E)', [x], () => [enc.forward(x)]);
  } else if (scenario === 'transformer') {
    const tf = new aw.Transformer({ dModel: E, nhead: 8, numEncoderLayers: 1, numDecoderLayers: 1, batchFirst: true });
    const src = tensor([N, L, E]), tgt = tensor([N, L, E]);
    const tgtMask = aw.generateSquareSubsequentMask(L);
    step('Transformer(1024, 8, 1 + 1 layers), src, tgt (N, L, E)', [src, tgt, tgtMask],
      () => [tf.forward(src, tgt, { tgtMask, tgtIsCausal: true })]);
  }
  const rssLoaded = process.memoryUsage().rss;
  await aw.close();
  await gc();
  const rssAfter = process.memoryUsage().rss;
  process.stdout.write(JSON.stringify({ steps, rssBefore, rssLoaded, rssAfter }) + '\n');
  process.exit(0);
}

const here = fileURLToPath(import.meta.url);
console.log(`# attnwasm memory at full size (N = ${N}, L = ${L}, E = ${E}), Node ${process.version}, 1 thread`);
console.log(`# ${describeMachine()}\n`);
let ok = true;
const fmt = (b) => `${(b / MiB).toFixed(0)} MiB`;
for (const scenario of ['seed', 'encoder', 'transformer']) {
  const out = execFileSync(process.execPath, ['--expose-gc', here, '--child', scenario, ...(quick ? ['--quick'] : [])],
    { encoding: 'utf8', maxBuffer: 1 << 20 });
  const r = JSON.parse(out.trim().split('\n').pop());
  for (const s of r.steps) {
    const bound = s.io + s.budget + MiB;
    const within = s.peak <= bound;
    ok &&= within;
    console.log(`${s.name}: ${(s.ms / 1000).toFixed(2)} s (first call); heap ${fmt(s.heap)}, in use after ${fmt(s.inUse)}; ` +
      `peak above before ${fmt(s.peak)} vs inputs + outputs ${fmt(s.io)} + budget ${fmt(s.budget)} ${within ? 'ok' : 'MISSED'}`);
  }
  if (scenario === 'seed') {
    const heap = r.steps[r.steps.length - 1].heap;
    const limit = (quick ? 320 : 1280) * MiB;
    ok &&= heap <= limit;
    console.log(`  heap after both: ${fmt(heap)} (target <= ${fmt(limit)}: ${heap <= limit ? 'ok' : 'MISSED'})`);
  }
  const back = r.rssAfter - r.rssBefore <= 96 * MiB;
  ok &&= back;
  console.log(`  RSS: ${fmt(r.rssBefore)} before init(), ${fmt(r.rssLoaded)} loaded, ${fmt(r.rssAfter)} after close() + gc ` +
    `(target within 96 MiB of before: ${back ? 'ok' : 'MISSED'})\n`);
}
console.log(ok ? 'all memory targets hold' : 'a memory target MISSED');
process.exit(ok ? 0 : 1);
