// Memory in headless Chromium, on a cross-origin-isolated page:
//   close() gives the wasm memory back: the renderer's RSS (read from /proc
//   through ps, the renderer of this test's own profile) grows with a call
//   that fills the heap and falls back within 96 MiB of where it was after
//   close() and garbage collection (CDP HeapProfiler.collectGarbage) —
//   with one thread and with the pthreads build, whose shared memory goes
//   once the worker threads are torn down (about a second later);
//   afterwards calls throw ERR_CLOSED;
//   the heap grows past 2 GiB and calls with their tensors above 2 GiB give
//   the results they give below.
// (performance.measureUserAgentSpecificMemory() counts a shared wasm memory
// but not a single-thread one in Chromium 156, so RSS is what is measured.)
// In Node: tests/js/close.test.mjs, tests/js/heap_4gb.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { startStatic } from './static_server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MiB = 2 ** 20;

const PAGE = `<!doctype html><meta charset="utf-8"><title>attnwasm memory</title>
<script type="module">
import { init } from '/bindings/index.js';
let aw = null;
const rand = (n, seed) => { let s = seed; const a = new Float32Array(n); for (let i = 0; i < n; i++) { s = (s * 1664525 + 1013904223) >>> 0; a[i] = s / 2 ** 32 - 0.5; } return a; };
const bits = (t) => Array.from(new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length));
const same = (a, b) => JSON.stringify(a.shape) === JSON.stringify(b.shape) && bits(a).every((v, i) => v === bits(b)[i]);
window.api = {
  // A call through 2 × mib MiB of wasm heap (relu: input and output), every page written.
  async grow(threads, mib) {
    aw = await init({ threads });
    const n = mib * ${MiB} / 4;
    aw.relu({ data: new Float32Array(n).fill(0.5), shape: [n] });
    return { heap: aw.memory().heapBytes, threads: aw.capabilities().threads };
  },
  async close() {
    const rt = aw;
    aw = null;
    await rt.close();
    let code = null;
    try { rt.memory(); } catch (e) { code = e.code; }
    return code;
  },
  // SDPA and MHA with their tensors above 2 GiB (the heap filled with blocks never written).
  async high() {
    const rt = await init({ threads: 1 });
    const q = { data: rand(2 * 4 * 9 * 16, 1), shape: [2, 4, 9, 16] };
    const x = { data: rand(3 * 5 * 16, 2), shape: [3, 5, 16] };
    const mha = new rt.MultiheadAttention(16, 4, { batchFirst: true });
    const run = () => [rt.scaledDotProductAttention(q, q, q, { isCausal: true, needWeights: true }), mha.forward(x, x, x, { needWeights: true })];
    const low = run();
    const core = rt._core;
    const held = [];
    for (let p = 0; p <= 2 ** 31 + 2 ** 28;) { p = core._malloc(64 * ${MiB}) >>> 0; if (!p) return { error: 'malloc failed' }; held.push(p); }
    for (let p = 0; p <= 2 ** 31;) { p = core._malloc(256) >>> 0; held.push(p); }
    const seen = [];
    const malloc = core._malloc;
    core._malloc = (n) => { const p = malloc(n); seen.push(p >>> 0); return p; };
    const high = run();
    core._malloc = malloc;
    const r = { heap: rt.memory().heapBytes, above: seen.length > 0 && seen.every((p) => p > 2 ** 31),
      same: [0, 1].every((i) => same(low[i].output, high[i].output) && same(low[i].weights, high[i].weights)) };
    await rt.close();
    return r;
  },
};
window.ready = true;
</script>`;

let server, browser;
before(async () => {
  server = await startStatic({ root: ROOT, allow: ['bindings', 'dist', 'node_modules'], isolated: true,
    routes: { '/': { type: 'text/html; charset=utf-8', body: PAGE } } });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** RSS (MiB) of each renderer process of this test's Chromium (its profile is in their command lines). */
function rendererRss() {
  const out = execFileSync('ps', ['-eo', 'rss=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.includes('--type=renderer') && l.includes(browser.profile))
    .map((l) => Number(l.trim().split(/\s+/)[0]) / 1024);
}

async function openPage() {
  const page = await browser.context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => window.ready === true);
  const cdp = await browser.context.newCDPSession(page);
  const gc = async () => {
    for (let i = 0; i < 2; i++) {
      await cdp.send('HeapProfiler.collectGarbage');
      await page.evaluate(() => new Promise((r) => setTimeout(r, 100)));
    }
  };
  return { page, gc };
}

for (const threads of [1, 2]) {
  test(`close() gives the wasm memory back to the renderer (${threads} thread(s))`, async () => {
    const { page, gc } = await openPage();
    try {
      assert.equal(await page.evaluate(() => crossOriginIsolated), true);
      await gc();
      const before = Math.max(...rendererRss());
      const grown = await page.evaluate(([t, mib]) => window.api.grow(t, mib), [threads, 160]);
      assert.ok(grown.heap >= 320 * MiB, `heap ${grown.heap}`);
      assert.equal(grown.threads, threads === 1 ? false : threads);
      const during = Math.max(...rendererRss());
      assert.ok(during - before >= 250, `renderer RSS should grow with the heap: ${before.toFixed(0)} → ${during.toFixed(0)} MiB`);
      assert.equal(await page.evaluate(() => window.api.close()), 'ERR_CLOSED');
      let now = Infinity;
      for (let i = 0; i < 20 && now - before > 96; i++) {  // the pthreads build's workers go asynchronously
        await gc();
        await page.evaluate(() => new Promise((r) => setTimeout(r, 250)));
        now = Math.max(...rendererRss());
      }
      assert.ok(now - before <= 96, `renderer RSS after close(): ${before.toFixed(0)} → ${during.toFixed(0)} → ${now.toFixed(0)} MiB`);
    } finally {
      await page.close();
    }
  });
}

test('the heap grows past 2 GiB: calls with their tensors above 2 GiB give the same results', async () => {
  const { page } = await openPage();
  try {
    const r = await page.evaluate(() => window.api.high());
    assert.equal(r.error, undefined, r.error);
    assert.ok(r.heap > 2 ** 31 + 2 ** 28, `heap ${r.heap}`);
    assert.ok(r.above, 'inputs above 2 GiB');
    assert.ok(r.same, 'results equal to those below 2 GiB');
  } finally {
    await page.close();
  }
});
