// 'attnwasm/worker' in headless Chromium, at SmolLM2-135M's shape (a random BF16 checkpoint of 257 MB made
// by tools/make_checkpoint.mjs in a temporary folder, served by tools/serve.mjs): from a page without
// COOP/COEP (one thread) and from a cross-origin-isolated one (2 threads), the page's main thread has no
// long task (PerformanceObserver 'longtask', > 50 ms) while the worker loads the checkpoint from its URL and
// generates; the ids equal those of the same build in the page; an AbortSignal stops the worker's loop; a
// script that is not there is ERR_WASM_LOAD naming it; close() ends the worker (calls reject ERR_CLOSED) and
// gives its memory back (the renderer's RSS). Measured and printed: the longest main-thread task and the
// event loop's longest stall during load and generation, tokens/s in the worker against the page, load
// MB/s, the renderer's peak RSS against the weights' bytes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../../tools/serve.mjs';
import { writeCheckpoint } from '../../tools/make_checkpoint.mjs';
import { writeTokenizer } from '../../tools/make_tokenizer.mjs';
import { launchChromium, LONG_TASK_FAIL_MS } from './chromium.mjs';

const MiB = 2 ** 20;
const TOKENS = 64;
const PROMPT = Array.from({ length: 16 }, (_, i) => 100 + 37 * i);

const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm worker</title>
<script type="importmap">{ "imports": { "attnwasm": "/bindings/index.js", "attnwasm/worker": "/bindings/worker.js" } }</script>
<script type="module">
import { createWorker } from 'attnwasm/worker';
const longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) longTasks.push({ start: e.startTime, ms: e.duration }); })
  .observe({ type: 'longtask', buffered: true });
