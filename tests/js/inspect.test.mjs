// attnwasm/inspect (bindings/inspect/) against what the runtime then does with the same files: on every golden
// checkpoint (tests/data/goldens: lm/models, lm/quant, lm/refusals, encoders, families, models; the package's
// models/; a hub-layout checkpoint of tools/make_checkpoint.mjs in shards), the family and model_type are the
// loaded model's, the tensors and parameters the native reader's (aw.loadSafetensors), the estimated bytes
// within the rule's stated bound of the loader's weightBytes for every dtype (bindings/inspect/memory.js: never
// below, never above by more than the matrices' panel padding, for the tensors the model keeps), and a
// checkpoint the loader refuses by its family is refused with the same code and words. Sources: a sharded
// folder, a Map, a base URL (no request for the index of a one-file folder; with probe false no 404 at all), an
// index URL, a hub id (nothing written to the cache), a >2 GiB file (sparse: only its header is written; by path
// and by a URL that answers ranges). Refusals live in inspect_hostile.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, readdirSync, existsSync, mkdirSync, openSync, ftruncateSync, closeSync, statSync, createReadStream } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { inspect } from '../../bindings/inspect/index.js';
import { estimateBytes, paddingBound, SIZED } from '../../bindings/inspect/memory.js';
import { WEIGHT_TYPES } from '../../bindings/native_constants.js';
import { writeCheckpoint, parameterCount, SHAPES } from '../../tools/make_checkpoint.mjs';
import { lmConfig, lmTensors, safetensors, sharded } from './lm_checkpoint.mjs';
import { startHub } from './hub_server.mjs';

