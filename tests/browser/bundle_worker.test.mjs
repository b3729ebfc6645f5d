// 'attnwasm/worker' under every bundler we test, from the packed tarball, in headless Chromium: a page
// that does `import { createWorker } from 'attnwasm/worker'` (fixtures/bundle_worker/main.js), loads the
// fortune model (models/lm/lm.safetensors, served next to the page) in the worker and writes greedily must
// write torch's text (models/lm/reference.json), with no console problem and the .wasm served as
// application/wasm; without COOP/COEP on one thread, cross-origin isolated on 2 (the pthreads build inside
// the worker). The worker script is found as the .wasm is: `new URL('./worker_main.js', import.meta.url)`.
// What each bundler needs:
//   Vite (build and dev server)  worker: { format: 'es' } (fixtures/bundle_worker/vite.config.mjs)
//   webpack 5                    nothing
//   esbuild                      worker_main.js as a second entry point, named worker_main.js next to the
//                                page's bundle (--splitting --entry-names=[name]), and dist/attnwasm_core*
//                                copied there; without the worker's bundle, ERR_WASM_LOAD naming the fix
//   Rollup                       the same as a second input (fixtures/bundle_worker/rollup.config.mjs)
//
// Beside tests/browser/bundlers.test.mjs (the 'attnwasm' recipes) rather than in it, so that the two can
// change apart; the bundlers are the same (tests/browser/bundlers/package-lock.json, installed once into
// build/bundlers as that test does). Here, not in tests/js/: it needs Chromium, and tests/js/ runs twice.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ROOT } from '../tarball.mjs';
import { launchChromium, pageResult } from './chromium.mjs';
import { consumerProject, sh } from './consumer.mjs';
import { startStatic } from './static_server.mjs';

const FIXTURE = join(ROOT, 'tests/browser/fixtures/bundle_worker');
const TOOLCHAIN_SRC = join(ROOT, 'tests/browser/bundlers');
const TOOLCHAIN = join(ROOT, 'build/bundlers');
const BIN = {
  vite: join(TOOLCHAIN, 'node_modules/vite/bin/vite.js'),
  webpack: join(TOOLCHAIN, 'node_modules/webpack-cli/bin/cli.js'),
  esbuild: join(TOOLCHAIN, 'node_modules/esbuild/bin/esbuild'),
  rollup: join(TOOLCHAIN, 'node_modules/rollup/dist/bin/rollup'),
};
const REF = JSON.parse(await readFile(join(ROOT, 'models/lm/reference.json'), 'utf8')).items.find((it) => it.prompt === '');
const WORKER_MAIN = 'node_modules/attnwasm/bindings/worker_main.js';

let project; // { dir, tarball }: the consumer project, also the app's folder (its node_modules beside the sources)
let browser;

/**
 * The bundlers in build/bundlers, installed unless that lockfile is already installed there: the same
 * stamp and the same install as tests/browser/bundlers.test.mjs (see there why `npm install`).
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
  return sh(process.execPath, [BIN[name], ...args], { cwd: project.dir, env: { ...process.env, NO_COLOR: '1' } }, `${name} ${args.join(' ')}`);
}

/** Puts the page and the model next to a bundle; `copy`: the esbuild/Rollup step, dist/attnwasm_core* there too. */
async function finishOutput(out, { copy }) {
  await copyFile(join(FIXTURE, 'index.html'), join(out, 'index.html'));
  await copyFile(join(project.dir, 'public/lm.safetensors'), join(out, 'lm.safetensors'));
  if (!copy) return;
  const dist = join(project.dir, 'node_modules/attnwasm/dist');
  for (const f of await readdir(dist)) if (f.startsWith('attnwasm_core')) await copyFile(join(dist, f), join(out, f));
}

/**
 * Opens the page (served from `root`, or at `url`), checks that the worker wrote torch's greedy text with
 * no console problem and that every .wasm came as application/wasm; returns { result, responses }.
 */
async function openBundle(label, root, { isolated = false, url = null } = {}) {
  const server = url ? null : await startStatic({ root, isolated });
  try {
    const { result, problems, responses } = await pageResult(browser.context, `${url ?? server.url}?n=${REF.greedyIds.length}`, { timeout: 60_000 });
    assert.equal(result.error, undefined, `${label}: ${JSON.stringify(result.error)}`);
    assert.equal(result.caps.environment, 'worker', label);
    assert.deepEqual(result.ids, REF.greedyIds, `${label}: the ids written`);
    assert.equal(result.text, REF.greedyText, label);
    // Seen once in about 30 runs, after a load whose ids were right: the model's request reported as
    // net::ERR_ABORTED, its completion racing the worker's end (rt.close() terminates it). Reported, not failed.
    const aborted = problems.filter((p) => /^requestfailed: \S+\/lm\.safetensors net::ERR_ABORTED$/.test(p));
    if (aborted.length) console.log(`# ${label}: ${aborted.join('; ')}`);
    assert.deepEqual(problems.filter((p) => !aborted.includes(p)), [], `${label}: console problems`);
    const wasm = responses.filter((r) => new URL(r.url).pathname.endsWith('.wasm'));
    assert.ok(wasm.length > 0, `${label}: no .wasm fetched`);
    for (const r of wasm) assert.match(r.type ?? '', /^application\/wasm/, `${label}: ${r.url} served as ${r.type}`);
    return { result, responses };
  } finally {
    await server?.close();
  }
}

