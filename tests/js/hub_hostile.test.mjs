// The hub cache's hostile run (issue 44's list), against hub_server.mjs's modes: a connection dropped at
// 50 % (resumed with a Range request, within the load), truncated answers (every answer cut short),
// a server that ignores Range, a load interrupted for good and resumed by the next load from the bytes kept,
// a listing whose sha256 lies, a listing whose size lies, a body longer than the file, a 0-byte cached file,
// a listing naming a path outside the repository, and two processes downloading the same file at once.
// Each case either loads the model of the true bytes (bit for bit) or fails with ERR_INTEGRITY /
// ERR_NETWORK, and leaves nothing corrupt in the cache: no blob of wrong bytes, no lock, no file outside.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, readFile, readdir, writeFile, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { startHub } from './hub_server.mjs';
import { lmConfig, lmTensors, safetensors, sampleIds, sameBits } from './lm_checkpoint.mjs';

const aw = await init({ threads: 1 });
const config = lmConfig({ vocab: 3000 });
const bytes = safetensors(lmTensors(config, { seed: 9 }));  // 1.1 MB: 17 pieces of the server's 64 KB
const ids = sampleIds(config.vocab_size);
const sha = (b) => createHash('sha256').update(b).digest('hex');
const BLOB = sha(bytes);

let hub, root, want, n = 0, cache;
before(async () => {
  hub = await startHub({ 'org/tiny': { main: { 'model.safetensors': bytes, 'config.json': config } } });
  root = await mkdtemp(join(tmpdir(), 'attnwasm-hub-hostile-'));
  want = (await aw.loadModel(bytes, { config })).forward(ids).logits.data;
});
after(async () => {
  await hub?.close();
  if (root) await rm(root, { recursive: true, force: true });
});
beforeEach(() => {
  for (const k of Object.keys(hub.modes)) delete hub.modes[k];
  hub.resetDrops();
  hub.log.length = 0;
  cache = join(root, String(n++));
});

const blobs = () => readdir(join(cache, 'models--org--tiny', 'blobs')).catch(() => []);
const contentRequests = () => hub.log.filter((r) => r.path.startsWith('/cdn/'));

async function loadLogits(options = {}) {
  let last = null;
  const lm = await aw.loadModel('org/tiny', { host: hub.host, cache, onProgress: (p) => { last = p; }, ...options });
  const logits = lm.forward(ids).logits.data;
  lm.dispose();
  return { logits, last };
}

/** The cache holds the weights' blob with the true bytes, and nothing half-written or locked. */
async function cacheIsSound() {
  const names = await blobs();
  assert.ok(names.includes(BLOB), `blobs: ${names}`);
  assert.equal(sha(await readFile(join(cache, 'models--org--tiny', 'blobs', BLOB))), BLOB);
  assert.deepEqual(names.filter((x) => x.includes('.')), [], 'no .incomplete file');
  assert.deepEqual(await readdir(join(cache, '.locks', 'models--org--tiny')).catch(() => []), [], 'no lock');
}

test('a connection dropped at 50 % resumes with a Range request within the load', async () => {
  hub.modes.dropAt = 0.5;
  const r = await loadLogits();
  assert.equal(sameBits(r.logits, want), null);
  const ranges = contentRequests().map((x) => x.range);
  assert.equal(ranges[0], null);
  assert.match(ranges[1] ?? '', /^bytes=\d+-$/);
  assert.ok(Number(/\d+/.exec(ranges[1])[0]) >= bytes.byteLength * 0.4, `resumed at ${ranges[1]}`);
  await cacheIsSound();
});

test('every answer cut short: resumed answer after answer', async () => {
  hub.modes.truncateAfter = 200_000;
  const r = await loadLogits();
  assert.equal(sameBits(r.logits, want), null);
  assert.ok(contentRequests().length >= 6, `${contentRequests().length} requests`);
  await cacheIsSound();
});

test('a server that ignores Range: the bytes already had are skipped', async () => {
  hub.modes.dropAt = 0.5;
  hub.modes.ignoreRange = true;
  const r = await loadLogits();
  assert.equal(sameBits(r.logits, want), null);
  await cacheIsSound();
});

