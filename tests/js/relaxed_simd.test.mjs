// The relaxed-SIMD builds (dist/attnwasm_core_rs.*, dist/attnwasm_core_mt_rs.*)
// and how init() picks them. npm test runs tests/js/ twice: with
// --experimental-wasm-relaxed-simd (Node 20 then runs relaxed SIMD and init()
// picks the relaxed builds) and without (the baseline builds). The child
// processes here set or drop the flag themselves, so this file checks both
// selections in either run. Chromium's side: tests/browser/threads.test.mjs;
// the relaxed kernels against the scalar references: the wasm kernel tests
// (tools/test.sh, build/wasm/attnwasm_kernel_tests_rs.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { RELAXED_SIMD_SUPPORTED } from '../../bindings/wasm_load.js';

const FLAG = '--experimental-wasm-relaxed-simd';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ENTRY = new URL('../../bindings/index.js', import.meta.url).href;

/**
 * Runs `body` — module code with `init` (from `entry`) and `bits(tensor)` (the
 * sha256 of its float32 bytes) in scope — in a fresh Node with `flags`;
 * `body` ends with `out(value)`. Returns that value.
 */
function child(flags, body, entry = ENTRY) {
  const script = `
    const { init } = await import(${JSON.stringify(entry)});
    const { createHash } = await import('node:crypto');
    const bits = (t) => createHash('sha256').update(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)).digest('hex');
    const out = (v) => process.stdout.write(JSON.stringify(v));
    ${body}`;
  const r = spawnSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60000 });
  assert.equal(r.error, undefined, `the child did not finish: ${r.error?.message}`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'nothing on stderr');
  return JSON.parse(r.stdout);
}

const CAPS = 'out([(await init({ threads: 1 })).capabilities(), (await init({ threads: 2 })).capabilities()]);';

test('init() picks the relaxed build exactly where the engine runs relaxed SIMD', () => {
  const [st, mt] = child([FLAG], CAPS);
  for (const c of [st, mt]) {
    assert.equal(c.relaxedSimd, true, c.relaxedSimdReason);
    assert.equal(c.relaxedSimdReason, undefined);
  }
  assert.equal(st.build, 'single-thread');
  assert.equal(mt.build, 'pthreads');
  assert.equal(mt.threads, 2);
  if (process.versions.node.startsWith('20.')) {
    // Node 20 (V8 11.3) validates relaxed SIMD only with the flag.
    for (const c of child([], CAPS)) {
      assert.equal(c.relaxedSimd, false);
      assert.equal(c.relaxedSimdReason, `this engine does not run WebAssembly relaxed SIMD (Node: run it with ${FLAG})`);
    }
    assert.equal(RELAXED_SIMD_SUPPORTED, process.execArgv.includes(FLAG));
  }
});

test('this process: capabilities().relaxedSimd follows the engine', async () => {
  const c = (await init({ threads: 1 })).capabilities();
  assert.equal(c.relaxedSimd, RELAXED_SIMD_SUPPORTED);
  assert.equal(c.relaxedSimdReason === undefined, RELAXED_SIMD_SUPPORTED);
});

test('relaxedSimd: false forces the baseline build; other values are refused', async () => {
  const caps = child([FLAG], `
    const r = [];
    for (const threads of [1, 2]) r.push((await init({ threads, relaxedSimd: false })).capabilities());
    r.push((await init({ threads: 1, relaxedSimd: true })).capabilities());
    out(r);`);
  for (const [i, c] of caps.slice(0, 2).entries()) {
    assert.equal(c.relaxedSimd, false);
    assert.equal(c.relaxedSimdReason, 'relaxedSimd: false requested');
    assert.equal(c.build, i === 0 ? 'single-thread' : 'pthreads');
  }
  assert.equal(caps[2].relaxedSimd, true);
  for (const v of ['yes', 1, null]) {
    await assert.rejects(init({ relaxedSimd: v }), { name: 'TypeError', code: 'ERR_INVALID_TYPE', message: /^relaxedSimd: expected a boolean, got / });
  }
});

