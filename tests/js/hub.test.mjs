// Hub ids and the cache (bindings/hub/) against a local server that answers as the hub does
// (hub_server.mjs: the API listing, resolve/<revision>/ URLs, ETag / X-Linked-Size / X-Repo-Commit, the
// redirect of LFS files to a content host, Range): a first load downloads into a folder in the hub cache's
// layout and gives the model of the same bytes loaded locally, bit for bit; a second load reads the cache
// with the server gone (offline) and tells cached bytes from downloaded ones; a pinned commit asks the
// network nothing; a new commit downloads only what changed; sharded checkpoints, nested paths and the
// loader's optional files; cache.list() / delete(); what is and is not a hub id; SHA-256 against node:crypto.
// The hostile run is hub_hostile.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, readFile, readlink, readdir, mkdir, writeFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init } from '../../bindings/index.js';
import { openCache, looksLikeHubId, checkHubId, checkRevision } from '../../bindings/hub/index.js';
import { Sha256 } from '../../bindings/hub/sha256.js';
import { startHub } from './hub_server.mjs';
import { lmConfig, lmTensors, safetensors, sharded, sampleIds, sameBits } from './lm_checkpoint.mjs';

const aw = await init({ threads: 1 });
const config = lmConfig({ vocab: 3000 });
const tensors = lmTensors(config, { seed: 5 });
const bytes = safetensors(tensors);
const shards = sharded(tensors, { shards: 2 });
const ids = sampleIds(config.vocab_size);
const sha = (b) => createHash('sha256').update(b).digest('hex');

