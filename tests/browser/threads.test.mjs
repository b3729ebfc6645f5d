// The pthreads build in headless Chromium. A small static server of its own
// (bindings/ and dist/ plus an inline test page) runs twice: with the
// COOP/COEP headers (the page is cross-origin isolated) and without them.
//   isolated:     init({ threads: 2 }) loads dist/attnwasm_core_mt_rs.* (Chromium
//                 runs relaxed SIMD, so the relaxed-SIMD pthreads build) and its
//                 Web Worker, capabilities() says threads: 2, and MHA /
//                 encoder / SDPA outputs are bit-identical to init({ threads: 1 });
//                 so are the baseline build's (relaxedSimd: false) 1 and 2 threads.
//   not isolated: init({ threads: 2 }) falls back to the single-thread build,
//                 says why, and never requests a *_mt file.
// The 1- vs 2-thread time of an S3-sized MHA is printed as a diagnostic only
// (Chromium's 2-thread gain depends on V8 flags a page cannot set; see
// docs/TOOLCHAIN.md, Threads).
//
// Needs /usr/bin/chromium and npm's playwright-core (tools/setup.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join, dirname, extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MIME = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.html': 'text/html' };

const PAGE = `<!doctype html><meta charset="utf-8"><title>attnwasm threads</title>
<script type="module">
import { init } from '/bindings/index.js';
const rand = (n, seed) => { let s = seed; const a = new Float32Array(n); for (let i = 0; i < n; i++) { s = (s * 1664525 + 1013904223) >>> 0; a[i] = s / 2 ** 32 - 0.5; } return a; };
const bits = (t) => Array.from(new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length));
const same = (a, b) => JSON.stringify(a.shape) === JSON.stringify(b.shape) && bits(a).every((v, i) => v === bits(b)[i]);
// MHA (sequence-first, odd length, 2 batch entries, causal float mask,
// weights), an encoder layer and a causal SDPA on runtimes st and mt: are
// their outputs bit-identical?
function compare(st, mt) {
  const L = 67, N = 2, E = 64, H = 4;
  const x = { data: rand(L * N * E, 3), shape: [L, N, E] };
  const a = new st.MultiheadAttention(E, H), b = new mt.MultiheadAttention(E, H);
  b.loadStateDict(a.stateDict());
  const mask = st.generateSquareSubsequentMask(L);
  const ya = a.forward(x, x, x, { attnMask: mask }), yb = b.forward(x, x, x, { attnMask: mask });
  const ea = new st.TransformerEncoderLayer(E, H, { dimFeedforward: 96 }), eb = new mt.TransformerEncoderLayer(E, H, { dimFeedforward: 96 });
  eb.loadStateDict(ea.stateDict());
  const q = { data: rand(2 * 3 * 41 * 16, 5), shape: [2, 3, 41, 16] };
  const r = {
    mhaSame: same(ya.output, yb.output) && same(ya.weights, yb.weights),
    encoderSame: same(ea.forward(x), eb.forward(x)),
    sdpaSame: same(st.scaledDotProductAttention(q, q, q, { isCausal: true }).output, mt.scaledDotProductAttention(q, q, q, { isCausal: true }).output),
  };
  for (const m of [a, b, ea, eb]) m.dispose();
  return r;
}
async function run() {
  const r = { isolated: globalThis.crossOriginIsolated };
  const mt = await init({ threads: 2 });
  const st = await init({ threads: 1 });
  r.caps = mt.capabilities();
  r.capsSt = st.capabilities();
  Object.assign(r, compare(st, mt));
  // The baseline build (relaxedSimd: false), 1 and 2 threads.
  const mtBase = await init({ threads: 2, relaxedSimd: false });
  r.capsBase = mtBase.capabilities();
  r.base = compare(await init({ threads: 1, relaxedSimd: false }), mtBase);
  // S3-sized MHA timing (diagnostic).
  const s3 = { data: rand(256 * 256, 7), shape: [256, 1, 256] };
  const time = (rt) => {
    const m = new rt.MultiheadAttention(256, 8);
    for (let i = 0; i < 10; i++) m.forward(s3, s3, s3, { needWeights: false });
    const t = [];
    for (let i = 0; i < 15; i++) { const t0 = performance.now(); m.forward(s3, s3, s3, { needWeights: false }); t.push(performance.now() - t0); }
    m.dispose();
    return t.sort((p, q) => p - q)[7];
  };
  if (r.caps.threads) { r.ms1 = time(st); r.ms2 = time(mt); }
  return r;
}
run().then((r) => { window.result = r; }, (e) => { window.result = { error: String(e && e.stack || e) }; });
</script>`;