const aw = await init({ threads: 1 });
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GOLDENS = join(ROOT, 'tests/data/goldens');
/** Tensors an encoder's loader skips (a task head: MLM, next-sentence), which the estimate still counts. */
const ENCODER_HEADS = /^(cls\.|lm_head\.)/;
/** Families that keep some matrices as float32 whatever the dtype asked for. */
const FLOAT_MATRICES = ['translator', 'vit'];
let tmp, server, base, hub;
const requests = [];

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'attnwasm-inspect-'));
  // /ranged/<file>: answers byte ranges (206), as object stores and the hub's content host do; every other
  // path: the file whole or 404. Requests are recorded as 'METHOD path [range]'.
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(`${req.method} ${path}${req.headers.range ? ` ${req.headers.range}` : ''}`);
    const file = join(tmp, path.replace(/^\/ranged\//, '/'));
    if (!file.startsWith(tmp) || !existsSync(file) || statSync(file).isDirectory()) return res.writeHead(404).end();
    const size = statSync(file).size;
    const m = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (m && path.startsWith('/ranged/')) {
      const start = Number(m[1]), end = Math.min(size - 1, m[2] ? Number(m[2]) : size - 1);
      if (start >= size) return res.writeHead(416, { 'Content-Range': `bytes */${size}` }).end();
      res.writeHead(206, { 'Content-Range': `bytes ${start}-${end}/${size}`, 'Content-Length': end - start + 1 });
      return req.method === 'HEAD' ? res.end() : createReadStream(file, { start, end }).pipe(res);
    }
    res.writeHead(200, { 'Content-Length': size });
    if (req.method === 'HEAD') return res.end();
    const s = createReadStream(file);
    res.on('close', () => s.destroy());
    return s.pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}/`;
});
after(async () => {
  server?.closeAllConnections?.();
  await new Promise((r) => (server ? server.close(r) : r()));
  await hub?.close();
  await aw.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** The native reader's view of a file: [{ name, shape, numel }] in header order, and its float elements. */
function nativeTensors(bytes) {
  return Object.entries(aw.loadSafetensors(bytes)).map(([name, t]) => ({ name, shape: t.shape, float: t.data instanceof Float32Array, numel: t.data.length }));
}

/** A header's dtypes by tensor name, read with JSON.parse (a third reader). */
const dtypesOf = (b) => {
  const n = Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
  return Object.fromEntries(Object.entries(JSON.parse(new TextDecoder().decode(b.subarray(8, 8 + n)))).filter(([k]) => k !== '__metadata__').map(([k, v]) => [k, v.dtype]));
};

/**
 * inspect's answer for one checkpoint against the runtime's: `load(options)` loads it; `files` its weight
 * files' bytes by name. The estimate per dtype is checked for `dtypes`, over the tensors but `skipped`.
 */
async function against(what, r, { load, files, dtypes = SIZED, skipped = null }) {
  // Tensors: names, shapes and files as the native reader reads each file; dtypes as the header says.
  const want = [];
  for (const [name, bytes] of files) for (const t of nativeTensors(bytes)) want.push({ ...t, file: name, dtype: dtypesOf(bytes)[t.name] });
  assert.deepEqual(r.tensors, want.map(({ name, dtype, shape, file }) => ({ name, dtype, shape, file })), `${what}: tensors`);
  assert.equal(r.parameters, want.reduce((a, t) => a + (t.float ? t.numel : 0), 0), `${what}: parameters`);
  let model;
  try {
    model = await load({});
  } catch (e) {
    // Refused: by the family (the code and words inspect gives too), or past it (a config's range, a tensor the
    // family does not take: the runtime's own reader; inspect standalone found the family).
    if (r.refused) {
      assert.equal(r.refused.code, e.code, `${what}: ${r.refused.message} / ${e.message}`);
      assert.equal(r.refused.message, e.message.replace(/ \("[^"]+" is the [^)]*\)/, ''), what);
    } else {
      assert.ok(r.family, `${what}: refused by the runtime (${e.message}) but inspect found no family`);
    }
    return 'refused';
  }
  assert.equal(r.refused, null, `${what}: inspect refused what the runtime loads`);
  assert.equal(r.family.className, model.constructor.name, what);
  if (model.modelType !== undefined) assert.equal(r.modelType, model.modelType, what);
  model.dispose();
  // Bytes: the estimate for the tensors the model keeps is never above the loader's, and below it by at most
  // the matrices' panel padding; a skipped head only adds to the estimate.
  const kept = r.tensors.filter((t) => !skipped?.test(t.name));
  for (const as of dtypes) {
    const m = await load(as === 'stored' ? {} : { dtype: as });
    const exact = m.weightBytes;
    m.dispose();
    const est = estimateBytes(kept)[as].weightBytes;
    // The translator and the ViT keep their attention's packed projections as float32 parameters, whatever the
    // file's dtype or the one asked for: for them the rule (a 2-D tensor in that dtype) is a lower bound (docs/inspect.md).
    const upper = FLOAT_MATRICES.includes(r.family.kind) ? Infinity : est + paddingBound(kept, as);
    assert.ok(est <= exact && exact <= upper, `${what} as ${as}: loader ${exact}, estimate ${est} + padding ≤ ${paddingBound(kept, as)}`);
    assert.ok(r.memory[as].weightBytes >= est, what);
  }
  return 'loaded';
}

test('every golden folder: family, model_type, tensors, parameters and bytes as the runtime loads them', async (t) => {
  const folders = ['lm/models', 'lm/quant', 'lm/refusals', 'encoders']
    .flatMap((d) => readdirSync(join(GOLDENS, d)).map((f) => join(GOLDENS, d, f)).filter((f) => existsSync(join(f, 'model.safetensors'))));
  assert.ok(folders.length >= 40, `${folders.length} folders`);
  const seen = { loaded: 0, refused: 0 };
  for (const dir of folders) {
    const r = await inspect(dir);
    assert.equal(r.source, 'folder');
    assert.deepEqual(r.files.filter((f) => f.role === 'weights'), [{ name: 'model.safetensors', role: 'weights', bytes: statSync(join(dir, 'model.safetensors')).size }]);
    assert.equal(r.files.find((f) => f.name === 'config.json')?.role, 'config');
    const what = dir.slice(GOLDENS.length + 1);
    // All six dtypes for a few; as stored and q4 (the widest padding) for the rest.
    const dtypes = /quant|bert_mean|qwen2_tied/.test(what) ? SIZED : ['stored', 'q4'];
    seen[await against(what, r, { load: (o) => aw.loadModel(dir, o), files: [['model.safetensors', new Uint8Array(readFileSync(join(dir, 'model.safetensors')))]],
      dtypes, skipped: what.startsWith('encoders/') ? ENCODER_HEADS : null })]++;
    if (what.startsWith('encoders/') && existsSync(join(dir, 'modules.json'))) {
      assert.equal(r.side.sentenceTransformers, 'modules.json');
      assert.equal(r.files.find((f) => f.name === '1_Pooling/config.json')?.role, 'sentence-transformers', what);
    }
  }
  t.diagnostic(`${folders.length} folders: ${seen.loaded} loaded, ${seen.refused} refused`);
  assert.ok(seen.loaded >= 20 && seen.refused >= 15, JSON.stringify(seen));
});

test('the family goldens (bytes with each config.json generation) and attnwasm\'s own files', async () => {
  const dir = join(GOLDENS, 'families');
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json') && n !== 'refusals.json')) {
    const g = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    const bytes = new Uint8Array(Buffer.from(g.weights.base64, 'base64'));
    for (const [gen, config] of Object.entries(g.configs)) {
      const r = await inspect(bytes, { config });
      assert.equal(r.source, 'file');
      assert.equal(r.modelType, config.model_type);
      assert.equal(await against(`${f} ${gen}`, r, { load: (o) => aw.loadModel(bytes, { config, ...o }), files: [['source', bytes]], dtypes: ['stored'] }), 'loaded');
    }
  }
  for (const file of ['tests/data/goldens/models/seq2seq.safetensors', 'tests/data/goldens/models/vit.safetensors', 'models/lm/lm.safetensors',
    'models/translator/translator.safetensors', 'models/vit/vit.safetensors']) {
    const r = await inspect(join(ROOT, file));
    assert.deepEqual(r.files, [{ name: file.split('/').pop(), role: 'weights', bytes: statSync(join(ROOT, file)).size }]);
    assert.equal(r.side, null);
    assert.equal(r.config.model, r.family.kind === 'causal_lm' ? 'causal_lm' : r.family.kind);
    const bytes = new Uint8Array(readFileSync(join(ROOT, file)));
    assert.equal(await against(file, r, { load: (o) => aw.loadModel(join(ROOT, file), o), files: [['source', bytes]], dtypes: ['stored', 'q8'] }), 'loaded');
  }
});

test('a sharded hub-layout checkpoint: from its folder, its index path, a Map, a base URL and an index URL', async () => {
  const dir = join(tmp, 'tiny');
  writeCheckpoint('tiny', dir, { shards: 3 });
  const shards = readdirSync(dir).filter((f) => f.endsWith('.safetensors')).sort();
  assert.equal(shards.length, 3);
  const index = JSON.parse(readFileSync(join(dir, 'model.safetensors.index.json'), 'utf8'));
  const files = shards.map((n) => [n, new Uint8Array(readFileSync(join(dir, n)))]);
  const r = await inspect(dir);
  assert.equal(r.parameters, parameterCount(SHAPES.tiny));
  assert.deepEqual(Object.fromEntries(r.tensors.map((x) => [x.name, x.file])), index.weight_map);
  assert.deepEqual(r.files.map((f) => [f.name, f.role]), [['config.json', 'config'], ...shards.slice(0, 1).map((n) => [n, 'weights']),
    ...shards.slice(1).map((n) => [n, 'weights']), ['model.safetensors.index.json', 'index']].sort());
  await against('tiny (3 shards)', r, { load: (o) => aw.loadModel(dir, o), files });
  // The same checkpoint by its index path (the loader reads no config.json then: refused as it refuses it),
  // a Map of its bytes, its base URL and its index URL: the same tensors.
  const viaIndex = await inspect(join(dir, 'model.safetensors.index.json'));
  assert.equal(viaIndex.source, 'index');
  assert.deepEqual(viaIndex.files.map((f) => f.role), ['index', 'weights', 'weights', 'weights']);
  const e = await aw.loadModel(join(dir, 'model.safetensors.index.json')).then(() => null, (x) => x);
  assert.deepEqual(viaIndex.refused, { code: e.code, message: e.message });
  const map = new Map([...files, ['config.json', readFileSync(join(dir, 'config.json'))], ['model.safetensors.index.json', readFileSync(join(dir, 'model.safetensors.index.json'))]]);
  const viaMap = await inspect(map);
  const viaUrl = await inspect(`${base}tiny/`);
  const viaIndexUrl = await inspect(`${base}tiny/model.safetensors.index.json`, { config: readFileSync(join(dir, 'config.json')) });
  for (const [what, x] of [['map', viaMap], ['base URL', viaUrl], ['index URL', viaIndexUrl]]) {
    assert.deepEqual(x.tensors, r.tensors, what);
    assert.deepEqual(x.memory, r.memory, what);
    assert.equal(x.family.kind, 'causal_lm', what);
    assert.equal(x.refused, null, what);
  }
  assert.equal(viaMap.source, 'files');
  assert.equal(viaUrl.source, 'url');
  assert.equal(viaIndexUrl.source, 'index-url');
  // The base URL: model.safetensors asked for first (absent), then the index; each shard's header only.
  const asked = requests.filter((q) => q.includes('/tiny/'));
  assert.equal(asked[0], 'HEAD /tiny/model.safetensors');
  assert.ok(asked.includes('GET /tiny/model.safetensors.index.json'), asked.join('\n'));
  for (const n of shards) assert.ok(asked.includes(`GET /tiny/${n} bytes=0-65535`), asked.join('\n'));
});

test('a base URL of a one-file folder: the index is never asked for; with probe: false, no 404 at all; the loader asks for it neither', async () => {
  const dir = join(tmp, 'one');
  mkdirSync(dir);
  const config = lmConfig();
  writeFileSync(join(dir, 'model.safetensors'), safetensors(lmTensors(config)));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ chat_template: '{{ messages[0].content }}' }));
  writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: 2 }));
  const from = requests.length;
  const quiet = await inspect(`${base}one/`, { probe: false });
  const quietAsked = requests.slice(from);
  assert.deepEqual(quietAsked, ['HEAD /one/model.safetensors', 'GET /one/config.json', 'GET /one/model.safetensors bytes=0-65535']);
  assert.equal(quiet.side, null);
  assert.deepEqual(quiet.files.map((f) => [f.name, f.role]), [['model.safetensors', 'weights'], ['config.json', 'config']]);
  assert.equal(quiet.files[0].bytes, statSync(join(dir, 'model.safetensors')).size);
  // Probing: every side file asked for (HEAD), the index still not.
  const from2 = requests.length;
  const probed = await inspect(`${base}one/`);
  const asked = requests.slice(from2);
  assert.ok(!asked.some((q) => q.includes('index.json')), asked.join('\n'));
  assert.deepEqual(probed.side, { tokenizer: null, tokenizerConfig: 'tokenizer_config.json', chatTemplate: 'tokenizer_config.json',
    generationConfig: 'generation_config.json', preprocessorConfig: null, sentenceTransformers: null });
  assert.deepEqual(probed.files.map((f) => f.name).sort(), ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer_config.json']);
  // The loader, from the same URL: no request for the index either.
  const from3 = requests.length;
  (await aw.loadModel(`${base}one/`)).dispose();
  assert.ok(!requests.slice(from3).some((q) => q.includes('index.json')), requests.slice(from3).join('\n'));
  assert.equal(requests[from3], 'HEAD /one/model.safetensors');
});

test('a file over 2 GiB (sparse: its header only): by path, in a folder, and by a URL that answers ranges', async () => {
  const dir = join(tmp, 'big');
  mkdirSync(dir);
  // Two matrices of 1.6 GB and 0.9 GB in F32: 2.5 GB of data, never written.
  const header = { __metadata__: { format: 'pt' }, 'model.a': { dtype: 'F32', shape: [20000, 20000], data_offsets: [0, 1.6e9] },
    'model.b': { dtype: 'F32', shape: [15000, 15000], data_offsets: [1.6e9, 2.5e9] } };
  const h = Buffer.from(JSON.stringify(header));
  const path = join(dir, 'model.safetensors');
  const fd = openSync(path, 'w');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  writeFileSync(fd, Buffer.concat([len, h]));
  ftruncateSync(fd, 8 + h.length + 2.5e9);
  closeSync(fd);
  const size = 8 + h.length + 2.5e9;
  assert.equal(statSync(path).size, size);
  for (const [what, source] of [['path', path], ['folder', dir], ['ranged URL', `${base}ranged/big/model.safetensors`]]) {
    const r = await inspect(source, { config: { model_type: 'llama' } });
    assert.deepEqual(r.tensors.map((t) => [t.name, t.shape]), [['model.a', [20000, 20000]], ['model.b', [15000, 15000]]], what);
    assert.equal(r.parameters, 4e8 + 2.25e8, what);
    assert.equal(r.files.find((f) => f.role === 'weights').bytes, size, what);
    assert.equal(r.memory.stored.weightBytes, 2.5e9, what);
    assert.equal(r.memory.q4.weightBytes, 6.25e8 * 0.625, what);
    assert.equal(r.family.kind, 'causal_lm', what);
  }
  assert.equal(requests.filter((q) => q.includes('/ranged/big/')).join(), 'GET /ranged/big/model.safetensors bytes=0-65535');
});

test('a hub id: the listing\'s files and sizes, headers read by a range of the hub\'s URL, nothing written to the cache', async () => {
  const config = lmConfig({ vocab: 300 });
  const bytes = safetensors(lmTensors(config, { seed: 5 }));
  const sh = sharded(lmTensors(config, { seed: 6 }), { shards: 2 });
  hub = await startHub({ 'org/tiny': { main: { 'model.safetensors': bytes, 'config.json': config, 'tokenizer_config.json': { chat_template: 'x' } } },
    'org/sharded': { main: { ...Object.fromEntries(sh.files), 'config.json': config } } });
  const cache = join(tmp, 'hub-cache');
  const r = await inspect('org/tiny', { host: hub.host, cache });
  assert.equal(r.source, 'hub');
  const byName = (a, b) => (a.name < b.name ? -1 : 1);
  assert.deepEqual([...r.files].sort(byName), [{ name: 'config.json', role: 'config', bytes: JSON.stringify(config).length },
    { name: 'model.safetensors', role: 'weights', bytes: bytes.byteLength }, { name: 'tokenizer_config.json', role: 'tokenizer_config', bytes: 21 }]);
  assert.equal(r.side.chatTemplate, 'tokenizer_config.json');
  assert.equal(r.family.kind, 'causal_lm');
  assert.equal(r.tensors.length, 1 + 2 * 9 + 2);
  const blobs = (id) => (existsSync(join(cache, `models--org--${id}`, 'blobs')) ? readdirSync(join(cache, `models--org--${id}`, 'blobs')) : []);
  assert.deepEqual(blobs('tiny'), [], 'inspect writes no file to the cache');
  const s = await inspect('org/sharded', { host: hub.host, cache });
  assert.deepEqual(s.files.filter((f) => f.role === 'weights').map((f) => f.name), sh.names);
  assert.equal(s.tensors.length, 21);
  assert.deepEqual(blobs('sharded'), []);
  // A load then downloads every byte (none came from the cache), and after it inspect reads the cache.
  let last = null;
  (await aw.loadModel('org/tiny', { host: hub.host, cache, onProgress: (p) => { last = p; } })).dispose();
  assert.equal(last.cached, 0);
  const again = await inspect('org/tiny', { host: hub.host, cache });
  assert.deepEqual(again.tensors, r.tensors);
});

test('a runtime\'s provider: its header and plan answer, exact bytes, its refusals passed on', async () => {
  const config = lmConfig();
  const bytes = safetensors(lmTensors(config));
  const calls = [];
  const native = {
    header: (b, size) => { calls.push(['header', b.byteLength, size]); return { code: null, message: '', tensors: [{ name: 'w', dtype: 'F32', shape: [2, 3] }], metadata: { k: 'v' } }; },
    plan: (c, headers, index, dtype) => {
      calls.push(['plan', headers.map((h) => [h.name, h.bytes.byteLength, h.size]), index, dtype]);
      return { code: null, message: '', family: 'causal_lm', bytes: { weightBytes: dtype.length + 1, weightTypes: { f32: dtype.length + 1 } }, parameters: 6 };
    },
  };
  const r = await inspect(bytes, { config, native });
  const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assert.deepEqual(calls, [['header', 8 + n, bytes.byteLength],
    ...['', ...WEIGHT_TYPES].map((d) => ['plan', [['source', 8 + n, bytes.byteLength]], '', d])]);
  assert.equal(r.memoryExact, true);
  assert.deepEqual(r.memory.q8, { weightBytes: 3, weightTypes: { f32: 3 } });
  assert.deepEqual(r.tensors, [{ name: 'w', dtype: 'F32', shape: [2, 3], file: 'source' }]);
  assert.equal(r.parameters, 6);
  assert.equal(r.family.className, 'CausalLM');
  const refusing = { header: native.header, plan: () => ({ code: 'ERR_STATE_DICT', message: 'stateDict: missing', family: 'causal_lm', bytes: null }) };
  const x = await inspect(bytes, { config, native: refusing });
  assert.deepEqual(x.refused, { code: 'ERR_STATE_DICT', message: 'stateDict: missing' });
  assert.equal(x.memory, null);
  assert.equal(x.family.kind, 'causal_lm');
  const bad = { header: () => ({ code: 'ERR_INVALID_ARGUMENT', message: 'safetensors: no' }), plan: native.plan };
  assert.deepEqual((await inspect(bytes, { config, native: bad })).refused, { code: 'ERR_INVALID_ARGUMENT', message: 'source: source: safetensors: no' });
  await assert.rejects(inspect(bytes, { native: {} }), (e) => e instanceof TypeError && /^native: /.test(e.message));
});