// The event loop's stalls: a timer every 5 ms, and how late each fires.
let stall = 0, last = performance.now();
setInterval(() => { const now = performance.now(); stall = Math.max(stall, now - last - 5); last = now; }, 5);
const window_ = (from) => { const t = longTasks.filter((e) => e.start >= from); return { count: t.length, maxMs: Math.max(0, ...t.map((e) => e.ms)) }; };
const resetStall = () => { stall = 0; last = performance.now(); };
let rt = null, lm = null;
window.api = {
  async start(threads) {
    rt = await createWorker({ threads });
    return { caps: rt.startCapabilities, isolated: crossOriginIsolated };
  },
  async load(url) {
    const t0 = performance.now();
    resetStall();
    let events = 0;
    lm = await rt.loadModel(url, { onProgress: () => { events++; } });
    const ms = performance.now() - t0;
    return { ms, fileBytes: lm.fileBytes, weightBytes: lm.weightBytes, events, longTasks: window_(t0), stallMs: stall };
  },
  async generate(prompt, tokens) {
    const t0 = performance.now();
    resetStall();
    const ids = [], at = [];
    const g = lm.generate(prompt, { maxNewTokens: tokens, stopTokens: [], attention: true });
    for await (const t of g) { ids.push(t.id); at.push(performance.now()); }
    return { ids, stopReason: g.stopReason, firstMs: at[0] - t0, tokensPerSecond: (ids.length - 1) / ((at.at(-1) - at[0]) / 1000),
      longTasks: window_(t0), stallMs: stall };
  },
  async abort(prompt) {
    const c = new AbortController();
    const g = lm.generate(prompt, { maxNewTokens: 200, stopTokens: [], signal: c.signal });
    let n = 0;
    for await (const t of g) { void t; if (++n === 3) c.abort(); }
    const end = await (await g)._ended();
    return { taken: n, stopReason: g.stopReason, produced: end.produced, workerStop: end.stopReason };
  },
  async inPage(url, threads, prompt, tokens) {
    const { init } = await import('attnwasm');
    const aw = await init({ threads });
    const t0 = performance.now();
    const config = await (await fetch(url + 'config.json')).json();
    const model = await aw.loadModel(url + 'model.safetensors', { config });
    const loadTasks = window_(t0);
    const ids = [], at = [];
    const t1 = performance.now();
    for await (const t of model.generate(prompt, { maxNewTokens: tokens, stopTokens: [], attention: true })) { ids.push(t.id); at.push(performance.now()); }
    const out = { ids, tokensPerSecond: (ids.length - 1) / ((at.at(-1) - at[0]) / 1000), loadLongTasks: loadTasks, genLongTasks: window_(t1) };
    model.dispose();
    await aw.close();
    return out;
  },
  async close() {
    await rt.close();
    const code = await rt.memory().then(() => null, (e) => e.code);
    const modelCode = await lm.forward({ data: Int32Array.of(1), shape: [1, 1] }).then(() => null, (e) => e.code);
    rt = null; lm = null;
    return { code, modelCode };
  },
  async missing() {
    const e = await createWorker({ workerUrl: '/bindings/no_such_worker.js' }).then(() => null, (x) => x);
    return { name: e?.name, code: e?.code, url: e?.url, message: e?.message };
  },
};
window.ready = true;
</script>`;

let tmp, browser;
const servers = {};
before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'attnwasm-worker-browser-'));
  const t0 = performance.now();
  writeCheckpoint('smollm2-135m', join(tmp, 'smol'));
  writeTokenizer(join(tmp, 'smol'));
  mkdirSync(join(tmp, 'page'));
  writeFileSync(join(tmp, 'page', 'index.html'), PAGE);
  console.log(`# checkpoint written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const mounts = { '/ckpt/': tmp };
  servers.plain = await startServer({ isolated: false, mounts });
  servers.isolated = await startServer({ isolated: true, mounts });
  browser = await launchChromium();
}, { timeout: 120_000 });
after(async () => {
  await browser?.close();
  for (const s of Object.values(servers)) await s.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** RSS (MiB) of this test's Chromium renderers (the worker runs in its page's renderer). */
function rendererRss() {
  const out = execFileSync('ps', ['-eo', 'rss=,args='], { encoding: 'utf8' });
  return Math.max(0, ...out.split('\n').filter((l) => l.includes('--type=renderer') && l.includes(browser.profile))
    .map((l) => Number(l.trim().split(/\s+/)[0]) / 1024));
}

async function openPage(server) {
  const page = await browser.context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${server.url}ckpt/page/index.html`);
  await page.waitForFunction(() => window.ready === true);
  const cdp = await browser.context.newCDPSession(page);
  const gc = async () => {
    for (let i = 0; i < 2; i++) {
      await cdp.send('HeapProfiler.collectGarbage');
      await page.evaluate(() => new Promise((r) => setTimeout(r, 100)));
    }
  };
  return { page, problems, gc };
}

/** Samples the renderer's RSS while `fn` runs: { result, peak } (MiB). */
async function sampled(fn) {
  let peak = rendererRss();
  const timer = setInterval(() => { peak = Math.max(peak, rendererRss()); }, 100);
  try {
    const result = await fn();
    peak = Math.max(peak, rendererRss());
    return { result, peak };
  } finally {
    clearInterval(timer);
  }
}

for (const [label, isolated, threads] of [['without COOP/COEP: one thread', false, 'auto'], ['cross-origin isolated: 2 threads', true, 2]]) {
  test(`${label}: no long task on the page while the worker loads SmolLM2-135M's shape and generates`, async (t) => {
    const { page, problems, gc } = await openPage(isolated ? servers.isolated : servers.plain);
    try {
      const start = await page.evaluate((n) => window.api.start(n), threads);
      assert.equal(start.isolated, isolated);
      assert.equal(start.caps.environment, 'worker');
      assert.equal(start.caps.threads, isolated ? 2 : false, start.caps.threadsReason);
      if (!isolated) assert.match(start.caps.threadsReason, /cross-origin isolated/);
      await gc();
      const before = rendererRss();
      const { result: load, peak } = await sampled(() => page.evaluate(() => window.api.load('/ckpt/smol/')));
      assert.ok(load.fileBytes > 250e6 && load.events >= 10, JSON.stringify(load));
      const gen = await page.evaluate(([p, n]) => window.api.generate(p, n), [PROMPT, TOKENS]);
      assert.equal(gen.ids.length, TOKENS);
      assert.equal(gen.stopReason, 'length');
      t.diagnostic(`load: ${load.ms.toFixed(0)} ms (${(load.fileBytes / MiB / (load.ms / 1000)).toFixed(0)} MiB/s), main thread: `
        + `${load.longTasks.count} long tasks (longest ${load.longTasks.maxMs.toFixed(0)} ms), longest stall ${load.stallMs.toFixed(1)} ms; `
        + `renderer RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MiB (+${(peak - before).toFixed(0)} for ${(load.weightBytes / MiB).toFixed(0)} MiB of weights)`);
      t.diagnostic(`generate ${TOKENS} tokens (attention on): first token ${gen.firstMs.toFixed(0)} ms, ${gen.tokensPerSecond.toFixed(1)} tokens/s; `
        + `main thread: ${gen.longTasks.count} long tasks (longest ${gen.longTasks.maxMs.toFixed(0)} ms), longest stall ${gen.stallMs.toFixed(1)} ms`);
      assert.ok(load.longTasks.maxMs <= LONG_TASK_FAIL_MS, `a task of ${load.longTasks.maxMs} ms during the load`);
      assert.ok(gen.longTasks.maxMs <= LONG_TASK_FAIL_MS, `a task of ${gen.longTasks.maxMs} ms during generation`);

      const ab = await page.evaluate((p) => window.api.abort(p), PROMPT);
      assert.equal(ab.taken, 3);
      assert.equal(ab.stopReason, 'aborted');
      assert.equal(ab.workerStop, 'aborted');
      assert.ok(ab.produced <= ab.taken + 3, `the worker computed ${ab.produced} tokens for ${ab.taken} taken`);

      // The same build in the page: the same ids; its speed, and its long tasks, for the record.
      {
        const inPage = await page.evaluate(([p, n, th]) => window.api.inPage('/ckpt/smol/', th, p, n), [PROMPT, TOKENS, threads]);
        assert.deepEqual(inPage.ids, gen.ids);
        t.diagnostic(`in the page: ${inPage.tokensPerSecond.toFixed(1)} tokens/s (worker ${gen.tokensPerSecond.toFixed(1)}: `
          + `${((gen.tokensPerSecond / inPage.tokensPerSecond - 1) * 100).toFixed(1)} %); its main thread: load ${inPage.loadLongTasks.count} long tasks `
          + `(longest ${inPage.loadLongTasks.maxMs.toFixed(0)} ms), generation ${inPage.genLongTasks.count} (longest ${inPage.genLongTasks.maxMs.toFixed(0)} ms)`);
      }

      const during = rendererRss();
      const closed = await page.evaluate(() => window.api.close());
      assert.deepEqual(closed, { code: 'ERR_CLOSED', modelCode: 'ERR_CLOSED' });
      let now = Infinity;
      for (let i = 0; i < 20 && now - before > 96; i++) {
        await gc();
        await page.evaluate(() => new Promise((r) => setTimeout(r, 250)));
        now = rendererRss();
      }
      t.diagnostic(`renderer RSS: ${before.toFixed(0)} before, ${during.toFixed(0)} with the model, ${now.toFixed(0)} MiB after close()`);
      assert.ok(now - before <= 96, `renderer RSS after close(): ${before.toFixed(0)} → ${during.toFixed(0)} → ${now.toFixed(0)} MiB`);
      assert.deepEqual(problems, []);
    } finally {
      await page.close();
    }
  });
}

test('a worker script that is not there: ERR_WASM_LOAD naming its URL and HTTP status', async () => {
  const { page } = await openPage(servers.plain);
  try {
    const e = await page.evaluate(() => window.api.missing());
    assert.equal(e.name, 'AttnWasmError');
    assert.equal(e.code, 'ERR_WASM_LOAD');
    assert.equal(e.url, `${servers.plain.url}bindings/no_such_worker.js`);
    assert.match(e.message, /no_such_worker\.js did not start \(HTTP 404 Not Found\)\. Fix: createWorker\(\{ workerUrl \}\) must be/);
  } finally {
    await page.close();
  }
});