/**
 * A static server of bindings/ and dist/ and a page at /; `isolated` adds
 * COOP/COEP. Options: `page` (HTML of /, default PAGE), `pageHeaders` (extra
 * headers of /), `stall` (a path whose request is never answered).
 */
function serve(isolated, { page = PAGE, pageHeaders = {}, stall = null } = {}) {
  const requests = [];
  const stalled = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(path);
    if (path === stall) {
      stalled.push(res);  // answered when the server closes
      return;
    }
    const headers = isolated
      ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cross-Origin-Resource-Policy': 'same-origin' }
      : {};
    if (path === '/favicon.ico') {
      res.writeHead(204, headers);
      res.end();
      return;
    }
    if (path === '/') {
      res.writeHead(200, { ...headers, ...pageHeaders, 'Content-Type': 'text/html' });
      res.end(page);
      return;
    }
    const file = resolve(ROOT, `.${path}`);
    const okDir = ['bindings', 'dist'].some((d) => file.startsWith(join(ROOT, d) + sep));
    try {
      if (!okDir) throw new Error('outside');
      const body = await readFile(file);
      res.writeHead(200, { ...headers, 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, headers);
      res.end();
    }
  });
  const close = () => {
    for (const res of stalled) res.destroy();
    return new Promise((ok) => server.close(ok));
  };
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok({ server, close, requests, url: `http://127.0.0.1:${server.address().port}/` })));
}

let browser, context;
before(async () => {
  browser = await launchChromium();
  context = browser.context;
});
after(async () => {
  await browser?.close();
});

async function runPage(isolated, serveOptions = {}, route = null) {
  const { close, requests, url } = await serve(isolated, serveOptions);
  const page = await context.newPage();
  if (route) await page.route(route.url, route.handler);
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: 60000 });
    const result = await page.evaluate(() => window.result);
    return { result, requests, problems };
  } finally {
    await page.close();
    await close();
  }
}

test('cross-origin-isolated page: init({ threads: 2 }) runs the pthreads build, bit-identical', async (t) => {
  const { result: r, requests, problems } = await runPage(true);
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(problems, []);
  assert.equal(r.isolated, true);
  assert.equal(r.caps.threads, 2);
  assert.equal(r.caps.build, 'pthreads');
  assert.equal(r.caps.crossOriginIsolated, true);
  assert.equal(r.caps.environment, 'browser');
  assert.equal(r.capsSt.threads, false);
  assert.equal(r.capsSt.threadsReason, 'threads: 1 requested');
  // Chromium runs relaxed SIMD: the relaxed-SIMD builds by default.
  assert.equal(r.caps.relaxedSimd, true, r.caps.relaxedSimdReason);
  assert.equal(r.capsSt.relaxedSimd, true);
  assert.ok(requests.includes('/dist/attnwasm_core_mt_rs.worker.js'), `the worker was not loaded: ${requests.join(' ')}`);
  assert.ok(requests.includes('/dist/attnwasm_core_mt_rs.wasm'));
  assert.ok(requests.includes('/dist/attnwasm_core_rs.wasm'));
  assert.equal(r.mhaSame, true, 'MHA output/weights differ between 1 and 2 threads');
  assert.equal(r.encoderSame, true, 'encoder layer output differs between 1 and 2 threads');
  assert.equal(r.sdpaSame, true, 'SDPA output differs between 1 and 2 threads');
  // And the baseline build, forced.
  assert.equal(r.capsBase.relaxedSimd, false);
  assert.equal(r.capsBase.relaxedSimdReason, 'relaxedSimd: false requested');
  assert.equal(r.capsBase.threads, 2);
  assert.ok(requests.includes('/dist/attnwasm_core_mt.worker.js') && requests.includes('/dist/attnwasm_core_mt.wasm'));
  assert.deepEqual(r.base, { mhaSame: true, encoderSame: true, sdpaSame: true }, 'the baseline build differs between 1 and 2 threads');
  t.diagnostic(`Chromium, S3-sized MHA: 1 thread ${r.ms1.toFixed(2)} ms, 2 threads ${r.ms2.toFixed(2)} ms (${(r.ms1 / r.ms2).toFixed(2)}×)`);
});

