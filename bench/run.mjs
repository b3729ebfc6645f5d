// Benchmark driver: checks that every engine computes the same numbers, then
// times each engine on each case in its own Node process, one after another,
// and writes results.md (tables), ratios.svg (bar chart) and results.json (raw).
// Needs bench/onnx/ from export_onnx.py and bench/node_modules (run.sh does both).
// Usage: node bench/run.mjs [--only mha_S1,matmul] [--engines attnwasm,ort1] [--rounds N]
//                           [--no-wait] [--no-kernels] [--render results.json]
// --no-kernels skips the kernels-alone step (bench/gemm.mjs and bench/breakdown.mjs);
// --kernels runs it in a partial run too.
// With --only/--engines the files go to bench/out/partial-* instead. --render rewrites
// results.md and ratios.svg from a results.json without measuring.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, OUT_DIR, WARMUP_MS, describeMachine, loadManifest, median, quantile } from './lib.mjs';

const TOLERANCE = 1e-3; // max |peer − attnwasm| (and |attnwasm − torch|) for a run to count
const LOAD_MAX = Number(process.env.BENCH_LOAD_MAX ?? 1.2);
const LOAD_WAIT_S = Number(process.env.BENCH_LOAD_WAIT_S ?? 20 * 60);
const LOAD_POLL_S = 30;

// Node runs relaxed SIMD only with this flag (Node 20): the relaxed-SIMD build and its peak.
const RELAXED_FLAG = '--experimental-wasm-relaxed-simd';
const ENGINES = [
  { id: 'attnwasm', label: 'attnwasm', script: 'run_attnwasm.mjs', args: ['1'] },
  // The relaxed-SIMD build (f32x4.relaxed_madd in the GEMM micro-kernel), what init()
  // picks in Chromium ≥ 114, Firefox ≥ 146 and Node with the flag; 'attnwasm' is the
  // baseline build (Safari, Node without the flag, relaxedSimd: false).
  { id: 'attnwasm-relaxed', label: 'attnwasm, relaxed SIMD', script: 'run_attnwasm.mjs', args: ['1', 'relaxed'], nodeArgs: [RELAXED_FLAG] },
  // The pthreads build (init({ threads: 2 })): a peer in the tables, compared with
  // attnwasm's single thread and with onnxruntime-web's 2 threads in "Threads".
  { id: 'attnwasm2', label: 'attnwasm, 2 threads', script: 'run_attnwasm.mjs', args: ['2'] },
  { id: 'ort1', label: 'onnxruntime-web, 1 thread', script: 'run_ort.mjs', args: ['1'] },
  { id: 'ort2', label: 'onnxruntime-web, 2 threads', script: 'run_ort.mjs', args: ['2'] },
  { id: 'tfjs', label: 'tfjs-backend-wasm', script: 'run_tfjs.mjs', args: [] },
  // The floor: plain-JS MHA, self-attention only, and too slow to be worth it beyond S3.
  { id: 'plainjs', label: 'plain JS', script: 'run_plainjs.mjs', args: [], only: (c) => c.kind === 'mha' && ['S1', 'S2', 'S3'].includes(c.shape) },
];
const PEERS = ENGINES.filter((e) => e.id !== 'attnwasm');
const COLORS = { 'attnwasm-relaxed': '#7b3fa0', attnwasm2: '#2a9d4a', ort1: '#1f5fa8', ort2: '#8db6e3', tfjs: '#e8862a', plainjs: '#8c8c8c' };

// ---- arguments ----
const argv = process.argv.slice(2);
const opt = (name) => {
  const i = argv.indexOf(name);
  return i < 0 ? null : argv[i + 1];
};
const onlyCases = opt('--only')?.split(',');
const onlyEngines = opt('--engines')?.split(',');
const ROUNDS = Number(opt('--rounds') ?? process.env.BENCH_ROUNDS ?? 5);
const wait = !argv.includes('--no-wait');
const partial = Boolean(onlyCases || onlyEngines);

const manifest = loadManifest();
const cases = manifest.cases.filter((c) => !onlyCases || onlyCases.includes(c.name));
const engines = ENGINES.filter((e) => !onlyEngines || e.id === 'attnwasm' || onlyEngines.includes(e.id));
const enginesFor = (c) => engines.filter((e) => !e.only || e.only(c));

const loadavg = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

