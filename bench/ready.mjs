// Time to a ready runtime (README "Performance", "First calls"): how long a
// user waits between importing attnwasm and holding a runtime, in Node (a fresh
// process: import + init()) and in headless Chromium (a fresh page, the HTTP
// cache off: the module script's start to init() resolved, the .wasm fetched
// and compiled), for this checkout and, with --root DIR, another one (its
// dist/ built), alternated so that a noisy machine slows both alike.
// Prints medians; the difference is the cost of what changed.
//
// Usage: node bench/ready.mjs [--root ../other-checkout] [--runs 9] [--configs '[{"threads":1}]']
//   (Chromium: Debian's /usr/bin/chromium through playwright-core, as the tests)
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine, median } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (n) => { const i = argv.indexOf(n); return i < 0 ? null : argv[i + 1]; };

if (argv[0] === '--child') {
  const t0 = performance.now();
  const { init } = await import(join(argv[1], 'bindings', 'index.js'));
  const aw = await init(JSON.parse(argv[2]));
  const ms = performance.now() - t0;
  process.stdout.write(`${JSON.stringify({ ms, build: aw.capabilities().build })}\n`);
  process.exit(0);
}

const RUNS = Number(opt('--runs') ?? 9);
const roots = [{ name: 'this checkout', dir: resolve(HERE, '..') }];
if (opt('--root')) roots.push({ name: opt('--root'), dir: resolve(opt('--root')) });
const CONFIGS = opt('--configs') ? JSON.parse(opt('--configs')) : [{ threads: 1 }, { threads: 2 }];

console.log(`# time to a ready runtime; ${describeMachine()}; Node ${process.version}; medians of ${RUNS}`);

// Node: fresh processes.
for (const config of CONFIGS) {
  const ms = roots.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    for (const [j, r] of roots.entries()) {
      const out = JSON.parse(execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', r.dir, JSON.stringify(config)], { encoding: 'utf8' }));
      ms[j].push(out.ms);
    }
  }
  console.log(`Node, init(${JSON.stringify(config)}): ${roots.map((r, j) => `${r.name} ${median(ms[j]).toFixed(1)} ms`).join(', ')}`);
}

// Chromium: a fresh page each time, cross-origin isolated (so threads: 2 runs the pthreads build).
const { launchChromium } = await import('../tests/browser/chromium.mjs');
const { startStatic } = await import('../tests/browser/static_server.mjs');
const PAGE = (config) => `<!doctype html><meta charset="utf-8"><title>ready</title><script type="module">
const t0 = performance.now();
const { init } = await import('/bindings/index.js');
const aw = await init(${JSON.stringify(config)});
window.result = { ms: performance.now() - t0, build: aw.capabilities().build };
</script>`;
const servers = [];
for (const r of roots) {
  const routes = {};
  for (const [i, c] of CONFIGS.entries()) routes[`/ready${i}.html`] = { type: 'text/html', body: PAGE(c) };
  servers.push(await startStatic({ root: r.dir, isolated: true, routes }));
}
const browser = await launchChromium();
try {
  for (const [ci, config] of CONFIGS.entries()) {
    const ms = roots.map(() => []);
    const builds = new Set();
    for (let i = 0; i < RUNS + 1; i++) {
      for (const [j, s] of servers.entries()) {
        const page = await browser.context.newPage();
        await page.goto(`${s.url}ready${ci}.html`);
        await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 });
        const r = await page.evaluate(() => window.result);
        await page.close();
        if (i > 0) ms[j].push(r.ms);   // the browser's own first page start-up is not counted
        builds.add(r.build);
      }
    }
    console.log(`Chromium, init(${JSON.stringify(config)}) [${[...builds].join(', ')}]: ${roots.map((r, j) => `${r.name} ${median(ms[j]).toFixed(1)} ms`).join(', ')}`);
  }
} finally {
  await browser.close();
  for (const s of servers) await s.close();
}
