// The pthreads build through the public API: init({ threads }) picks the
// build and reports it in capabilities(), falls back to one thread (and says
// why) where threads cannot start, and a Node process that used threads exits
// on its own (idle pool workers are unref'd).
//
// Each layer's own threads tests (2 threads bit-identical to the single-thread
// build, its PyTorch goldens through init({ threads: 2 })) are in its file of
// tests/js/layers/: multihead_attention.test.mjs (also 'the pthreads build
// with 1 and 2 threads agrees bit for bit (S4-sized MHA)'),
// scaled_dot_product_attention.test.mjs, transformer_encoder_layer.test.mjs,
// transformer_decoder_layer.test.mjs, transformer_encoder.test.mjs,
// transformer_decoder.test.mjs, transformer.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';

const entry = new URL('../../bindings/index.js', import.meta.url).href;
const st = await init({ threads: 1 });
const mt = await init({ threads: 2 });

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
  const out = execFileSync(process.execPath, [...process.execArgv, '--no-harmony-sharedarraybuffer', '--input-type=module', '-e', `
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
    // Both pthreads builds' (baseline and relaxed SIMD: this process's flags pick one).
    unlinkSync(join(dir, 'dist', 'attnwasm_core_mt.worker.js'));
    unlinkSync(join(dir, 'dist', 'attnwasm_core_mt_rs.worker.js'));
    const t0 = Date.now();
    const r = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', `
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
    assert.match(caps.threadsReason, /^the worker script file:.*attnwasm_core_mt(_rs)?\.worker\.js failed to load.*; running the single-thread build$/);
    assert.equal(y.length, 3 * 8);
    assert.ok(y.every(Number.isFinite));
    assert.ok(ms < 10000, `took ${ms} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Node process that used threads exits on its own, promptly', () => {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', `
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