test('page without COOP/COEP: init({ threads: 2 }) falls back to one thread and says why', async () => {
  const { result: r, requests, problems } = await runPage(false);
  assert.equal(r.error, undefined, r.error);
  assert.deepEqual(problems, []);
  assert.equal(r.isolated, false);
  assert.equal(r.caps.threads, false);
  assert.equal(r.caps.build, 'single-thread');
  assert.match(r.caps.threadsReason, /^not cross-origin isolated \(COOP\/COEP headers missing\)/);
  assert.equal(r.caps.crossOriginIsolated, false);
  assert.deepEqual(requests.filter((p) => p.includes('_mt')), [], 'the single-thread path must not load the pthreads build');
  assert.equal(r.mhaSame, true);
});

// ---- init() never hangs: the pthreads build's workers cannot start ----

// init({ threads: 2, ... }) on an isolated page whose worker script cannot
// load; the page reports the capabilities, the time init() took, and whether
// an MHA forward is bit-identical to a plain single-thread instance's.
const FALLBACK_PAGE = (initOptions) => `<!doctype html><meta charset="utf-8"><title>attnwasm threads fallback</title>
<script type="module">
import { init } from '/bindings/index.js';
const bits = (t) => Array.from(new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length));
async function run() {
  const t0 = performance.now();
  const aw = await init(${JSON.stringify(initOptions)});
  const ms = performance.now() - t0;
  const st = await init({ threads: 1 });
  const x = { data: new Float32Array(9 * 2 * 16).map((_, i) => Math.sin(i)), shape: [9, 2, 16] };
  const a = new st.MultiheadAttention(16, 4), b = new aw.MultiheadAttention(16, 4);
  b.loadStateDict(a.stateDict());
  const same = bits(a.forward(x, x, x).output).join() === bits(b.forward(x, x, x).output).join();
  a.dispose(); b.dispose();
  return { caps: aw.capabilities(), ms, same };
}
run().then((r) => { window.result = r; }, (e) => { window.result = { error: String(e && e.stack || e) }; });
</script>`;

function assertFellBack(r, reason, boundMs) {
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.caps.threads, false);
  assert.equal(r.caps.build, 'single-thread');
  assert.equal(r.caps.crossOriginIsolated, true);
  assert.match(r.caps.threadsReason, reason);
  assert.match(r.caps.threadsReason, /; running the single-thread build$/);
  assert.equal(r.caps.relaxedSimd, true, 'the workers failed, not the relaxed build: its single-thread build takes over');
  assert.ok(r.ms < boundMs, `init() took ${r.ms.toFixed(0)} ms (bound ${boundMs} ms)`);
  assert.equal(r.same, true, 'the fallback instance computes differently from the single-thread build');
}

test('worker script blocked (request aborted): init() falls back to one thread at once and says why', async (t) => {
  const { result: r } = await runPage(true, { page: FALLBACK_PAGE({ threads: 2 }) },
    { url: '**/attnwasm_core_mt*.worker.js', handler: (route) => route.abort('blockedbyclient') });
  assertFellBack(r, /^the worker script http:\/\/127\.0\.0\.1:\d+\/dist\/attnwasm_core_mt_rs\.worker\.js failed to load/, 5000);
  t.diagnostic(`blocked worker: fell back in ${r.ms.toFixed(0)} ms: ${r.caps.threadsReason}`);
});