test('a load interrupted for good keeps the bytes it had; the next load resumes from them', async () => {
  hub.modes.dropAt = 0.5;
  hub.modes.failAfterDrop = true;  // after the drop, the content host answers 503
  await assert.rejects(loadLogits(), (e) => e.code === 'ERR_NETWORK' && /503/.test(e.message));
  const partial = (await stat(join(cache, 'models--org--tiny', 'blobs', `${BLOB}.incomplete`))).size;
  assert.ok(partial > 0 && partial < bytes.byteLength, `kept ${partial} bytes`);
  delete hub.modes.failAfterDrop;
  delete hub.modes.dropAt;
  hub.log.length = 0;
  const r = await loadLogits();
  assert.equal(sameBits(r.logits, want), null);
  assert.deepEqual(contentRequests().map((x) => x.range), [`bytes=${partial}-`]);
  assert.equal(r.last.downloaded, bytes.byteLength - partial);
  await cacheIsSound();
});

test('a listing whose sha256 lies: ERR_INTEGRITY, nothing kept', async () => {
  hub.modes.lieHash = true;
  await assert.rejects(loadLogits(), (e) => e.code === 'ERR_INTEGRITY' && e.message.includes('sha256') && e.message.includes('nothing was kept'));
  assert.deepEqual((await blobs()).filter((b) => b.startsWith(BLOB.slice(0, 8)) || b.length === 64), []);
  // The same id loads once the hub tells the truth.
  delete hub.modes.lieHash;
  assert.equal(sameBits((await loadLogits()).logits, want), null);
  await cacheIsSound();
});

test('a listing whose size lies, and a body longer than the file: ERR_INTEGRITY, nothing kept', async () => {
  hub.modes.lieSize = 10;
  await assert.rejects(loadLogits(), (e) => e.code === 'ERR_INTEGRITY' && /says \d+ bytes/.test(e.message));
  assert.deepEqual((await blobs()).filter((b) => b.length >= 64), []);
  delete hub.modes.lieSize;
  hub.modes.extraBytes = 100;
  await assert.rejects(loadLogits(), (e) => e.code === 'ERR_INTEGRITY' && /more than/.test(e.message));
  assert.deepEqual((await blobs()).filter((b) => b.length >= 64), []);
});

test('a 0-byte cached file is fetched again (and refused offline)', async () => {
  await loadLogits();
  await writeFile(join(cache, 'models--org--tiny', 'blobs', BLOB), new Uint8Array(0));
  hub.log.length = 0;
  const r = await loadLogits();
  assert.equal(sameBits(r.logits, want), null);
  assert.equal(contentRequests().length, 1);
  await cacheIsSound();
  await writeFile(join(cache, 'models--org--tiny', 'blobs', BLOB), new Uint8Array(0));
  await assert.rejects(loadLogits({ host: 'http://127.0.0.1:9' }), (e) => e.code === 'ERR_NETWORK' && /not in the cache/.test(e.message));
  assert.ok(!(await blobs()).includes(BLOB), 'the wrong blob is removed');
});

test('a listing naming ../../escape.txt: never fetched, never written', async () => {
  hub.modes.badSibling = true;
  const r = await loadLogits();
  assert.equal(sameBits(r.logits, want), null);
  assert.ok(!hub.log.some((x) => x.path.includes('escape')));
  assert.deepEqual((await readdir(root)).filter((x) => x.includes('escape')), []);
  assert.deepEqual((await readdir(cache)).filter((x) => x.includes('escape')), []);
});

test('two processes downloading the same file at once', async () => {
  hub.modes.chunkDelayMs = 15;  // ~0.3 s a download: the two overlap
  const child = fileURLToPath(new URL('./hub_child.mjs', import.meta.url));
  const run = () => new Promise((resolve, reject) => {
    // The child runs the build this process runs (--experimental-wasm-relaxed-simd: the relaxed one), whose logits
    // `want` holds: the baseline build's may differ in the last bits.
    const p = spawn(process.execPath, [...process.execArgv, child, hub.host, cache], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child exited ${code}: ${err}`))));
  });
  const [a, b] = await Promise.all([run(), run()]);
  const wantSha = sha(new Uint8Array(want.buffer, want.byteOffset, want.byteLength));
  assert.equal(a.logits, wantSha);
  assert.equal(b.logits, wantSha);
  // One downloaded; the other waited for its lock and read what it wrote (or started after it ended). A load that
  // holds a lock of its own streams a file another holds without waiting (no deadlock): at most two downloads.
  assert.ok(contentRequests().length <= 2, `${contentRequests().length} downloads`);
  await cacheIsSound();
});
