// aw.loadModel from every kind of source (bindings/sources.js, checkpoint.js, model_loading.js): bytes, an
// ArrayBuffer, a view at an offset, a Node path, a file: URL, a Blob, a File, a Response (whole, or a
// ReadableStream body in awkward chunks: 1 byte, 7 bytes, chunks splitting the 8-byte header length, the
// header and rows), a ReadableStream, an http:// URL (also gzip-encoded: its Content-Length is no file
// size) and base URL (a local server), a data: URL, a folder path (and its file: URL) with
// config.json beside, a Map / object / File[] of names, a sharded checkpoint (index + 3 shards, one layer's
// tensors spread over all three) from a folder, a Map, an index path and a base URL. Every one must give
// the model of the plain bytes, bit for bit (forward's logits), and report progress that only grows, ends
// at loaded == total (the weight files' sizes; null when a stream does not say) and names the files.
// The checkpoint is ~35 MB so that the loader's 4 MiB chunks end inside a row of the embedding.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile, rm, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { init } from '../../bindings/index.js';
import { lmConfig, lmTensors, safetensors, sharded, sampleIds, sameBits } from './lm_checkpoint.mjs';

const aw = await init({ threads: 1 });
// hidden 40 (rows of 160 bytes in F32): 4 MiB = 26 214 rows + 64 bytes, so a chunk ends mid-row.
const config = lmConfig({ hidden: 40, inter: 100, vocab: 110_000, layers: 2, heads: 4, kvHeads: 2 });
const tensors = lmTensors(config, { seed: 11 });
const bytes = safetensors(tensors);
const configBytes = new TextEncoder().encode(JSON.stringify(config));
const shards = sharded(tensors, { shards: 3 });
const shardBytes = shards.names.map((n) => shards.files.get(n));
const shardTotal = shardBytes.reduce((a, b) => a + b.byteLength, 0);
const ids = sampleIds(config.vocab_size);
const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
const N = bytes.byteLength;

let dir, server, base, want, baseline;
before(async () => {
  // A folder name with a space and a non-ASCII letter: file: URLs of it are percent-encoded.
  dir = await mkdtemp(join(tmpdir(), 'attnwasm load ü-'));
  await mkdir(join(dir, 'single'));
  await mkdir(join(dir, 'sharded'));
  await writeFile(join(dir, 'single', 'model.safetensors'), bytes);
  await writeFile(join(dir, 'single', 'config.json'), configBytes);
  for (const [name, b] of shards.files) await writeFile(join(dir, 'sharded', name), b);
  await writeFile(join(dir, 'sharded', 'config.json'), configBytes);
  server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://x');
      const body = await readFile(join(dir, decodeURIComponent(url.pathname)));
      // ?gzip: compressed on the wire, Content-Length the compressed size (fetch hands over the file's bytes).
      const sent = url.search === '?gzip' ? gzipSync(body) : body;
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': sent.byteLength,
        ...(sent === body ? {} : { 'Content-Encoding': 'gzip' }) }).end(sent);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}/`;
  const lm = await aw.loadModel(bytes, { config });
  want = lm.forward(ids).logits;
  assert.deepEqual(want.shape, [2, 7, config.vocab_size]);
  assert.deepEqual(lm.weightTypes, { f32: lm.weightBytes });
  lm.dispose();
  baseline = aw.memory().inUseBytes;
});
after(async () => {
  server?.closeAllConnections?.();
  await new Promise((r) => (server ? server.close(r) : r()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A ReadableStream of `b` in chunks of the given sizes, then `tail`-byte chunks to the end. */
function chunked(b, sizes, tail = 1 << 20) {
  let at = 0, i = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= b.byteLength) return c.close();
      const n = i < sizes.length ? sizes[i++] : tail;
      c.enqueue(b.slice(at, Math.min(b.byteLength, at + n)));  // a copy: the loader may keep none of it
      at += n;
      return undefined;
    },
  });
}
/** Chunk sizes that split the 8-byte length (at 1 and 3), the header (in its middle and 3 bytes before its
 * end), cross into the data, then split elements and rows (7 bytes, 1 byte) before larger odd chunks. */
const AWKWARD = [1, 2, 7, (headerLength >> 1) - 2, headerLength - (headerLength >> 1) - 3, 8, ...Array(300).fill(7), ...Array(50).fill(1), 4099];

/**
 * Loads `source` with `options` (onProgress recorded), checks the logits against the plain bytes' bit for bit,
 * the progress events, fileBytes and the heap; returns the events.
 */
async function same(source, options, { total, files, size = total ?? N }) {
  const events = [];
  const lm = await aw.loadModel(source, { ...options, onProgress: (p) => events.push({ ...p }) });
  try {
    const got = lm.forward(ids).logits;
    assert.deepEqual(got.shape, want.shape);
    const diff = sameBits(got.data, want.data);
    assert.equal(diff, null, `logits differ from the plain bytes' at ${diff}`);
    assert.equal(lm.fileBytes, size, 'fileBytes: the weight files\' bytes');
    assert.ok(events.length >= 1, 'at least one progress event');
    for (let i = 0; i < events.length; i++) {
      const p = events[i];
      assert.deepEqual(Object.keys(p).sort(), ['file', 'loaded', 'total']);
      assert.equal(typeof p.file, 'string');
      if (i) assert.ok(p.loaded >= events[i - 1].loaded, `progress went back: ${events[i - 1].loaded} → ${p.loaded}`);
      assert.equal(p.total, total, 'total: the files\' bytes, or null');
      if (total !== null) assert.ok(p.loaded <= total);
    }
    assert.equal(events.at(-1).loaded, lm.fileBytes, 'the last event: every byte');
    if (total !== null) assert.equal(events.at(-1).loaded, total);
    const named = [...new Set(events.map((e) => e.file))];
    if (typeof files === 'function') files(named);
    else assert.deepEqual(named, files, 'the files named, in order');
  } finally {
    lm.dispose();
  }
  assert.equal(aw.memory().inUseBytes, baseline, 'nothing left in the heap after dispose()');
  return events;
}

