// Type declarations of 'attnwasm/inline' (bindings/inline.js): the API of
// 'attnwasm' with the single-thread .wasm embedded, so init() takes no URL.
import type { AttnWasm, InitOptions } from './index.js';

export * from './index.js';

/** init() options of attnwasm/inline: `threads` (more than one falls back to one: capabilities().threadsReason) and `workingMemory`. */
export type InlineInitOptions = Pick<InitOptions, 'threads' | 'workingMemory'>;

/** Loads the embedded single-thread build (no .wasm file to serve; any bundler, no configuration). */
export function init(options?: InlineInitOptions): Promise<AttnWasm>;
