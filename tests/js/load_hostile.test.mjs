// Loads that must fail (bindings/sources.js, checkpoint.js, model_loading.js; src/models/load_model.cpp):
// each rejects with an AttnWasmError whose message names the file (and the tensor where one is
// incomplete); afterwards aw.memory().inUseBytes is what it was before the load (nothing leaked), the
// streams the load opened are released (cancelled, not left locked), and the same runtime loads and runs
// a good model. Cases: a missing shard (folder, Map, base URL); an index naming a tensor no shard holds,
// naming the wrong shard, or leaving a shard's tensor out; a tensor in two shards; a truncated shard (a
// file: size known; a stream: size unknown; an HTTP body cut short); a stream that errors midway, one
// whose chunks are strings; more
// bytes than the header describes; headers that lie (offsets past the end, a header length past the file
// or over the limit, overlapping tensors, a hole, not JSON, an empty file); dtype 'q5'; a Response with
// status 404 (made in JS, and fetched); config.json missing from a folder that needs one.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile, rm, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init, AttnWasmError } from '../../bindings/index.js';
import { lmConfig, lmTensors, safetensors, sharded, sampleIds, sameBits } from './lm_checkpoint.mjs';

const aw = await init({ threads: 1 });
const config = lmConfig({ hidden: 40, inter: 100, vocab: 77 });
const tensors = lmTensors(config, { seed: 4 });
const bytes = safetensors(tensors);
const configBytes = new TextEncoder().encode(JSON.stringify(config));
const sh = sharded(tensors, { shards: 3 });
const [S1, S2, S3] = sh.names;
const INDEX = 'model.safetensors.index.json';
const ids = sampleIds(77);
const enc = (o) => new TextEncoder().encode(JSON.stringify(o));

