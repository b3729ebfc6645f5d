// What fits (issue 29, docs/weights.md "What fits"): real model shapes with random weights (BF16 files made
// by tools/make_checkpoint.mjs, like the hub's), loaded from their folder as a user would —
// aw.loadModel(dir, { dtype }) — each in a fresh Node process per weight type and thread count:
//
//   heap        the wasm heap after the load and after decoding (wasm memory never shrinks, so this is the
//               peak, the load's staging and working memory included), and per parameter
//   load        seconds, and its rate as a fraction of the same process's file-read bandwidth: the same
//               files read through the same reader (bindings/sources.js, 8 MiB chunks) with nothing done
//               to the bytes, just before the load (both from the page cache, read twice and the second
//               timed); and against the load's bound: that read plus first-touching as many fresh pages as
//               the load's heap holds (timed after it, in a new wasm memory)
//   decode      tokens/s of greedy steps (median step) after a 32-token prompt, 1 and 2 threads
//
// Usage: node bench/fits.mjs [--shapes a,b] [--dtypes stored,q8,q4] [--threads 1,2] [--dir /tmp/attnwasm-fits]
//        [--steps 24] [--json]
// The checkpoints (4.4 GB for the four shapes) are written once into --dir and reused.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine, median } from './lib.mjs';
import { SHAPES, writeCheckpoint, parameterCount } from '../tools/make_checkpoint.mjs';

const argv = process.argv.slice(2);
const opt = (name, d) => { const i = argv.indexOf(name); return i < 0 ? d : argv[i + 1]; };
const DIR = opt('--dir', '/tmp/attnwasm-fits');
const STEPS = Number(opt('--steps', 24));

if (argv[0] === '--one') {
  // One measurement: --one <dir> <dtype> <threads>
  const [, dir, dtype, threadsArg] = argv;
  const threads = Number(threadsArg);
  const { openSource } = await import('../bindings/sources.js');
  const files = readdirSync(dir).filter((f) => f.endsWith('.safetensors')).map((f) => join(dir, f));
  const fileBytes = files.reduce((a, f) => a + statSync(f).size, 0);
  // File-read bandwidth: the loader's reader, nothing done with the bytes (a checksum of one byte per chunk).
  // Read twice and time the second: the first brings files the page cache had dropped back in (a cold
  // read runs at the disk's speed, which the load that follows would not see).
  let sum = 0;
  let readMs = 0;
  for (let pass = 0; pass < 2; pass++) {
    const tr = performance.now();
    for (const f of files) {
      const src = await openSource(f, f);
      for await (const c of src.chunks()) sum += c[0];
      await src.close();
    }
    readMs = performance.now() - tr;
  }
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads });
  const tl = performance.now();
  const lm = await aw.loadModel(dir, dtype === 'stored' ? {} : { dtype });
  const loadMs = performance.now() - tl;
  const heapAfterLoad = aw.memory().heapBytes;
  let s = 7;
  const prompt = Int32Array.from({ length: 32 }, () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s % lm.vocabSize; });
  const steps = [];
  for await (const t of lm.generate(prompt, { maxNewTokens: STEPS + 1, stopTokens: [] })) if (t.index > 0) steps.push(t.ms);
  // Fresh memory: a load writes its weights into pages the process has never touched, and first-touching a
  // page costs what the kernel and the VM make it cost (here up to 2–3 s per GiB, more than the copy itself).
  // Timed after the load: a new wasm memory the size of the load's heap, one byte written per 4 KiB page.
  const touchMem = new WebAssembly.Memory({ initial: Math.ceil(heapAfterLoad / 65536), maximum: 65536 });
  const tt = performance.now();
  const u8 = new Uint8Array(touchMem.buffer);
  for (let i = 0; i < u8.length; i += 4096) u8[i] = 1;
  const touchMs = performance.now() - tt;
  console.log(JSON.stringify({
    fileBytes, readMs, loadMs, touchMs, heapAfterLoad, heapAfterDecode: aw.memory().heapBytes, weightBytes: lm.weightBytes,
    weightTypes: lm.weightTypes, stepMs: median(steps), threads, dtype, checksum: sum,
  }));
  lm.dispose();
  await aw.close();
  process.exit(0);
}

