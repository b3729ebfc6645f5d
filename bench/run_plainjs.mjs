// Plain-JavaScript runner (bench/plain_js_mha.mjs): the floor for MultiheadAttention
// self-attention. No SIMD, no wasm; only self-attention MHA cases.
// Usage: node bench/run_plainjs.mjs <case> check|time  (see lib.mjs)
import { loadCase, runCase } from './lib.mjs';
import { plainMha } from './plain_js_mha.mjs';

const job = loadCase();
const { c, io, weights } = job;
if (c.kind !== 'mha' || !c.inputs.x) throw new Error(`plainjs: only self-attention MHA cases, got ${c.name}`);
const { L, B, E, H } = c.config;
const sd = Object.fromEntries(Object.entries(weights).map(([k, t]) => [k, t.data]));
const x = io.x.data;
await runCase('plainjs', job, () => plainMha(x, L, B, E, H, sd), { threads: 1 });
