// Generation through 'attnwasm/worker' against the same build in the page, in headless Chromium (issue 33's
// target: the worker within 5 % of the page's tokens/s at SmolLM2-135M's shape). One page holds both: the
// model loaded in a worker (createWorker) and in the page itself (init()), from the same random checkpoint
// (tools/make_checkpoint.mjs, BF16) served by tools/serve.mjs; they take turns (worker, page, page,
// worker, …) so that both see the same load of a shared machine. Each run: a 16-token prompt, then N
// tokens greedily; tokens/s over the tokens after the first (as the demos count it), the first token's
// time, and the ids (the same both ways, or the script says so).
//
// Usage: node bench/worker_speed.mjs [--shape smollm2-135m] [--dir <checkpoint folder>] [--tokens 64] [--rounds 5]
//        [--isolated] [--attention] [--json]
// --isolated serves the page with COOP/COEP (threads 'auto': 2 here, in the worker and in the page);
// without it both run one thread. --attention asks generate() for each token's attention (what the demos
// draw), which the worker sends to the page with every token. Not a test: nothing is asserted.
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeMachine, median } from './lib.mjs';
import { SHAPES, writeCheckpoint } from '../tools/make_checkpoint.mjs';
import { startServer } from '../tools/serve.mjs';
import { launchChromium } from '../tests/browser/chromium.mjs';

const argv = process.argv.slice(2);
const opt = (name, d) => { const i = argv.indexOf(name); return i < 0 ? d : argv[i + 1]; };
const SHAPE = opt('--shape', 'smollm2-135m');
const TOKENS = Number(opt('--tokens', 64));
const ROUNDS = Number(opt('--rounds', 5));
const ISOLATED = argv.includes('--isolated');
const ATTENTION = argv.includes('--attention');
if (!SHAPES[SHAPE]) throw new Error(`--shape: one of ${Object.keys(SHAPES).join(', ')}, got ${SHAPE}`);

const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm worker speed</title>
<script type="importmap">{ "imports": { "attnwasm": "/bindings/index.js", "attnwasm/worker": "/bindings/worker.js" } }</script>
<script type="module">
import { createWorker } from 'attnwasm/worker';
import { init } from 'attnwasm';
const models = {};
const prompt = Array.from({ length: 16 }, (_, i) => 100 + 37 * i);
window.api = {
  async load(base) {
    const config = await (await fetch(base + 'config.json')).json();
    const rt = await createWorker();
    models.worker = await rt.loadModel(base + 'model.safetensors', { config });
    const aw = await init();
    models.page = await aw.loadModel(base + 'model.safetensors', { config });
    return { worker: rt.startCapabilities, page: aw.capabilities() };
  },
  async run(where, n, attention) {
    const at = [], ids = [];
    const t0 = performance.now();
    for await (const t of models[where].generate(prompt, { maxNewTokens: n, stopTokens: [], attention })) { ids.push(t.id); at.push(performance.now()); }
    return { ids, firstMs: at[0] - t0, tokensPerSecond: (ids.length - 1) / ((at.at(-1) - at[0]) / 1000) };
  },
};
window.ready = true;
</script>`;

async function main() {
  let dir = opt('--dir', null);
  let tmp = null;
  if (!dir) {
    tmp = mkdtempSync(join(tmpdir(), 'attnwasm-worker-speed-'));
    dir = join(tmp, 'ckpt');
    writeCheckpoint(SHAPE, dir);
  } else if (!existsSync(join(dir, 'config.json'))) {
    throw new Error(`--dir ${dir}: no config.json (make one: node tools/make_checkpoint.mjs ${SHAPE} ${dir})`);
  }
  const pageDir = mkdtempSync(join(tmpdir(), 'attnwasm-worker-speed-page-'));
  mkdirSync(join(pageDir, 'page'));
  writeFileSync(join(pageDir, 'page', 'index.html'), PAGE);
  const server = await startServer({ isolated: ISOLATED, mounts: { '/ckpt/': dir, '/bench/': pageDir } });
  const browser = await launchChromium();
  const runs = { worker: [], page: [] };
  let caps;
  try {
    const page = await browser.context.newPage();
    page.on('pageerror', (e) => console.error(`pageerror: ${e.message}`));
    await page.goto(`${server.url}bench/page/index.html`);
    await page.waitForFunction(() => window.ready === true);
    caps = await page.evaluate((u) => window.api.load(u), `${server.url}ckpt/`);
    // A first run each (not counted): V8's optimised code for the kernels, as a page that has written before.
    for (const where of ['worker', 'page']) await page.evaluate(([w, n, a]) => window.api.run(w, n, a), [where, 8, ATTENTION]);
    for (let i = 0; i < ROUNDS; i++) {
      for (const where of i % 2 ? ['page', 'worker'] : ['worker', 'page']) {
        runs[where].push(await page.evaluate(([w, n, a]) => window.api.run(w, n, a), [where, TOKENS, ATTENTION]));
      }
    }
  } finally {
    await browser.close();
    await server.close();
    rmSync(pageDir, { recursive: true, force: true });
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
  const same = runs.worker.every((r) => JSON.stringify(r.ids) === JSON.stringify(runs.page[0].ids))
    && runs.page.every((r) => JSON.stringify(r.ids) === JSON.stringify(runs.page[0].ids));
  const m = (where, k) => median(runs[where].map((r) => r[k]));
  const out = {
    machine: describeMachine(), shape: SHAPE, tokens: TOKENS, rounds: ROUNDS, isolated: ISOLATED, attention: ATTENTION,
    threads: { worker: caps.worker.threads || 1, page: caps.page.threads || 1 }, sameIds: same,
    worker: { tokensPerSecond: m('worker', 'tokensPerSecond'), firstMs: m('worker', 'firstMs'), runs: runs.worker.map((r) => r.tokensPerSecond) },
    page: { tokensPerSecond: m('page', 'tokensPerSecond'), firstMs: m('page', 'firstMs'), runs: runs.page.map((r) => r.tokensPerSecond) },
  };
  out.ratio = out.worker.tokensPerSecond / out.page.tokensPerSecond;
  if (argv.includes('--json')) {
    console.log(JSON.stringify(out, null, 2));
    return;
  }
  console.log(`# ${out.machine}`);
  console.log(`# ${SHAPE} (BF16, random weights), headless Chromium, ${ISOLATED ? 'cross-origin isolated' : 'no COOP/COEP'}: `
    + `${out.threads.worker} thread(s) in the worker, ${out.threads.page} in the page; 16-token prompt + ${TOKENS} tokens, `
    + `${ATTENTION ? 'attention on' : 'attention off'}, ${ROUNDS} runs each, taking turns`);
  for (const where of ['worker', 'page']) {
    console.log(`${where === 'worker' ? 'worker' : 'page  '}: median ${out[where].tokensPerSecond.toFixed(2)} tokens/s, first token ${out[where].firstMs.toFixed(0)} ms `
      + `(runs: ${out[where].runs.map((v) => v.toFixed(2)).join(', ')})`);
  }
  console.log(`worker / page: ${out.ratio.toFixed(3)}; the same ids both ways: ${same ? 'yes' : 'NO'}`);
}

await main();