const shapes = String(opt('--shapes', 'smollm2-135m,smollm2-360m,qwen2.5-0.5b,llama-3.2-1b')).split(',');
const dtypes = String(opt('--dtypes', 'stored,q8,q4')).split(',');
const threadList = String(opt('--threads', '1,2')).split(',').map(Number);
const JSON_OUT = argv.includes('--json');
const log = (x) => { if (!JSON_OUT) console.log(x); };
log(`# attnwasm: what fits. ${describeMachine()}; Node ${process.version}`);

function ensure(shape, shards = 1) {
  const dir = join(DIR, shards > 1 ? `${shape}-${shards}-shards` : shape);
  if (!existsSync(join(dir, 'config.json'))) {
    const t0 = performance.now();
    const r = writeCheckpoint(shape, dir, { shards });
    log(`# wrote ${dir}: ${(r.bytes / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  return dir;
}

function one(dir, dtype, threads) {
  const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--one', dir, dtype, String(threads), '--steps', String(STEPS)],
    { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) return { error: (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ') };
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

const rows = [];
const cases = shapes.map((s) => [s, 1]);
if (shapes.includes('llama-3.2-1b')) cases.push(['llama-3.2-1b', 2]);  // the same model as two shards
for (const [shape, shards] of cases) {
  const dir = ensure(shape, shards);
  const params = parameterCount(SHAPES[shape]);
  for (const dtype of shards > 1 ? ['q8'] : dtypes) {
    const byThreads = {};
    for (const threads of shards > 1 ? [1] : threadList) byThreads[threads] = one(dir, dtype, threads);
    const r1 = byThreads[threadList[0]] ?? byThreads[1];
    if (r1.error) {
      rows.push({ shape, shards, dtype, error: r1.error });
      log(`| ${shape}${shards > 1 ? ` (${shards} shards)` : ''} | ${dtype} | failed: ${r1.error} |`);
      continue;
    }
    const row = {
      shape, shards, dtype, parameters: params, fileMiB: r1.fileBytes / 2 ** 20, weightMiB: r1.weightBytes / 2 ** 20,
      heapMiB: Math.max(r1.heapAfterLoad, r1.heapAfterDecode) / 2 ** 20,
      bytesPerParameter: Math.max(r1.heapAfterLoad, r1.heapAfterDecode) / params,
      loadSeconds: r1.loadMs / 1000, readGBps: r1.fileBytes / r1.readMs / 1e6, loadGBps: r1.fileBytes / r1.loadMs / 1e6,
      tokensPerSecond: Object.fromEntries(Object.entries(byThreads).map(([t, r]) => [t, r.error ? null : 1000 / r.stepMs])),
    };
    row.loadFractionOfRead = row.loadGBps / row.readGBps;
    // The bound of a load: reading the files plus first-touching the heap's pages.
    row.touchSeconds = r1.touchMs / 1000;
    row.loadFractionOfBound = (r1.readMs + r1.touchMs) / r1.loadMs;
    rows.push(row);
  }
}

if (JSON_OUT) {
  console.log(JSON.stringify({ machine: describeMachine(), node: process.version, steps: STEPS, rows }, null, 1));
} else {
  const f = (x, d = 1) => (x == null ? '—' : x.toFixed(d));
  console.log(`\n| model (random weights, BF16 file) | parameters | dtype | file MiB | weights MiB | heap MiB | heap B/parameter | load s | load GB/s (of read GB/s) | touch s | load / (read + touch) | decode tok/s, ${threadList.map((t) => `${t} thr`).join(' / ')} |`);
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    if (r.error) continue;
    console.log(`| ${r.shape}${r.shards > 1 ? ` (${r.shards} shards)` : ''} | ${(r.parameters / 1e6).toFixed(0)} M | ${r.dtype} | ${f(r.fileMiB, 0)} | ${f(r.weightMiB, 0)} | ` +
      `${f(r.heapMiB, 0)} | ${f(r.bytesPerParameter, 2)} | ${f(r.loadSeconds, 2)} | ${f(r.loadGBps, 2)} (${f(r.readGBps, 2)}: ${f(100 * r.loadFractionOfRead, 0)} %) | ${f(r.touchSeconds, 2)} | ${f(100 * r.loadFractionOfBound, 0)} % | ` +
      `${threadList.map((t) => f(r.tokensPerSecond[t])).join(' / ')} |`);
  }
}
