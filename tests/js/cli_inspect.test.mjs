// attnwasm inspect (bin/commands/inspect.mjs): the summary of a golden encoder folder names its family, its files
// with their roles, the tensors by dtype, the parameters, the estimated bytes for every dtype and the side files;
// --json prints inspect()'s report itself; --config gives a config.json; a checkpoint the runtime refuses exits
// with 1 and says why; usage mistakes exit with 2 before any work; a hub id is inspected through HF_ENDPOINT.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { startHub } from './hub_server.mjs';
import { lmConfig, lmTensors, safetensors } from './lm_checkpoint.mjs';

const CLI = fileURLToPath(new URL('../../bin/attnwasm.mjs', import.meta.url));
const golden = (p) => fileURLToPath(new URL(`../data/goldens/${p}`, import.meta.url));

/** Runs the CLI (asynchronously: a hub may answer from this process): { status, stdout, stderr }. */
const cli = (args, env = process.env) => new Promise((resolve) => {
  const p = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '', stderr = '';
  p.stdout.on('data', (d) => { stdout += d; });
  p.stderr.on('data', (d) => { stderr += d; });
  p.on('close', (status) => resolve({ status, stdout, stderr }));
});

test('attnwasm inspect <folder>: the summary; --json the report', async () => {
  const dir = golden('encoders/bert_mean_norm_pooler');
  const r = await cli(['inspect', dir]);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n');
  assert.equal(lines[0], `${dir}: an encoder (Embedder), model_type "bert"`);
  assert.match(r.stdout, /^ {2}model\.safetensors +weights +164 kB$/m);
  assert.match(r.stdout, /^ {2}1_Pooling\/config\.json +sentence-transformers +190 B$/m);
  assert.match(r.stdout, /^tensors: 39 \(39 F32\); parameters: 40 000$/m);
  // The runtime's exact bytes (aw.inspect: a dry run of the loader), not the standalone estimate.
  assert.match(r.stdout, /^weights in memory:$/m);
  assert.match(r.stdout, /^ {2}q4 +28\.86 kB {2}\(f32 3\.20 kB, q4 25\.66 kB\)$/m);
  assert.match(r.stdout, /^side files: tokenizer: tokenizer\.json; chat template: none; generation config: none; preprocessor config: none; sentence-transformers: modules\.json$/m);
  assert.equal(r.stderr, '');
  const json = await cli(['inspect', dir, '--json']);
  assert.equal(json.status, 0);
  const aw = await init({ threads: 1 });
  try {
    assert.deepEqual(JSON.parse(json.stdout), JSON.parse(JSON.stringify(await aw.inspect(dir))));
  } finally {
    await aw.close();
  }
});

test('a refused checkpoint exits with 1 and says why; --config; usage errors exit with 2', async () => {
  const gpt2 = await cli(['inspect', golden('lm/refusals/model_type_gpt2')]);
  assert.equal(gpt2.status, 1);
  assert.match(gpt2.stdout, /^refused: ERR_INVALID_ARGUMENT: config\.model_type: expected a causal LM's .*, got "gpt2"$/m);
  const withConfig = await cli(['inspect', golden('lm/refusals/model_type_gpt2/model.safetensors'), '--config', golden('lm/models/llama_bias_gqa4_hd64/config.json')]);
  // Another model's config.json: the family is the config's, and the runtime refuses the tensors by name (what the
  // standalone inspect, which does not read a family's tensor names, cannot).
  assert.equal(withConfig.status, 1, withConfig.stdout);
  assert.match(withConfig.stdout, /: a causal LM \(CausalLM\), model_type "llama"\n/);
  assert.match(withConfig.stdout, /^refused: ERR_STATE_DICT: stateDict: error\(s\) loading state_dict for CausalLM: missing key\(s\)/m);
  for (const [args, message] of [
    [['inspect'], /^attnwasm: inspect: name one checkpoint \(a folder, a URL, a file or a hub id\), got 0$/],
    [['inspect', 'a', 'b'], /got 2$/],
    [['inspect', 'x', '--dtype', 'q8'], /^attnwasm: inspect: unknown option --dtype \(see attnwasm inspect --help\)$/],
    [['inspect', 'x', '--config', '/nonexistent.json'], /^attnwasm: --config: cannot read '\/nonexistent\.json'/],
  ]) {
    const r = await cli(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.trimEnd(), message);
    assert.equal(r.stdout, '');
  }
  const missing = await cli(['inspect', '/nonexistent/folder/']);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /^attnwasm: source: /);
  const help = await cli(['inspect', '--help']);
  assert.match(help.stdout, /^Usage:\n {2}attnwasm inspect <folder\|url\|file\|organisation\/name>/m);
  assert.match((await cli(['--help'])).stdout, /^ {2}attnwasm inspect <folder\|url\|file\|organisation\/name> \[--json\]$/m);
});

test('a hub id, from HF_ENDPOINT, with nothing kept in the cache', async () => {
  const config = lmConfig();
  const hub = await startHub({ 'org/tiny': { main: { 'model.safetensors': safetensors(lmTensors(config)), 'config.json': config } } });
  const cache = mkdtempSync(join(tmpdir(), 'attnwasm-cli-inspect-'));
  try {
    const r = await cli(['inspect', 'org/tiny', '--json'], { ...process.env, HF_ENDPOINT: hub.host, ATTNWASM_CACHE: cache });
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout);
    assert.equal(report.source, 'hub');
    assert.equal(report.family.kind, 'causal_lm');
    assert.equal(report.tensors.length, 21);
  } finally {
    await hub.close();
    rmSync(cache, { recursive: true, force: true });
  }
});
