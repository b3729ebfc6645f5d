// "A real npm package": packs this repo with `npm pack`, installs the tarball
// (plus a pinned Vite) into a fresh temporary project, and uses it the ways a
// consumer would:
//   a. a page bundled with `vite build` (bare `import { init } from 'attnwasm'`,
//      no path configuration) — the .wasm must be emitted by Vite;
//   b. a plain <script type="module"> page through an import map;
//   c. a module Web Worker importing the package by relative path;
//   d. CommonJS: require('attnwasm') fails with Node's own clear ESM error,
//      import('attnwasm') works;
//   e. init({ wasmUrl }) with the .wasm served from a custom path.
// Pages run in headless Chromium (playwright-core, /usr/bin/chromium) and must
// compute exactly what the repo's bindings/index.js computes in Node, with no
// console errors. Needs network access to the npm registry (or a warm npm
// cache) for Vite; a failed install fails the test with a clear message.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { launchChromium } from './chromium.mjs';
import { init as initRepo } from '../../bindings/index.js';
import { compute } from './fixtures/compute.js';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURES = join(ROOT, 'tests/browser/fixtures');
// Verified with `npm view vite version` (npm 11). Vite 8 needs npm 11 /
// Node ^20.19; with npm 10 use vite@7.
const VITE_VERSION = '8.3.8';
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.safetensors': 'application/octet-stream',
};

let tmp; // everything temporary lives under here
let proj; // the consumer project
let tarball;
let pkgDir; // proj/node_modules/attnwasm
let expected; // compute() with the repo's own bindings, in Node
const servers = [];
let browser;
let context;
let viteLog = '';

/** Runs a command; on failure throws with its output and a hint. */
async function sh(cmd, args, opts, what) {
  try {
    return await run(cmd, args, { maxBuffer: 64 << 20, ...opts });
  } catch (e) {
    throw new Error(`${what} failed (exit ${e.code}): ${cmd} ${args.join(' ')}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** Tiny static server on 127.0.0.1; `routes` maps exact URL paths to files. */
async function startStatic(root, routes = {}) {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = routes[path] ?? normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
    if (!routes[path] && file !== root && !file.startsWith(root + sep)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, {
        'Content-Type': MIME[extname(file)] ?? 'application/octet-stream',
        'Cache-Control': 'no-store',
      });
      res.end(body);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${server.address().port}`;
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'attnwasm-pkg-'));
  expected = compute(await initRepo());

  // npm pack the repo (as published: "files" decides what is in it).
  const packed = await sh(NPM, ['pack', '--json', '--pack-destination', tmp], { cwd: ROOT }, 'npm pack');
  const info = JSON.parse(packed.stdout)[0];
  tarball = { path: join(tmp, info.filename), files: info.files.map((f) => f.path), entryCount: info.entryCount };

  // A fresh consumer project with the tarball and a pinned Vite.
  proj = join(tmp, 'proj');
  await mkdir(proj);
  await writeFile(join(proj, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await sh(
    NPM,
    ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball.path, `vite@${VITE_VERSION}`],
    { cwd: proj },
    `npm install of the tarball and vite@${VITE_VERSION} (network or registry problem? this test needs Vite)`,
  );
  pkgDir = join(proj, 'node_modules/attnwasm');

  // Fixtures: the shared computation goes next to each entry.
  for (const d of ['vite-app', 'plain']) {
    await cp(join(FIXTURES, d), join(proj, d), { recursive: true });
    await cp(join(FIXTURES, 'compute.js'), join(proj, d, 'compute.js'));
  }
  await cp(join(FIXTURES, 'cjs/require.cjs'), join(proj, 'require.cjs'));

  // vite build (root vite-app, default base '/', output vite-app/dist).
  const built = await sh(process.execPath, [join(proj, 'node_modules/vite/bin/vite.js'), 'build', 'vite-app'],
    { cwd: proj, env: { ...process.env, NO_COLOR: '1' } }, 'vite build');
  viteLog = `${built.stdout}\n${built.stderr}`;

  browser = await launchChromium();
  context = browser.context;
}, { timeout: 75_000 });

