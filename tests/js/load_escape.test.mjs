// Issue 37's hostile run, generated: every file a load reads stays inside its folder, on every kind of source,
// and every load ends when asked. (1) Each name of ESCAPES written into model.safetensors.index.json's weight_map,
// loaded through each of the seven entry points (a Node folder path, a Node index path, a base URL, an index URL,
// File[], an object of files, a Map of files) and as sentence-transformers' modules.json "path" (a Node folder, a
// base URL, a Map): ERR_UNSAFE_PATH naming the name; the server never sees a request outside the folder. (2) data:
// URLs are one file whatever they end with. (3) Loads that end: an AbortSignal (before, at the first progress
// report, while a stream waits), close() (at the first of three shards, while a stream waits), an onProgress that
// throws, a stalled stream or server against readTimeoutMs. After every case the heap's bytes in use are what they
// were before it, and the same runtime (or a new one, after close) loads and runs the good checkpoint.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile, rm, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init } from '../../bindings/index.js';
import { lmConfig, lmTensors, safetensors, sharded, sampleIds, sameBits } from './lm_checkpoint.mjs';
import { encoderFolder, writeFolder } from './embedder_checkpoint.mjs';

const INDEX = 'model.safetensors.index.json';
const config = lmConfig({ hidden: 40, inter: 100, vocab: 77 });
const sh = sharded(lmTensors(config, { seed: 4 }), { shards: 2 });
const single = safetensors(lmTensors(config, { seed: 4 }));  // the same weights in one file
const ids = sampleIds(77);
const enc = (o) => new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o));
const configBytes = enc(config);

