// aw.loadModel streaming in headless Chromium (bindings/sources.js, checkpoint.js, model_loading.js), from a
// local server: a base URL of a sharded folder (index + 3 shards + config.json, one layer's tensors spread
// over the three; its absent tokenizer files answered 403 as S3 does) and of a single-file folder (absent
// files 404), a relative base URL, a fetch() Response streamed, a File[]
// (what a folder picker gives), a blob: URL, and a gzip-encoded response (its Content-Length counts the
// compressed bytes). Each with onProgress (monotonic, ending at loaded == total == the weight files'
// bytes, naming the files) and the logits' SHA-256 equal to Node's for the same files and the same build
// (the relaxed-SIMD one when this Node runs it, else the baseline: builds may differ from each other). The
// checkpoint (~19 MB, BF16 matrices: rows of 80 bytes) is larger than one 16 MiB chunk. Then a missing
// shard (404) rejects naming the shard and its URL, the heap is as before, and the page still loads.
// Node's side: tests/js/load_sources.test.mjs, load_hostile.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { init } from '../../bindings/index.js';
import { RELAXED_SIMD_SUPPORTED } from '../../bindings/wasm_load.js';
import { lmConfig, lmTensors, safetensors, sharded, sampleIds } from '../js/lm_checkpoint.mjs';
import { launchChromium } from './chromium.mjs';
import { startStatic } from './static_server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const config = lmConfig({ hidden: 40, inter: 100, vocab: 120_000, layers: 2, heads: 4, kvHeads: 2 });
const tensors = lmTensors(config, { seed: 31, exact: 'BF16' });
const single = safetensors(tensors, { dtype: 'BF16' });
const sh = sharded(tensors, { shards: 3, dtype: 'BF16' });
const shardTotal = sh.names.reduce((a, n) => a + sh.files.get(n).byteLength, 0);
const configText = JSON.stringify(config);
const ids = sampleIds(config.vocab_size);

