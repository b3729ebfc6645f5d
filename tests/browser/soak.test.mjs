// Browser soak and determinism, in headless Chromium against tools/serve.mjs:
//  - the translation page runs 250 translations and the digits page 250
//    classifications through their own UI paths; after warm-up, the wasm
//    memory and malloc'd bytes must not change and the page's JS heap (after a
//    forced GC) must grow by less than JS_HEAP_BOUND;
//  - the determinism workload (tests/js/determinism_workload.mjs) run in the
//    page gives the same SHA-256 as in Node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { launchChromium } from './chromium.mjs';
import { startServer } from '../../tools/serve.mjs';
import { init } from '../../bindings/index.js';
import { workload } from '../js/determinism_workload.mjs';

/** Allowed JS heap growth over 250 inferences after warm-up (the heaps are ~3–6 MB). */
const JS_HEAP_BOUND = 2 * 1024 * 1024;
const WARMUP = 25, RUNS = 250;

let server, browser, context;

before(async () => {
  server = await startServer({ port: 0 });
  browser = await launchChromium();
  context = browser.context;
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(path) {
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
  await page.goto(new URL(path, server.url).href);
  await page.waitForSelector('body[data-ready]', { timeout: 20000 });
  assert.equal(await page.getAttribute('body', 'data-ready'), 'true', problems.join('; '));
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  const heap = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    const { metrics } = await cdp.send('Performance.getMetrics');
    return metrics.find((m) => m.name === 'JSHeapUsedSize').value;
  };
  return { page, problems, heap };
}

const figures = [];

async function soak(path, runBatch, memoryFn) {
  const { page, problems, heap } = await open(path);
  await runBatch(page, 0, WARMUP);
  const jsBefore = await heap();
  const wasmBefore = await page.evaluate(memoryFn);
  const t0 = Date.now();
  await runBatch(page, WARMUP, RUNS);
  const seconds = (Date.now() - t0) / 1000;
  const jsAfter = await heap();
  const wasmAfter = await page.evaluate(memoryFn);
  figures.push(`${path}: ${RUNS} inferences in ${seconds.toFixed(1)} s; JS heap ${(jsBefore / 1e6).toFixed(2)} → ${(jsAfter / 1e6).toFixed(2)} MB; ` +
    `wasm memory ${wasmBefore.heapBytes} → ${wasmAfter.heapBytes} B; malloc'd ${wasmBefore.inUseBytes} → ${wasmAfter.inUseBytes} B`);
  assert.deepEqual(problems, []);
  assert.equal(wasmAfter.heapBytes, wasmBefore.heapBytes, 'wasm memory grew');
  assert.equal(wasmAfter.inUseBytes, wasmBefore.inUseBytes, "malloc'd bytes changed");
  assert.ok(jsAfter - jsBefore < JS_HEAP_BOUND, `JS heap grew by ${jsAfter - jsBefore} bytes (bound ${JS_HEAP_BOUND})`);
  await page.close();
}

test('browser soak: 250 translations on the translation page', async () => {
  const all = JSON.parse(readFileSync(new URL('../../models/translator/heldout_expected.json', import.meta.url), 'utf8')).items;
  // Warm up with the longest sentences: the decoder's scratch grows to the
  // longest sequence seen and is then reused (a bounded one-off, not a leak).
  const longest = all.slice().sort((a, b) => b.join(' ').length - a.join(' ').length).slice(0, WARMUP);
  let wrong = 0;
  await soak('/web/translate/', async (page, from, n) => {
    const items = from === 0 ? longest : Array.from({ length: n }, (_, i) => all[(from + i) % all.length]);
    const outs = await page.evaluate((list) => list.map(([en], i) => window.translateDemo.translate(en, i % 2 ? 'de' : 'fr')), items);
    outs.forEach((o, i) => { if (o !== items[i][i % 2 ? 2 : 1]) wrong++; });
  }, () => window.translateDemo.memory());
  assert.equal(wrong, 0, `${wrong} wrong translations`);
});

test('browser soak: 250 classifications on the digits page', async () => {
  await soak('/web/digits/', async (page, from, n) => {
    await page.evaluate(async ([a, b]) => { for (let i = a; i < b; i++) await window.digitsDemo.showHeldout(i); }, [from, from + n]);
  }, () => window.digitsDemo.memory());
});

test('determinism: Chromium computes the same bits as Node', async () => {
  const page = await context.newPage();
  await page.goto(new URL('/web/', server.url).href);
  // The same build on both sides: Chromium runs relaxed SIMD, Node only with
  // --experimental-wasm-relaxed-simd (npm test); the page follows Node.
  const nodeRt = await init();
  const relaxedSimd = nodeRt.capabilities().relaxedSimd;
  const inPage = await page.evaluate(async ([src, relaxed]) => {
    const { init: initPage } = await import('/bindings/index.js');
    const fn = (0, eval)(`(${src})`);
    const get = async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer());
    return fn(await initPage({ relaxedSimd: relaxed }), await get('/models/translator/translator.safetensors'), await get('/models/vit/vit.safetensors'));
  }, [workload.toString(), relaxedSimd]);
  const inNode = await workload(nodeRt,
    readFileSync(new URL('../../models/translator/translator.safetensors', import.meta.url)),
    readFileSync(new URL('../../models/vit/vit.safetensors', import.meta.url)));
  assert.deepEqual(inPage, inNode);
  figures.push(`determinism: Chromium = Node (${relaxedSimd ? 'relaxed-SIMD' : 'baseline'} build), sha256 ${inNode.digest.slice(0, 16)}… over ${inNode.bytes} bytes`);
  await page.close();
});

test('browser soak figures', () => {
  for (const f of figures) console.log(`# ${f}`);
  assert.equal(figures.length, 3);
});