after(async () => {
  await browser?.close();
  for (const s of servers) {
    s.closeAllConnections?.();
    await new Promise((resolve) => s.close(resolve));
  }
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** Largest |a - b| over two equal-length arrays. */
function maxDiff(a, b) {
  assert.equal(a.length, b.length, 'length');
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Asserts a page/worker result equals the Node result; returns whether bit-identical. */
function checkResult(got, label) {
  assert.ok(got && got.sdpa && got.mha, `${label}: no result`);
  for (const op of ['sdpa', 'mha']) {
    assert.deepEqual(got[op].shape, expected[op].shape, `${label} ${op} shape`);
    for (const part of ['output', 'weights']) {
      const d = maxDiff(got[op][part], expected[op][part]);
      assert.ok(d <= 1e-6, `${label} ${op}.${part}: max |diff| ${d} vs Node`);
    }
  }
  return JSON.stringify(got) === JSON.stringify(expected);
}

/** Opens url, records problems and requests, waits for body[data-ready]. */
async function openPage(url) {
  const page = await context.newPage();
  const problems = [];
  const responses = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    responses.push({ url: r.url(), status: r.status(), type: r.headers()['content-type'] });
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  await page.goto(url);
  await page.waitForSelector('body[data-ready]', { timeout: 20_000 });
  const ready = await page.getAttribute('body', 'data-ready');
  const text = async (id) => page.textContent(`#${id}`);
  assert.equal(ready, 'true', `page failed: ${problems.join('; ')}\n${await page.textContent('body')}`);
  return { page, problems, responses, text };
}

test('npm pack: tarball contents', async (t) => {
  const { size } = await stat(tarball.path);
  t.diagnostic(`tarball ${tarball.path.split(sep).pop()}: ${size} bytes (${(size / 1024).toFixed(0)} KiB), ${tarball.entryCount} files`);
  for (const f of ['package.json', 'bindings/index.js', 'bindings/models.js', 'bindings/index.d.ts',
    'dist/attnwasm_core.mjs', 'dist/attnwasm_core.wasm']) {
    assert.ok(tarball.files.includes(f), `tarball lacks ${f}`);
  }
  // Every relative import of the shipped JS must be shipped too.
  for (const f of tarball.files.filter((p) => /\.(m?js)$/.test(p))) {
    const src = await readFile(join(pkgDir, f), 'utf8');
    for (const [, spec] of src.matchAll(/(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = join(dirname(f), spec).split(sep).join('/');
      assert.ok(tarball.files.includes(target), `${f} imports ${spec}, which is not in the tarball`);
    }
  }
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
  const missing = pkg.files.filter((f) => !tarball.files.some((p) => p === f || p.startsWith(`${f}/`)));
  if (missing.length) t.diagnostic(`package.json "files" entries absent from the tarball: ${missing.join(', ')}`);
});

test('a. Vite-bundled page finds the .wasm and computes the Node result', async (t) => {
  const dist = join(proj, 'vite-app/dist');
  const assets = await readdir(join(dist, 'assets'));
  const wasmName = assets.find((f) => f.endsWith('.wasm'));
  assert.ok(wasmName, `vite build emitted no .wasm (assets: ${assets.join(', ')})`);
  assert.deepEqual(await readFile(join(dist, 'assets', wasmName)), await readFile(join(pkgDir, 'dist/attnwasm_core.wasm')),
    'emitted .wasm differs from the package .wasm');
  const warnings = viteLog.split('\n').filter((l) => /warn|externalized|\[plugin/i.test(l));
  if (warnings.length) t.diagnostic(`vite build warnings: ${warnings.join(' | ').slice(0, 600)}`);

  const base = await startStatic(dist);
  const { page, problems, responses, text } = await openPage(`${base}/`);
  try {
    const bitExact = checkResult(JSON.parse(await text('result')), 'vite page');
    t.diagnostic(`vite page: bit-identical to Node: ${bitExact}`);
    const wasmResp = responses.find((r) => r.url.endsWith('.wasm'));
    assert.ok(wasmResp, 'the page never fetched a .wasm');
    assert.equal(new URL(wasmResp.url).pathname, `/assets/${wasmName}`, 'page fetched a .wasm Vite did not emit');
    assert.equal(wasmResp.type, 'application/wasm');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('b+c+e. import-map page, module worker and init({ wasmUrl })', async (t) => {
  const base = await startStatic(proj, {
    '/custom/path/attnwasm_core.wasm': join(pkgDir, 'dist/attnwasm_core.wasm'),
  });
  const { page, problems, responses, text } = await openPage(`${base}/plain/index.html`);
  try {
    const b = checkResult(JSON.parse(await text('result')), 'import-map page');
    const e = checkResult(JSON.parse(await text('custom')), 'init({ wasmUrl })');
    const c = checkResult(JSON.parse(await text('worker')), 'module worker');
    t.diagnostic(`bit-identical to Node: import map ${b}, wasmUrl ${e}, worker ${c}`);
    const wasmPaths = responses.filter((r) => r.url.endsWith('.wasm')).map((r) => new URL(r.url).pathname);
    assert.ok(wasmPaths.includes('/node_modules/attnwasm/dist/attnwasm_core.wasm'), `wasm requests: ${wasmPaths}`);
    assert.ok(wasmPaths.includes('/custom/path/attnwasm_core.wasm'), `wasmUrl not used: ${wasmPaths}`);
    assert.ok(responses.some((r) => r.url.endsWith('/plain/worker.js')), 'worker script not loaded');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('d. CommonJS: require() gives the ESM error, import() works', async (t) => {
  const { stdout } = await sh(process.execPath, ['require.cjs'], { cwd: proj }, 'node require.cjs');
  const r = JSON.parse(stdout.trim().split('\n').pop());
  assert.equal(r.require.ok, false, 'require(attnwasm) unexpectedly worked');
  // Node >= 20.19 / 22.12 can require() ES modules, but not ones with top-level
  // await (dist/attnwasm_core.mjs has one): ERR_REQUIRE_ASYNC_MODULE. Older
  // Node (or --no-experimental-require-module): ERR_REQUIRE_ESM.
  const want = process.features.require_module ? 'ERR_REQUIRE_ASYNC_MODULE' : 'ERR_REQUIRE_ESM';
  assert.equal(r.require.code, want, r.require.message);
  assert.match(r.require.message, /import\(\)/);
  t.diagnostic(`require('attnwasm') on Node ${process.version}: ${r.require.code}`);
  assert.equal(r.import.ok, true, r.import.message);
  assert.deepEqual(r.import.shape, [2, 2]);

  if (process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module')) {
    const old = await sh(process.execPath, ['--no-experimental-require-module', 'require.cjs'], { cwd: proj },
      'node --no-experimental-require-module require.cjs');
    const o = JSON.parse(old.stdout.trim().split('\n').pop());
    assert.equal(o.require.code, 'ERR_REQUIRE_ESM', o.require.message);
    assert.equal(o.import.ok, true, o.import.message);
  }
});