let hub, root, want;
before(async () => {
  hub = await startHub({
    'org/tiny': { main: { 'model.safetensors': bytes, 'config.json': config, 'README.md': '# tiny', '1_Pooling/config.json': { x: 1 } } },
    'org/sharded': { main: { 'config.json': config, ...Object.fromEntries(shards.files) } },
  });
  root = await mkdtemp(join(tmpdir(), 'attnwasm-hub-'));
  want = (await aw.loadModel(bytes, { config })).forward(ids).logits.data;
});
after(async () => {
  await hub?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** Loads `id` into `cache`; the logits of `ids`, the last progress event and the requests the server saw. */
async function load(id, options) {
  hub.log.length = 0;
  let last = null;
  const lm = await aw.loadModel(id, { host: hub.host, onProgress: (p) => { last = p; }, ...options });
  const logits = lm.forward(ids).logits.data;
  lm.dispose();
  return { logits, last, log: [...hub.log] };
}

test('a first load downloads into the hub cache layout; a second reads it, offline', async () => {
  const cache = join(root, 'a');
  const first = await load('org/tiny', { cache });
  assert.equal(sameBits(first.logits, want), null);
  assert.equal(first.last.cached, 0);
  assert.equal(first.last.downloaded, bytes.byteLength + JSON.stringify(config).length);
  assert.ok(first.log.some((r) => r.path === '/api/models/org/tiny/revision/main'), 'the listing is asked for');
  assert.ok(first.log.some((r) => r.path.startsWith('/cdn/')), 'the weights come through the content host (a redirect)');
  assert.ok(!first.log.some((r) => r.path.endsWith('README.md')), 'a file the loader does not read is not downloaded');
  const commit = hub.commit('org/tiny', 'main');
  const repo = join(cache, 'models--org--tiny');
  assert.equal((await readFile(join(repo, 'refs', 'main'), 'utf8')).trim(), commit);
  assert.equal(await readlink(join(repo, 'snapshots', commit, 'model.safetensors')), `../../blobs/${sha(bytes)}`);
  assert.deepEqual(new Uint8Array(await readFile(join(repo, 'snapshots', commit, 'model.safetensors'))), bytes);
  assert.deepEqual((await readdir(join(repo, 'blobs'))).filter((n) => n.endsWith('.incomplete')), []);
  assert.deepEqual(await readdir(join(cache, '.locks', 'models--org--tiny')), [], 'no lock is left');

  // Offline: the server's port answers nothing; the cache holds the listing and the files.
  const offline = await startHubOffline(() => load('org/tiny', { cache }));
  assert.equal(sameBits(offline.logits, want), null);
  assert.equal(offline.last.downloaded, 0);
  assert.equal(offline.last.cached, bytes.byteLength + JSON.stringify(config).length);

  // Online again, the revision pinned to the commit: nothing is asked of the network.
  const pinned = await load('org/tiny', { cache, revision: commit });
  assert.equal(sameBits(pinned.logits, want), null);
  assert.deepEqual(pinned.log, []);

  // A branch asks for its listing (one request) and reads the files from the cache.
  const again = await load('org/tiny', { cache });
  assert.deepEqual(again.log.map((r) => r.path), ['/api/models/org/tiny/revision/main']);
});

/** Runs fn with the hub's port closed (connections refused), then listens on the same port again. */
async function startHubOffline(fn) {
  const { port } = hub.server.address();
  await hub.close();
  try {
    return await fn();
  } finally {
    await new Promise((r) => hub.server.listen(port, '127.0.0.1', r));
  }
}

test('a new commit downloads only the files whose hash changed', async () => {
  const cache = join(root, 'b');
  await load('org/tiny', { cache });
  const config2 = { ...config, rms_norm_eps: 1e-6 };
  hub.setRevision('org/tiny', 'main', { 'model.safetensors': bytes, 'config.json': config2 });
  try {
    const r = await load('org/tiny', { cache });
    assert.ok(!r.log.some((x) => x.path.startsWith('/cdn/')), 'the weights are the same blob: not downloaded again');
    assert.equal(r.last.downloaded, JSON.stringify(config2).length);
    assert.equal(r.last.cached, bytes.byteLength);
    const listed = (await openCache(cache).list()).find((m) => m.id === 'org/tiny');
    assert.equal(listed.commits.length, 2);
    assert.equal(listed.revisions.main, hub.commit('org/tiny', 'main'));
  } finally {
    hub.setRevision('org/tiny', 'main', { 'model.safetensors': bytes, 'config.json': config, 'README.md': '# tiny', '1_Pooling/config.json': { x: 1 } });
  }
});

test('a sharded checkpoint: index and shards cached, loaded offline', async () => {
  const cache = join(root, 'c');
  const r = await load('org/sharded', { cache });
  assert.equal(sameBits(r.logits, want), null);
  const again = await startHubOffline(() => load('org/sharded', { cache }));
  assert.equal(sameBits(again.logits, want), null);
  assert.equal(again.last.downloaded, 0);
});

test('cache.list() and delete(); an unknown repository and revision', async () => {
  const cache = join(root, 'd');
  await load('org/tiny', { cache });
  const c = openCache(cache);
  const [m] = await c.list();
  assert.equal(m.id, 'org/tiny');
  assert.equal(m.files, 2);
  assert.equal(m.bytes, bytes.byteLength + JSON.stringify(config).length);
  assert.equal(await c.where(), cache);
  assert.equal(await c.delete('org/tiny'), true);
  assert.deepEqual(await c.list(), []);
  assert.equal(await c.delete('org/tiny'), false);
  await assert.rejects(c.delete('../x'), { code: 'ERR_INVALID_ARGUMENT' });
  await assert.rejects(load('org/none', { cache }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.status === 404 && /org\/none/.test(e.message));
  await assert.rejects(load('org/tiny', { cache, revision: 'v9' }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /v9/.test(e.message));
  // Offline with nothing cached: ERR_NETWORK naming the cache.
  await assert.rejects(startHubOffline(() => load('org/tiny', { cache })), (e) => e.code === 'ERR_NETWORK' && e.message.includes(cache));
});

test('cache: false streams from the hub; a local folder of the id\'s name wins', async () => {
  const r = await load('org/tiny', { cache: false });
  assert.equal(sameBits(r.logits, want), null);
  assert.equal(r.last.cached, 0);
  // A folder with the id's name wins over the hub (as from_pretrained decides); with a hub option it does not.
  const local = join(root, 'local');
  await mkdir(join(local, 'org', 'tiny'), { recursive: true });
  await writeFile(join(local, 'org', 'tiny', 'model.safetensors'), bytes);
  await writeFile(join(local, 'org', 'tiny', 'config.json'), JSON.stringify(config));
  const cwd = process.cwd();
  process.chdir(local);
  try {
    hub.log.length = 0;
    const lm = await aw.loadModel('org/tiny');
    assert.equal(sameBits(lm.forward(ids).logits.data, want), null);
    lm.dispose();
    assert.deepEqual(hub.log, []);
  } finally {
    process.chdir(cwd);
  }
});

test('what a hub id is, and what is refused as one', async () => {
  for (const s of ['org/name', 'Qwen/Qwen2.5-0.5B', 'HuggingFaceTB/SmolLM2-135M', 'a/b.c_d-e']) assert.ok(looksLikeHubId(s), s);
  for (const s of ['models/lm.safetensors', './org/name', 'org/name/', 'name', 'a/b/c', 'https://huggingface.co/org/name', '/abs/path']) {
    assert.ok(!looksLikeHubId(s), s);
  }
  const refused = ['../x', 'org/..', '..', 'org/../../etc', '/etc/passwd', 'C:/x', 'https://evil.example/x', 'file:///etc/passwd',
    'data:text/plain,a/b', '//evil.example/x', 'org/%2e%2e', '%2e%2e/x', 'org\\name', 'org/na--me', 'org/name.git', '-org/name', 'a/b/c'];
  for (const s of refused) {
    assert.throws(() => checkHubId(s), { code: 'ERR_INVALID_ARGUMENT' }, s);
    // With a hub option the source must be a hub id: refused by name, before any request.
    hub.log.length = 0;
    await assert.rejects(aw.loadModel(s, { host: hub.host, cache: false }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.message.startsWith('source: expected a hub id'), s);
    assert.deepEqual(hub.log, [], s);
  }
  for (const r of ['main', 'v1.0', 'refs/pr/1', 'a'.repeat(40)]) assert.equal(checkRevision(r), r);
  for (const r of ['', '..', 'a/../b', '/main', 'main/', 'a b', 'x%2F..', 'a:b', 'a\\b', 'x.lock']) {
    assert.throws(() => checkRevision(r), { code: 'ERR_INVALID_ARGUMENT' }, JSON.stringify(r));
  }
  await assert.rejects(aw.loadModel('org/tiny', { host: 'ftp://x', cache: false }), { code: 'ERR_INVALID_ARGUMENT' });
  await assert.rejects(aw.loadModel('org/tiny', { cache: 7 }), { code: 'ERR_INVALID_TYPE' });
  await assert.rejects(aw.loadModel('org/tiny', { revision: 5 }), { code: 'ERR_INVALID_TYPE' });
});

test('SHA-256 in JS (browsers) equals node:crypto, fed in any pieces', () => {
  for (const n of [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 65537]) {
    const b = randomBytes(n);
    const h = new Sha256();
    for (let at = 0, k = 1; at < n; at += k, k = (k * 7) % 97 + 1) h.update(b.subarray(at, Math.min(n, at + k)));
    assert.equal(h.hex(), sha(b), `${n} bytes`);
  }
});