test('wasmUrl/wasmBinary and attnwasm/inline run the baseline build and say why', () => {
  const inline = new URL('../../bindings/inline.js', import.meta.url).href;
  const wasm = join(ROOT, 'dist/attnwasm_core.wasm');
  const [url, bytes, il] = child([FLAG], `
    const { readFileSync } = await import('node:fs');
    const { init: initInline } = await import(${JSON.stringify(inline)});
    out([(await init({ wasmUrl: ${JSON.stringify(wasm)} })).capabilities(),
      (await init({ wasmBinary: readFileSync(${JSON.stringify(wasm)}) })).capabilities(),
      (await initInline({ relaxedSimd: true })).capabilities()]);`);
  for (const c of [url, bytes]) {
    assert.equal(c.relaxedSimd, false);
    assert.equal(c.relaxedSimdReason, "wasmUrl/wasmBinary name a baseline build's .wasm");
  }
  assert.equal(il.relaxedSimd, false);
  assert.equal(il.relaxedSimdReason, "attnwasm/inline embeds the baseline build only (import 'attnwasm' for the relaxed-SIMD build)");
  // The baseline glue refuses a relaxed .wasm as another build's (in an engine that compiles it).
  const e = child([FLAG], `
    const { readFileSync } = await import('node:fs');
    try { await init({ wasmBinary: readFileSync(${JSON.stringify(join(ROOT, 'dist/attnwasm_core_rs.wasm'))}) }); out(null); }
    catch (e) { out({ code: e.code, message: e.message }); }`);
  assert.equal(e.code, 'ERR_WASM_LOAD');
  assert.match(e.message, /^attnwasm_core\.wasm did not load from init\(\{ wasmBinary \}\): it is WebAssembly, but of another build or attnwasm version/);
});

// Work that runs through the GEMM micro-kernel (projections, Q·Kᵀ, P·V,
// feed-forward): an S3-sized MHA and an encoder layer, same weights.
const WORK = `
  const rand = (n, seed) => { let s = seed; const a = new Float32Array(n); for (let i = 0; i < n; i++) { s = (s * 1664525 + 1013904223) >>> 0; a[i] = s / 2 ** 32 - 0.5; } return a; };
  const x = { data: rand(256 * 2 * 256, 1), shape: [256, 2, 256] };
  const ref = await init({ threads: 1, relaxedSimd: false });
  const mha0 = new ref.MultiheadAttention(256, 8), enc0 = new ref.TransformerEncoderLayer(256, 8, { dimFeedforward: 1024 });
  const sd = [mha0.stateDict(), enc0.stateDict()];
  const work = (aw) => {
    const mha = new aw.MultiheadAttention(256, 8), enc = new aw.TransformerEncoderLayer(256, 8, { dimFeedforward: 1024 });
    mha.loadStateDict(sd[0]);
    enc.loadStateDict(sd[1]);
    const r = [mha.forward(x, x, x, { needWeights: false }).output, enc.forward(x)];
    mha.dispose(); enc.dispose();
    return r;
  };`;