const one = { total: N, files: ['source'] };
const quotedPath = (named) => assert.ok(named.length === 1 && named[0].includes('model.safetensors'), `named ${named}`);

test('the checkpoint is what the test needs: F32 rows of 160 bytes, over several 4 MiB chunks', () => {
  assert.ok(N > 32 * 2 ** 20, `${N} bytes`);
  assert.ok(headerLength > 20, 'a header long enough to split');
});

test('bytes: a Uint8Array, an ArrayBuffer, a view at an offset in a larger buffer, a DataView', async () => {
  await same(bytes, { config }, one);
  await same(bytes.slice().buffer, { config }, one);
  const big = new Uint8Array(N + 11);
  big.set(bytes, 5);
  await same(big.subarray(5, 5 + N), { config }, one);
  await same(new DataView(big.buffer, 5, N), { config }, one);
});

test('a Node path, a file: URL (object and string) of a folder whose name needs percent-encoding', async () => {
  const path = join(dir, 'single', 'model.safetensors');
  await same(path, { config }, { total: N, files: quotedPath });
  await same(pathToFileURL(path), { config }, { total: N, files: quotedPath });
  await same(pathToFileURL(path).href, { config }, { total: N, files: quotedPath });
});

test('a Blob, a File', async () => {
  await same(new Blob([bytes]), { config }, one);
  await same(new File([bytes], 'whatever.bin'), { config }, one);
});

test('a Response: whole bytes, a Blob body, a stream body (with and without Content-Length)', async () => {
  // new Response(bytes) has no Content-Length header: its size is not known, total is null.
  const events = await same(new Response(bytes), { config }, { total: null, files: ['source'] });
  assert.ok(events.length >= 3, `progress as each 4 MiB chunk goes in: ${events.length} event(s)`);
  await same(new Response(new Blob([bytes])), { config }, { total: null, files: ['source'] });
  await same(new Response(chunked(bytes, AWKWARD)), { config }, { total: null, files: ['source'] });
  await same(new Response(chunked(bytes, AWKWARD), { headers: { 'Content-Length': String(N) } }), { config }, one);
});

test('a ReadableStream in awkward chunks: 1 and 7 bytes, splitting the length, the header and rows; ArrayBuffer and DataView chunks', async () => {
  await same(chunked(bytes, AWKWARD), { config }, { total: null, files: ['source'] });
  await same(chunked(bytes, [], 7 * 4099), { config }, { total: null, files: ['source'] });  // every chunk odd
  // The first 600 bytes one at a time (every boundary of the length and the header), then 1 MiB.
  await same(chunked(bytes, Array(headerLength + 600).fill(1)), { config }, { total: null, files: ['source'] });
  // Chunks as ArrayBuffers and as DataViews at an offset (a stream may give any BufferSource).
  const kinds = chunked(bytes, AWKWARD).pipeThrough(new TransformStream({
    transform(c, out) {
      const k = (this.n = (this.n ?? 0) + 1) % 3;
      if (k === 0) return out.enqueue(c);
      if (k === 1) return out.enqueue(c.slice().buffer);
      const padded = new Uint8Array(c.byteLength + 3);
      padded.set(c, 3);
      return out.enqueue(new DataView(padded.buffer, 3, c.byteLength));
    },
  }));
  await same(kinds, { config }, { total: null, files: ['source'] });
});

