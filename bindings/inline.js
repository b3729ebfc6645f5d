// attnwasm/inline: the package entry that needs no asset handling. The
// single-thread build's .wasm is embedded in a module (dist/attnwasm_inline.mjs,
// gzip + base64, written by the build: tools/inline_wasm.mjs), so every
// bundler — or none — works with no configuration. The API is the same as
// 'attnwasm' (runtime.js); init() takes only `threads` and `relaxedSimd`, and
// always runs one thread of the baseline build (no relaxed SIMD).
// What it gives up, and its size (README, "Install and bundle"): no streaming
// compilation, no pthreads build, no separate caching of the .wasm.
import { createInit } from './loader.js';
import embedded from '../dist/attnwasm_inline.mjs';

export { AttnWasmError } from './errors.js';
export { CausalBias } from './blocks.js';
export { cosineSimilarity } from './similarity.js';

/** The embedded .wasm: base64 → gzip → bytes (DecompressionStream: every engine with WebAssembly SIMD has it). */
async function wasmBytes() {
  let gz;
  if (typeof Uint8Array.fromBase64 === 'function') {
    gz = Uint8Array.fromBase64(embedded);
  } else {
    const s = atob(embedded);
    gz = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) gz[i] = s.charCodeAt(i);
  }
  const stream = new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * Loads the embedded single-thread build and returns the runtime (as
 * 'attnwasm''s init(); `threads` other than 1 falls back to one thread and
 * capabilities().threadsReason says why; it is the baseline build, so
 * capabilities().relaxedSimd is false, whatever `relaxedSimd` says).
 * @param {{threads?: number|'auto', relaxedSimd?: boolean}} [options]
 * @returns {Promise<AttnWasm>} (typings: inline.d.ts)
 */
export const init = createInit({ name: 'attnwasm/inline', embedded: wasmBytes });
