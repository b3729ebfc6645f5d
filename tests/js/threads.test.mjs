// The pthreads build through the public API: init({ threads }) picks the
// build and reports it in capabilities(); with 2 threads, MultiheadAttention,
// TransformerEncoderLayer and scaledDotProductAttention give outputs
// bit-identical to the single-thread build (the work is split on GEMM tile
// boundaries only), at shapes large enough to be split (odd sizes, B > 1,
// H > 1, masks); the PyTorch goldens of parity.test.mjs and
// transformer_parity.test.mjs pass through it too; and a Node process that
// used threads exits on its own (idle pool workers are unref'd).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { decodeTensor, loadGoldens, maxAbsDiff, randomTensor } from './helpers.mjs';

const entry = new URL('../../bindings/index.js', import.meta.url).href;
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });

/** Bitwise equality of two Float32Arrays (NaN payloads and -0 included). */
function assertSameBits(a, b, what) {
  assert.deepEqual(a.shape, b.shape, `${what}: shape`);
  const x = new Uint32Array(a.data.buffer, a.data.byteOffset, a.data.length);
  const y = new Uint32Array(b.data.buffer, b.data.byteOffset, b.data.length);
  assert.equal(x.length, y.length, `${what}: length`);
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== y[i]) assert.fail(`${what}: element ${i} differs: ${a.data[i]} vs ${b.data[i]}`);
  }
}

function causalMask(L) {
  const data = new Float32Array(L * L);
  for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) data[i * L + j] = -Infinity;
  return { data, shape: [L, L] };
}

test('capabilities(): threads in use, or false with the reason', () => {
  const c2 = mt.capabilities();
  assert.equal(c2.threads, 2);
  assert.equal(c2.threadsReason, undefined);
  assert.equal(c2.build, 'pthreads');
  assert.equal(c2.simd, true);
  assert.equal(c2.environment, 'node');
  assert.equal(c2.sharedArrayBuffer, true);
  assert.equal(c2.crossOriginIsolated, false); // Node has no such notion; threads need none there
  // The glue's own globalThis.Worker (worker_threads.Worker) does not leak into the process.
  assert.equal(typeof globalThis.Worker, 'undefined');
  const c1 = st.capabilities();
  assert.equal(c1.threads, false);
  assert.equal(c1.threadsReason, 'threads: 1 requested');
  assert.equal(c1.build, 'single-thread');
});

test('the pthreads .wasm imports a shared memory and has SIMD128; the single-thread one has no threads', () => {
  const dump = (f, ...args) => execFileSync('wasm-objdump', [...args, fileURLToPath(new URL(`../../dist/${f}`, import.meta.url))],
    { encoding: 'utf8', maxBuffer: 1 << 28 });
  assert.match(dump('attnwasm_core_mt.wasm', '-x', '-j', 'Import'), /memory\[0\].*shared/);
  const simd = dump('attnwasm_core_mt.wasm', '-d').match(/\bf32x4\.(mul|add)\b/g) ?? [];
  assert.ok(simd.length > 100, `expected vector multiply-adds, found ${simd.length}`);
  const st = dump('attnwasm_core.wasm', '-x', '-j', 'Import');
  assert.doesNotMatch(st, /shared|pthread/);
});

test("init({ threads: 'auto' }) uses the logical cores (at most 4) in Node", async () => {
  const { availableParallelism } = await import('node:os');
  const aw = await init({ threads: 'auto' });
  const cores = availableParallelism();
  assert.equal(aw.capabilities().threads, cores >= 2 ? Math.min(cores, 4) : false);
});

test('init() without threads: the documented default', async () => {
  const aw = await init();
  const c = aw.capabilities();
  // The default is 'auto' (README, index.d.ts): threads wherever SharedArrayBuffer works.
  const { availableParallelism } = await import('node:os');
  assert.equal(c.threads, availableParallelism() >= 2 ? Math.min(availableParallelism(), 4) : false);
  // A custom .wasm without `threads` is taken to be the single-thread build.
  const bytes = readFileSync(new URL('../../dist/attnwasm_core.wasm', import.meta.url));
  const custom = await init({ wasmBinary: bytes });
  assert.equal(custom.capabilities().threads, false);
  assert.match(custom.capabilities().threadsReason, /wasmUrl\/wasmBinary given without threads/);
});