test('worker script 404: init() falls back to one thread and says why', async (t) => {
  const { result: r } = await runPage(true, { page: FALLBACK_PAGE({ threads: 2 }) },
    { url: '**/attnwasm_core_mt*.worker.js', handler: (route) => route.fulfill({ status: 404, body: 'not found' }) });
  assertFellBack(r, /^the worker script .*attnwasm_core_mt_rs\.worker\.js failed to load/, 5000);
  t.diagnostic(`404 worker: fell back in ${r.ms.toFixed(0)} ms`);
});

test('Content-Security-Policy worker-src \'none\': init() falls back to one thread and says why', async (t) => {
  const { result: r, requests } = await runPage(true, {
    page: FALLBACK_PAGE({ threads: 2 }),
    pageHeaders: { 'Content-Security-Policy': "worker-src 'none'" },
  });
  assertFellBack(r, /attnwasm_core_mt_rs\.worker\.js/, 5000);
  assert.ok(!requests.some((p) => p.endsWith('.worker.js')), 'the CSP should have kept the worker script from being requested');
  t.diagnostic(`CSP: fell back in ${r.ms.toFixed(0)} ms: ${r.caps.threadsReason}`);
});

test('worker script never answered: init() gives up after threadStartTimeoutMs and falls back', async (t) => {
  const { result: r } = await runPage(true, {
    page: FALLBACK_PAGE({ threads: 2, threadStartTimeoutMs: 1500 }),
    stall: '/dist/attnwasm_core_mt_rs.worker.js',
  });
  assertFellBack(r, /^the pthread workers did not start within 1500 ms/, 1500 + 5000);
  assert.ok(r.ms >= 1500, `init() returned after ${r.ms.toFixed(0)} ms, before the timeout`);
  t.diagnostic(`stalled worker: fell back in ${r.ms.toFixed(0)} ms`);
});

// ---- the relaxed-SIMD build's .wasm does not load: the baseline build takes over ----

const CAPS_PAGE = (initOptions) => `<!doctype html><meta charset="utf-8"><title>attnwasm relaxed fallback</title>
<script type="module">
import { init } from '/bindings/index.js';
init(${JSON.stringify(initOptions)}).then((aw) => {
  const mha = new aw.MultiheadAttention(16, 4);
  const x = { data: new Float32Array(5 * 16).fill(0.5), shape: [5, 16] };
  const ok = mha.forward(x, x, x).output.data.every(Number.isFinite);
  mha.dispose();
  window.result = { caps: aw.capabilities(), ok };
}, (e) => { window.result = { error: String(e && e.stack || e) }; });
</script>`;

test('relaxed-SIMD .wasm answered 404: init() runs the baseline build and says why', async (t) => {
  for (const [threads, file] of [[2, 'attnwasm_core_mt_rs.wasm'], [1, 'attnwasm_core_rs.wasm']]) {
    const { result: r, requests, problems } = await runPage(true, { page: CAPS_PAGE({ threads }) },
      { url: `**/${file}`, handler: (route) => route.fulfill({ status: 404, body: 'not found' }) });
    assert.equal(r.error, undefined, r.error);
    assert.deepEqual(problems.filter((p) => !/404/.test(p)), []);  // the browser's own line for the 404 only
    assert.equal(r.ok, true);
    assert.equal(r.caps.relaxedSimd, false);
    assert.equal(r.caps.threads, threads > 1 ? threads : false);
    const name = file.replace(/\./g, '\\.');
    assert.match(r.caps.relaxedSimdReason, new RegExp(`^${name} did not load \\(http://127\\.0\\.0\\.1:\\d+/dist/${name}: HTTP 404 Not Found\\); running the baseline build$`));
    assert.ok(requests.includes(`/dist/${threads > 1 ? 'attnwasm_core_mt.wasm' : 'attnwasm_core.wasm'}`));
    t.diagnostic(`threads ${threads}: ${r.caps.relaxedSimdReason}`);
  }
});

