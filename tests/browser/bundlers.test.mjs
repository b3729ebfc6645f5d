// Every bundler recipe of the README ("Install and bundle"), from the packed
// tarball, in headless Chromium: Vite (build and dev server), webpack 5,
// esbuild and Rollup bundle a page that does `import { init } from 'attnwasm'`
// (fixtures/bundlers/main.js) exactly as the recipe says, and the page must
// compute what the repo's bindings compute in Node, with no console errors and
// the .wasm served as application/wasm. On a cross-origin-isolated page the
// bundles that ship the pthreads files must run 2 threads. esbuild without the
// recipe's copy step gets the ERR_WASM_LOAD message that names the fix;
// 'attnwasm/inline' needs no step at all (its size cost is printed).
//
// The bundlers (exact versions: tests/browser/bundlers/package-lock.json) are
// installed once into build/bundlers and reused while that lockfile is
// unchanged; each run installs the tarball into a fresh project there (so
// the bundlers resolve from the folder above) and removes it afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { ROOT } from '../tarball.mjs';
import { launchChromium, pageResult } from './chromium.mjs';
import { consumerProject, sh } from './consumer.mjs';
import { checkResult } from './same_result.mjs';
import { startStatic } from './static_server.mjs';

const FIXTURES = join(ROOT, 'tests/browser/fixtures');
const TOOLCHAIN_SRC = join(ROOT, 'tests/browser/bundlers');
const TOOLCHAIN = join(ROOT, 'build/bundlers');
const BIN = {
  vite: join(TOOLCHAIN, 'node_modules/vite/bin/vite.js'),
  webpack: join(TOOLCHAIN, 'node_modules/webpack-cli/bin/cli.js'),
  esbuild: join(TOOLCHAIN, 'node_modules/esbuild/bin/esbuild'),
  rollup: join(TOOLCHAIN, 'node_modules/rollup/dist/bin/rollup'),
};

let project; // { dir, tarball }
let app; // project/app: the fixture page's sources, and each bundler's output
let browser;

/**
 * Installs the bundlers into build/bundlers unless that lockfile is already
 * installed there (a stamp holds its hash). `npm install`, not `npm ci`: the
 * registry mirror of this machine lacks Rollup's binaries for other
 * platforms, which npm therefore leaves out of the lockfile and `npm ci`
 * then refuses; `npm install` takes every version the lockfile pins. No
 * install scripts: none of these need one (esbuild's only checks its binary).
 */
async function bundlerToolchain() {
  const lock = await readFile(join(TOOLCHAIN_SRC, 'package-lock.json'));
  const hash = createHash('sha256').update(await readFile(join(TOOLCHAIN_SRC, 'package.json'))).update(lock).digest('hex');
  const stamp = join(TOOLCHAIN, '.installed-lock-sha256');
  if (existsSync(stamp) && (await readFile(stamp, 'utf8')) === hash) return;
  await mkdir(TOOLCHAIN, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) await copyFile(join(TOOLCHAIN_SRC, f), join(TOOLCHAIN, f));
  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--loglevel=error'], { cwd: TOOLCHAIN },
    'installing the bundlers (tests/browser/bundlers; needs the npm registry or a warm npm cache)');
  await writeFile(stamp, hash);
}

/** Runs a bundler's CLI in the app folder. */
function bundle(name, args) {
  return sh(process.execPath, [BIN[name], ...args], { cwd: app, env: { ...process.env, NO_COLOR: '1' } }, `${name} ${args.join(' ')}`);
}

/**
 * Copies the page into an output folder and, when `copy`, does the README's
 * esbuild/Rollup step: cp node_modules/attnwasm/dist/attnwasm_core* <out>/.
 */
async function finishOutput(out, { copy }) {
  await copyFile(join(FIXTURES, 'bundlers/index.html'), join(out, 'index.html'));
  if (!copy) return;
  const dist = join(project.dir, 'node_modules/attnwasm/dist');
  for (const f of await readdir(dist)) if (f.startsWith('attnwasm_core')) await copyFile(join(dist, f), join(out, f));
}

/**
 * Serves `root` (cross-origin isolated or not), opens it, checks the page
 * computed Node's result with no console problems and fetched its .wasm as
 * application/wasm (none when `inline`); returns { result, responses, requests }.
 */