test('init({ threads }) rejects bad values before loading anything', async () => {
  await assert.rejects(init({ threads: 0 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' });
  await assert.rejects(init({ threads: 65 }), { name: 'RangeError' });
  await assert.rejects(init({ threads: 1.5 }), { name: 'TypeError' });
  await assert.rejects(init({ threads: '2' }), { name: 'TypeError', message: /threads: expected an integer or 'auto'/ });
  await assert.rejects(init({ threads: 2, threadStartTimeoutMs: 0 }), { name: 'RangeError', message: /^threadStartTimeoutMs: expected an integer in \[1, 600000\], got 0$/ });
  await assert.rejects(init({ threadStartTimeoutMs: '5s' }), { name: 'TypeError', message: /^threadStartTimeoutMs: expected an integer, got string$/ });
});

test('without SharedArrayBuffer, threads fall back to one with the reason', () => {
  // V8 can start without the SharedArrayBuffer global: the pthreads build must
  // then not even be imported (it would fail), and capabilities() says why.
  const out = execFileSync(process.execPath, ['--no-harmony-sharedarraybuffer', '--input-type=module', '-e', `
    const { init } = await import(${JSON.stringify(entry)});
    const aw = await init({ threads: 2 });
    const mha = new aw.MultiheadAttention(8, 2);
    const x = { data: new Float32Array(3 * 8).fill(0.25), shape: [3, 8] };
    mha.forward(x, x, x);
    console.log(JSON.stringify(aw.capabilities()));`], { encoding: 'utf8', timeout: 30000 });
  const caps = JSON.parse(out);
  assert.equal(caps.threads, false);
  assert.equal(caps.threadsReason, 'SharedArrayBuffer unavailable');
  assert.equal(caps.sharedArrayBuffer, false);
  assert.equal(caps.build, 'single-thread');
});

test('the pthreads worker script missing: init() falls back to one thread, says why, and the process lives', () => {
  // A copy of the package's JS and builds without the .worker.js: the pool
  // workers fail to start. init() must neither hang nor let the glue's error
  // handler end the process; the single-thread build takes over.
  const dir = mkdtempSync(join(tmpdir(), 'attnwasm-noworker-'));
  try {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    for (const d of ['bindings', 'dist']) cpSync(join(root, d), join(dir, d), { recursive: true });
    cpSync(join(root, 'package.json'), join(dir, 'package.json'));
    unlinkSync(join(dir, 'dist', 'attnwasm_core_mt.worker.js'));
    const t0 = Date.now();
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `
      const { init } = await import(${JSON.stringify(new URL(`file://${join(dir, 'bindings', 'index.js')}`).href)});
      const aw = await init({ threads: 2 });
      const mha = new aw.MultiheadAttention(8, 2);
      const x = { data: new Float32Array(3 * 8).fill(0.25), shape: [3, 8] };
      const y = mha.forward(x, x, x).output;
      await new Promise((ok) => setTimeout(ok, 300));  // late worker errors must not end the process
      console.log(JSON.stringify({ caps: aw.capabilities(), y: Array.from(y.data) }));`], { encoding: 'utf8', timeout: 30000 });
    const ms = Date.now() - t0;
    assert.equal(r.error, undefined, `init() hung: ${r.error?.message}`);
    assert.equal(r.status, 0, r.stderr);
    const { caps, y } = JSON.parse(r.stdout);
    assert.equal(caps.threads, false);
    assert.equal(caps.build, 'single-thread');
    assert.match(caps.threadsReason, /^the worker script file:.*attnwasm_core_mt\.worker\.js failed to load.*; running the single-thread build$/);
    assert.equal(y.length, 3 * 8);
    assert.ok(y.every(Number.isFinite));
    assert.ok(ms < 10000, `took ${ms} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Node process that used threads exits on its own, promptly', () => {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', `
    const { init } = await import(${JSON.stringify(entry)});
    const aw = await init({ threads: 2 });
    const mha = new aw.MultiheadAttention(64, 4);
    const x = { data: new Float32Array(128 * 64).fill(0.5), shape: [128, 1, 64] };
    mha.forward(x, x, x);
    mha.dispose();
    console.log(aw.capabilities().threads);`], { encoding: 'utf8', timeout: 20000 });
  const ms = Date.now() - t0;
  assert.equal(r.error, undefined, `the process did not exit within 20 s (${r.error?.message})`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), '2');
  assert.ok(ms < 10000, `exit took ${ms} ms`);
});

// Shapes above the split thresholds (src/ops/parallel_gemm.cpp, the attention
// row blocks), with odd lengths so that register-tile tails land in the last block.
const MHA_CASES = [
  { E: 64, H: 4, N: 3, L: 67, S: 45, opts: { batchFirst: true } },
  { E: 96, H: 3, N: 2, L: 130, S: 130, opts: {}, fwd: { attnMask: causalMask(130), needWeights: true } },
  { E: 64, H: 8, N: 1, L: 129, S: 77, opts: { addBiasKv: true, addZeroAttn: true }, fwd: { needWeights: true, averageAttnWeights: false } },
  { E: 256, H: 8, N: 1, L: 256, S: 256, opts: {}, fwd: { needWeights: false } }, // bench S3
];

test('MultiheadAttention: 2 threads are bit-identical to the single-thread build', () => {
  for (const c of MHA_CASES) {
    const name = `E${c.E} H${c.H} N${c.N} L${c.L} S${c.S}`;
    const q = randomTensor(c.opts.batchFirst ? [c.N, c.L, c.E] : [c.L, c.N, c.E], 1);
    const kv = randomTensor(c.opts.batchFirst ? [c.N, c.S, c.E] : [c.S, c.N, c.E], 2);
    const a = new st.MultiheadAttention(c.E, c.H, c.opts);
    const b = new mt.MultiheadAttention(c.E, c.H, c.opts);
    try {
      const sd = a.stateDict();
      for (const t of Object.values(sd)) t.data.set(randomTensor([t.data.length], 7 + t.data.length).data);
      a.loadStateDict(sd);
      b.loadStateDict(sd);
      const kvIn = c.S === c.L && !c.opts.batchFirst && c.fwd?.attnMask ? q : kv;
      const ra = a.forward(q, kvIn, kvIn, c.fwd);
      const rb = b.forward(q, kvIn, kvIn, c.fwd);
      assertSameBits(rb.output, ra.output, `${name} output`);
      if (ra.weights) assertSameBits(rb.weights, ra.weights, `${name} weights`);
      else assert.equal(rb.weights, null);
    } finally {
      a.dispose();
      b.dispose();
    }
  }
});

test('TransformerEncoderLayer: 2 threads are bit-identical to the single-thread build', () => {
  const cases = [
    { E: 64, H: 4, FF: 160, shape: [75, 2, 64], opts: { dimFeedforward: 160 } },
    { E: 96, H: 6, FF: 384, shape: [3, 41, 96], opts: { dimFeedforward: 384, batchFirst: true, normFirst: true, activation: 'gelu' } },
    { E: 256, H: 8, FF: 1024, shape: [256, 1, 256], opts: { dimFeedforward: 1024, activation: 'relu' } }, // bench S3
  ];
  for (const c of cases) {
    const a = new st.TransformerEncoderLayer(c.E, c.H, c.opts);
    const b = new mt.TransformerEncoderLayer(c.E, c.H, c.opts);
    try {
      const sd = a.stateDict();
      b.loadStateDict(sd);
      const x = randomTensor(c.shape, 3);
      assertSameBits(b.forward(x), a.forward(x), `encoder ${JSON.stringify(c.shape)}`);
      const L = c.opts.batchFirst ? c.shape[1] : c.shape[0];
      const withMask = { srcMask: causalMask(L), isCausal: true };
      assertSameBits(b.forward(x, withMask), a.forward(x, withMask), `encoder ${JSON.stringify(c.shape)} causal`);
    } finally {
      a.dispose();
      b.dispose();
    }
  }
});

test('scaledDotProductAttention: 2 threads are bit-identical to the single-thread build', () => {
  const mask = (L, S) => ({ data: Uint8Array.from({ length: L * S }, (_, i) => (i % 7 === 3 ? 0 : 1)), shape: [L, S] });
  const cases = [
    { q: [2, 3, 37, 16], k: [2, 3, 41, 16], v: [2, 3, 41, 8], o: { attnMask: mask(37, 41), needWeights: true } },
    { q: [1, 4, 130, 32], k: [1, 4, 130, 32], v: [1, 4, 130, 32], o: { isCausal: true } },
    { q: [3, 65, 24], k: [3, 70, 24], v: [3, 70, 24], o: { scale: 0.3 } },
    { q: [4, 8, 33, 16], k: [4, 2, 33, 16], v: [4, 2, 33, 16], o: { enableGqa: true, needWeights: true } },
    { q: [5, 9], k: [7, 9], v: [4, 7, 6], o: { needWeights: true } }, // value widens the batch
  ];
  for (const c of cases) {
    const q = randomTensor(c.q, 1), k = randomTensor(c.k, 2), v = randomTensor(c.v, 3);
    const a = st.scaledDotProductAttention(q, k, v, c.o);
    const b = mt.scaledDotProductAttention(q, k, v, c.o);
    assertSameBits(b.output, a.output, `sdpa ${JSON.stringify(c.q)} output`);
    if (a.weights) assertSameBits(b.weights, a.weights, `sdpa ${JSON.stringify(c.q)} weights`);
  }
});

test('the pthreads build with 1 and 2 threads agrees bit for bit (S4-sized MHA)', () => {
  const rt = mt;
  const mha = new rt.MultiheadAttention(512, 8);
  try {
    const x = randomTensor([512, 2, 512], 5);
    const two = mha.forward(x, x, x, { needWeights: false }).output;
    assert.equal(rt._setThreads(1), 1);
    assert.equal(rt.capabilities().threads, false);
    assert.equal(rt.capabilities().threadsReason, 'threads: 1 set');
    const one = mha.forward(x, x, x, { needWeights: false }).output;
    assertSameBits(two, one, 'MHA 512');
  } finally {
    assert.equal(rt._setThreads(2), 2);
    mha.dispose();
  }
  assert.throws(() => rt._setThreads(3), { name: 'RangeError' });
});

// ---- the PyTorch goldens through the pthreads build ----
// parity.test.mjs and transformer_parity.test.mjs run them through init();
// here every SDPA/MHA golden and every Transformer-block golden runs through
// init({ threads: 2 }): within the same tolerances of torch, and bit-identical
// to the single-thread build.
const ATOL = 1e-5;

test('the SDPA and MHA goldens pass through init({ threads: 2 })', () => {
  for (const c of loadGoldens('sdpa.json').cases) {
    const args = [decodeTensor(c.query), decodeTensor(c.key), decodeTensor(c.value),
      { attnMask: decodeTensor(c.attnMask), isCausal: c.isCausal, scale: c.scale, enableGqa: c.enableGqa, needWeights: true }];
    const r = mt.scaledDotProductAttention(...args);
    assert.ok(maxAbsDiff(r.output, decodeTensor(c.expected.output)) <= ATOL, `sdpa ${c.name} output`);
    assert.ok(maxAbsDiff(r.weights, decodeTensor(c.expected.weights)) <= ATOL, `sdpa ${c.name} weights`);
    assertSameBits(r.output, st.scaledDotProductAttention(...args).output, `sdpa ${c.name}`);
  }
  for (const c of loadGoldens('mha.json').cases) {
    const cfg = c.config;
    const ctor = [cfg.embedDim, cfg.numHeads, {
      dropout: cfg.dropout ?? 0, bias: cfg.bias, addBiasKv: cfg.addBiasKv, addZeroAttn: cfg.addZeroAttn,
      kdim: cfg.kdim, vdim: cfg.vdim, batchFirst: cfg.batchFirst,
    }];
    const a = new mt.MultiheadAttention(...ctor);
    const b = new st.MultiheadAttention(...ctor);
    try {
      const sd = Object.fromEntries(Object.entries(c.stateDict).map(([k, v]) => [k, decodeTensor(v)]));
      a.loadStateDict(sd);
      b.loadStateDict(sd);
      const query = decodeTensor(c.query);
      const key = c.selfAttention ? query : decodeTensor(c.key);
      const value = c.selfAttention ? query : decodeTensor(c.value);
      const o = {
        keyPaddingMask: decodeTensor(c.keyPaddingMask), attnMask: decodeTensor(c.attnMask),
        needWeights: c.needWeights, averageAttnWeights: c.averageAttnWeights, isCausal: c.isCausal,
      };
      const r = a.forward(query, key, value, o);
      assert.ok(maxAbsDiff(r.output, decodeTensor(c.expected.output)) <= ATOL, `mha ${c.name} output`);
      if (c.expected.weights !== null) assert.ok(maxAbsDiff(r.weights, decodeTensor(c.expected.weights)) <= ATOL, `mha ${c.name} weights`);
      assertSameBits(r.output, b.forward(query, key, value, o).output, `mha ${c.name}`);
    } finally {
      a.dispose();
      b.dispose();
    }
  }
});

test('the Transformer-block goldens pass through init({ threads: 2 })', () => {
  const DIR = new URL('../data/goldens/transformer/', import.meta.url);
  // The attention blocks (the parallel code paths); the elementwise layers are the same code in both builds.
  const files = readdirSync(DIR).filter((f) => /^(enc_|dec_|transformer_)/.test(f) && f.endsWith('.safetensors')).sort();
  assert.ok(files.length >= 15, `found ${files.length} golden files`);
  const build = (rt, spec) => {
    if (spec.module === 'TransformerEncoder' || spec.module === 'TransformerDecoder') {
      const Layer = spec.module === 'TransformerEncoder' ? rt.TransformerEncoderLayer : rt.TransformerDecoderLayer;
      const layer = new Layer(...spec.layer.args, spec.layer.options);
      const norm = spec.norm ? new rt.LayerNorm(...spec.norm.args, spec.norm.options) : null;
      const stack = new rt[spec.module](layer, spec.numLayers, { norm });
      layer.dispose();
      norm?.dispose();
      return stack;
    }
    return new rt[spec.module](...(spec.args ?? []), spec.options);
  };
  for (const file of files) {
    const { tensors, metadata } = mt.loadSafetensors(readFileSync(new URL(file, DIR)), { metadata: true });
    const spec = JSON.parse(metadata.case);
    const arg = (v) => (typeof v === 'string' && v.startsWith('input.') ? tensors[v] : v);
    const inputs = spec.inputs.map((n) => tensors[`input.${n}`]);
    const options = Object.fromEntries(Object.entries(spec.forward ?? {}).map(([k, v]) => [k, arg(v)]));
    const sd = {};
    for (const [k, v] of Object.entries(tensors)) if (k.startsWith('param.')) sd[k.slice(6)] = v;
    const outs = [mt, st].map((rt) => {
      const m = build(rt, spec);
      try {
        m.loadStateDict(sd);
        return m.forward(...inputs, ...(Object.keys(options).length ? [options] : []));
      } finally {
        m.dispose();
      }
    });
    const want = tensors['expected.output'];
    for (let i = 0; i < want.data.length; i++) {
      const d = Math.abs(outs[0].data[i] - want.data[i]);
      if (!(d <= spec.atol + spec.rtol * Math.abs(want.data[i]))) assert.fail(`${file}: index ${i}: ${outs[0].data[i]} vs ${want.data[i]}`);
    }
    assertSameBits(outs[0], outs[1], file);
  }
});
