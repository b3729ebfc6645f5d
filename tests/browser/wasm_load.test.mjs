// init() in Chromium when the .wasm does not load (the repo's bindings/ and
// dist/, served by a local server): a wrong wasmUrl (404), a page answered
// with status 200 (caught by the magic number), the package's default location
// missing (the fix sentence names the copy recipe); each an AttnWasmError
// ERR_WASM_LOAD with the URL, the status and the fix, no Emscripten abort
// message on the console; then init() with a correct wasmUrl works in the same
// page. On a cross-origin-isolated page whose pthreads .wasm is missing,
// init() runs the single-thread build and says why. Chromium runs relaxed
// SIMD, so init() tries the relaxed-SIMD builds (*_rs) first: they are
// missing too here, and the errors name the baseline files. Node side:
// tests/js/wasm_load.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium, pageResult } from './chromium.mjs';
import { startStatic } from './static_server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const HTML_404 = '<!doctype html><html><body><h1>Page not found</h1></body></html>';

const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm load errors</title>
<script type="module">
import { init } from '/bindings/index.js';
const fail = async (options) => {
  try { await init(options); return { resolved: true }; }
  catch (e) { return { name: e.name, code: e.code, message: e.message, url: e.url, status: e.status, isError: e instanceof Error }; }
};
const r = {};
r.missing = await fail({ wasmUrl: '/dist/missing/attnwasm_core.wasm' });
r.html = await fail({ wasmUrl: '/spa/attnwasm_core.wasm' });
r.defaultLocation = await fail(undefined);
const aw = await init({ wasmUrl: '/cdn/attnwasm_core.wasm' });
const q = { data: new Float32Array([1, 0, 0, 1]), shape: [2, 2] };
r.output = Array.from(aw.scaledDotProductAttention(q, q, q).output.data);
r.caps = aw.capabilities();
window.result = r;
</script>`;

const THREADS_PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm mt fallback</title>
<script type="module">
import { init } from '/bindings/index.js';
init().then((aw) => { window.result = { caps: aw.capabilities() }; }, (e) => { window.result = { error: e.message }; });
</script>`;

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

test('wrong wasmUrl, a 200 HTML page, the default location missing: ERR_WASM_LOAD with URL, status and fix; then a correct wasmUrl works', async (t) => {
  const server = await startStatic({
    root: ROOT,
    allow: ['bindings', 'dist'],
    routes: {
      '/': { type: 'text/html', body: PAGE },
      '/dist/attnwasm_core.wasm': { status: 404, body: 'not found' },
      '/dist/attnwasm_core_rs.wasm': { status: 404, body: 'not found' },
      '/spa/attnwasm_core.wasm': { type: 'text/html', body: HTML_404 },
      '/cdn/attnwasm_core.wasm': join(ROOT, 'dist/attnwasm_core.wasm'),
    },
  });
  try {
    const { result: r, problems, responses } = await pageResult(browser.context, server.url);
    const origin = server.url.slice(0, -1);
    assert.deepEqual({ name: r.missing.name, code: r.missing.code, url: r.missing.url, status: r.missing.status, isError: r.missing.isError },
      { name: 'AttnWasmError', code: 'ERR_WASM_LOAD', url: `${origin}/dist/missing/attnwasm_core.wasm`, status: 404, isError: true });
    assert.equal(r.missing.message, `attnwasm_core.wasm did not load from ${origin}/dist/missing/attnwasm_core.wasm: HTTP 404 Not Found. `
      + 'Fix: init({ wasmUrl }) must be the URL of attnwasm_core.wasm itself, of this attnwasm version (node_modules/attnwasm/dist/attnwasm_core.wasm).');
    assert.equal(r.html.code, 'ERR_WASM_LOAD');
    assert.equal(r.html.status, undefined);
    assert.match(r.html.message, /\/spa\/attnwasm_core\.wasm: the server answered 200 with text\/html, not WebAssembly: the body starts with "<!doctype html><html><body><h1>Page not …" where a \.wasm starts with \\0asm\. Fix: /);
    assert.equal(r.defaultLocation.code, 'ERR_WASM_LOAD');
    assert.equal(r.defaultLocation.message, `attnwasm_core.wasm did not load from ${origin}/dist/attnwasm_core.wasm: HTTP 404 Not Found. `
      + 'Fix: copy node_modules/attnwasm/dist/*.wasm next to your bundle, or pass init({ wasmUrl }) with the URL where attnwasm_core.wasm is served (README, "Install and bundle").');
    assert.deepEqual(r.output.map((x) => Number(x.toFixed(4))), [0.6698, 0.3302, 0.3302, 0.6698]);
    assert.equal(r.caps.build, 'single-thread');
    assert.equal(r.caps.relaxedSimd, false);
    assert.equal(r.caps.relaxedSimdReason, "wasmUrl/wasmBinary name a baseline build's .wasm");
    // The browser's own lines for the 404s, nothing else: no Emscripten
    // "Aborted(…)", no "wasm streaming compile failed".
    const unexpected = problems.filter((p) => !/404/.test(p));
    assert.deepEqual(unexpected, []);
    const cdn = responses.find((x) => x.url.endsWith('/cdn/attnwasm_core.wasm'));
    assert.equal(cdn.type, 'application/wasm');
    t.diagnostic(r.defaultLocation.message);
  } finally {
    await server.close();
  }
});

test('cross-origin-isolated page, the pthreads .wasm missing: the single-thread build, and why', async () => {
  const server = await startStatic({
    root: ROOT,
    allow: ['bindings', 'dist'],
    isolated: true,
    routes: {
      '/': { type: 'text/html', body: THREADS_PAGE },
      '/dist/attnwasm_core_mt.wasm': { status: 404, body: 'not found' },
      '/dist/attnwasm_core_mt_rs.wasm': { status: 404, body: 'not found' },
    },
  });
  try {
    const { result: r } = await pageResult(browser.context, server.url);
    assert.equal(r.error, undefined, r.error);
    assert.equal(r.caps.build, 'single-thread');
    assert.equal(r.caps.crossOriginIsolated, true);
    assert.match(r.caps.threadsReason, /^attnwasm_core_mt\.wasm did not load \(http:\/\/127\.0\.0\.1:\d+\/dist\/attnwasm_core_mt\.wasm: HTTP 404 Not Found\); running the single-thread build$/);
    assert.match(r.caps.relaxedSimdReason, /^attnwasm_core_mt_rs\.wasm did not load \(http:\/\/127\.0\.0\.1:\d+\/dist\/attnwasm_core_mt_rs\.wasm: HTTP 404 Not Found\); running the baseline build$/);
    assert.ok(!server.requests.some((p) => p.endsWith('.worker.js')), 'no worker should start without its .wasm');
  } finally {
    await server.close();
  }
});
