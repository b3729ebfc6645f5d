// Issue 37 in Chromium, with the page collecting garbage every millisecond (--js-flags=--expose-gc). (1) Picked
// files (an <input type=file> given real files from disk: 2 BF16 shards of ~10 MB, the index, config.json) read
// to their end by sources.js alone, no timer and no signal, in a task nothing refers to: Chromium drops a
// Blob.stream() BYOB read that nothing holds while it is pending, and it never settles (the open page's
// picked-file hang); with the hold in bindings/sources.js every read ends (without it, 12 of 12 never did).
// (2) The same files loaded 6 times as a user loads them: each ends, with Node's logits; an AbortSignal ends a
// load. (3) A base URL and File[] whose shard index names a file outside the folder: ERR_UNSAFE_PATH, the server
// never asked for it. (4) Through attnwasm/worker: an onProgress that throws rejects the load with its error (no
// uncaught error on the page), and close() while a download waits for its next bytes rejects the load with
// ERR_CLOSED.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { RELAXED_SIMD_SUPPORTED } from '../../bindings/wasm_load.js';
import { lmConfig, lmTensors, sharded, sampleIds } from '../js/lm_checkpoint.mjs';
import { launchChromium } from './chromium.mjs';
import { startStatic } from './static_server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LOADS = 6;
const config = lmConfig({ hidden: 40, inter: 100, vocab: 120_000, layers: 2, heads: 4, kvHeads: 2 });
const sh = sharded(lmTensors(config, { seed: 37, exact: 'BF16' }), { shards: 2, dtype: 'BF16' });
const INDEX = 'model.safetensors.index.json';
const ids = sampleIds(config.vocab_size);
const enc = (o) => new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o));
const escapeIndex = enc({ weight_map: Object.fromEntries(Object.entries(sh.index.weight_map).map(([t, f]) => [t, f === sh.names[1] ? '../private/model.safetensors' : f])) });