/** The same page without COOP/COEP (one thread in the worker) and cross-origin isolated (2 threads in it). */
async function openBoth(label, root) {
  const single = await openBundle(label, root);
  assert.equal(single.result.caps.build, 'single-thread', label);
  const iso = await openBundle(`${label} (isolated)`, root, { isolated: true });
  assert.equal(iso.result.caps.threads, 2, `${label} (isolated): ${iso.result.caps.threadsReason}`);
  assert.equal(iso.result.caps.build, 'pthreads', label);
  return { single, iso };
}

before(async () => {
  await bundlerToolchain();
  project = await consumerProject(TOOLCHAIN);
  await cp(FIXTURE, project.dir, { recursive: true });
  await mkdir(join(project.dir, 'public'));  // Vite copies public/ into its output; the others get the model from there
  await copyFile(join(project.dir, 'node_modules/attnwasm/models/lm/lm.safetensors'), join(project.dir, 'public/lm.safetensors'));
  browser = await launchChromium();
}, { timeout: 180_000 });

after(async () => {
  await browser?.close();
  if (project) await rm(project.dir, { recursive: true, force: true });
});

test("Vite build: worker: { format: 'es' }; the worker emitted as an asset, threads inside it on an isolated page", async (t) => {
  await bundle('vite', ['build', '--logLevel', 'warn']);
  const out = join(project.dir, 'dist');
  const { single } = await openBoth('vite build', out);
  const assets = await readdir(join(out, 'assets'));
  const worker = assets.find((a) => /^worker_main-[^.]*\.js$/.test(a));
  assert.ok(worker, `vite emitted no worker_main chunk: ${assets.join(', ')}`);
  assert.ok(single.responses.some((r) => new URL(r.url).pathname === `/assets/${worker}`), 'the page did not start the emitted worker');
  t.diagnostic(`vite build: the worker ${worker}; rt.workerUrl says ${single.result.workerUrl}`);
});

test('Vite dev server', async () => {
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
  const child = spawn(process.execPath, [BIN.vite, '--port', String(port), '--strictPort', '--host', '127.0.0.1'],
    { cwd: project.dir, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
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
  const out = join(project.dir, 'out-webpack');
  await bundle('webpack', ['--mode', 'production', '--entry', './main.js', '--output-path', 'out-webpack']);
  await finishOutput(out, { copy: false });
  await openBoth('webpack', out);
});

test('esbuild without the worker bundle: ERR_WASM_LOAD names worker_main.js, HTTP 404 and the fix', async (t) => {
  const out = join(project.dir, 'out-noworker');
  await bundle('esbuild', ['main.js', '--bundle', '--format=esm', '--outdir=out-noworker']);
  await finishOutput(out, { copy: true });
  const server = await startStatic({ root: out });
  try {
    const { result, problems } = await pageResult(browser.context, server.url);
    assert.equal(result.error?.name, 'AttnWasmError');
    assert.equal(result.error.code, 'ERR_WASM_LOAD');
    assert.equal(result.error.message, `the attnwasm worker script ${server.url}worker_main.js did not start (HTTP 404 Not Found). `
      + 'Fix: let your bundler emit it (Vite and webpack do) or bundle node_modules/attnwasm/bindings/worker_main.js as worker_main.js '
      + 'next to your bundle (esbuild, Rollup: README, "Install and bundle"), or pass createWorker({ workerUrl }) with the URL where it is served.');
    // Only the browser's own lines about the 404 (the Worker's request, then diagnose()'s).
    assert.deepEqual(problems.filter((p) => !/404|worker_main\.js net::ERR_FAILED/.test(p)), []);
    t.diagnostic(result.error.message);
  } finally {
    await server.close();
  }
});

test('esbuild: worker_main.js as a second entry point next to the page, dist/attnwasm_core* copied there', async (t) => {
  const out = join(project.dir, 'out-esbuild');
  // One command: both entries, their shared code and the lazily imported parts (the tokenizer, the chat
  // templates, the pthreads glue) as chunks; [name] keeps worker_main.js beside main.js.
  await bundle('esbuild', ['main.js', WORKER_MAIN, '--bundle', '--format=esm', '--splitting', '--minify', '--entry-names=[name]', '--outdir=out-esbuild']);
  await finishOutput(out, { copy: true });
  const { single } = await openBoth('esbuild', out);
  assert.equal(single.result.workerUrl, `${new URL(single.responses[0].url).origin}/worker_main.js`);
  const kb = async (f) => `${((await readFile(join(out, f))).length / 1000).toFixed(1)} KB`;
  t.diagnostic(`esbuild --minify --splitting: the page's main.js ${await kb('main.js')}, worker_main.js ${await kb('worker_main.js')}`);
});

test('Rollup + @rollup/plugin-node-resolve: worker_main.js as a second input, dist/attnwasm_core* copied next to it', async () => {
  await bundle('rollup', ['-c', '--silent']);
  const out = join(project.dir, 'out-rollup');
  await finishOutput(out, { copy: true });
  await openBoth('rollup', out);
});
