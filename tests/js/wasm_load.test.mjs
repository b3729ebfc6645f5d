// init() when the .wasm does not load: every failure is an AttnWasmError
// ERR_WASM_LOAD whose message names the URL, the HTTP status or the cause, and
// the fix; `url`, `status` and `cause` carry the same; no Emscripten abort
// text is printed; a later init() with a correct wasmUrl works. Served over
// HTTP by a local server (Node's fetch), read from files, or given as bytes.
// Also: application/wasm still compiles by streaming; the pthreads build's
// own .wasm missing from the package falls back to one thread, a wrong one the
// caller named rejects. The browser side is tests/browser/wasm_load.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init, AttnWasmError } from '../../bindings/index.js';
import { randomTensor } from './helpers.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ST = readFileSync(join(ROOT, 'dist/attnwasm_core.wasm'));
const MT = readFileSync(join(ROOT, 'dist/attnwasm_core_mt.wasm'));
const HTML = '<!doctype html>\n<html><head><title>Not Found</title></head><body>Sorry</body></html>';

// path → [status, content type, body]
const ROUTES = {
  '/ok.wasm': [200, 'application/wasm', ST],
  '/octet.wasm': [200, 'application/octet-stream', ST],
  '/missing.wasm': [404, 'text/plain', 'not found'],
  '/forbidden.wasm': [403, 'text/plain', 'no'],
  '/spa-fallback.wasm': [200, 'text/html; charset=utf-8', HTML],
  '/html-as-wasm.wasm': [200, 'application/wasm', HTML],
  '/empty.wasm': [200, 'application/wasm', Buffer.alloc(0)],
  '/truncated.wasm': [200, 'application/wasm', ST.subarray(0, 4096)],
  '/mt.wasm': [200, 'application/wasm', MT],
};
let server, base;
const hits = [];
before(async () => {
  server = createServer((req, res) => {
    hits.push(req.url);
    const [status, type, body] = ROUTES[req.url] ?? [404, 'text/plain', 'no route'];
    res.writeHead(status, { 'Content-Type': type });
    res.end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => new Promise((ok) => server.close(ok)));

/** Asserts that init(options) rejects with ERR_WASM_LOAD; returns the error. */
async function loadError(options) {
  let err;
  await assert.rejects(init(options), (e) => { err = e; return true; });
  assert.ok(err instanceof AttnWasmError, `expected an AttnWasmError, got ${err && err.stack}`);
  assert.equal(err.code, 'ERR_WASM_LOAD');
  assert.doesNotMatch(err.message, /Aborted|ASSERTIONS/);
  return err;
}

const FIX_URL = /Fix: init\(\{ wasmUrl \}\) must be the URL of attnwasm_core\.wasm itself, of this attnwasm version \(node_modules\/attnwasm\/dist\/attnwasm_core\.wasm\)\.$/;

test('HTTP 404: the URL, the status and the fix', async () => {
  const url = `${base}/missing.wasm`;
  const e = await loadError({ wasmUrl: url });
  assert.equal(e.message, `attnwasm_core.wasm did not load from ${url}: HTTP 404 Not Found. `
    + 'Fix: init({ wasmUrl }) must be the URL of attnwasm_core.wasm itself, of this attnwasm version (node_modules/attnwasm/dist/attnwasm_core.wasm).');
  assert.equal(e.url, url);
  assert.equal(e.status, 404);
  assert.equal(e.cause.kind, 'missing');
  const f = await loadError({ wasmUrl: new URL('/forbidden.wasm', base) });
  assert.match(f.message, /forbidden\.wasm: HTTP 403 Forbidden\./);
  assert.equal(f.status, 403);
});

test('a page answered with status 200 is caught by the magic number', async () => {
  const e = await loadError({ wasmUrl: `${base}/spa-fallback.wasm` });
  assert.match(e.message, /spa-fallback\.wasm: the server answered 200 with text\/html, not WebAssembly: the body starts with "<!doctype html> <html><head><title>Not F…" where a \.wasm starts with \\0asm\. Fix: /);
  assert.equal(e.status, undefined);
  assert.equal(e.cause.kind, 'not-wasm');
  // The same body labelled application/wasm: streaming compilation fails, the
  // bytes are fetched again to say what they were.
  const before = hits.length;
  const s = await loadError({ wasmUrl: `${base}/html-as-wasm.wasm` });
  assert.match(s.message, /html-as-wasm\.wasm: the server answered 200 with application\/wasm, not WebAssembly: the body starts with "<!doctype html>/);
  assert.deepEqual(hits.slice(before), ['/html-as-wasm.wasm', '/html-as-wasm.wasm']);
  assert.match((await loadError({ wasmUrl: `${base}/empty.wasm` })).message, /not WebAssembly: the body is empty/);
});

test('a truncated .wasm, another build\'s .wasm, a refused connection, a bad URL', async () => {
  const t = await loadError({ wasmUrl: `${base}/truncated.wasm` });
  assert.match(t.message, /truncated\.wasm: the module does not compile \(.+\)\. Fix: /);
  assert.equal(t.cause.kind, 'damaged');
  const m = await loadError({ wasmUrl: `${base}/mt.wasm` });
  assert.match(m.message, /mt\.wasm: it is WebAssembly, but of another build or attnwasm version \(it imports a memory: a pthreads build's \.wasm\)/);
  assert.match(m.message, FIX_URL);
  // A port nothing listens on.
  const closed = createServer();
  await new Promise((ok) => closed.listen(0, '127.0.0.1', ok));
  const port = closed.address().port;
  await new Promise((ok) => closed.close(ok));
  const r = await loadError({ wasmUrl: `http://127.0.0.1:${port}/attnwasm_core.wasm` });
  assert.match(r.message, new RegExp(`from http://127\\.0\\.0\\.1:${port}/attnwasm_core\\.wasm: the request failed \\(fetch failed\\)\\. Fix: `));
  assert.equal(r.status, undefined);
  assert.match((await loadError({ wasmUrl: 'http://[::1' })).message, /did not load from http:\/\/\[::1: not a valid URL\./);
});

test('files and bytes: no such file, not WebAssembly, the fix for each', async () => {
  const e = await loadError({ wasmUrl: 'no/such/attnwasm_core.wasm' });
  assert.match(e.message, /^attnwasm_core\.wasm did not load from no\/such\/attnwasm_core\.wasm: no such file\. Fix: init\(\{ wasmUrl \}\)/);
  assert.equal(e.url, 'no/such/attnwasm_core.wasm');
  const b = await loadError({ wasmBinary: new TextEncoder().encode('{"error": "not found"}') });
  assert.equal(b.message, 'attnwasm_core.wasm did not load from init({ wasmBinary }): not WebAssembly: the bytes start with '
    + '"{"error": "not found"}" where a .wasm starts with \\0asm. Fix: init({ wasmBinary }) must hold the bytes of '
    + 'attnwasm_core.wasm of this attnwasm version (node_modules/attnwasm/dist/attnwasm_core.wasm).');
  assert.equal(b.url, undefined);
  assert.match((await loadError({ wasmBinary: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9]) })).message, /the bytes start with 01 02 03 04 05 06 07 08 where/);
  await assert.rejects(init({ wasmBinary: 'AGFzbQ==' }), { name: 'TypeError', code: 'ERR_INVALID_TYPE', message: /^wasmBinary: expected bytes/ });
  await assert.rejects(init({ wasmUrl: 42 }), { name: 'TypeError', code: 'ERR_INVALID_TYPE', message: /^wasmUrl: expected a string or a URL, got number$/ });
});

test('after failed init() calls, init() with a correct wasmUrl works', async () => {
  await loadError({ wasmUrl: `${base}/missing.wasm` });
  await loadError({ wasmUrl: `${base}/spa-fallback.wasm` });
  const aw = await init({ wasmUrl: `${base}/ok.wasm` });
  const ref = await init({ threads: 1, relaxedSimd: false });  // the same build as ok.wasm
  const q = randomTensor([2, 3, 5, 8], 1);
  assert.deepEqual(aw.scaledDotProductAttention(q, q, q).output, ref.scaledDotProductAttention(q, q, q).output);
  assert.equal(aw.capabilities().build, 'single-thread');
});

test('application/wasm compiles by streaming; other types are checked, then compiled', async () => {
  const real = WebAssembly.compileStreaming;
  let streamed = 0;
  WebAssembly.compileStreaming = (...args) => { streamed++; return real(...args); };
  try {
    await init({ wasmUrl: `${base}/ok.wasm` });
    assert.equal(streamed, 1);
    await init({ wasmUrl: `${base}/octet.wasm` });
    assert.equal(streamed, 1);
  } finally {
    WebAssembly.compileStreaming = real;
  }
});

test('threads: a wrong .wasm the caller named rejects; the package\'s own pthreads .wasm missing falls back', async () => {
  const e = await loadError({ threads: 2, wasmUrl: `${base}/ok.wasm` });
  assert.match(e.message, /^attnwasm_core_mt\.wasm did not load from .*\/ok\.wasm: it is WebAssembly, but of another build or attnwasm version .* Fix: init\(\{ wasmUrl \}\) must be the URL of attnwasm_core_mt\.wasm itself/);
  const h = await loadError({ threads: 2, wasmUrl: `${base}/missing.wasm` });
  assert.match(h.message, /^attnwasm_core_mt\.wasm did not load from .*\/missing\.wasm: HTTP 404 Not Found\./);
  // A copy of the package without dist/attnwasm_core_mt.wasm, then also without attnwasm_core.wasm.
  const dir = mkdtempSync(join(tmpdir(), 'attnwasm-nowasm-'));
  try {
    for (const d of ['bindings', 'dist']) cpSync(join(ROOT, d), join(dir, d), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    // Both pthreads builds' .wasm (baseline and relaxed SIMD: this process's flags pick one).
    unlinkSync(join(dir, 'dist/attnwasm_core_mt.wasm'));
    unlinkSync(join(dir, 'dist/attnwasm_core_mt_rs.wasm'));
    const entry = new URL(`file://${join(dir, 'bindings/index.js')}`).href;
    const script = `
      const { init } = await import(${JSON.stringify(entry)});
      const out = {};
      try { out.caps = (await init({ threads: 2 })).capabilities(); } catch (e) { out.error = { code: e.code, message: e.message }; }
      console.log(JSON.stringify(out));`;
    const run = () => spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30000 });
    const r = run();
    assert.equal(r.status, 0, r.stderr);
    const { caps } = JSON.parse(r.stdout);
    assert.equal(caps.build, 'single-thread');
    assert.match(caps.threadsReason, /^attnwasm_core_mt\.wasm did not load \(file:\/\/.*\/dist\/attnwasm_core_mt\.wasm: no such file\); running the single-thread build$/);
    assert.equal(r.stderr, '');
    unlinkSync(join(dir, 'dist/attnwasm_core.wasm'));
    const s = run();
    const { error } = JSON.parse(s.stdout);
    assert.equal(error.code, 'ERR_WASM_LOAD');
    assert.match(error.message, /^attnwasm_core\.wasm did not load from file:\/\/.*\/dist\/attnwasm_core\.wasm: no such file\. Fix: reinstall attnwasm \(its dist\/attnwasm_core\.wasm is missing or damaged\), or pass init\(\{ wasmBinary \}\)\.$/);
    // Nothing of Emscripten's own abort reporting reaches the console.
    assert.equal(s.stderr, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