async function openBundle(label, root, { isolated = false, url = null, inline = false } = {}) {
  const server = url ? null : await startStatic({ root, isolated });
  try {
    const { result, problems, responses } = await pageResult(browser.context, url ?? server.url);
    assert.equal(result.error, undefined, `${label}: init() failed: ${JSON.stringify(result.error)}`);
    await checkResult(result.result, label);
    assert.deepEqual(problems, [], `${label}: console problems`);
    const wasm = responses.filter((r) => new URL(r.url).pathname.endsWith('.wasm'));
    assert.equal(wasm.length > 0, !inline, `${label}: ${wasm.length} .wasm fetched`);
    for (const r of wasm) assert.match(r.type ?? '', /^application\/wasm/, `${label}: ${r.url} served as ${r.type}`);
    return { result, responses, requests: server?.requests ?? [] };
  } finally {
    await server?.close();
  }
}

/** The same page, not isolated (one thread) and isolated (2 threads, or one for attnwasm/inline). */
async function openBoth(label, root, { inline = false } = {}) {
  const single = await openBundle(label, root, { inline });
  assert.equal(single.result.caps.build, 'single-thread');
  const iso = await openBundle(`${label} (isolated)`, root, { isolated: true, inline });
  if (!inline) {
    assert.equal(iso.result.caps.threads, 2, `${label} (isolated): ${iso.result.caps.threadsReason}`);
    assert.equal(iso.result.caps.build, 'pthreads');
  }
  return { single, iso };
}

const size = async (file) => {
  const bytes = await readFile(file);
  return {
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
};
const kb = (n) => `${(n / 1000).toFixed(1)} KB`;

before(async () => {
  await bundlerToolchain();
  project = await consumerProject(TOOLCHAIN);
  app = join(project.dir, 'app');
  await cp(join(FIXTURES, 'bundlers'), app, { recursive: true });
  await copyFile(join(FIXTURES, 'compute.js'), join(app, 'compute.js'));
  browser = await launchChromium();
}, { timeout: 180_000 });

after(async () => {
  await browser?.close();
  if (project) await rm(project.dir, { recursive: true, force: true });
});

test('Vite build: no configuration; threads on an isolated page', async (t) => {
  await bundle('vite', ['build', '--logLevel', 'warn']);
  const out = join(app, 'dist');
  const { single, iso } = await openBoth('vite build', out);
  const assets = await readdir(join(out, 'assets'));
  // All four builds' .wasm emitted; Chromium runs relaxed SIMD, so the page fetches attnwasm_core_rs.
  for (const name of ['attnwasm_core', 'attnwasm_core_mt', 'attnwasm_core_rs', 'attnwasm_core_mt_rs']) {
    const f = assets.find((a) => new RegExp(`^${name}-[^.]*\\.wasm$`).test(a));
    assert.ok(f, `vite emitted no ${name} .wasm: ${assets.join(', ')}`);
    assert.deepEqual(await readFile(join(out, 'assets', f)), await readFile(join(project.dir, `node_modules/attnwasm/dist/${name}.wasm`)));
    if (name === 'attnwasm_core_rs') assert.ok(single.responses.some((r) => r.url.endsWith(`/assets/${f}`)), 'the page did not fetch the emitted .wasm');
  }
  assert.equal(single.result.caps.relaxedSimd, true);
  assert.equal(iso.result.caps.relaxedSimd, true);
  // Vite inlines the 3 KB worker script as a data: URL; it must still start.
  t.diagnostic(`vite build: ${assets.length} assets; isolated page: ${iso.result.caps.threads} threads`);
});

test('Vite dev server: no configuration', async () => {
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  const child = spawn(process.execPath, [BIN.vite, '--port', String(port), '--strictPort', '--host', '127.0.0.1'],
    { cwd: app, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`vite dev did not start within 30 s:\n${log}`)), 30_000);
      const onData = (d) => {
        log += d;
        const m = /Local:\s+(http:\/\/\S+)/.exec(log);
        if (m) { clearTimeout(timer); resolve(m[1]); }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('exit', (code) => reject(new Error(`vite dev exited (${code}):\n${log}`)));
    });
    const { result } = await openBundle('vite dev', null, { url });
    assert.equal(result.caps.build, 'single-thread');
  } finally {
    child.kill();
  }
});

test('webpack 5: no configuration', async () => {
  await bundle('webpack', ['--mode', 'production', '--entry', './main.js', '--output-path', 'out-webpack']);
  await finishOutput(join(app, 'out-webpack'), { copy: false });
  await openBoth('webpack', join(app, 'out-webpack'));
});