const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm loads that end</title>
<input type="file" id="pick" multiple>
<script type="module">
import { init } from '/bindings/index.js';
import { createWorker } from '/bindings/worker.js';
const hex = async (f32) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', f32))].map((b) => b.toString(16).padStart(2, '0')).join('');
const err = (e) => ({ name: e.name, code: e.code, message: e.message });
window.pageErrors = [];
window.addEventListener('error', (e) => window.pageErrors.push(e.message));
window.addEventListener('unhandledrejection', (e) => window.pageErrors.push(String(e.reason?.message ?? e.reason)));
window.picked = async ({ relaxedSimd, ids, shape, loads }) => {
  const files = document.getElementById('pick').files;
  const aw = await init({ threads: 1, relaxedSimd });
  const input = { data: Int32Array.from(ids), shape };
  const gc = setInterval(() => self.gc(), 1);
  const out = [];
  try {
    for (let i = 0; i < loads; i++) {
      // No read timeout (its timer would keep the read alive too): only the hold in sources.js does. The
      // watchdog refers to nothing of the load, as the open page's wait for its worker did not.
      const t0 = performance.now();
      out.push(await new Promise((resolve) => {
        const watchdog = setTimeout(() => resolve({ error: { name: 'hang', message: 'the load never settled' } }), 20000);
        aw.loadModel(files, { readTimeoutMs: Infinity }).then(async (lm) => {
          const hash = await hex(lm.forward(input).logits.data);
          lm.dispose();
          resolve({ hash });
        }, (e) => resolve({ error: err(e) })).finally(() => clearTimeout(watchdog));
      }));
      out.at(-1).ms = performance.now() - t0;
    }
  } finally {
    clearInterval(gc);
  }
  const aborted = new AbortController();
  const abortedLoad = aw.loadModel(files, { signal: aborted.signal, onProgress: () => aborted.abort() }).then(() => null, err);
  const leakedBefore = aw.memory().inUseBytes;
  const escapes = {
    'base URL': await aw.loadModel('/ckpt/escape/').then(() => null, err),
    'File[]': await aw.loadModel([...files].filter((f) => f.name !== '${INDEX}').concat(new File([await (await fetch('/ckpt/escape/${INDEX}')).blob()], '${INDEX}'))).then(() => null, err),
  };
  const result = { loads: out, aborted: await abortedLoad, escapes, leaked: aw.memory().inUseBytes - leakedBefore };
  await aw.close();
  return result;
};
// Each picked file read to its end by sources.js alone, no timer and no signal, while the page collects garbage:
// the reading runs in a task nothing refers to (as the worker's read did, waiting on a page that waited on it);
// a poll that refers only to its progress says whether it ended.
window.readAll = async ({ rounds }) => {
  const files = document.getElementById('pick').files;
  const { openSource } = await import('/bindings/sources.js');
  const gc = setInterval(() => self.gc(), 1);
  const out = [];
  try {
    for (let i = 0; i < rounds; i++) {
      for (const f of files) {
        const seen = { last: performance.now(), bytes: 0, done: false };
        (async () => {
          const src = await openSource(f, f.name, { readTimeoutMs: 0 });
          for await (const c of src.chunks()) { seen.bytes += c.byteLength; seen.last = performance.now(); }
          seen.done = true;
        })();
        out.push(await new Promise((resolve) => {
          const poll = setInterval(() => {
            if (!seen.done && performance.now() - seen.last < 5000) return;
            clearInterval(poll);
            resolve({ file: f.name, ended: seen.done, bytes: seen.bytes, size: f.size });
          }, 20);
        }));
      }
    }
  } finally {
    clearInterval(gc);
  }
  return out;
};
window.worker = async () => {
  const files = document.getElementById('pick').files;
  const rt = await createWorker({ threads: 1 });
  const thrown = await rt.loadModel(files, { onProgress: () => { throw new RangeError('progress bar broke'); } }).then(() => null, err);
  await new Promise((r) => setTimeout(r, 200));
  // A download that stalls halfway: close() while the worker waits for its next bytes.
  const closing = rt.loadModel('/ckpt/stall/', { onProgress: () => { rt.close(); } }).then(() => null, err);
  return { thrown, closed: await closing, pageErrors: window.pageErrors };
};
window.ready = true;
</script>`;

const bin = (body) => ({ type: 'application/octet-stream', body, headers: { 'Content-Length': String(body.byteLength) } });
const routes = { '/': { type: 'text/html; charset=utf-8', body: PAGE } };
routes[`/ckpt/escape/${INDEX}`] = bin(escapeIndex);
routes['/ckpt/escape/config.json'] = bin(enc(config));
routes[`/ckpt/escape/${sh.names[0]}`] = bin(sh.files.get(sh.names[0]));
routes['/ckpt/private/model.safetensors'] = bin(sh.files.get(sh.names[1]));
routes['/ckpt/stall/config.json'] = bin(enc(config));
routes[`/ckpt/stall/${INDEX}`] = bin(enc(sh.index));
routes[`/ckpt/stall/${sh.names[0]}`] = bin(sh.files.get(sh.names[0]));
routes[`/ckpt/stall/${sh.names[1]}`] = (req, res) => {  // half the shard, then nothing (the connection stays open)
  const b = sh.files.get(sh.names[1]);
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(b.byteLength) });
  res.write(b.subarray(0, b.byteLength >> 1));
};

let server, browser, dir;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'attnwasm-picked-'));
  for (const [n, b] of sh.files) await writeFile(join(dir, n), b);
  await writeFile(join(dir, 'config.json'), enc(config));
  server = await startStatic({ root: ROOT, allow: ['bindings', 'dist', 'node_modules'], routes });
  browser = await launchChromium({ extraArgs: ['--js-flags=--expose-gc'] });
});
after(async () => {
  await browser?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function pickedPage() {
  const page = await browser.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(server.url);
  await page.waitForFunction(() => window.ready === true);
  await page.setInputFiles('#pick', [...sh.files.keys(), 'config.json'].map((n) => join(dir, n)));
  return { page, problems };
}

test('picked files read to their end while the page collects garbage every millisecond (the hold in sources.js)', async () => {
  const { page, problems } = await pickedPage();
  try {
    const r = await page.evaluate(() => window.readAll({ rounds: 3 }));
    assert.equal(r.length, 3 * (sh.files.size + 1), "every picked file, three times");
    for (const f of r) assert.ok(f.ended && f.bytes === f.size, `${f.file}: ${f.ended ? 'ended' : 'never settled'} after ${f.bytes} of ${f.size} bytes`);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test(`picked files load ${LOADS} times while the page collects garbage every millisecond: each ends, with Node's logits`, async () => {
  const aw = await init({ threads: 1, relaxedSimd: RELAXED_SIMD_SUPPORTED });
  const lm = await aw.loadModel(dir);
  const logits = lm.forward(ids).logits.data;
  const want = createHash('sha256').update(new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength)).digest('hex');
  await aw.close();
  const { page, problems } = await pickedPage();
  try {
    const seen = server.requests.length;
    const r = await page.evaluate((a) => window.picked(a), { relaxedSimd: RELAXED_SIMD_SUPPORTED, ids: [...ids.data], shape: ids.shape, loads: LOADS });
    r.loads.forEach((l, i) => assert.equal(l.error, undefined, `load ${i + 1}: ${JSON.stringify(l.error)} after ${l.ms} ms`));
    r.loads.forEach((l, i) => assert.equal(l.hash, want, `load ${i + 1}: logits differ from Node's`));
    assert.equal(r.aborted?.name, 'AbortError', `an aborted load: ${JSON.stringify(r.aborted)}`);
    for (const [entry, e] of Object.entries(r.escapes)) {
      assert.equal(e?.code, 'ERR_UNSAFE_PATH', `${entry}: ${JSON.stringify(e)}`);
      assert.match(e.message, /"\.\.\/private\/model\.safetensors" \(a '\.\.' segment\)/);
    }
    assert.deepEqual(server.requests.slice(seen).filter((p) => p.includes('private')), [], 'nothing outside the folder was asked for');
    assert.equal(r.leaked, 0, 'the failed loads kept nothing');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('through attnwasm/worker: a throwing onProgress rejects the load with its error, close() during a load rejects it', async () => {
  const { page, problems } = await pickedPage();
  try {
    const r = await page.evaluate(() => window.worker());
    assert.deepEqual(r.thrown, { name: 'RangeError', code: undefined, message: 'progress bar broke' });
    assert.equal(r.closed?.code, 'ERR_CLOSED', JSON.stringify(r.closed));
    assert.deepEqual(r.pageErrors, [], 'no uncaught error on the page');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