test('the relaxed builds: bit-identical across thread counts and V8 tiers, within 1e-5 of the baseline', (t) => {
  const r = child([FLAG], `${WORK}
    const st = await init({ threads: 1 }), mt = await init({ threads: 2 });
    const [a, b, c] = [work(st), work(mt), work(ref)];
    const maxDiff = (p, q) => p.data.reduce((m, v, i) => Math.max(m, Math.abs(v - q.data[i])), 0);
    out({ caps: [st.capabilities().relaxedSimd, mt.capabilities().relaxedSimd, ref.capabilities().relaxedSimd],
      st: a.map(bits), mt: b.map(bits), base: c.map(bits), diff: a.map((t, i) => maxDiff(t, c[i])) });`);
  assert.deepEqual(r.caps, [true, true, false]);
  assert.deepEqual(r.mt, r.st, 'the relaxed pthreads build (2 threads) differs from its single-thread build');
  for (const d of r.diff) assert.ok(d <= 1e-5, `relaxed vs baseline: max |diff| ${d}`);
  const fused = r.st.some((b, i) => b !== r.base[i]);
  t.diagnostic(`relaxed vs baseline: max |diff| MHA ${r.diff[0].toExponential(2)}, encoder ${r.diff[1].toExponential(2)}; `
    + `${fused ? 'the bits differ (this engine and CPU fuse the multiply-add)' : 'bit-identical (no FMA fused here)'}`);
  // V8 compiles relaxed_madd the same way in its baseline (Liftoff) and
  // optimising (TurboFan) tiers: a first call gives the bits of later calls.
  const tiers = ['--liftoff --no-wasm-tier-up', '--no-liftoff'].map((f) => child([FLAG, ...f.split(' ')], `${WORK}
    out(work(await init({ threads: 1 })).map(bits));`));
  assert.deepEqual(tiers[0], r.st, 'Liftoff-only code differs');
  assert.deepEqual(tiers[1], r.st, 'TurboFan-only code differs');
});

test('a relaxed .wasm that does not load: the baseline build takes over and capabilities() says why', () => {
  const dir = mkdtempSync(join(tmpdir(), 'attnwasm-relaxed-'));
  try {
    for (const d of ['bindings', 'dist']) cpSync(join(ROOT, d), join(dir, d), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    const entry = new URL(`file://${join(dir, 'bindings/index.js')}`).href;
    const dist = (f) => join(dir, 'dist', f);
    const run = (threads) => child([FLAG], `
      const aw = await init({ threads: ${threads} });
      const mha = new aw.MultiheadAttention(16, 4);
      const x = { data: new Float32Array(5 * 16).fill(0.5), shape: [5, 16] };
      const ok = mha.forward(x, x, x).output.data.every(Number.isFinite);
      out({ caps: aw.capabilities(), ok });`, entry);
    const expectFallback = (threads, reason) => {
      const { caps, ok } = run(threads);
      assert.equal(ok, true);
      assert.equal(caps.relaxedSimd, false);
      assert.equal(caps.threads, threads > 1 ? threads : false);
      assert.match(caps.relaxedSimdReason, reason);
      assert.match(caps.relaxedSimdReason, /; running the baseline build$/);
    };
    const path = (f) => `file://${dist(f)}`.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    // Missing.
    unlinkSync(dist('attnwasm_core_rs.wasm'));
    expectFallback(1, new RegExp(`^attnwasm_core_rs\\.wasm did not load \\(${path('attnwasm_core_rs.wasm')}: no such file\\)`));
    unlinkSync(dist('attnwasm_core_mt_rs.wasm'));
    expectFallback(2, new RegExp(`^attnwasm_core_mt_rs\\.wasm did not load \\(${path('attnwasm_core_mt_rs.wasm')}: no such file\\)`));
    // Damaged.
    writeFileSync(dist('attnwasm_core_rs.wasm'), readFileSync(join(ROOT, 'dist/attnwasm_core_rs.wasm')).subarray(0, 5000));
    expectFallback(1, /^attnwasm_core_rs\.wasm did not load \(.*: the module does not compile \(/);
    // Another build's .wasm under the relaxed name: the relaxed glue refuses it.
    copyFileSync(join(ROOT, 'dist/attnwasm_core.wasm'), dist('attnwasm_core_rs.wasm'));
    expectFallback(1, /^attnwasm_core_rs\.wasm did not load \(.*: it is WebAssembly, but of another build or attnwasm version/);
    copyFileSync(join(ROOT, 'dist/attnwasm_core_rs.wasm'), dist('attnwasm_core_mt_rs.wasm'));
    expectFallback(2, /^attnwasm_core_mt_rs\.wasm from .*: it is WebAssembly, but of another build or attnwasm version \(it has its own memory: a single-thread build's \.wasm\)/);
    // Its glue missing.
    unlinkSync(dist('attnwasm_core_rs.mjs'));
    expectFallback(1, /^the relaxed-SIMD glue did not load \(/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
