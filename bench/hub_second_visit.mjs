// Issue 44's target: a second visit's first token ≤ 1 s in Chromium for a cached Qwen2.5-0.5B-shaped
// checkpoint as q4. A random checkpoint of the shape (tools/make_checkpoint.mjs, BF16 like the hub's,
// 942 MiB) is served by the local hub (tests/js/hub_server.mjs: API listing, resolve/ URLs, a redirect to its
// content host); a page opens it by hub id through 'attnwasm/worker' as an app would (the open page does):
//   first visit   rt.loadModel('bench/qwen2.5-0.5b', { host, dtype: 'q4' }): download into OPFS (hashed
//                 by the worker's JS SHA-256 as it arrives), packed to q4
//   second visit  a new page of the same browser profile (the cache is there): the time from the page's
//                 start of the work to its first token, split into createWorker (the worker and its .wasm),
//                 loadModel (the listing request, reading OPFS, packing to q4) and the first token (an
//                 8-token prompt's prefill); 'pinned' gives the revision as its commit (no request at all)
// and, for what bounds the load, the same with dtype as stored (no packing) and from the base URL with no cache
// (the loader's own speed on this machine, in the same run).
// Not a test: nothing is asserted. Needs /usr/bin/chromium and playwright-core.
// Usage: node bench/hub_second_visit.mjs [--runs 3] [--dir <checkpoint folder>] [--shape qwen2.5-0.5b]
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeMachine, median } from './lib.mjs';
import { writeCheckpoint } from '../tools/make_checkpoint.mjs';
import { startServer } from '../tools/serve.mjs';
import { startHub } from '../tests/js/hub_server.mjs';
import { launchChromium } from '../tests/browser/chromium.mjs';

const argv = process.argv.slice(2);
const opt = (name, d) => { const i = argv.indexOf(name); return i < 0 ? d : argv[i + 1]; };
const SHAPE = opt('--shape', 'qwen2.5-0.5b');
const RUNS = Number(opt('--runs', 3));
const ID = `bench/${SHAPE}`;

const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm hub second visit</title>
<script type="importmap">{ "imports": { "attnwasm/worker": "/bindings/worker.js" } }</script>
<script type="module">
import { createWorker } from 'attnwasm/worker';
window.visit = async ({ host, dtype, revision, url }) => {
  const t0 = performance.now();
  const rt = await createWorker();
  const t1 = performance.now();
  let last = null;
  const lm = await rt.loadModel(url ?? '${ID}', { ...(url ? {} : { host }), ...(dtype ? { dtype } : {}), ...(revision ? { revision } : {}), onProgress: (p) => { last = p; } });
  const t2 = performance.now();
  const g = lm.generate([9707, 11, 1879, 374, 264, 1273, 315, 279], { maxNewTokens: 1, stopTokens: [] });
  let id = null;
  for await (const t of g) id = t.id;
  const t3 = performance.now();
  const out = { workerMs: t1 - t0, loadMs: t2 - t1, firstTokenMs: t3 - t2, totalMs: t3 - t0, id, cached: last?.cached, downloaded: last?.downloaded,
    weightTypes: await lm.weightTypes, threads: rt.startCapabilities.threads };
  await rt.close();
  return out;
};
window.ready = true;
</script>`;

const made = !opt('--dir', null);
const dir = opt('--dir', null) ?? mkdtempSync(join(tmpdir(), 'attnwasm-hub-bench-'));
if (!existsSync(join(dir, 'model.safetensors'))) {
  process.stderr.write(`writing a ${SHAPE}-shaped checkpoint into ${dir} …\n`);
  await writeCheckpoint(SHAPE, dir);
}
const files = Object.fromEntries(readdirSync(dir).filter((n) => n.endsWith('.json') || n.endsWith('.safetensors')).map((n) => [n, readFileSync(join(dir, n))]));
const hub = await startHub({ [ID]: { main: files } });
const site = await startServer({ isolated: false });
const browser = await launchChromium();
const { context } = browser;
await context.route('**/hub_bench.html', (r) => r.fulfill({ status: 200, contentType: 'text/html', body: PAGE }));

async function visit(options) {
  const page = await context.newPage();
  await page.goto(`${site.url}hub_bench.html`);
  await page.waitForFunction(() => window.ready === true);
  const r = await page.evaluate((o) => window.visit(o), { host: hub.host, ...options });
  await page.close();
  return r;
}

const mb = (b) => (b / 2 ** 20).toFixed(0);
try {
  console.log(`# second visit, first token; ${describeMachine()}; Chromium headless, a page without COOP/COEP (1 thread); ${SHAPE} BF16 ${mb(files['model.safetensors'].length)} MiB`);
  const first = await visit({ dtype: 'q4' });
  console.log(`first visit (download ${mb(first.downloaded)} MiB into OPFS, q4): worker ${first.workerMs.toFixed(0)} ms, load ${first.loadMs.toFixed(0)} ms, first token ${first.firstTokenMs.toFixed(0)} ms; total ${first.totalMs.toFixed(0)} ms`);
  const commit = hub.commit(ID, 'main');
  for (const [name, o] of [['no cache: the base URL of resolve/main/, q4', { dtype: 'q4', url: `${hub.host}/${ID}/resolve/main/` }], ['q4, revision main', { dtype: 'q4' }], ['q4, revision pinned to the commit', { dtype: 'q4', revision: commit }], ['as stored (BF16, no packing)', {}]]) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await visit(o));
    const m = (k) => median(runs.map((r) => r[k])).toFixed(0);
    console.log(`second visit, ${name}: worker ${m('workerMs')} ms + load ${m('loadMs')} ms + first token ${m('firstTokenMs')} ms = ${m('totalMs')} ms `
      + `(median of ${RUNS}; downloaded ${runs.map((r) => r.downloaded ?? '-').join('/')} B, cached ${mb(runs[0].cached ?? 0)} MiB; token ${runs[0].id}; ${Object.keys(runs[0].weightTypes).join('+')})`);
  }
} finally {
  await browser.close();
  await site.close();
  await hub.close();
  if (made) rmSync(dir, { recursive: true, force: true });
}