// Other users' jobs come in bursts that a 1-minute load average sees too late. So before
// each timed process, the CPU time used by everyone over one second is measured (this
// driver is idle meanwhile). If more than QUIET_MAX cores are busy, it waits, for up to
// QUIET_WAIT_S seconds, and then runs anyway; results.json records the busy figure.
const QUIET_MAX = Number(process.env.BENCH_QUIET_MAX ?? 0.25);
const QUIET_WAIT_S = Number(process.env.BENCH_QUIET_WAIT_S ?? 60);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function cpuTimes() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return { total: f.reduce((a, b) => a + b, 0), idle: f[3] + (f[4] ?? 0) };
}
async function busyCores() {
  const a = cpuTimes();
  await sleep(1000);
  const b = cpuTimes();
  const total = b.total - a.total;
  return total > 0 ? (cpus().length * (total - (b.idle - a.idle))) / total : 0;
}
async function waitQuiet() {
  const t0 = Date.now();
  for (;;) {
    const busy = await busyCores();
    if (busy < QUIET_MAX || Date.now() - t0 > QUIET_WAIT_S * 1000) return { busy: Number(busy.toFixed(2)), waitedS: Math.round((Date.now() - t0) / 1000) };
  }
}
const log = (...a) => console.error(...a);

/** Runs one engine process; returns its JSON line. Throws with stderr on failure. */
function runEngine(e, c, mode) {
  const r = spawnSync(process.execPath, [...(e.nodeArgs ?? []), join(BENCH_DIR, e.script), c.name, mode, ...e.args], {
    encoding: 'utf8', maxBuffer: 64 << 20, cwd: BENCH_DIR,
  });
  const line = (r.stdout ?? '').split('\n').find((l) => l.startsWith('{"engine"'));
  if (r.status !== 0 || !line) {
    throw new Error(`${e.id} ${c.name} ${mode}: exit ${r.status}\n${(r.stderr ?? '').split('\n').slice(-15).join('\n')}`);
  }
  return JSON.parse(line);
}

const readOut = (engine, name) => {
  const b = readFileSync(join(OUT_DIR, engine, `${name}.f32`));
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}