let dir, server, base, want, baseline;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'attnwasm-hostile-'));
  for (const d of ['sharded', 'noshard', 'noconfig', 'noconfig_sharded']) await mkdir(join(dir, d));
  for (const [n, b] of sh.files) {
    await writeFile(join(dir, 'sharded', n), b);
    if (n !== S2) await writeFile(join(dir, 'noshard', n), b);
    await writeFile(join(dir, 'noconfig_sharded', n), b);
  }
  for (const d of ['sharded', 'noshard']) await writeFile(join(dir, d, 'config.json'), configBytes);
  await writeFile(join(dir, 'noconfig', 'model.safetensors'), bytes);
  // /cut/<file>: the file's headers say its full size, the body stops halfway (the connection is dropped).
  server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const cut = path.startsWith('/cut/') && path.endsWith('.safetensors');
    try {
      const body = await readFile(join(dir, path.replace(/^\/cut\//, '/')));
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.byteLength });
      if (!cut) return res.end(body);
      res.write(body.subarray(0, body.byteLength >> 1), () => setTimeout(() => res.destroy(), 20));
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    }
    return undefined;
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}/`;
  const lm = await aw.loadModel(bytes, { config });
  want = lm.forward(ids).logits.data;
  lm.dispose();
  baseline = aw.memory().inUseBytes;
});
after(async () => {
  server?.closeAllConnections?.();
  await new Promise((r) => (server ? server.close(r) : r()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** A ReadableStream of `b` in 4099-byte chunks; `fail` (a byte count): errors once that many have gone. */
function stream(b, { fail = null, chunk = 4099 } = {}) {
  let at = 0;
  const s = new ReadableStream({
    pull(c) {
      if (fail !== null && at >= fail) return c.error(new Error('disk on fire'));
      if (at >= b.byteLength) return c.close();
      c.enqueue(b.slice(at, Math.min(b.byteLength, at + chunk)));
      at += chunk;
      return undefined;
    },
    cancel() { s.cancelled = true; },
  });
  s.cancelled = false;
  return s;
}

/**
 * The load rejects with an AttnWasmError of `code` whose message matches every pattern; the heap is as before;
 * every stream in `streams` is released; the runtime then loads the good model and gives its logits.
 */
async function refused(load, patterns, { code = 'ERR_INVALID_ARGUMENT', streams = [] } = {}) {
  const before = aw.memory().inUseBytes;
  assert.equal(before, baseline);
  let error;
  await assert.rejects(load, (e) => { error = e; return true; });
  assert.ok(error instanceof AttnWasmError, `an AttnWasmError, got ${error?.name}: ${error?.message}`);
  assert.equal(error.code, code, error.message);
  for (const p of [patterns].flat()) {
    if (typeof p === 'string') assert.ok(error.message.includes(p), `the message should name ${p}: ${error.message}`);
    else assert.match(error.message, p);
  }
  assert.equal(aw.memory().inUseBytes, before, `a failed load leaves nothing in the heap (${error.message})`);
  for (const s of streams) {
    assert.equal(s.locked, false, `a stream the load opened is left locked (${error.message})`);
  }
  const lm = await aw.loadModel(bytes, { config });
  assert.equal(sameBits(lm.forward(ids).logits.data, want), null, 'the runtime still loads and runs a good model');
  lm.dispose();
  assert.equal(aw.memory().inUseBytes, baseline);
  return error;
}

const shardMap = (patch = {}) => new Map([...sh.files, ['config.json', configBytes], ...Object.entries(patch)]);
const withIndex = (map) => shardMap({ [INDEX]: enc({ metadata: {}, weight_map: map }) });
/** The tensors of shard n (1-based) as safetensors entries. */
const tensorsOf = (n) => tensors.filter((t) => sh.index.weight_map[t.name] === sh.names[n - 1]);

test('a missing shard: from a folder, a Map and a base URL, the message names the shard', async () => {
  await refused(aw.loadModel(join(dir, 'noshard')), [`source: ${INDEX} names the shard ${S2}, which is not in the folder '${join(dir, 'noshard')}'`]);
  const m = shardMap();
  m.delete(S2);
  await refused(aw.loadModel(m), [`source: ${INDEX} names the shard ${S2}, which is not among the files given`]);
  const e = await refused(aw.loadModel(`${base}noshard/`), [`source: ${S2}: fetching '${base}noshard/${S2}' gave HTTP 404`]);
  assert.equal(e.status, 404);
  assert.equal(e.url, `${base}noshard/${S2}`);
});

test('an index that does not match the shards: a tensor no shard holds, the wrong shard, a tensor left out, a tensor in two shards', async () => {
  const wm = sh.index.weight_map;
  await refused(aw.loadModel(withIndex({ ...wm, 'model.layers.0.extra.weight': S1 })),
    [`weight_map names tensor 'model.layers.0.extra.weight' in ${S1}`, 'no file does']);
  const moved = tensorsOf(2)[0].name;
  await refused(aw.loadModel(withIndex({ ...wm, [moved]: S3 })), [`'${moved}' in ${S3}`, `${S2} does`]);
  // A shard the index names that was not given (the index is the map's own, the shard list the index's).
  const { [moved]: gone, ...rest } = wm;
  await refused(aw.loadModel(withIndex(rest)), [`${S2} holds tensor '${moved}', which weight_map does not list`]);
  // The same tensor in two shards.
  const dup = tensorsOf(1)[0];
  const s3 = safetensors([...tensorsOf(3), dup]);
  await refused(aw.loadModel(shardMap({ [S3]: s3 })), [`'${dup.name}' is in two files`, S1, S3]);
});

test('a truncated shard: a file (size known), a stream (size unknown), an HTTP body cut short', async () => {
  const s2 = sh.files.get(S2);
  const cut = s2.subarray(0, s2.byteLength - 60);  // inside the shard's last tensor (160 bytes)
  const last = tensorsOf(2).at(-1).name;
  await writeFile(join(dir, 'sharded_cut.safetensors'), cut);
  // Size known: the header's offsets run past the file, named with the tensor.
  await refused(aw.loadModel(shardMap({ [S2]: join(dir, 'sharded_cut.safetensors') })), [`source: ${S2}: `, `tensor '${last}'`, 'past the end']);
  await refused(aw.loadModel(shardMap({ [S2]: cut })), [`source: ${S2}: `, `tensor '${last}'`]);
  // Size unknown: found when the bytes stop, naming the incomplete tensor and how much of it arrived.
  const st = stream(cut);
  const t = tensorsOf(2).at(-1);
  const e = await refused(aw.loadModel(shardMap({ [S2]: st })), [`source: ${S2} is truncated`, `tensor '${last}' has ${t.values.length * 4 - 60} of its ${t.values.length * 4} bytes`], { streams: [st] });
  assert.match(e.message, new RegExp(`${cut.byteLength} of its ${s2.byteLength} bytes arrived`));
  // One file, cut in the middle of the embedding.
  const st1 = stream(bytes.subarray(0, 5000));
  await refused(aw.loadModel(st1, { config }), ['source is truncated', "tensor 'model.embed_tokens.weight' has"], { streams: [st1] });
  // An HTTP body that stops halfway (Content-Length said more): a read error naming the file.
  await refused(aw.loadModel(`${base}cut/sharded/`), [`source: ${S1}: `]);
});

test('a stream that errors midway, one of strings, one that gives more bytes than its header describes', async () => {
  const st = stream(sh.files.get(S3), { fail: 8200 });
  await refused(aw.loadModel(shardMap({ [S3]: st })), [`source: ${S3}: reading failed after`, 'disk on fire'], { streams: [st] });
  const st1 = stream(bytes, { fail: 20000 });
  await refused(aw.loadModel(st1, { config }), ['source: reading failed after', 'disk on fire'], { streams: [st1] });
  const longer = new Uint8Array(bytes.byteLength + 3);
  longer.set(bytes);
  const st2 = stream(longer);
  await refused(aw.loadModel(st2, { config }), [`source: more than the ${bytes.byteLength} bytes its header describes`], { streams: [st2] });
  // Chunks that are not bytes.
  const text = new ReadableStream({ start(c) { c.enqueue('{"a": 1}'); c.enqueue(new Uint8Array(8)); c.close(); }, cancel() { text.cancelled = true; } });
  await refused(aw.loadModel(text, { config }), ['source: ', 'expected chunks of bytes (Uint8Array, ArrayBuffer), got'], { streams: [text] });
  assert.equal(text.cancelled, true);
  // Size known: the 3 bytes no tensor covers.
  await refused(aw.loadModel(longer, { config }), ['source: ', 'not covered by any tensor']);
});

/** `bytes` with its header replaced by `header` (an object), the data kept. */
function reheader(b, header, n = null) {
  const len = Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
  const h = enc(header);
  const out = new Uint8Array(8 + h.byteLength + b.byteLength - 8 - len);
  new DataView(out.buffer).setBigUint64(0, BigInt(n ?? h.byteLength), true);
  out.set(h, 8);
  out.set(b.subarray(8 + len), 8 + h.byteLength);
  return out;
}
const headerOf = (b) => JSON.parse(new TextDecoder().decode(b.subarray(8, 8 + Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true)))));

test('headers that lie: offsets past the end, a length past the file or over the limit, overlaps, a hole, not JSON', async () => {
  const h = headerOf(bytes);
  const names = Object.keys(h).filter((k) => k !== '__metadata__');
  const lastName = names.at(-1), firstName = names[0];
  // The last tensor's offsets run past the file, its shape to match (a larger lm_head).
  const [b0, e0] = h[lastName].data_offsets;
  const past = { ...h, [lastName]: { ...h[lastName], shape: [h[lastName].shape[0] * 2, h[lastName].shape[1]], data_offsets: [b0, b0 + 2 * (e0 - b0)] } };
  await refused(aw.loadModel(reheader(bytes, past), { config }), ['source: ', `tensor '${lastName}'`, 'past the end']);
  await refused(aw.loadModel(shardMap({ [S3]: reheader(sh.files.get(S3), headerOf(sh.files.get(S3)), 10 ** 7) })),
    [`source: ${S3}: `, 'header length 10000000 runs past the end of the file']);
  const st = stream(reheader(bytes, h, 10 ** 7));
  await refused(aw.loadModel(st, { config }), ['source: ', 'the header (10000000 bytes) is not all in'], { streams: [st] });
  await refused(aw.loadModel(reheader(bytes, h, 2 ** 40), { config }), ['source: ', 'over the limit']);
  const [a0, a1] = h[firstName].data_offsets;
  const overlap = { ...h, [names[1]]: { ...h[names[1]], data_offsets: [a1 - 4, a1 - 4 + h[names[1]].data_offsets[1] - h[names[1]].data_offsets[0]] } };
  await refused(aw.loadModel(reheader(bytes, overlap), { config }), ['source: ', `'${firstName}'`, `'${names[1]}'`, 'overlap']);
  const st2 = stream(reheader(bytes, overlap));
  await refused(aw.loadModel(st2, { config }), ['source: ', 'overlap'], { streams: [st2] });
  const hole = { ...h, [firstName]: { ...h[firstName], data_offsets: [a0 + 4, a1 + 4] } };
  await refused(aw.loadModel(reheader(bytes, hole), { config }), ['source: ', 'not covered', `'${firstName}'`]);
  const text = new TextEncoder().encode('{"a": [');
  const bad = new Uint8Array(8 + text.byteLength);
  new DataView(bad.buffer).setBigUint64(0, BigInt(text.byteLength), true);
  bad.set(text, 8);
  await refused(aw.loadModel(shardMap({ [S1]: bad })), [`source: ${S1}: `, 'not valid JSON']);
  await refused(aw.loadModel(new Uint8Array(0), { config }), ['source: ', 'shorter than the 8-byte header length']);
  await refused(aw.loadModel(stream(new Uint8Array(5)), { config }), ['source: ', 'shorter than the 8-byte header length']);
});

test("dtype 'q5' (and a dtype that is no string)", async () => {
  await refused(aw.loadModel(bytes, { config, dtype: 'q5' }), [/^dtype: expected 'f32', 'bf16', 'f16', 'q8', 'q4' or 'q4a16'.*got 'q5'/]);
  const st = stream(bytes);
  await refused(aw.loadModel(st, { config, dtype: 'q5' }), ["got 'q5'"], { streams: [st] });
  await assert.rejects(aw.loadModel(bytes, { config, dtype: 4 }), (e) => e instanceof TypeError && /^dtype: /.test(e.message));
});

test('a Response with status 404: made in JS, and fetched (the URL and status named)', async () => {
  const e = await refused(aw.loadModel(new Response('not found', { status: 404 }), { config }), ['source: ', 'HTTP 404']);
  assert.equal(e.status, 404);
  const url = `${base}nothing/model.safetensors`;
  const f = await refused(aw.loadModel(await fetch(url), { config }), [`fetching '${url}' gave HTTP 404`]);
  assert.equal(f.url, url);
  await refused(aw.loadModel(url, { config }), [`source: source: fetching '${url}' gave HTTP 404`]);
  // A shard as a Response: named by its file name.
  await refused(aw.loadModel(shardMap({ [S2]: new Response('gone', { status: 410 }) })), [`source: ${S2}: `, 'HTTP 410']);
});

test('config.json missing from a folder whose weights need one (a path, a base URL, a Map, sharded)', async () => {
  for (const source of [join(dir, 'noconfig'), `${base}noconfig/`, new Map([['model.safetensors', bytes]]), join(dir, 'noconfig_sharded'), `${base}noconfig_sharded/`]) {
    await refused(aw.loadModel(source), ['config.json', 'attnwasm.config']);
  }
  // Neither weights nor index in the folder.
  await refused(aw.loadModel(new Map([['config.json', configBytes]])), ['source: neither model.safetensors nor model.safetensors.index.json is among the files given (there: config.json)']);
  await refused(aw.loadModel(join(dir, 'nowhere', 'model.safetensors'), { config }), ['cannot read', 'nowhere']);
});

test('a failed load leaves every stream it opened released, also the shards it had not reached', async () => {
  // The index names a tensor no shard holds: refused before any data is read, with all three open.
  const streams = sh.names.map((n) => stream(sh.files.get(n)));
  const m = new Map(sh.names.map((n, i) => [n, streams[i]]));
  m.set('config.json', configBytes);
  m.set(INDEX, enc({ weight_map: { ...sh.index.weight_map, 'x.weight': S1 } }));
  await refused(aw.loadModel(m), ["'x.weight'"], { streams });
  assert.deepEqual(streams.map((s) => s.cancelled), [true, true, true], 'the load cancels what it will not read');
  // The first shard truncated: the two after it were opened for their headers, never read.
  const later = sh.names.map((n, i) => stream(i ? sh.files.get(n) : sh.files.get(n).subarray(0, 9000)));
  const m2 = new Map(sh.names.map((n, i) => [n, later[i]]));
  m2.set('config.json', configBytes);
  m2.set(INDEX, sh.files.get(INDEX));
  await refused(aw.loadModel(m2), [`${S1} is truncated`], { streams: later });
});
