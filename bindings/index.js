// attnwasm: the package entry ('attnwasm'). The API lives in runtime.js; this
// module says where the .wasm builds are: files in the package's dist/,
// named by literal new URL('…', import.meta.url) so that bundlers that handle
// that pattern (Vite, webpack) emit them and rewrite the URLs. Four builds:
// single-thread and pthreads, each baseline and relaxed SIMD (*_rs); init()
// picks one (loader.js). The entry without files is inline.js
// ('attnwasm/inline', baseline single-thread only).
import { createInit } from './loader.js';

export { AttnWasmError } from './errors.js';
export { CausalBias } from './blocks.js';
export { cosineSimilarity } from './similarity.js';
// Every other module of the static graph, named here too. Without a bundler a
// browser learns of a module only once it has parsed the one that imports it
// (six round trips deep); named here, the graph is fetched in two. Nothing
// changes otherwise: a module is evaluated once, and these come after the
// imports above, whose order of evaluation stays theirs.
import './runtime.js';
import './checks.js';
import './wasm_load.js';
import './plan.js';
import './models.js';
import './layers.js';
import './transformer.js';
import './translator.js';
import './classifier.js';
import './causal_lm.js';
import './embedder.js';
import './numberwords.js';
import './native_constants.js';
import './char_tokenizer.js';
import './sampling.js';
import './next_task.js';
import './workers.js';
import '../dist/attnwasm_core.mjs';

/**
 * The dist/ files to try, in order. Unbundled (Node, an import map, a CDN
 * serving the package as published) and in Vite and webpack, the literal
 * URLs name them. esbuild and Rollup move this module into a bundle without
 * rewriting the URLs, which then point beside the bundle's folder: there the
 * files are looked for next to the bundle first (where the README's recipe
 * copies them), then where the URLs point.
 */
function locations() {
  const files = {
    wasm: new URL('../dist/attnwasm_core.wasm', import.meta.url),
    mtWasm: new URL('../dist/attnwasm_core_mt.wasm', import.meta.url),
    mtWorker: new URL('../dist/attnwasm_core_mt.worker.js', import.meta.url),
    mtGlue: new URL('../dist/attnwasm_core_mt.mjs', import.meta.url),
    rsWasm: new URL('../dist/attnwasm_core_rs.wasm', import.meta.url),
    mtRsWasm: new URL('../dist/attnwasm_core_mt_rs.wasm', import.meta.url),
    mtRsWorker: new URL('../dist/attnwasm_core_mt_rs.worker.js', import.meta.url),
    mtRsGlue: new URL('../dist/attnwasm_core_mt_rs.mjs', import.meta.url),
  };
  const here = new URL(import.meta.url);
  // Built from a variable, so no bundler rewrites it: equal to files.wasm
  // only when the literal was left alone.
  const name = 'attnwasm_core.wasm';
  const moved = !here.pathname.endsWith('/bindings/index.js') && String(files.wasm) === String(new URL(`../dist/${name}`, here));
  if (!moved) return { sets: [files], moved };
  const nextToBundle = {};
  for (const [k, url] of Object.entries(files)) nextToBundle[k] = new URL(url.pathname.slice(url.pathname.lastIndexOf('/') + 1), here);
  return { sets: String(nextToBundle.wasm) === String(files.wasm) ? [files] : [nextToBundle, files], moved };
}

/**
 * Loads the wasm module and returns the runtime.
 * In Node the .wasm is read from the package folder; in browsers it is fetched
 * from next to this module (new URL(…, import.meta.url)), or from `wasmUrl`.
 * A .wasm that cannot be loaded — a network error, an HTTP error, a page that
 * is not WebAssembly, another version's file — rejects with AttnWasmError
 * ERR_WASM_LOAD naming the URL, the status or the cause, and the fix.
 * `threads`: 1, 2, … or 'auto' (the number of logical cores, at most 4), by
 * default 'auto'. More than one loads the pthreads build, which needs
 * SharedArrayBuffer: Node, or a page served with COOP/COEP headers
 * (`crossOriginIsolated`). Elsewhere init() falls back to one thread and
 * capabilities().threadsReason says why; so it does when the build's workers
 * or its own .wasm cannot start (a blocked or missing worker script, a
 * Content-Security-Policy) within `threadStartTimeoutMs` (default 10 000).
 * Each runtime with threads keeps its own pool of threads - 1 workers; in
 * Node they never keep the process alive.
 * `relaxedSimd` (default true): load the relaxed-SIMD build (FMA in the
 * matrix multiplies) where the engine runs WebAssembly relaxed SIMD
 * (Chromium ≥ 114, Firefox ≥ 146, Node with --experimental-wasm-relaxed-simd);
 * false loads the baseline build everywhere. A relaxed build that does not
 * load falls back to the baseline one; capabilities().relaxedSimd says which
 * runs and relaxedSimdReason why not.
 * `wasmUrl` / `wasmBinary` must be a baseline build's own .wasm: with them,
 * and without `threads`, the single-thread build (attnwasm_core.wasm) is
 * loaded; with `threads` > 1, pass attnwasm_core_mt.wasm (a wrong one rejects).
 * @param {{wasmUrl?: string|URL, wasmBinary?: ArrayBuffer|Uint8Array, threads?: number|'auto', threadStartTimeoutMs?: number, relaxedSimd?: boolean}} [options]
 * @returns {Promise<AttnWasm>} (typings: index.d.ts)
 */
export const init = createInit({
  name: 'attnwasm',
  locations,
  importPthreads: () => import('../dist/attnwasm_core_mt.mjs'),
  importRelaxed: () => import('../dist/attnwasm_core_rs.mjs'),
  importRelaxedPthreads: () => import('../dist/attnwasm_core_mt_rs.mjs'),
});