/** Check, wait, time: everything that measures. Returns the raw results (results.json). */
async function measure() {
  // ---- 1. same numbers first: a benchmark of a wrong result is worthless ----
  log(`check: ${cases.length} cases × engines, tolerance ${TOLERANCE} (max abs diff vs attnwasm)`);
  const diffs = {}; // case → engine → max abs diff vs attnwasm (attnwasm: vs torch)
  const failures = [];
  for (const c of cases) {
    diffs[c.name] = {};
    for (const e of enginesFor(c)) {
      const r = runEngine(e, c, 'check');
      if (e.id === 'attnwasm') {
        diffs[c.name].attnwasm = r.maxDiffTorch ?? Infinity;
        continue;
      }
      diffs[c.name][e.id] = maxAbsDiff(readOut(e.id, c.name), readOut('attnwasm', c.name));
    }
    for (const [id, d] of Object.entries(diffs[c.name])) {
      if (!(d <= TOLERANCE)) failures.push(`${c.name}: ${id === 'attnwasm' ? 'attnwasm vs torch' : `${id} vs attnwasm`}: max abs diff ${d}`);
    }
    log(`  ${c.name}: ${Object.entries(diffs[c.name]).map(([k, v]) => `${k} ${v.toExponential(1)}`).join(', ')}`);
  }
  if (failures.length) {
    log(`FAILED: outputs disagree (tolerance ${TOLERANCE}):\n  ${failures.join('\n  ')}`);
    process.exit(1);
  }

  // ---- 2. wait for a quiet machine ----
  const load = { before: loadavg(), waitedS: 0, timedOut: false };
  if (wait && load.before >= LOAD_MAX) {
    log(`load average ${load.before} ≥ ${LOAD_MAX}: waiting (poll every ${LOAD_POLL_S} s, up to ${LOAD_WAIT_S} s)`);
    const t0 = Date.now();
    while (loadavg() >= LOAD_MAX) {
      if ((Date.now() - t0) / 1000 >= LOAD_WAIT_S) {
        load.timedOut = true;
        break;
      }
      await new Promise((r) => setTimeout(r, LOAD_POLL_S * 1000));
      log(`  load ${loadavg()}`);
    }
    load.waitedS = Math.round((Date.now() - t0) / 1000);
  }
  load.start = loadavg();
  load.samples = [load.start];
  load.busyBefore = []; // cores busy (everyone else) in the second before each timed process
  load.quietWaitS = 0;
  log(`timing: load average ${load.start}${load.timedOut ? ' (never dropped below the limit: running anyway)' : ''}`);

  // ---- 3. timing: one process per engine × case × round, sequential ----
  // The SIMD peak is measured before and after the engines; the higher one counts (a busy
  // core lowers it, which would flatter the GEMM fraction).
  const simdPeak = () => runEngine({ id: 'simd_peak', script: 'simd_peak.mjs', args: [], nodeArgs: [RELAXED_FLAG] }, { name: '15' }, '');
  const simdRuns = [simdPeak()];
  log(`  SIMD peak ${simdRuns[0].peakGflops.toFixed(1)} GFLOP/s (12 chains), sweep ${JSON.stringify(simdRuns[0].sweep)}`);
  const times = {}; // case → engine → { times: [], extra }
  for (const c of cases) {
    times[c.name] = {};
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the engine order between rounds so slow drifts in load hit all engines alike.
      const order = round % 2 ? [...enginesFor(c)].reverse() : enginesFor(c);
      for (const e of order) {
        const quiet = await waitQuiet();
        load.busyBefore.push(quiet.busy);
        load.quietWaitS += quiet.waitedS;
        const r = runEngine(e, c, 'time');
        load.samples.push(loadavg());
        const slot = (times[c.name][e.id] ??= { times: [], medians: [], firsts: [], warmup: [], info: {} });
        slot.times.push(...r.times);
        slot.medians.push(r.medianMs);
        slot.firsts.push(r.firstMs);
        slot.warmup.push(r.warmup);
        slot.info = { version: r.version, attention: r.attention };
      }
    }
    const t = times[c.name];
    log(`  ${c.name}: ${Object.entries(t).map(([k, v]) => `${k} ${v.medians.map((m) => m.toFixed(3)).join('/')} ms`).join(', ')}`);
  }
  load.end = loadavg();
  simdRuns.push(simdPeak());
  log(`  SIMD peak ${simdRuns[1].peakGflops.toFixed(1)} GFLOP/s (12 chains, after the engines)`);
  const simd = simdRuns[0].peakGflops >= simdRuns[1].peakGflops ? simdRuns[0] : simdRuns[1];
  const offChain = Math.max(...simdRuns.map((r) => r.offChainGflops));

  // ---- 3b. the kernels alone, against their own same-run SIMD peak: bench/gemm.mjs
  // (the packed GEMM on 512³ and the projection shapes) and bench/breakdown.mjs
  // (attention core cost per score, hd = 64, causal, the large SDPA) ----
  let kernels = null;
  if ((!partial || argv.includes('--kernels')) && !argv.includes('--no-kernels')) {
    kernels = {};
    for (const [key, script, args] of [['gemm', 'gemm.mjs', []], ['breakdown', 'breakdown.mjs', []], ['relaxed', 'relaxed.mjs', [RELAXED_FLAG]]]) {
      await waitQuiet();
      log(`  ${script}`);
      const r = spawnSync(process.execPath, [...args, join(BENCH_DIR, script)], { encoding: 'utf8', maxBuffer: 64 << 20, cwd: BENCH_DIR });
      const line = (r.stdout ?? '').trim().split('\n').at(-1);
      if (r.status !== 0 || !line?.startsWith('{')) throw new Error(`${script}: exit ${r.status}\n${(r.stderr ?? '').split('\n').slice(-15).join('\n')}`);
      kernels[key] = JSON.parse(line);
    }
  }

  // ---- 4. results ----
  const results = [];
  for (const c of cases) {
    // The time of an engine: the median of its per-process medians, so that a minority of
    // processes disturbed by the shared machine cannot move it (5 rounds: up to 2).
    const aw = median(times[c.name].attnwasm.medians);
    for (const e of enginesFor(c)) {
      const t = times[c.name][e.id];
      const ms = median(t.medians);
      results.push({
        case: c.name, kind: c.kind, shape: c.shape, config: c.config, engine: e.id, label: e.label,
        medianMs: ms, p25Ms: quantile(t.times, 0.25), p75Ms: quantile(t.times, 0.75),
        gflops: c.flops / ms / 1e6, ratio: ms / aw, runs: t.times.length, warmup: t.warmup, processMedians: t.medians,
        firstMs: median(t.firsts), processFirsts: t.firsts,
        maxAbsDiff: diffs[c.name][e.id], ...t.info,
      });
    }
  }

  const get = (name, engine) => results.find((r) => r.case === name && r.engine === engine);
  const mm = get('matmul', 'attnwasm');
  const targets = [];
  // Issue 12: MultiheadAttention and the encoder layer ≥ 1.5× onnxruntime-web 1 thread, every workload.
  for (const c of cases) {
    const r = c.kind === 'matmul' ? null : get(c.name, 'ort1');
    if (r) targets.push({ what: `${c.name}: onnxruntime-web 1 thread / attnwasm ≥ 1.5×`, measured: `${r.ratio.toFixed(2)}×`, holds: r.ratio >= 1.5 });
  }
  // Issue 22: with the build init() picks where relaxed SIMD runs, the same ≥ 1.5×; and
  // Linear 512³ and MHA S3 ≥ 1.35× faster with the relaxed build than with the baseline
  // (on a CPU whose FMA outruns mul + add: the CPU is named in results.md).
  for (const c of cases) {
    const o = c.kind === 'matmul' ? null : get(c.name, 'ort1'), r = get(c.name, 'attnwasm-relaxed');
    if (o && r) targets.push({ what: `${c.name}: onnxruntime-web 1 thread / attnwasm relaxed SIMD ≥ 1.5×`, measured: `${(o.medianMs / r.medianMs).toFixed(2)}×`, holds: o.medianMs / r.medianMs >= 1.5 });
  }
  for (const n of ['matmul', 'mha_S3']) {
    const r = get(n, 'attnwasm-relaxed');
    if (r) targets.push({ what: `relaxed SIMD, ${n}: attnwasm baseline / attnwasm relaxed ≥ 1.35× (where FMA outruns mul + add)`, measured: `${(1 / r.ratio).toFixed(2)}×`, holds: 1 / r.ratio >= 1.35 });
  }
  // Threads (the issue's threads part): 2 threads ≥ 1.7× attnwasm's own single thread on
  // S3/S4, and faster than onnxruntime-web with 2 threads.
  for (const n of ['mha_S3', 'mha_S4', 'encoder_S3', 'encoder_S4']) {
    const r2 = get(n, 'attnwasm2');
    if (!r2) continue;
    targets.push({ what: `threads, ${n}: attnwasm 1 thread / attnwasm 2 threads ≥ 1.7×`, measured: `${(1 / r2.ratio).toFixed(2)}×`, holds: 1 / r2.ratio >= 1.7 });
    const o2 = get(n, 'ort2');
    if (o2) targets.push({ what: `threads, ${n}: onnxruntime-web 2 threads / attnwasm 2 threads > 1×`, measured: `${(o2.medianMs / r2.medianMs).toFixed(2)}×`, holds: o2.medianMs > r2.medianMs });
  }
  if (mm) {
    const frac = mm.gflops / simd.peakGflops;
    targets.push({ what: 'matmul 512³ (Linear.forward, copies included): attnwasm ≥ 85% of the SIMD peak (12 chains)', measured: `${(100 * frac).toFixed(0)}% (${mm.gflops.toFixed(1)} of ${simd.peakGflops.toFixed(1)} GFLOP/s)`, holds: frac >= 0.85 });
  }
  if (kernels) {
    const g = kernels.gemm, gp = g.peakGflops;
    const fr = g.rows.map((r) => ({ ...r, f: r.kernelFraction }));
    const worst = fr.reduce((a, b) => (b.f < a.f ? b : a));
    const mmk = fr.find((r) => r.M === 512 && r.N === 512 && r.K === 512);
    targets.push({ what: 'GEMM kernel 512³ ≥ 85% of the same-run SIMD peak', measured: `${(100 * mmk.f).toFixed(0)}% (${mmk.kernel.toFixed(1)} of ${gp.toFixed(1)} GFLOP/s)`, holds: mmk.f >= 0.85 });
    targets.push({ what: `GEMM kernel on all ${fr.length - 1} projection shapes (M = 32, 256, 2048; K = 128…1024; N = K, 3K, 4K) ≥ 85% of the peak`, measured: `lowest ${(100 * worst.f).toFixed(0)}% (${worst.M}×${worst.N}×${worst.K}), median ${(100 * median(fr.map((r) => r.f))).toFixed(0)}%`, holds: worst.f >= 0.85 });
    if (kernels.relaxed) {
      const k = kernels.relaxed.kernel;
      targets.push({ what: 'relaxed SIMD: GEMM kernel 512³ ≥ 85% of the same-run relaxed-madd peak (relaxed.mjs)', measured: `${(100 * k.rs.fraction).toFixed(0)}% (${k.rs.gflops.toFixed(1)} of ${k.rs.peak.toFixed(1)} GFLOP/s; baseline ${k.base.gflops.toFixed(1)}, relaxed / baseline ${k.speedup.toFixed(2)}×)`, holds: k.rs.fraction >= 0.85 });
    }
    const b = kernels.breakdown, bp = b.peakGflops;
    targets.push({ what: 'attention core: fixed cost ≤ 2 ns per score (breakdown.mjs fit)', measured: `${b.core.nsPerScore.toFixed(2)} ns`, holds: b.core.nsPerScore <= 2 });
    targets.push({ what: 'attention core at head dim 64 ≥ 70% of the same-run peak', measured: `${(100 * b.core.hd64Fraction).toFixed(0)}% (${b.core.hd64Gflops.toFixed(1)} GFLOP/s, peak ${bp.toFixed(1)})`, holds: b.core.hd64Fraction >= 0.7 });
    if (b.large) targets.push({ what: 'scaledDotProductAttention q = k = v (128, 512, 1024), 1 thread ≥ 40 GFLOP/s', measured: `${b.large.gflops.toFixed(1)} GFLOP/s (${(100 * b.large.fraction).toFixed(0)}% of the peak probed beside it; 40 GFLOP/s = ${(100 * 40 / bp).toFixed(0)}% of this run's peak)`, holds: b.large.gflops >= 40 });
  }

  const versions = {
    node: process.version,
    ort: JSON.parse(readFileSync(join(BENCH_DIR, 'node_modules/onnxruntime-web/package.json'), 'utf8')).version,
    tfjs: JSON.parse(readFileSync(join(BENCH_DIR, 'node_modules/@tensorflow/tfjs-backend-wasm/package.json'), 'utf8')).version,
  };
  const machine = describeMachine();
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    date, machine, versions, load, simd: simdRuns, rounds: ROUNDS, warmupMs: WARMUP_MS, warmupCalls: manifest.warmup,
    tolerance: TOLERANCE, quietMax: QUIET_MAX, quietWaitS: QUIET_WAIT_S, loadMax: LOAD_MAX, loadWaitS: LOAD_WAIT_S,
    torch: manifest.torch, results, targets, diffs, kernels,
  };
}

