// Which build init() loads: the thread count (the single-thread or the
// pthreads build) and relaxed SIMD (the baseline or the relaxed-SIMD build),
// decided from the options and the environment before anything loads. The
// loading itself, and the fallbacks when a build does not start, are
// loader.js's.
import { MAX_THREADS } from './native_constants.js';
import { isNode, checkInteger } from './checks.js';
import { RELAXED_SIMD_SUPPORTED } from './wasm_load.js';

// ---- threads: which build init() loads ----
// Two builds of the same C++: dist/attnwasm_core (single-threaded, loads
// anywhere) and dist/attnwasm_core_mt (pthreads: needs SharedArrayBuffer,
// i.e. Node or a cross-origin-isolated page; its Web Workers run
// dist/attnwasm_core_mt.worker.js). index.js names both with literal
// specifiers so that bundlers see them; the single-thread path never loads
// the pthreads glue.
const NODE_OS = 'node:os';
/** Most threads `threads: 'auto'` picks (only 2-core machines were measured). */
const AUTO_MAX_THREADS = 4;

async function logicalCores() {
  if (isNode) {
    const os = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_OS);
    return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  }
  return typeof navigator === 'object' && navigator.hardwareConcurrency > 0 ? navigator.hardwareConcurrency : 1;
}

/**
 * Decides the thread count for init(): { threads, reason } where reason says
 * why a single thread is used (null when threads > 1).
 */
export async function planThreads(requested) {
  if (requested === undefined) requested = DEFAULT_THREADS;
  if (requested !== 'auto') {
    checkInteger(requested, 'threads', { min: 1, max: MAX_THREADS });
    if (requested === 1) return { threads: 1, reason: 'threads: 1 requested' };
  }
  if (typeof SharedArrayBuffer !== 'function') {
    return {
      threads: 1,
      reason: isNode || globalThis.crossOriginIsolated === true
        ? 'SharedArrayBuffer unavailable'
        : 'not cross-origin isolated (COOP/COEP headers missing): SharedArrayBuffer unavailable',
    };
  }
  if (!isNode && globalThis.crossOriginIsolated !== true) {
    return { threads: 1, reason: 'not cross-origin isolated (COOP/COEP headers missing)' };
  }
  if (!isNode && typeof Worker !== 'function') return { threads: 1, reason: 'Worker unavailable in this context' };
  if (requested !== 'auto') return { threads: requested, reason: null };
  const cores = await logicalCores();
  if (cores < 2) return { threads: 1, reason: `threads: 'auto' on ${cores} logical core` };
  return { threads: Math.min(cores, AUTO_MAX_THREADS), reason: null };
}

/**
 * The thread count init() uses when `threads` is not given: 'auto'. Measured
 * on 2 cores (bench/README.md): in Node 2 threads ran the S3/S4 MHA and
 * encoder layers 1.5–1.9× faster than one, and small shapes no slower; in
 * Chromium 1.2–1.4×. Browsers only get threads on cross-origin-isolated pages,
 * so elsewhere 'auto' quietly means one thread (capabilities() says why).
 */
const DEFAULT_THREADS = 'auto';

// ---- relaxed SIMD: which build init() loads ----
// Two more builds of the same C++, compiled with -mrelaxed-simd:
// dist/attnwasm_core_rs (single-thread) and dist/attnwasm_core_mt_rs
// (pthreads). Their GEMM micro-kernel multiply-adds with f32x4.relaxed_madd,
// one fused multiply-add where the CPU has FMA (src/kernels/gemm_simd.cpp).
// init() loads them where the engine validates a relaxed_madd module, unless
// told not to; results then differ from the baseline build's in the last
// bits, never between thread counts (README, "Relaxed SIMD").

/**
 * Decides whether init() tries the relaxed-SIMD build: { relaxed, reason },
 * where reason says why not (null when relaxed).
 */
export function planRelaxed(requested, entry, custom) {
  if (requested === false) return { relaxed: false, reason: 'relaxedSimd: false requested' };
  if (entry.embedded) {
    return { relaxed: false, reason: `${entry.name} embeds the baseline build only (import 'attnwasm' for the relaxed-SIMD build)` };
  }
  if (custom) return { relaxed: false, reason: 'wasmUrl/wasmBinary name a baseline build\'s .wasm' };
  if (!RELAXED_SIMD_SUPPORTED) {
    return {
      relaxed: false,
      reason: `this engine does not run WebAssembly relaxed SIMD${isNode ? ' (Node: run it with --experimental-wasm-relaxed-simd)' : ''}`,
    };
  }
  return { relaxed: true, reason: null };
}