test('a folder: its path (config.json read from beside the weights), its file: URL, a Map, an object, File[]', async () => {
  const files = ['model.safetensors'];
  await same(join(dir, 'single'), {}, { total: N, files });
  await same(join(dir, 'single') + '/', {}, { total: N, files });
  await same(pathToFileURL(join(dir, 'single')), {}, { total: N, files });
  await same(new Map([['model.safetensors', bytes], ['config.json', configBytes]]), {}, { total: N, files });
  await same({ 'model.safetensors': new Blob([bytes]), 'config.json': new Blob([configBytes]) }, {}, { total: N, files });
  await same([new File([bytes], 'model.safetensors'), new File([configBytes], 'config.json')], {}, { total: N, files });
  // A Map's keys may carry a folder (a picker's relative path): the name is what counts.
  await same(new Map([['ckpt/model.safetensors', bytes], ['ckpt/config.json', configBytes]]), {}, { total: N, files });
  // The config option wins over the folder's.
  await same(new Map([['model.safetensors', bytes], ['config.json', new TextEncoder().encode('{}')]]), { config }, { total: N, files });
});

test('sharded (index + 3 shards, one layer over all three): a folder path, a Map, an object, an index path', async () => {
  const layer0 = Object.entries(shards.index.weight_map).filter(([k]) => k.startsWith('model.layers.0.'));
  assert.equal(new Set(layer0.map(([, v]) => v)).size, 3, 'layer 0 is spread over the three shards');
  const expect = { total: shardTotal, files: shards.names };
  await same(join(dir, 'sharded'), {}, expect);
  await same(new Map([...shards.files, ['config.json', configBytes]]), {}, expect);
  // Streams as shards: sizes unknown, total null.
  const streams = new Map(shards.names.map((n, i) => [n, chunked(shardBytes[i], [1, 7, 3, 5], 9973)]));
  streams.set('model.safetensors.index.json', shards.files.get('model.safetensors.index.json'));
  await same(streams, { config }, { total: null, files: shards.names, size: shardTotal });
  await same(Object.fromEntries([...shards.files].map(([k, v]) => [k, new Blob([v])])), { config }, expect);
  await same(join(dir, 'sharded', 'model.safetensors.index.json'), { config }, expect);
  await same(pathToFileURL(join(dir, 'sharded', 'model.safetensors.index.json')), { config }, expect);
});

test('over http (Node fetch, a local server): a file URL, gzip on the wire, a base URL of a single file and of a sharded folder, a data: URL', async () => {
  await same(`${base}single/model.safetensors`, { config }, one);
  await same(new URL(`${base}single/model.safetensors`), { config }, one);
  await same(`${base}single/`, {}, { total: N, files: ['model.safetensors'] });
  await same(`${base}sharded/`, {}, { total: shardTotal, files: shards.names });
  await same(`${base}sharded/model.safetensors.index.json`, { config }, { total: shardTotal, files: shards.names });
  await same(await fetch(`${base}single/model.safetensors`), { config }, one);
  // Gzip on the wire: Content-Length counts the compressed bytes, so it is no size of the file (total null).
  await same(`${base}single/model.safetensors?gzip`, { config }, { total: null, files: ['source'] });
  // A data: URL (fetched).
  const small = lmConfig({ hidden: 40, inter: 100, vocab: 77 });
  const sb = safetensors(lmTensors(small, { seed: 5 }));
  const a = await aw.loadModel(sb, { config: small });
  const b = await aw.loadModel(`data:application/octet-stream;base64,${Buffer.from(sb).toString('base64')}`, { config: small });
  const sid = sampleIds(77);
  assert.equal(sameBits(a.forward(sid).logits.data, b.forward(sid).logits.data), null);
  a.dispose();
  b.dispose();
});

test('several loads at once from different sources give the same model', async () => {
  const loads = [bytes, new Blob([bytes]), chunked(bytes, AWKWARD), join(dir, 'single', 'model.safetensors')]
    .map((s) => aw.loadModel(s, { config }));
  const sharded3 = aw.loadModel(join(dir, 'sharded'));
  for (const lm of [...await Promise.all(loads), await sharded3]) {
    assert.equal(sameBits(lm.forward(ids).logits.data, want.data), null);
    lm.dispose();
  }
  assert.equal(aw.memory().inUseBytes, baseline);
});