const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm load stream</title>
<script type="module">
import { init } from '/bindings/index.js';
const hex = async (f32) => [...new Uint8Array(await crypto.subtle.digest('SHA-256', f32))].map((b) => b.toString(16).padStart(2, '0')).join('');
window.run = async ({ relaxedSimd, ids, shape, config, shards }) => {
  const aw = await init({ threads: 1, relaxedSimd });
  const input = { data: Int32Array.from(ids), shape };
  const out = { relaxedSimd: aw.capabilities().relaxedSimd, cases: {} };
  let baseline = null;
  const one = async (name, source, options = {}) => {
    const events = [];
    try {
      const lm = await aw.loadModel(source, { ...options, onProgress: (p) => events.push({ ...p }) });
      const logits = lm.forward(input).logits.data;
      out.cases[name] = {
        hash: await hex(logits), fileBytes: lm.fileBytes, weightTypes: lm.weightTypes, events: events.length,
        monotonic: events.every((e, i) => !i || e.loaded >= events[i - 1].loaded), last: events.at(-1),
        totals: [...new Set(events.map((e) => e.total))], files: [...new Set(events.map((e) => e.file))],
      };
      lm.dispose();
    } catch (e) {
      out.cases[name] = { error: e.message, code: e.code, name: e.name, url: e.url, status: e.status };
    }
    const inUse = aw.memory().inUseBytes;
    baseline ??= inUse;
    out.cases[name].leaked = inUse - baseline;
  };
  const origin = location.origin;
  await one('base URL, sharded', origin + '/ckpt/sharded/');
  await one('base URL, single file', origin + '/ckpt/single/');
  await one('relative base URL, sharded', '/ckpt/sharded/');
  await one('fetch Response', await fetch('/ckpt/single/model.safetensors'), { config });
  const files = await Promise.all([...shards, 'model.safetensors.index.json', 'config.json'].map(async (n) =>
    new File([await (await fetch('/ckpt/sharded/' + n)).blob()], n)));
  await one('File[] of a sharded folder', files);
  const blob = await (await fetch('/ckpt/single/model.safetensors')).blob();
  const blobUrl = URL.createObjectURL(blob);
  await one('blob: URL', blobUrl, { config });
  URL.revokeObjectURL(blobUrl);
  await one('gzip-encoded response', '/ckpt/gzip/model.safetensors', { config });
  await one('missing shard', origin + '/ckpt/noshard/');
  await one('after the failure', origin + '/ckpt/sharded/');
  await aw.close();
  return out;
};
window.ready = true;
</script>`;

const bin = (body) => ({ type: 'application/octet-stream', body, headers: { 'Content-Length': String(body.byteLength) } });
const routes = { '/': { type: 'text/html; charset=utf-8', body: PAGE } };
for (const [n, b] of sh.files) routes[`/ckpt/sharded/${n}`] = bin(b);
routes['/ckpt/sharded/config.json'] = bin(new TextEncoder().encode(configText));
routes['/ckpt/single/model.safetensors'] = bin(single);
routes['/ckpt/single/config.json'] = bin(new TextEncoder().encode(configText));
// Absent side files: 404 in the single-file folder; elsewhere the server's 403 (what S3 answers for a key
// that is not there), also taken as absent for an optional file.
for (const n of ['model.safetensors.index.json', 'tokenizer.json', 'tokenizer_config.json']) routes[`/ckpt/single/${n}`] = { status: 404, body: 'not found' };
const gz = gzipSync(single);
routes['/ckpt/gzip/model.safetensors'] = { type: 'application/octet-stream', body: gz, headers: { 'Content-Encoding': 'gzip', 'Content-Length': String(gz.byteLength) } };
for (const [n, b] of sh.files) if (n !== sh.names[1]) routes[`/ckpt/noshard/${n}`] = bin(b);
routes['/ckpt/noshard/config.json'] = bin(new TextEncoder().encode(configText));
routes[`/ckpt/noshard/${sh.names[1]}`] = { status: 404, body: 'not found' };

let server, browser;
before(async () => {
  server = await startStatic({ root: ROOT, allow: ['bindings', 'dist'], routes });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('Chromium streams a checkpoint from a base URL, a Response, File[], a blob: URL and gzip: Node\'s logits, progress, no leak', async () => {
  // Node's logits for the same files, in the build the page will run.
  const aw = await init({ threads: 1, relaxedSimd: RELAXED_SIMD_SUPPORTED });
  const lm = await aw.loadModel(single, { config });
  const logits = lm.forward(ids).logits.data;
  const want = createHash('sha256').update(new Uint8Array(logits.buffer, logits.byteOffset, logits.byteLength)).digest('hex');
  lm.dispose();
  await aw.close();

  const page = await browser.context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/40[34]/.test(m.text())) problems.push(`console: ${m.text()}`); });
  try {
    await page.goto(server.url);
    await page.waitForFunction(() => window.ready === true);
    const r = await page.evaluate((a) => window.run(a), {
      relaxedSimd: RELAXED_SIMD_SUPPORTED, ids: [...ids.data], shape: ids.shape, config, shards: sh.names,
    });
    assert.equal(r.relaxedSimd, RELAXED_SIMD_SUPPORTED, 'the page runs the build Node runs');
    const N = single.byteLength;
    const expect = {
      'base URL, sharded': { total: shardTotal, files: sh.names },
      'base URL, single file': { total: N, files: ['model.safetensors'] },
      'relative base URL, sharded': { total: shardTotal, files: sh.names },
      'fetch Response': { total: N, files: ['source'] },
      'File[] of a sharded folder': { total: shardTotal, files: sh.names },
      'blob: URL': { total: N, files: ['source'] },
      'gzip-encoded response': { total: null, files: ['source'] },  // Content-Length counts the compressed bytes
      'after the failure': { total: shardTotal, files: sh.names },
    };
    for (const [name, e] of Object.entries(expect)) {
      const c = r.cases[name];
      assert.equal(c.error, undefined, `${name}: ${c.error}`);
      assert.equal(c.hash, want, `${name}: logits differ from Node's`);
      assert.deepEqual(c.weightTypes && Object.keys(c.weightTypes).sort(), ['bf16', 'f32'], `${name}: kept as stored`);
      assert.equal(c.fileBytes, e.total ?? N, `${name}: fileBytes`);
      assert.ok(c.monotonic, `${name}: progress only grows`);
      assert.deepEqual(c.totals, [e.total], `${name}: total`);
      assert.equal(c.last.loaded, c.fileBytes, `${name}: the last event has every byte`);
      assert.deepEqual(c.files, e.files, `${name}: the files named`);
      assert.ok(c.events >= (e.files.length > 1 ? 3 : 2), `${name}: ${c.events} progress event(s)`);
      assert.equal(c.leaked, 0, `${name}: heap in use after dispose()`);
    }
    const m = r.cases['missing shard'];
    assert.equal(m.name, 'AttnWasmError');
    assert.equal(m.code, 'ERR_INVALID_ARGUMENT');
    assert.equal(m.status, 404);
    assert.equal(m.error, `source: ${sh.names[1]}: fetching '${server.url}ckpt/noshard/${sh.names[1]}' gave HTTP 404`);
    assert.equal(m.leaked, 0, 'a failed load leaves nothing in the heap');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
