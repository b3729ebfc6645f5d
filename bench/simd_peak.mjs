// Single-core wasm SIMD peak in Node: runs simd_peak.wat (12 independent
// f32x4 mul+add chains) and, for context, the same kernel with other chain
// counts (generated below with the same template). Prints one JSON line:
// { peakGflops (median of the 12-chain kernel), maxGflops, sweep: {chains: GFLOP/s},
//   offChainGflops, offChainSweep, relaxed }.
// "Off-chain" is a second, GEMM-like kernel: acc_i += load(L1) · m, where only the
// add is on the dependency chain (as in a GEMM's inner step). The chain kernel waits
// for mul + add latency on every step and tops out lower; a good GEMM can beat it.
// `relaxed`: the same three measurements with f32x4.relaxed_madd in place of
// mul + add (simd_peak_relaxed.wat and its generated twins) — the ceiling of the
// relaxed-SIMD build — or null where the engine has no relaxed SIMD (Node 20
// without --experimental-wasm-relaxed-simd).
// Usage: node [--experimental-wasm-relaxed-simd] bench/simd_peak.mjs [reps]
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import initWabt from 'wabt';
import { BENCH_DIR, RELAXED_SIMD, median } from './lib.mjs';

const REPS = Number(process.argv[2] ?? 15);
const UNROLL = 2;
const wabt = await initWabt();

/** The kernel of simd_peak.wat (relaxed: simd_peak_relaxed.wat) with `chains` chains (for the sweep only). */
function watFor(chains, relaxed = false) {
  const a = [...Array(chains).keys()];
  const step = a.map((i) => (relaxed
    ? `(local.set $a${i} (f32x4.relaxed_madd (local.get $a${i}) (local.get $m) (local.get $c)))`
    : `(local.set $a${i} (f32x4.add (f32x4.mul (local.get $a${i}) (local.get $m)) (local.get $c)))`));
  const sum = a.slice(1).reduce((s, i) => `(f32x4.add ${s} (local.get $a${i}))`, '(local.get $a0)');
  return `(module (func (export "run") (param $n i32) (result f32)
    (local $m v128) (local $c v128) ${a.map((i) => `(local $a${i} v128)`).join(' ')}
    (local.set $m (f32x4.splat (f32.const 0.5))) (local.set $c (f32x4.splat (f32.const 1.0)))
    ${a.map((i) => `(local.set $a${i} (f32x4.splat (f32.const ${i * 0.25})))`).join('\n')}
    (loop $iter ${Array(UNROLL).fill(step.join('\n')).join('\n')}
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $iter (i32.gt_s (local.get $n) (i32.const 0))))
    (local.set $a0 ${sum})
    (f32.add (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
             (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0))))))`;
}

/** The off-chain kernel: `chains` accumulators, acc_i += v128.load(16·i) · m, no unroll (relaxed: one relaxed_madd). */
function watOffChain(chains, relaxed = false) {
  const a = [...Array(chains).keys()];
  const sum = a.slice(1).reduce((s, i) => `(f32x4.add ${s} (local.get $a${i}))`, '(local.get $a0)');
  const step = (i) => (relaxed
    ? `(local.set $a${i} (f32x4.relaxed_madd (v128.load offset=${16 * i} (i32.const 0)) (local.get $m) (local.get $a${i})))`
    : `(local.set $a${i} (f32x4.add (local.get $a${i}) (f32x4.mul (v128.load offset=${16 * i} (i32.const 0)) (local.get $m))))`);
  return `(module (memory (export "mem") 1) (func (export "run") (param $n i32) (result f32)
    (local $m v128) ${a.map((i) => `(local $a${i} v128)`).join(' ')}
    (local.set $m (f32x4.splat (f32.const 1e-7)))
    (loop $iter
      ${a.map(step).join('\n')}
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $iter (i32.gt_s (local.get $n) (i32.const 0))))
    (local.set $a0 ${sum})
    (f32x4.extract_lane 0 (local.get $a0))))`;
}

async function instantiate(text, name) {
  const mod = wabt.parseWat(name, text, { simd: true, relaxed_simd: true });
  mod.validate();
  const { buffer } = mod.toBinary({});
  mod.destroy();
  const { instance } = await WebAssembly.instantiate(buffer);
  if (instance.exports.mem) new Float32Array(instance.exports.mem.buffer).fill(0.5);
  return instance.exports.run;
}

/** GFLOP/s of run() over REPS timed calls of ~50 ms each, after ~0.5 s of warm-up calls
 * (V8 first compiles with Liftoff and swaps in TurboFan code on a later call). */
function measure(run, chains, unroll = UNROLL, check = (s) => Math.abs(s - chains * 8) < 1e-3) {
  const flopsPerIter = chains * unroll * 2 * 4;
  const t0 = performance.now();
  while (performance.now() - t0 < 500) run(20000);
  let n = 100000;
  for (;;) {
    const t = performance.now();
    run(n);
    if (performance.now() - t > 50) break;
    n *= 2;
  }
  const g = [];
  for (let r = 0; r < REPS; r++) {
    const t = performance.now();
    const s = run(n);
    const ms = performance.now() - t;
    if (!check(s)) throw new Error(`simd_peak: wrong lane sum ${s} for ${chains} chains`);
    g.push((flopsPerIter * n) / ms / 1e6);
  }
  return g;
}

const peakRun = await instantiate(readFileSync(join(BENCH_DIR, 'simd_peak.wat'), 'utf8'), 'simd_peak.wat');
const peak = measure(peakRun, 12);
const sweep = {};
for (const chains of [4, 8, 10, 12, 14, 16]) {
  sweep[chains] = Number(median(measure(await instantiate(watFor(chains), `chains${chains}.wat`), chains)).toFixed(2));
}
const offChainSweep = {};
for (const chains of [8, 10, 12]) {
  const run = await instantiate(watOffChain(chains), `offchain${chains}.wat`);
  offChainSweep[chains] = Number(median(measure(run, chains, 1, (s) => Number.isFinite(s) && s > 0)).toFixed(2));
}
// The same with relaxed_madd, where the engine runs relaxed SIMD (lib.mjs RELAXED_SIMD).
let relaxed = null;
if (RELAXED_SIMD) {
  const rsPeak = measure(await instantiate(readFileSync(join(BENCH_DIR, 'simd_peak_relaxed.wat'), 'utf8'), 'simd_peak_relaxed.wat'), 12);
  const rsSweep = {};
  for (const chains of [4, 8, 10, 12, 14, 16]) {
    rsSweep[chains] = Number(median(measure(await instantiate(watFor(chains, true), `rs-chains${chains}.wat`), chains)).toFixed(2));
  }
  const rsOffChainSweep = {};
  for (const chains of [8, 10, 12]) {
    const run = await instantiate(watOffChain(chains, true), `rs-offchain${chains}.wat`);
    rsOffChainSweep[chains] = Number(median(measure(run, chains, 1, (s) => Number.isFinite(s) && s > 0)).toFixed(2));
  }
  relaxed = {
    peakGflops: median(rsPeak), maxGflops: Math.max(...rsPeak), sweep: rsSweep,
    offChainGflops: Math.max(...Object.values(rsOffChainSweep)), offChainSweep: rsOffChainSweep,
  };
}
console.log(JSON.stringify({
  engine: 'simd_peak', chains: 12, reps: REPS,
  peakGflops: median(peak), maxGflops: Math.max(...peak), sweep,
  offChainGflops: Math.max(...Object.values(offChainSweep)), offChainSweep,
  relaxed,
}));