// --render FILE: rewrite results.md and ratios.svg from a results.json, measuring nothing.
const renderFrom = opt('--render');
const raw = renderFrom ? JSON.parse(readFileSync(renderFrom, 'utf8')) : await measure();
// Files from before a field existed: the defaults they were measured with.
raw.warmupCalls ??= manifest.warmup;
raw.torch ??= manifest.torch;
raw.quietMax ??= QUIET_MAX;
raw.quietWaitS ??= QUIET_WAIT_S;
raw.loadMax ??= LOAD_MAX;
raw.loadWaitS ??= LOAD_WAIT_S;
const { diffs, load, results, targets, versions, machine, date } = raw;
const simdRuns = raw.simd;
const simd = simdRuns[0].peakGflops >= simdRuns.at(-1).peakGflops ? simdRuns[0] : simdRuns.at(-1);
const offChain = Math.max(...simdRuns.map((r) => r.offChainGflops));
const shownCases = cases.filter((c) => results.some((r) => r.case === c.name));
const get = (name, engine) => results.find((r) => r.case === name && r.engine === engine);
const mm = get('matmul', 'attnwasm');

const fmt = (x, d = 2) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(d));
const shapeText = (c) => (c.kind === 'matmul' ? 'M=N=K=512' : `B=${c.config.B} L=${c.config.L} S=${c.config.S} E=${c.config.E} H=${c.config.H}`);
const md = [];
md.push('# attnwasm benchmark results', '');
md.push(`Generated by \`bash bench/run.sh\` on ${date}. Machine: ${machine}; Node ${versions.node}; onnxruntime-web ${versions.ort}; @tensorflow/tfjs-backend-wasm ${versions.tfjs}. See bench/README.md for the method.`, '');
const lmin = Math.min(...load.samples), lmax = Math.max(...load.samples);
md.push(`Load average (1 min) before timing: ${load.start}${load.waitedS ? ` after waiting ${Math.round(load.waitedS / 60)} min` : ''}${load.timedOut ? ` — **it never dropped below ${raw.loadMax} within ${raw.loadWaitS / 60} min, so this run was measured on a busy machine**` : ''}; during timing ${lmin.toFixed(2)}–${lmax.toFixed(2)} (the benchmark itself adds about 1, 2 for onnxruntime-web with 2 threads). Before each timed process the driver waited until other processes used less than ${raw.quietMax} of a core for one second (up to ${raw.quietWaitS} s): waited ${Math.round(load.quietWaitS / 60)} min in total; the busy figure was ${load.busyBefore.filter((b) => b < raw.quietMax).length} of ${load.busyBefore.length} times below the limit (median ${median(load.busyBefore).toFixed(2)}, max ${Math.max(...load.busyBefore).toFixed(2)} cores).`, '');
md.push('## Single-core wasm SIMD peak', '');
md.push(`**${simd.peakGflops.toFixed(1)} GFLOP/s** (median of ${simd.reps} calls, best ${simd.maxGflops.toFixed(1)}; measured before and after the engines: ${simdRuns.map((r) => r.peakGflops.toFixed(1)).join(' and ')}, the higher counts): bench/simd_peak.wat, 12 independent \`f32x4.mul\` + \`f32x4.add\` chains (SIMD128 has no FMA; the relaxed-madd peak is below), one core. Same kernel with other chain counts, GFLOP/s:`, '');
md.push(`| chains | ${Object.keys(simd.sweep).join(' | ')} |`, `|---|${Object.keys(simd.sweep).map(() => '---').join('|')}|`, `| GFLOP/s | ${Object.values(simd.sweep).map((v) => v.toFixed(1)).join(' | ')} |`, '');
md.push(`Each chain step waits for a mul and then an add. A GEMM's step \`acc += a·b\` only waits for the add, so a GEMM can go faster than this peak. A second kernel in simd_peak.mjs measures that case ("off-chain": \`acc_i += load·m\`, with 8, 10 and 12 accumulators): **${offChain.toFixed(1)} GFLOP/s** (${Object.entries(simd.offChainSweep).map(([k, v]) => `${k}: ${v.toFixed(1)}`).join(', ')}). This is the most mul + add throughput seen on this core.`, '');
if (simd.relaxed) {
  const rsRuns = simdRuns.filter((r) => r.relaxed).map((r) => r.relaxed);
  const rs = rsRuns.reduce((a, b) => (b.peakGflops > a.peakGflops ? b : a));
  md.push(`**Relaxed SIMD** (simd_peak_relaxed.wat: the same 12 chains, each step one \`f32x4.relaxed_madd\`, which V8 turns into one FMA on CPUs that have it; the ceiling of the relaxed-SIMD build): **${rs.peakGflops.toFixed(1)} GFLOP/s** (${(rs.peakGflops / simd.peakGflops).toFixed(2)}× the mul + add chains; sweep ${Object.entries(rs.sweep).map(([k, v]) => `${k}: ${v.toFixed(1)}`).join(', ')}); off-chain \`acc_i = relaxed_madd(load, m, acc_i)\`: **${rs.offChainGflops.toFixed(1)} GFLOP/s** (${(rs.offChainGflops / offChain).toFixed(2)}× the mul + add off-chain kernel).`, '');
}
md.push('## Times', '');
md.push(`Each engine and case ran in ${raw.rounds} separate process${raw.rounds > 1 ? 'es' : ''}. In each process there were at least ${raw.warmupCalls} warm-up calls lasting at least ${raw.warmupMs / 1000} s in total, then the timed calls. **median ms** is the median of the per-process medians, and those are listed under "per process". **1st call** is the median over the processes of each one's first call (weights loaded, nothing run before: what a script or a page making one call meets, V8's baseline code included), and **1st / warm** its ratio to the median. p25–p75 is over all timed calls. runs is the total number of timed calls. GFLOP/s counts 2·m·n·k per matrix multiply, including the attention matmuls. ratio = engine ms / attnwasm ms, so above 1 means attnwasm is faster.`, '');
md.push('| workload | shape | engine | median ms | per process | 1st call ms | 1st / warm | p25–p75 ms | GFLOP/s | ratio | runs |', '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  const c = shownCases.find((x) => x.name === r.case);
  const label = r.engine === 'tfjs' && r.attention ? `${r.label} (${r.attention === 'perHead' ? 'per-head matMul' : 'batched matMul'})` : r.label;
  const bold = r.engine === 'attnwasm' ? '**' : '';
  md.push(`| ${r.case} | ${shapeText(c)} | ${bold}${label}${bold} | ${bold}${fmt(r.medianMs, 3)}${bold} | ${r.processMedians.map((m) => fmt(m, 3)).join(' / ')} | ${r.firstMs == null ? '—' : fmt(r.firstMs, 3)} | ${r.firstMs == null ? '—' : `${(r.firstMs / r.medianMs).toFixed(2)}×`} | ${fmt(r.p25Ms, 3)}–${fmt(r.p75Ms, 3)} | ${fmt(r.gflops, 1)} | ${r.engine === 'attnwasm' ? '1' : `${r.ratio.toFixed(2)}×`} | ${r.runs} |`);
}
md.push('');
if (mm) {
  md.push(`matmul 512³ as a fraction of the SIMD peak (12 chains, ${simd.peakGflops.toFixed(1)} GFLOP/s) / of the off-chain peak (${offChain.toFixed(1)}): ${results.filter((r) => r.case === 'matmul').map((r) => `${r.label} ${(100 * r.gflops / simd.peakGflops).toFixed(0)}% / ${(100 * r.gflops / offChain).toFixed(0)}%`).join('; ')}. With 2 threads, onnxruntime-web can go above 100%, because both peaks are for one core.`, '');
}
md.push('## Ratios (engine ms / attnwasm ms)', '');
md.push(`| case | ${PEERS.map((p) => p.label).join(' | ')} |`, `|---|${PEERS.map(() => '---:').join('|')}|`);
for (const c of shownCases) md.push(`| ${c.name} | ${PEERS.map((p) => { const r = get(c.name, p.id); return r ? `${r.ratio.toFixed(2)}×` : '—'; }).join(' | ')} |`);
md.push('');
if (results.some((r) => r.engine === 'attnwasm2')) {
  md.push('## Threads (2 threads against 1, and against onnxruntime-web with 2 threads)', '');
  md.push('speed-up = attnwasm 1 thread ms / attnwasm 2 threads ms; vs ort2 = onnxruntime-web 2 threads ms / attnwasm 2 threads ms (above 1: attnwasm faster).', '');
  md.push('| case | attnwasm 1 thread ms | attnwasm 2 threads ms | speed-up | onnxruntime-web 2 threads ms | vs ort2 |', '|---|---:|---:|---:|---:|---:|');
  for (const c of shownCases) {
    const a1 = get(c.name, 'attnwasm'), a2 = get(c.name, 'attnwasm2'), o2 = get(c.name, 'ort2');
    if (!a2) continue;
    md.push(`| ${c.name} | ${fmt(a1.medianMs, 3)} | ${fmt(a2.medianMs, 3)} | ${(a1.medianMs / a2.medianMs).toFixed(2)}× | ${o2 ? fmt(o2.medianMs, 3) : '—'} | ${o2 ? `${(o2.medianMs / a2.medianMs).toFixed(2)}×` : '—'} |`);
  }
  md.push('');
}
if (raw.kernels) {
  const { gemm: g, breakdown: b } = raw.kernels;
  const pc = (x, p) => `${(100 * x / p).toFixed(0)} %`;
  md.push('## Kernels alone (no JS copies), one thread, against their own same-run SIMD peak', '');
  md.push(`From bench/gemm.mjs and bench/breakdown.mjs, run by this driver after the engines. Each probes the 12-chain SIMD peak in its own process right before and after every sample, and a fraction of the peak is the median over samples of sample / adjacent peak (a shared machine slows both alike). Median peak: ${g.peakGflops.toFixed(1)} and ${b.peakGflops.toFixed(1)} GFLOP/s.`, '');
  md.push('**Packed GEMM**, C(M, N) = A(M, K) · W(N, K)ᵀ: the kernel alone (`kernelBench`, a module of its own) and a `Linear.forward` as a user calls it (copies in and out included).', '');
  md.push('| M | N | K | kernel GFLOP/s | % of peak | Linear.forward GFLOP/s | % of peak |', '|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of g.rows) md.push(`| ${r.M} | ${r.N} | ${r.K} | ${r.kernel.toFixed(1)} | ${pc(r.kernelFraction, 1)} | ${r.linear.toFixed(1)} | ${pc(r.linearFraction, 1)} |`);
  md.push('');
  md.push(`**Attention core** (\`kernelBench\`, H = 8, L = S = 256, head dim swept; a straight line t = a + b·flops fitted): fixed cost **${b.core.nsPerScore.toFixed(2)} ns per score** (masks, online softmax, packing), the part that grows with the head dim at ${b.core.matmulGflops.toFixed(1)} GFLOP/s; head dim 64 at ${b.core.hd64Gflops.toFixed(1)} GFLOP/s = ${pc(b.core.hd64Fraction, 1)} of the peak; a causal mask costs ${b.core.causalRatio.toFixed(2)}× the full attention (whole masked chunks skipped).${b.large ? ` scaledDotProductAttention with q = k = v of (128, 512, 1024), through the public API: ${b.large.gflops.toFixed(1)} GFLOP/s = ${pc(b.large.fraction, 1)} of the peak.` : ''}`, '');
  md.push('**Where MultiheadAttention\'s time goes** (ms, medians; each part called alone through the public API):', '');
  md.push('| workload | MHA forward | in projection (Linear E → 3E) | out projection (Linear E → E) | attention core (SDPA) |', '|---|---:|---:|---:|---:|');
  for (const [k, t] of Object.entries(b.mha)) md.push(`| ${k} | ${fmt(t.mha, 3)} | ${fmt(t.inProj, 3)} | ${fmt(t.outProj, 3)} | ${fmt(t.core, 3)} |`);
  md.push('');
}
if (raw.kernels?.relaxed) {
  const { kernel: k, cases: rc } = raw.kernels.relaxed;
  md.push('## Relaxed SIMD against the baseline build, one process', '');
  md.push(`From bench/relaxed.mjs (node --experimental-wasm-relaxed-simd), run by this driver after the engines: both builds in one process, plus onnxruntime-web with 1 thread, calls alternated in blocks; medians. GEMM kernel 512³ (\`kernelBench\`): baseline **${k.base.gflops.toFixed(1)} GFLOP/s** = ${(100 * k.base.fraction).toFixed(0)} % of the mul + add peak probed beside it (${k.base.peak.toFixed(1)}); relaxed **${k.rs.gflops.toFixed(1)} GFLOP/s** = ${(100 * k.rs.fraction).toFixed(0)} % of the relaxed-madd peak (${k.rs.peak.toFixed(1)}); relaxed / baseline **${k.speedup.toFixed(2)}×**.`, '');
  md.push('| case | baseline ms | relaxed ms | onnxruntime-web 1 thread ms | baseline / relaxed | ort1 / relaxed | ort1 / baseline |', '|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rc) md.push(`| ${r.case} | ${fmt(r.ms.base, 3)} | ${fmt(r.ms.rs, 3)} | ${fmt(r.ms.ort1, 3)} | ${r.speedup.toFixed(2)}× | ${r.ortOverRs.toFixed(2)}× | ${r.ortOverBase.toFixed(2)}× |`);
  md.push('');
}
md.push('## Targets', '', '| target | measured | holds |', '|---|---|---|');
for (const t of targets) md.push(`| ${t.what} | ${t.measured} | ${t.holds ? 'yes' : '**no**'} |`);
md.push('');
md.push('## Correctness (checked before timing)', '');
md.push(`Max abs difference of each engine's output from attnwasm's (attnwasm column: from torch ${raw.torch}). A run fails above ${raw.tolerance}.`, '');
md.push(`| case | attnwasm vs torch | ${PEERS.map((p) => p.id).join(' | ')} |`, `|---|---:|${PEERS.map(() => '---:').join('|')}|`);
for (const c of shownCases) md.push(`| ${c.name} | ${diffs[c.name].attnwasm.toExponential(1)} | ${PEERS.map((p) => (diffs[c.name][p.id] === undefined ? '—' : diffs[c.name][p.id].toExponential(1))).join(' | ')} |`);
md.push('');

// ---- ratios.svg: grouped horizontal bars on a log2 axis, hand-written ----
function svgChart() {
  const rows = shownCases.map((c) => ({ c, bars: PEERS.map((p) => get(c.name, p.id)).filter(Boolean) }));
  const all = results.filter((r) => r.engine !== 'attnwasm').map((r) => r.ratio);
  const lo = Math.min(-2, Math.floor(Math.log2(Math.min(...all)))), hi = Math.max(2, Math.ceil(Math.log2(Math.max(...all))));
  const W = 900, left = 220, right = 60, top = 70, barH = 11, gap = 14;
  const plotW = W - left - right;
  const x = (v) => left + ((Math.log2(v) - lo) / (hi - lo)) * plotW;
  const H = top + rows.reduce((s, r) => s + r.bars.length * barH + gap, 0) + 40;
  const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const o = [];
  o.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`);
  o.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  o.push(`<text x="${left}" y="18" font-size="14" font-weight="bold">Engine time / attnwasm time (log scale; right of 1: attnwasm faster)</text>`);
  let lx = left;
  for (const p of PEERS) {
    o.push(`<rect x="${lx}" y="30" width="12" height="10" fill="${COLORS[p.id]}"/><text x="${lx + 16}" y="39">${esc(p.label)}</text>`);
    lx += 30 + p.label.length * 6.2;
  }
  o.push(`<text x="${left}" y="56" fill="#555">red tick: issue target vs onnxruntime-web 1 thread; ${esc(date)}, load ${load.start}</text>`);
  const bottom = H - 30;
  for (let e = lo; e <= hi; e++) {
    const v = 2 ** e, xv = x(v).toFixed(1);
    o.push(`<line x1="${xv}" y1="${top - 6}" x2="${xv}" y2="${bottom}" stroke="${e === 0 ? '#000' : '#ddd'}" stroke-width="${e === 0 ? 1.5 : 1}"/>`);
    o.push(`<text x="${xv}" y="${bottom + 14}" text-anchor="middle">${v >= 1 ? v : `1/${1 / v}`}</text>`);
  }
  o.push(`<text x="${x(1)}" y="${bottom + 27}" text-anchor="middle" fill="#000">attnwasm = 1</text>`);
  let y = top;
  for (const { c, bars } of rows) {
    const h = bars.length * barH;
    o.push(`<text x="${left - 8}" y="${(y + h / 2 + 4).toFixed(1)}" text-anchor="end">${esc(c.name)} (${esc(c.kind === 'matmul' ? '512³' : `${c.config.B > 1 ? `B=${c.config.B}, ` : ''}L=${c.config.L}${c.config.S !== c.config.L ? `, S=${c.config.S}` : ''}, E=${c.config.E}`)})</text>`);
    for (const r of bars) {
      const x0 = x(1), x1 = x(r.ratio);
      o.push(`<rect x="${Math.min(x0, x1).toFixed(1)}" y="${y + 1}" width="${Math.abs(x1 - x0).toFixed(1)}" height="${barH - 2}" fill="${COLORS[r.engine]}"><title>${esc(`${r.label}: ${r.medianMs.toFixed(3)} ms vs attnwasm ${(r.medianMs / r.ratio).toFixed(3)} ms`)}</title></rect>`);
      let labelX = x1 >= x0 ? x1 + 3 : x1 - 3;
      if (r.engine === 'ort1') {
        const t = targets.find((tt) => tt.what.startsWith(`${c.name}:`));
        const need = t ? Number(t.what.match(/≥ ([\d.]+)×/)[1]) : null;
        if (need) {
          o.push(`<line x1="${x(need).toFixed(1)}" y1="${y - 1}" x2="${x(need).toFixed(1)}" y2="${y + barH + 1}" stroke="#d00" stroke-width="2"/>`);
          if (x1 >= x0) labelX = Math.max(labelX, x(need) + 4);
        }
      }
      o.push(`<text x="${labelX.toFixed(1)}" y="${y + barH - 2}" font-size="9"${x1 < x0 ? ' text-anchor="end"' : ''}>${r.ratio.toFixed(2)}×</text>`);
      y += barH;
    }
    y += gap;
  }
  o.push('</svg>');
  return o.join('\n') + '\n';
}

mkdirSync(OUT_DIR, { recursive: true });
const dest = (f) => (partial ? join(OUT_DIR, `partial-${f}`) : join(BENCH_DIR, f));
writeFileSync(dest('results.md'), md.join('\n'));
writeFileSync(dest('ratios.svg'), svgChart());
if (!renderFrom) writeFileSync(dest('results.json'), JSON.stringify(raw, null, 1) + '\n');
console.log(md.join('\n'));
log(`wrote ${dest('results.md')}, ${dest('ratios.svg')}${renderFrom ? '' : `, ${dest('results.json')}`}`);
