// "A real npm package": installs the packed tarball (tests/tarball.mjs) into
// a fresh project and uses it the ways a consumer would without a bundler
// (bundlers: bundlers.test.mjs):
//   b. a plain <script type="module"> page through an import map;
//   c. a module Web Worker importing the package by relative path;
//   d. CommonJS: require('attnwasm') fails with Node's own clear ESM error,
//      import('attnwasm') works;
//   e. init({ wasmUrl }) with the .wasm served from a custom path.
// Pages run in headless Chromium (playwright-core, /usr/bin/chromium) and must
// compute exactly what the repo's bindings/index.js computes in Node, with no
// console errors.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { ROOT } from '../tarball.mjs';
import { launchChromium, pageResult } from './chromium.mjs';
import { consumerProject, sh } from './consumer.mjs';
import { checkResult } from './same_result.mjs';
import { startStatic } from './static_server.mjs';

const FIXTURES = join(ROOT, 'tests/browser/fixtures');

let tmp; // everything temporary lives under here
let proj; // the consumer project
let tarball;
let pkgDir; // proj/node_modules/attnwasm
let browser;

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'attnwasm-pkg-'));
  ({ dir: proj, tarball } = await consumerProject(tmp));
  pkgDir = join(proj, 'node_modules/attnwasm');
  await cp(join(FIXTURES, 'plain'), join(proj, 'plain'), { recursive: true });
  await cp(join(FIXTURES, 'compute.js'), join(proj, 'plain/compute.js'));
  await cp(join(FIXTURES, 'cjs/require.cjs'), join(proj, 'require.cjs'));
  browser = await launchChromium();
}, { timeout: 75_000 });

after(async () => {
  await browser?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

test('npm pack: tarball contents', async (t) => {
  const { size } = await stat(tarball.path);
  t.diagnostic(`tarball ${tarball.filename}: ${size} bytes (${(size / 1024).toFixed(0)} KiB), ${tarball.entryCount} files`);
  for (const f of ['package.json', 'bindings/index.js', 'bindings/models.js', 'bindings/index.d.ts',
    'bindings/inline.js', 'bindings/inline.d.ts', 'dist/attnwasm_core.mjs', 'dist/attnwasm_core.wasm', 'dist/attnwasm_inline.mjs']) {
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

test('b+c+e. import-map page, module worker and init({ wasmUrl })', async (t) => {
  const server = await startStatic({
    root: proj,
    routes: { '/custom/path/attnwasm_core.wasm': join(pkgDir, 'dist/attnwasm_core.wasm') },
  });
  try {
    const { result: r, problems, responses } = await pageResult(browser.context, `${server.url}plain/index.html`);
    for (const k of ['result', 'custom', 'worker']) assert.equal(r[k].error, undefined, `${k}: ${r[k].error}`);
    const b = await checkResult(r.result, 'import-map page');
    const e = await checkResult(r.custom, 'init({ wasmUrl })');
    const c = await checkResult(r.worker, 'module worker');
    t.diagnostic(`bit-identical to Node: import map ${b}, wasmUrl ${e}, worker ${c}`);
    const wasmPaths = responses.filter((x) => x.url.endsWith('.wasm')).map((x) => new URL(x.url).pathname);
    // Chromium runs relaxed SIMD: the package's relaxed-SIMD build; wasmUrl names a baseline one.
    assert.ok(wasmPaths.includes('/node_modules/attnwasm/dist/attnwasm_core_rs.wasm'), `wasm requests: ${wasmPaths}`);
    assert.ok(wasmPaths.includes('/custom/path/attnwasm_core.wasm'), `wasmUrl not used: ${wasmPaths}`);
    assert.ok(responses.some((x) => x.url.endsWith('/plain/worker.js')), 'worker script not loaded');
    assert.deepEqual(problems, []);
  } finally {
    await server.close();
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