test('esbuild without copying the .wasm: ERR_WASM_LOAD names both URLs tried and the fix', async (t) => {
  await bundle('esbuild', ['main.js', '--bundle', '--format=esm', '--outdir=out-nocopy']);
  const out = join(app, 'out-nocopy');
  await finishOutput(out, { copy: false });
  const server = await startStatic({ root: out });
  try {
    const { result, problems } = await pageResult(browser.context, server.url);
    assert.equal(result.error?.code, 'ERR_WASM_LOAD');
    assert.equal(result.error.name, 'AttnWasmError');
    assert.equal(result.error.message, `attnwasm_core.wasm did not load from ${server.url}attnwasm_core.wasm (HTTP 404 Not Found) `
      + `nor from ${server.url}dist/attnwasm_core.wasm (HTTP 404 Not Found). Fix: copy node_modules/attnwasm/dist/*.wasm `
      + 'next to your bundle, or pass init({ wasmUrl }) with the URL where attnwasm_core.wasm is served (README, "Install and bundle").');
    // Only the browser's two 404 lines: no Emscripten abort text.
    assert.deepEqual(problems.filter((p) => !/404/.test(p)), []);
    t.diagnostic(result.error.message);
  } finally {
    await server.close();
  }
});

test('esbuild: copy node_modules/attnwasm/dist/attnwasm_core* next to the bundle', async (t) => {
  await bundle('esbuild', ['main.js', '--bundle', '--format=esm', '--minify', '--outdir=out-esbuild']);
  const out = join(app, 'out-esbuild');
  await finishOutput(out, { copy: true });
  const { single } = await openBoth('esbuild', out);
  // Chromium runs relaxed SIMD: the relaxed-SIMD build's .wasm next to the bundle.
  assert.ok(single.responses.some((r) => new URL(r.url).pathname === '/attnwasm_core_rs.wasm'), 'the .wasm next to the bundle was not used');
  assert.equal(single.result.caps.relaxedSimd, true);
  const js = await size(join(out, 'main.js'));
  const wasm = await size(join(out, 'attnwasm_core.wasm'));
  const rs = await size(join(out, 'attnwasm_core_rs.wasm'));
  t.diagnostic(`esbuild --minify, attnwasm: main.js ${kb(js.raw)} (gzip ${kb(js.gzip)}, brotli ${kb(js.brotli)}) + attnwasm_core.wasm ${kb(wasm.raw)} (gzip ${kb(wasm.gzip)}, brotli ${kb(wasm.brotli)}) `
    + `or attnwasm_core_rs.wasm ${kb(rs.raw)} (gzip ${kb(rs.gzip)}, brotli ${kb(rs.brotli)})`);
});

test("esbuild, 'attnwasm/inline': no step at all; its size cost", async (t) => {
  await bundle('esbuild', ['main-inline.js', '--bundle', '--format=esm', '--minify', '--outfile=out-inline/main.js']);
  const out = join(app, 'out-inline');
  await finishOutput(out, { copy: false });
  const { single, iso } = await openBoth('esbuild inline', out, { inline: true });
  assert.equal(iso.result.caps.build, 'single-thread');
  assert.equal(iso.result.caps.threadsReason, "attnwasm/inline embeds the single-thread build only (import 'attnwasm' for threads)");
  assert.deepEqual((await readdir(out)).sort(), ['index.html', 'main.js']);
  assert.deepEqual(single.responses.map((r) => new URL(r.url).pathname), ['/', '/main.js']);
  const inline = await size(join(out, 'main.js'));
  const mainJs = await size(join(app, 'out-esbuild/main.js'));
  const wasm = await size(join(app, 'out-esbuild/attnwasm_core.wasm'));
  t.diagnostic(`esbuild --minify, attnwasm/inline: main.js ${kb(inline.raw)} (gzip ${kb(inline.gzip)}, brotli ${kb(inline.brotli)}); `
    + `vs attnwasm (main.js + .wasm): ${kb(mainJs.raw + wasm.raw)} (gzip ${kb(mainJs.gzip + wasm.gzip)})`);
});

test('Rollup + @rollup/plugin-node-resolve: copy node_modules/attnwasm/dist/attnwasm_core* next to the bundle', async () => {
  await bundle('rollup', ['-c', '--silent']);
  const out = join(app, 'out-rollup');
  await finishOutput(out, { copy: true });
  await openBoth('rollup', out);
});
