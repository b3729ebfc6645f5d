// First calls (README "Performance", "First calls"): what a script or a page
// that makes one big call meets. Each case runs in a fresh Node process, one
// thread: init(), the inputs, then the same call `--calls` times (default 3);
// reported: the first call, the warm median of the others, their ratio.
//
//   linear    Linear(1024, 3072).forward on (8192, 1024)             target: first ≤ 1.3 × warm
//   mha       causal 8-head MultiheadAttention(1024) on (16, 512, 1024), needWeights: false
//                                                                     target: first ≤ 1.3 × warm
//   sdpa      scaledDotProductAttention, q, k, v of (16, 512, 1024)   (reported)
//   encoder   TransformerEncoderLayer(1024, 8) on (8, 512, 1024)      (reported)
//
// The seed document's flagship pair at its own size, (128, 512, 1024), each
// the first call of a fresh process, against torch + OpenBLAS, one thread,
// also a first call of a fresh process (bench/torch_flagship.py):
//   flagship-sdpa   softmax(q kᵀ / √d) v                               target: ≤ 1.5 × torch
//   flagship-mha    nn.MultiheadAttention(1024, 8), causal bool mask   target: ≤ 1.0 × torch
// And the time to a ready runtime (init({ threads: 1 }) in a fresh process,
// median of 7).
//
// Usage: node bench/first_call.mjs [--quick] [--no-flagship] [--json] [--calls N]
//   --quick: a quarter of the flagship batch (32). Exit code 1 when a target misses.
// Note the first call also pays for fresh memory (page faults on the heap
// growing and on the output arrays): on a VM that maps pages slowly that is
// part of what a user meets, and of the ratio.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine, median } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);

// ---- child: one case in this fresh process ----
if (argv[0] === '--child') {
  const [, name, callsArg, threadsArg] = argv;
  const calls = Number(callsArg), threads = Number(threadsArg ?? 1);
  const t0 = performance.now();
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads });
  const readyMs = performance.now() - t0;
  let seed = 7;
  const tensor = (shape) => {
    const n = shape.reduce((a, b) => a * b);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) { seed = (seed * 1664525 + 1013904223) >>> 0; data[i] = seed / 2 ** 32 - 0.5; }
    return { data, shape };
  };
  const causal = (L) => ({ data: Uint8Array.from({ length: L * L }, (_, i) => (i % L > Math.floor(i / L) ? 1 : 0)), shape: [L, L] });
  let f;
  if (name === 'ready') {
    process.stdout.write(`${JSON.stringify({ name, readyMs })}\n`);
    process.exit(0);
  } else if (name === 'linear') {
    const lin = new aw.Linear(1024, 3072);
    const x = tensor([8192, 1024]);
    f = () => lin.forward(x);
  } else if (name === 'mha' || name.startsWith('flagship-mha')) {
    const N = name === 'mha' ? 16 : Number(name.split(':')[1]);
    const mha = new aw.MultiheadAttention(1024, 8, { batchFirst: true });
    const x = tensor([N, 512, 1024]);
    const mask = causal(512);
    f = () => mha.forward(x, x, x, { attnMask: mask, needWeights: false });
  } else if (name === 'sdpa' || name.startsWith('flagship-sdpa')) {
    const N = name === 'sdpa' ? 16 : Number(name.split(':')[1]);
    const q = tensor([N, 512, 1024]), k = tensor([N, 512, 1024]), v = tensor([N, 512, 1024]);
    f = () => aw.scaledDotProductAttention(q, k, v);
  } else if (name === 'encoder') {
    const enc = new aw.TransformerEncoderLayer(1024, 8, { batchFirst: true });
    const x = tensor([8, 512, 1024]);
    f = () => enc.forward(x);
  } else {
    throw new Error(`unknown case ${name}`);
  }
  // Fresh memory the first call touches: the wasm heap's growth and the JS
  // output array(s). Every page of it is faulted in and zeroed by the OS on
  // first touch, which costs ~0.1-0.3 s per GiB on a desktop and ~3 s per GiB
  // on the VMs here: the driver measures this machine's rate and reports the
  // share (not subtracted from any target).
  const outBytes = (r) => (ArrayBuffer.isView(r) ? r.byteLength : r && typeof r === 'object'
    ? Object.values(r).reduce((a, v) => a + outBytes(v), 0) : 0);
  const ms = [];
  let freshBytes = 0;
  for (let i = 0; i < calls; i++) {
    const heap0 = aw.memory().heapBytes;
    const a = performance.now();
    const r = f();
    ms.push(performance.now() - a);
    if (i === 0) freshBytes = aw.memory().heapBytes - heap0 + outBytes(r);
  }
  process.stdout.write(`${JSON.stringify({ name, ms, readyMs, freshBytes })}\n`);
  process.exit(0);
}

