// Shared plumbing of the engine runners (run_<engine>.mjs): the case manifest,
// a minimal safetensors reader, the runner protocol and the timing loop.
// Not a library for users; the numbers live in the engines, not here.
//
// Runner protocol (run.mjs drives it, one Node process per engine × case × mode):
//   node bench/run_<engine>.mjs <case> check  → writes out/<engine>/<case>.f32 (raw
//                                               little-endian float32 output), prints JSON
//   node bench/run_<engine>.mjs <case> time   → warm-up, timed runs, prints JSON
// Every engine gets JS Float32Arrays in and hands a JS Float32Array out per call:
// copies into and out of wasm memory are part of the timed call for all engines.
import { readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const ONNX_DIR = join(BENCH_DIR, 'onnx');
export const OUT_DIR = join(BENCH_DIR, 'out');

/** The manifest written by export_onnx.py: { opset, warmup, cases: [...] }. */
export function loadManifest() {
  return JSON.parse(readFileSync(join(ONNX_DIR, 'cases.json'), 'utf8'));
}

/**
 * Reads a safetensors file with F32 tensors only (what export_onnx.py writes).
 * Returns name → { data: Float32Array (fresh copy, owned by the caller), shape }.
 */
export function readSafetensors(path) {
  const buf = readFileSync(path);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const base = 8 + n;
  const out = {};
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (info.dtype !== 'F32') throw new Error(`${path}: ${name}: expected F32, got ${info.dtype}`);
    const [b, e] = info.data_offsets;
    const bytes = buf.subarray(base + b, base + e);
    // Copy into a fresh, 4-byte aligned buffer (the file's data may be unaligned in buf).
    const data = new Float32Array(bytes.byteLength / 4);
    new Uint8Array(data.buffer).set(bytes);
    out[name] = { data, shape: info.shape };
  }
  return out;
}

/** Parses argv and loads a case: { c (manifest entry), mode, weights, io, manifest }. */
export function loadCase(argv = process.argv.slice(2)) {
  const [name, mode = 'check'] = argv;
  const manifest = loadManifest();
  const c = manifest.cases.find((x) => x.name === name);
  if (!c) throw new Error(`unknown case ${name}; known: ${manifest.cases.map((x) => x.name).join(' ')}`);
  if (mode !== 'check' && mode !== 'time') throw new Error(`mode: expected check or time, got ${mode}`);
  const weights = readSafetensors(join(ONNX_DIR, `${name}.safetensors`));
  const io = readSafetensors(join(ONNX_DIR, `${name}.io.safetensors`));
  return { c, mode, weights, io, manifest };
}

/**
 * Whether this Node runs WebAssembly relaxed SIMD (Node 20: with
 * --experimental-wasm-relaxed-simd): then init() picks attnwasm's relaxed-SIMD
 * build and the relaxed-madd peak can be probed.
 */
export { RELAXED_SIMD_SUPPORTED as RELAXED_SIMD } from '../bindings/wasm_load.js';

/** Minimum warm-up time per timed case, ms (see runCase). */
export const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2000);

/** mulberry32: a small seeded PRNG → uniform floats in [0, 1). */
export function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Median of a numeric array (not modified). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Quantile q in [0, 1] by linear interpolation. */
export function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const p = (s.length - 1) * q;
  const lo = Math.floor(p), hi = Math.ceil(p);
  return s[lo] + (s[hi] - s[lo]) * (p - lo);
}

/**
 * The runner's main: `forward()` → Float32Array must run one full call (inputs in,
 * output out). check mode: one call, output written for run.mjs to compare.
 * time mode: warm-up calls (≥ manifest.warmup and ≥ WARMUP_MS), then c.runs timed
 * calls (ms each; BENCH_RUNS_SCALE scales c.runs), printed as JSON.
 */