let dir, server, base, requests, aw, want;
/** Names that leave the folder: relative, absolute, URLs of every scheme, hosts, percent-encoded forms, a NUL. */
let ESCAPES;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'attnwasm-escape-'));
  await mkdir(join(dir, 'private'));
  await writeFile(join(dir, 'private', 'model.safetensors'), sh.files.get(sh.names[1]));
  ESCAPES = [
    '../private/model.safetensors', '../../private/model.safetensors', 'sub/../../private/model.safetensors', '..',
    '/etc/passwd', join(dir, 'private', 'model.safetensors'), '\\..\\private\\model.safetensors', '..\\private\\x',
    'C:\\Windows\\x.safetensors', 'c:x', 'https://evil.example/model.safetensors', 'file:///etc/passwd',
    'data:application/octet-stream;base64,AAAA', 'blob:http://127.0.0.1/1', '//evil.example/model.safetensors',
    '%2e%2e/private/model.safetensors', '%2E%2E%2Fprivate%2Fmodel.safetensors', '%252e%252e%252fprivate%252fmodel.safetensors',
    '..%2fprivate%2fmodel.safetensors', 'x\u0000y.safetensors', '%', '',
  ];
  requests = [];
  server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(path);
    if (path.startsWith('/stall/')) return undefined;  // never answers
    try {
      const body = await readFile(join(dir, path));
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.byteLength }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
    return undefined;
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}/`;
  aw = await init({ threads: 1 });
  const lm = await aw.loadModel(folderMap(sh.names[1]));
  want = lm.forward(ids).logits.data;
  lm.dispose();
});
after(async () => {
  await aw?.close();
  server?.closeAllConnections?.();
  await new Promise((r) => (server ? server.close(r) : r()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The index with the second shard's tensors named in `shard2` (the hostile name). */
const indexNaming = (shard2) => {
  const map = {};
  for (const [t, f] of Object.entries(sh.index.weight_map)) map[t] = f === sh.names[1] ? shard2 : f;
  return enc({ metadata: sh.index.metadata, weight_map: map });
};
/** The checkpoint's files as a Map, its index naming `shard2`. */
function folderMap(shard2) {
  const m = new Map([['config.json', configBytes], [INDEX, indexNaming(shard2)], [sh.names[0], sh.files.get(sh.names[0])]]);
  if (shard2 === sh.names[1]) m.set(sh.names[1], sh.files.get(sh.names[1]));
  return m;
}
let folders = 0;
/** A folder on disk (also served over HTTP) with the checkpoint, its index naming `shard2`; its name. */
async function folderOnDisk(shard2) {
  const name = `ckpt${folders++}`;
  await mkdir(join(dir, name));
  for (const [n, b] of folderMap(shard2)) await writeFile(join(dir, name, n), b);
  return name;
}

/**
 * Runs a load that must fail — with `code` (and a message matching `pattern`), or as `code` (a function) says —
 * then checks that nothing was read outside the folder and that the heap was given back.
 */
async function refused(load, code, pattern, rt = aw) {
  const inUse = rt.memory().inUseBytes;
  const seen = requests.length;
  await assert.rejects(load, (e) => {
    if (typeof code === 'function') return code(e);
    assert.equal(e.code, code, `${e.code}: ${e.message}`);
    if (pattern) assert.match(e.message, pattern);
    return true;
  });
  assert.deepEqual(requests.slice(seen).filter((p) => p.includes('private') || p.includes('etc')), [], 'no request outside the folder');
  assert.equal(rt.memory().inUseBytes, inUse, 'the heap is given back');
}

async function stillWorks(rt = aw) {
  const lm = await rt.loadModel(folderMap(sh.names[1]));
  assert.equal(sameBits(lm.forward(ids).logits.data, want), null);
  lm.dispose();
}

const quoted = (name) => new RegExp(`got ${JSON.stringify(name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|got ''`);

test('a shard index naming a file outside its folder: ERR_UNSAFE_PATH on all seven entry points, nothing read', async () => {
  let cases = 0;
  for (const name of ESCAPES) {
    const folder = await folderOnDisk(name);
    const entries = {
      'Node folder path': join(dir, folder),
      'Node index path': join(dir, folder, INDEX),
      'base URL': `${base}${folder}/`,
      'index URL': `${base}${folder}/${INDEX}`,
      'File[]': [...folderMap(name)].map(([n, b]) => new File([b], n)),
      'object of files': Object.fromEntries(folderMap(name)),
      'Map of files': folderMap(name),
    };
    for (const [entry, source] of Object.entries(entries)) {
      await refused(aw.loadModel(source, { config }), 'ERR_UNSAFE_PATH', quoted(name)).catch((e) => {
        e.message = `${entry}, ${JSON.stringify(name)}: ${e.message}`;
        throw e;
      });
      cases++;
    }
  }
  assert.equal(cases, ESCAPES.length * 7);
  await stillWorks();
});

test("sentence-transformers' modules.json naming a module folder outside its folder: ERR_UNSAFE_PATH", async () => {
  for (const path of ['../private', '/etc', '%2e%2e/private', 'https://evil.example/p', '1_Pooling/../../private']) {
    const modules = [{ idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
      { idx: 1, name: '1', path, type: 'sentence_transformers.models.Pooling' }];
    const files = encoderFolder({ extra: { 'modules.json': modules } });
    const name = `st${folders++}`;
    writeFolder(join(dir, name), files);
    for (const source of [join(dir, name), `${base}${name}/`, files]) {
      await refused(aw.loadModel(source), 'ERR_UNSAFE_PATH', /modules|folder/);
    }
  }
});

test('a data: URL is one file, whatever its text ends with: never a folder or an index', async () => {
  const seen = requests.length;
  for (const url of ['data:application/octet-stream;base64,AAAA/', 'data:text/plain,abc/', 'data:,x.index.json']) {
    await assert.rejects(aw.loadModel(url, { config }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && !/folder|index/.test(e.message));
  }
  assert.deepEqual(requests.slice(seen), [], 'no request made for a data: URL');
});

/** A ReadableStream of `bytes` that gives `stopAt` bytes, then waits forever (never closes, never errors). */
function stallingStream(bytes, stopAt) {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= stopAt) return new Promise(() => {});
      const n = Math.min(4096, stopAt - at);
      c.enqueue(bytes.slice(at, at + n));
      at += n;
      return undefined;
    },
  });
}

test('loadModel({ signal }): aborted before, at the first progress report, while a stream waits: rejects with its reason', async () => {
  const reason = new Error('changed my mind');
  const c1 = new AbortController();
  c1.abort(reason);
  await refused(aw.loadModel(folderMap(sh.names[1]), { signal: c1.signal }), (e) => e === reason);
  const c2 = new AbortController();
  await refused(aw.loadModel(folderMap(sh.names[1]), { signal: c2.signal, onProgress: () => c2.abort() }), (e) => e.name === 'AbortError');
  const c3 = new AbortController();
  const waiting = aw.loadModel(stallingStream(single, single.byteLength >> 1), { config, signal: c3.signal });
  setTimeout(() => c3.abort(reason), 50);
  await refused(waiting, (e) => e === reason);
  await assert.rejects(aw.loadModel(folderMap(sh.names[1]), { signal: 'yes' }), (e) => e.code === 'ERR_INVALID_TYPE' && /signal: expected an AbortSignal/.test(e.message));
  await stillWorks();
});

test('an onProgress that throws rejects the load with its error, and nothing is kept', async () => {
  const boom = new Error('progress bar broke');
  await refused(aw.loadModel(folderMap(sh.names[1]), { onProgress: () => { throw boom; } }), (e) => e === boom);
  await stillWorks();
});

test('readTimeoutMs: a stream or a server that stalls ends the load with ERR_TIMEOUT naming the source', async () => {
  await refused(aw.loadModel(stallingStream(single, 1000), { config, readTimeoutMs: 200 }), 'ERR_TIMEOUT', /source: .*no bytes arrived for 0\.2 s after \d+ bytes/);
  await refused(aw.loadModel(`${base}stall/model.safetensors`, { config, readTimeoutMs: 200 }), 'ERR_TIMEOUT', /did not answer within 0\.2 s/);
  await assert.rejects(aw.loadModel(single, { config, readTimeoutMs: 0 }), (e) => e.code === 'ERR_OUT_OF_RANGE');
  await stillWorks();
});

test('close() during a load rejects it with ERR_CLOSED: at the first of three shards, and while a stream waits', async () => {
  const sh3 = sharded(lmTensors(config, { seed: 4 }), { shards: 3 });
  for (const when of ['progress', 'waiting']) {
    const rt = await init({ threads: 1 });
    let load;
    if (when === 'progress') {
      let calls = 0;
      load = rt.loadModel(new Map([['config.json', configBytes], ...sh3.files]), { onProgress: () => { if (++calls === 1) rt.close(); } });
    } else {
      load = rt.loadModel(stallingStream(single, single.byteLength >> 1), { config });
      setTimeout(() => rt.close(), 50);
    }
    await assert.rejects(load, (e) => e.code === 'ERR_CLOSED' && /closed .*during the load/.test(e.message));
    await assert.rejects(rt.loadModel(folderMap(sh.names[1])), (e) => e.code === 'ERR_CLOSED');
  }
  await stillWorks();
});