// ---- driver ----
const opt = (n) => { const i = argv.indexOf(n); return i < 0 ? null : argv[i + 1]; };
const quick = argv.includes('--quick');
const json = argv.includes('--json');
const CALLS = Number(opt('--calls') ?? 3);
const log = json ? (...a) => console.error(...a) : (...a) => console.log(...a);
const child = (name, calls = CALLS) => JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', name, String(calls)],
  { encoding: 'utf8', maxBuffer: 1 << 20 }).trim().split('\n').pop());

// This machine's cost of fresh memory (first touch of new pages), ms per GiB:
// a new 256 MiB buffer filled, minus the same fill again; median of 3.
const freshMsPerGiB = median([0, 1, 2].map(() => {
  const b = new Float32Array(64 << 20);
  const t0 = performance.now(); b.fill(1); const t1 = performance.now(); b.fill(2); const t2 = performance.now();
  return ((t1 - t0) - (t2 - t1)) * 4;
}));
const freshText = (bytes) => `${(bytes / 2 ** 30).toFixed(2)} GiB of fresh memory ≈ ${(bytes / 2 ** 30 * freshMsPerGiB / 1000).toFixed(2)} s`;

let blas = 'unknown';
try {
  blas = execFileSync('update-alternatives', ['--query', 'libblas.so.3-x86_64-linux-gnu'], { encoding: 'utf8' }).match(/^Value: (.*)$/m)?.[1] ?? blas;
} catch { /* not Debian */ }
log(`# first calls, Node ${process.version}, 1 thread; ${describeMachine()}`);
log(`# fresh memory (first touch of new pages) costs ${freshMsPerGiB.toFixed(0)} ms per GiB on this machine`);

const rows = [];
const targets = [];
for (const [name, what, limit] of [
  ['linear', 'Linear(1024, 3072) on (8192, 1024)', 1.3],
  ['mha', 'causal MultiheadAttention(1024, 8) on (16, 512, 1024)', 1.3],
  ['sdpa', 'scaledDotProductAttention, q, k, v of (16, 512, 1024)', null],
  ['encoder', 'TransformerEncoderLayer(1024, 8) on (8, 512, 1024)', null],
]) {
  const r = child(name);
  const first = r.ms[0], warm = median(r.ms.slice(1));
  rows.push({ name, what, firstMs: first, warmMs: warm, ratio: first / warm, calls: r.ms, freshBytes: r.freshBytes });
  log(`${what}: first ${(first / 1000).toFixed(2)} s (${freshText(r.freshBytes)}), warm ${(warm / 1000).toFixed(2)} s (median of ${r.ms.length - 1}), first / warm ${(first / warm).toFixed(2)}×`);
  if (limit) targets.push({ what: `${what}: first call ≤ ${limit} × warm`, measured: `${(first / warm).toFixed(2)}×`, holds: first / warm <= limit });
}

const readies = [];
for (let i = 0; i < 7; i++) readies.push(child('ready').readyMs);
const readyMs = median(readies);
log(`time to a ready runtime (import + init({ threads: 1 }), fresh process, median of 7): ${readyMs.toFixed(1)} ms`);

let flagship = null;
if (!argv.includes('--no-flagship')) {
  const N = quick ? 32 : 128;
  flagship = { N, blas, rows: [] };
  for (const [c, limit] of [['sdpa', 1.5], ['mha', 1.0]]) {
    const r = child(`flagship-${c}:${N}`, 1);
    const aw = r.ms[0];
    const torch = JSON.parse(execFileSync('/usr/bin/python3', [join(HERE, 'torch_flagship.py'), c, String(N)], { encoding: 'utf8' }).trim());
    flagship.rows.push({ case: c, attnwasmMs: aw, torchMs: torch.ms, ratio: aw / torch.ms, freshBytes: r.freshBytes, torchFreshBytes: torch.freshBytes });
    log(`flagship ${c} (${N}, 512, 1024), first calls: attnwasm ${(aw / 1000).toFixed(2)} s (${freshText(r.freshBytes)}), torch ${(torch.ms / 1000).toFixed(2)} s (peak RSS +${(torch.freshBytes / 2 ** 30).toFixed(2)} GiB; BLAS: ${blas}), attnwasm / torch ${(aw / torch.ms).toFixed(2)}×`);
    targets.push({ what: `seed flagship ${c} (${N}, 512, 1024), first calls, 1 thread: attnwasm ≤ ${limit} × torch + OpenBLAS`, measured: `${(aw / torch.ms).toFixed(2)}× (${(aw / 1000).toFixed(1)} s vs ${(torch.ms / 1000).toFixed(1)} s)`, holds: aw / torch.ms <= limit });
  }
}
const ok = targets.every((t) => t.holds);
for (const t of targets) log(`${t.holds ? 'holds' : 'MISSED'}: ${t.what}: ${t.measured}`);
if (json) process.stdout.write(`${JSON.stringify({ machine: describeMachine(), node: process.version, freshMsPerGiB, rows, readyMs, readies, flagship, targets })}\n`);
process.exit(ok ? 0 : 1);