export async function runCase(engine, { c, mode, io, manifest }, forward, info = {}) {
  if (mode === 'check') {
    const y = await forward();
    if (y.length !== c.output.reduce((a, b) => a * b, 1)) {
      throw new Error(`${engine} ${c.name}: output has ${y.length} elements, expected shape [${c.output}]`);
    }
    let maxDiffTorch = 0;
    const ref = io.expected.data;
    for (let i = 0; i < ref.length; i++) {
      const d = Math.abs(y[i] - ref[i]);
      if (!(d <= maxDiffTorch)) maxDiffTorch = Number.isNaN(d) ? Infinity : d;
    }
    const dir = join(OUT_DIR, engine);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${c.name}.f32`), new Uint8Array(y.buffer, y.byteOffset, y.byteLength));
    console.log(JSON.stringify({ engine, case: c.name, mode, maxDiffTorch, ...info }));
    return;
  }
  // Warm-up: at least manifest.warmup calls and at least WARMUP_MS of calls, so that V8
  // has tiered up both the JS (TurboFan) and the wasm (Liftoff → TurboFan) of every engine.
  const runs = Number(process.env.BENCH_RUNS_SCALE ?? 1) * c.runs;
  // The first call of this fresh process (weights loaded, nothing run yet) is
  // timed apart: what a script or a page that makes one call meets (results.md,
  // "1st call"). It counts as a warm-up call.
  const f0 = performance.now();
  await forward();
  const firstMs = performance.now() - f0;
  let warmup = 1;
  const w0 = performance.now();
  while (warmup < manifest.warmup || (performance.now() - w0 < WARMUP_MS && warmup < 1000)) {
    await forward();
    warmup++;
  }
  const times = [];
  for (let i = 0; i < Math.max(1, Math.round(runs)); i++) {
    const t0 = performance.now();
    await forward();
    times.push(performance.now() - t0);
  }
  console.log(JSON.stringify({ engine, case: c.name, mode, warmup, runs: times.length, medianMs: median(times), firstMs, times, ...info }));
}

/**
 * An in-process probe of the single-core SIMD peak (bench/simd_peak.wat, the
 * same 12-chain kernel simd_peak.mjs times; `{ relaxed: true }`: its
 * relaxed_madd twin simd_peak_relaxed.wat): `await peakProbe()` returns
 * probe(ms) → GFLOP/s over about `ms` milliseconds. Timed right next to a
 * kernel, it gives a fraction of the peak that a noisy machine moves much
 * less than either figure alone (both slow down together).
 */
export async function peakProbe({ relaxed = false } = {}) {
  const { default: initWabt } = await import('wabt');
  const wabt = await initWabt();
  const file = relaxed ? 'simd_peak_relaxed.wat' : 'simd_peak.wat';
  const mod = wabt.parseWat(file, readFileSync(join(BENCH_DIR, file), 'utf8'), { simd: true, relaxed_simd: relaxed });
  mod.validate();
  const { buffer } = mod.toBinary({});
  mod.destroy();
  const { instance } = await WebAssembly.instantiate(buffer);
  const run = instance.exports.run;
  const FLOPS_PER_ITER = 12 * 2 * 2 * 4; // 12 chains, unrolled twice, mul + add, 4 lanes
  for (const t0 = performance.now(); performance.now() - t0 < 300;) run(20000); // to TurboFan
  let itersPerMs = 0;
  for (let n = 20000; ; n *= 2) {
    const t = performance.now();
    run(n);
    const ms = performance.now() - t;
    if (ms > 5) { itersPerMs = n / ms; break; }
  }
  return (ms = 20) => {
    const n = Math.max(1000, Math.round(itersPerMs * ms));
    const t = performance.now();
    const s = run(n);
    const dt = performance.now() - t;
    if (!(Math.abs(s - 96) < 1e-3)) throw new Error(`peakProbe: wrong lane sum ${s}`);
    return (FLOPS_PER_ITER * n) / dt / 1e6;
  };
}

/**
 * The kernels timed alone, inside wasm, without the copies of a JS call
 * (bench/native/kernel_bench.h): a module of their own, not shipped. Built
 * (incrementally: `bash tools/build.sh bench`) and loaded on first use;
 * `relaxed`: the relaxed-SIMD GEMM (needs --experimental-wasm-relaxed-simd).
 * Returns { gemm(m, n, k, reps), gemmStreamed(m, n, k, copies, reps) (W in `copies` copies, run in turn: from
 * memory once they outgrow the caches), activation(kind, n, reps) (kind 'gelu', 'gelu_tanh' or 'silu'), attention(heads, L, hd, causal, reps), qgemm(dtype, m, n, k, reps) }
 * (dtype 'q8', 'q4a16' or 'q4'): median ms, one thread.
 */
export async function kernelBench({ relaxed = false } = {}) {
  execFileSync('bash', [join(BENCH_DIR, '..', 'tools', 'build.sh'), 'bench'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const base = join(BENCH_DIR, '..', 'build', 'wasm', `attnwasm_bench${relaxed ? '_rs' : ''}`);
  const { default: create } = await import(`${base}.mjs`);
  const m = await create({ wasmBinary: readFileSync(`${base}.wasm`) });  // (the 3.1.6 glue would fetch() a path in Node)
  const checked = (what, ms) => { if (ms < 0) throw new RangeError(`kernelBench.${what}: sizes out of range`); return ms; };
  return {
    gemm: (M, N, K, reps) => checked('gemm', m._aw_bench_gemm(M, N, K, reps)),
    gemmStreamed: (M, N, K, copies, reps) => checked('gemmStreamed', m._aw_bench_gemm_streamed(M, N, K, copies, reps)),
    activation: (kind, n, reps) => checked('activation', m._aw_bench_activation({ gelu: 0, gelu_tanh: 1, silu: 2 }[kind] ?? -1, n, reps)),
    attention: (heads, L, hd, causal, reps) => checked('attention', m._aw_bench_attention(heads, L, hd, causal ? 1 : 0, reps)),
    qgemm: (dtype, M, N, K, reps) => checked('qgemm', m._aw_bench_qgemm({ q8: 0, q4a16: 1, q4: 2 }[dtype] ?? -1, M, N, K, reps)),
  };
}

/**
 * Single-core read bandwidth of wasm in this engine (bench/stream_read.wat,
 * compiled with wabt): bytes per second reading `mib` MiB (default 256, far
 * beyond any cache) as f32x4 vectors, the median of `runs` passes after one
 * that faults the pages in.
 */
export async function readBandwidth({ mib = 256, runs = 7 } = {}) {
  const { default: initWabt } = await import('wabt');
  const wabt = await initWabt();
  const mod = wabt.parseWat('stream_read.wat', readFileSync(join(BENCH_DIR, 'stream_read.wat'), 'utf8'), { simd: true });
  mod.validate();
  const { buffer } = mod.toBinary({});
  mod.destroy();
  const { instance } = await WebAssembly.instantiate(buffer);
  const { run, memory } = instance.exports;
  const bytes = mib << 20;
  if (memory.buffer.byteLength < bytes) memory.grow((bytes - memory.buffer.byteLength) >> 16);
  new Float32Array(memory.buffer, 0, bytes / 4).fill(1);
  for (const t0 = performance.now(); performance.now() - t0 < 200;) run(1 << 20);  // to TurboFan
  const ts = [];
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    const s = run(bytes);
    ts.push(performance.now() - t);
    if (s !== bytes / 16) throw new Error(`readBandwidth: wrong sum ${s}`);
  }
  return bytes / (median(ts) / 1000);
}

/**
 * Read bandwidth of `threads` cores at once (worker_threads, each reading its own `mib` MiB of wasm memory with
 * bench/stream_read.wat, started together on a shared flag): bytes per second summed over the threads, the
 * median of `runs` passes after one that faults the pages in. What a decoding step split over that many
 * threads can at most stream. threads = 1 is readBandwidth's figure measured the same way.
 */
export async function readBandwidthThreads(threads, { mib = 128, runs = 7 } = {}) {
  const { Worker } = await import('node:worker_threads');
  const { default: initWabt } = await import('wabt');
  const wabt = await initWabt();
  const mod = wabt.parseWat('stream_read.wat', readFileSync(join(BENCH_DIR, 'stream_read.wat'), 'utf8'), { simd: true });
  const { buffer } = mod.toBinary({});
  mod.destroy();
  const sync = new Int32Array(new SharedArrayBuffer(8));  // [0]: the pass to run (1 …), [1]: passes finished
  const bytes = mib << 20;
  const src = `
    const { workerData: { wasm, sync, bytes, runs }, parentPort } = require('node:worker_threads');
    const instance = new WebAssembly.Instance(new WebAssembly.Module(wasm));
    const { run, memory } = instance.exports;
    if (memory.buffer.byteLength < bytes) memory.grow((bytes - memory.buffer.byteLength) >> 16);
    new Float32Array(memory.buffer, 0, bytes / 4).fill(1);
    for (const t0 = performance.now(); performance.now() - t0 < 200;) run(1 << 20);
    parentPort.postMessage('ready');
    for (let r = 0; r <= runs; r++) {
      Atomics.wait(sync, 0, r);
      if (run(bytes) !== bytes / 16) throw new Error('readBandwidthThreads: wrong sum');
      Atomics.add(sync, 1, 1);
      Atomics.notify(sync, 1);
    }`;
  const workers = Array.from({ length: threads }, () => new Worker(src, { eval: true, workerData: { wasm: buffer, sync, bytes, runs } }));
  await Promise.all(workers.map((w) => new Promise((res, rej) => { w.once('message', res); w.once('error', rej); })));
  const ts = [];
  for (let r = 0; r <= runs; r++) {
    const t0 = performance.now();
    Atomics.store(sync, 0, r + 1);
    Atomics.notify(sync, 0);
    for (let done; (done = Atomics.load(sync, 1)) < threads * (r + 1);) Atomics.wait(sync, 1, done, 1000);
    if (r > 0) ts.push(performance.now() - t0);
  }
  await Promise.all(workers.map((w) => w.terminate()));
  return (threads * bytes) / (median(ts) / 1000);
}

/**
 * The CPU as the figures depend on it: model name, family/model/stepping (a VM
 * often shows only "AMD EPYC"), logical cores, and the caches of core 0 from
 * /sys (size, and how many logical cores share it).
 */
export function describeMachine() {
  let name = cpus()[0]?.model ?? 'unknown CPU';
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const field = (k) => info.match(new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm'))?.[1];
    const fam = field('cpu family'), mod = field('model');
    if (fam && mod) name += ` (family ${fam}, model ${mod}${field('stepping') ? `, stepping ${field('stepping')}` : ''}${field('vendor_id') ? `, ${field('vendor_id')}` : ''})`;
  } catch { /* not Linux */ }
  const caches = [];
  try {
    const dir = '/sys/devices/system/cpu/cpu0/cache';
    for (const d of readdirSync(dir).filter((x) => x.startsWith('index')).sort()) {
      const rd = (f) => readFileSync(join(dir, d, f), 'utf8').trim();
      const type = rd('type');
      if (type === 'Instruction') continue;
      const shared = rd('shared_cpu_list').split(',').reduce((n, part) => { const [a, b] = part.split('-').map(Number); return n + (b === undefined ? 1 : b - a + 1); }, 0);
      caches.push(`L${rd('level')}${type === 'Data' ? 'd' : ''} ${rd('size')}${shared > 1 ? ` shared by ${shared} logical cores` : ' per core'}`);
    }
  } catch { /* no /sys */ }
  return `${name}, ${cpus().length} logical cores${caches.length ? `; caches ${caches.join(', ')}` : ''}`;
}

/**
 * f() timed between two probes of the peak (probe from peakProbe()): returns
 * { t: what f returned (ms), peak: the mean of the two probes }, so that
 * flops / t / peak is a fraction of the peak measured at the same moment.
 */
export function besidePeak(probe, f) {
  const before = probe();
  const t = f();
  return { t, peak: (before + probe()) / 2 };
}

/**
 * Runs this script again pinned to one logical CPU (Linux `taskset`), and exits with its status; in the pinned
 * process it returns the CPU's number. For benches whose engines run on different threads of one process
 * (onnxruntime-web in a worker thread, attnwasm on the main thread, one waiting while the other works): on a VM
 * two vCPUs can differ in speed by 1.7x for minutes (measured here: the same first-token call took 72 ms pinned
 * to vCPU 0 and 41 ms pinned to vCPU 1, back to back), the OS keeps each thread where it is, and the ratio then
 * measures the vCPUs as much as the engines. Pinned, both engines and the probes run on the same one.
 * The CPU: `--cpu N` or AW_BENCH_CPU, else the first this process may run on. Returns null where it cannot pin
 * (not Linux, no taskset): the bench then runs unpinned and says so.
 */
export function pinToOneCpu(argv = process.argv.slice(2)) {
  if (process.env.AW_BENCH_PINNED !== undefined) return Number(process.env.AW_BENCH_PINNED);
  if (process.platform !== 'linux') return null;
  const allowed = spawnSync('taskset', ['-pc', String(process.pid)], { encoding: 'utf8' });
  if (allowed.status !== 0) return null;  // no taskset
  const all = allowed.stdout.trim().split(': ').pop();  // "0,1" or "0-3"
  const i = argv.indexOf('--cpu');
  const cpu = i >= 0 ? argv[i + 1] : process.env.AW_BENCH_CPU ?? all.split(',')[0].split('-')[0];
  if (!/^\d+$/.test(String(cpu))) throw new RangeError(`--cpu: expected a CPU number, got ${cpu}`);
  const r = spawnSync('taskset', ['-c', String(cpu), process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit', env: { ...process.env, AW_BENCH_PINNED: String(cpu), AW_BENCH_CPUS: all },
  });
  if (r.error) return null;
  process.exit(r.status ?? 1);
}

/**
 * The command that runs `node argv…` as a child of a bench: as it is (the child inherits the pinned CPU), or, for
 * a child that measures more than one thread, under taskset on every CPU the bench could use before it pinned itself.
 */
export function nodeChild(argv, threads = 1) {
  const all = process.env.AW_BENCH_CPUS;
  if (threads > 1 && process.env.AW_BENCH_PINNED !== undefined && all) return ['taskset', ['-c', all, process.execPath, ...argv]];
  return [process.execPath, argv];
}
