// The CLI with hub ids (bin/commands/cache.mjs): generate --model org/name downloads into ATTNWASM_CACHE from
// HF_ENDPOINT (a local hub: hub_server.mjs) and gives the library's greedy ids; a second run works with the hub
// gone; `attnwasm cache ls` lists the model with its size, `cache rm` removes it; --revision without a hub id
// and a hub id with '..' are refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { startHub } from './hub_server.mjs';
import { lmConfig, lmTensors, safetensors } from './lm_checkpoint.mjs';

const CLI = fileURLToPath(new URL('../../bin/attnwasm.mjs', import.meta.url));
const config = lmConfig({ vocab: 3000 });
const bytes = safetensors(lmTensors(config, { seed: 5 }));
let hub, dir, env, wantIds;

before(async () => {
  hub = await startHub({ 'org/tiny': { main: { 'model.safetensors': bytes, 'config.json': config } } });
  dir = await mkdtemp(join(tmpdir(), 'attnwasm-cli-hub-'));
  env = { ...process.env, HF_ENDPOINT: hub.host, ATTNWASM_CACHE: dir };
  const aw = await init({ threads: 1 });
  const lm = await aw.loadModel(bytes, { config });
  const g = lm.generate([1, 2, 3], { maxNewTokens: 5, stopTokens: [] });
  for await (const t of g) void t;
  wantIds = g.ids;
  lm.dispose();
});
after(async () => {
  await hub?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI (asynchronously: the hub answers from this process): { status, stdout, stderr }. */
const cli = (args) => new Promise((resolve) => {
  const p = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  p.stdout.on('data', (d) => { stdout += d; });
  p.stderr.on('data', (d) => { stderr += d; });
  p.on('exit', (status) => resolve({ status, stdout, stderr }));
});

test('generate --model org/name downloads once; cache ls lists it; a second run needs no hub; cache rm', async () => {
  const gen = ['generate', '--model', 'org/tiny', '--ids', '1,2,3', '--max-tokens', '5', '--ignore-eos', '--json'];
  const first = await cli(gen);
  assert.equal(first.status, 0, first.stderr);
  assert.deepEqual(JSON.parse(first.stdout.trim().split('\n').at(-1)).ids, wantIds);
  const ls = await cli(['cache', 'ls', '--json']);
  assert.equal(ls.status, 0, ls.stderr);
  const [m] = ls.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(m.id, 'org/tiny');
  assert.equal(m.bytes, bytes.byteLength + JSON.stringify(config).length);
  assert.equal(m.revisions.main, hub.commit('org/tiny', 'main'));
  const text = await cli(['cache', 'ls']);
  assert.match(text.stdout, /^org\/tiny\t1\.\d MB\t2 file\(s\)\tmain=[0-9a-f]{8}\n$/);

  const { port } = hub.server.address();
  await hub.close();
  try {
    const offline = await cli([...gen, '--revision', 'main']);
    assert.equal(offline.status, 0, offline.stderr);
    assert.deepEqual(JSON.parse(offline.stdout.trim().split('\n').at(-1)).ids, wantIds);
  } finally {
    await new Promise((r) => hub.server.listen(port, '127.0.0.1', r));
  }
  const removed = await cli(['cache', 'rm', 'org/tiny']);
  assert.equal(removed.status, 0, removed.stderr);
  assert.equal((await cli(['cache', 'ls', '--json'])).stdout, '');
  assert.equal((await cli(['cache', 'rm', 'org/tiny'])).status, 1);
});

test('refusals: --revision without a hub id, a hub id with .., an unknown cache command', async () => {
  const r = await cli(['generate', '--ids', '1', '--revision', 'main']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--revision goes with a --model that is a hub id/);
  const bad = await cli(['cache', 'rm', '../x']);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /expected a hub id 'organisation\/name', got '\.\.\/x'/);
  assert.equal((await cli(['cache', 'frob'])).status, 2);
  assert.match((await cli(['cache', '--help'])).stdout, /attnwasm cache ls/);
});
