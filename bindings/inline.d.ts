// Type declarations of 'attnwasm/inline' (bindings/inline.js): the API of
// 'attnwasm' with the single-thread .wasm embedded, so init() takes no URL.
import type { AttnWasm, InitOptions } from './index.js';

export * from './index.js';

/**
 * init() options of attnwasm/inline: `threads`, `relaxedSimd` and `workingMemory`. It embeds the baseline
 * single-thread build only: more than one thread falls back to one (capabilities().threadsReason),
 * and capabilities().relaxedSimd is always false (relaxedSimdReason says why).
 */
export type InlineInitOptions = Pick<InitOptions, 'threads' | 'relaxedSimd' | 'workingMemory'>;

/** Loads the embedded single-thread build (no .wasm file to serve; any bundler, no configuration). */
export function init(options?: InlineInitOptions): Promise<AttnWasm>;
