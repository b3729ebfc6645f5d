// Child of close.test.mjs (run with --expose-gc): RSS before init(), after a
// call that grows the heap to ~`mib` MiB, and after close() + garbage
// collection. Prints one JSON line.
import { init } from '../../bindings/index.js';

const threads = Number(process.argv[2] ?? 1);
const mib = Number(process.argv[3] ?? 400);
const rss = () => process.memoryUsage().rss;
const settle = async () => {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((r) => setTimeout(r, 50));
  }
};
await settle();
const before = rss();
let aw = await init({ threads });
// SDPA over q, k, v of `mib / 3` MiB each: inputs ≈ mib MiB of wasm heap,
// touched (the output is written over the call's copy of q).
const n = Math.floor((mib / 3) * 2 ** 20 / 4 / (64 * 64));
const t = (x) => ({ data: new Float32Array(n * 64 * 64).fill(x), shape: [n, 64, 64] });
let out = aw.scaledDotProductAttention(t(0.5), t(0.25), t(1)).output;
const heap = aw.memory().heapBytes;
const during = rss();
out = null;
await aw.close();
aw = null;
await settle();
process.stdout.write(`${JSON.stringify({ before, during, after: rss(), heap })}\n`);
