// attnwasm embed (bin/commands/embed.mjs): texts as arguments, lines from --input FILE or stdin, one
// vector per line (space-separated float32s, or --json arrays) equal to what the library's embed() gives
// (each number read back is the float32 it was), in input order whatever the batch size; the folder's
// sentence-transformers files and the flags over them; progress (--progress) and a summary on stderr for
// lines; usage errors exit 2, failed loads 1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { encoderFolder, writeFolder } from './embedder_checkpoint.mjs';

const CLI = fileURLToPath(new URL('../../bin/attnwasm.mjs', import.meta.url));
const cli = (args, input) => spawnSync(process.execPath, [CLI, 'embed', ...args], { input, encoding: 'utf8', timeout: 60_000 });
const TEXTS = ['Hello world.', 'the quick brown fox', '', 'a cat sat on the mat', '  spaced  ', 'searching', 'the dog ran and ran'];

let dir, folder, aw;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'attnwasm-cli-embed-'));
  folder = writeFolder(join(dir, 'bert'), encoderFolder({ normalize: true }));
  // The CLI runs in a Node without --experimental-wasm-relaxed-simd: the baseline build, whatever this one runs.
  aw = await init({ threads: 1, relaxedSimd: false });
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await aw.close();
});

/** stdout's lines as float32 rows (space-separated or JSON arrays). */
function rows(stdout, json = false) {
  const lines = stdout.split('\n');
  assert.equal(lines.pop(), '', 'ends with a newline');
  return lines.map((l) => Float32Array.from(json ? JSON.parse(l) : l.split(' ').map(Number)));
}
/** The rows equal the library's embeddings bit for bit. */
function same(got, want, what) {
  assert.equal(got.length, want.shape[0], `${what}: lines`);
  const d = want.shape[1];
  got.forEach((row, i) => assert.deepEqual(row, want.data.subarray(i * d, (i + 1) * d), `${what}: line ${i + 1}`));
}

test('texts as arguments: one vector per text, the library\'s float32s', async () => {
  const e = await aw.loadModel(folder);
  const want = await e.embed(TEXTS);
  const r = cli(['--model', folder, ...TEXTS]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  same(rows(r.stdout), want, 'text');
  const j = cli(['--model', folder, '--json', ...TEXTS]);
  assert.equal(j.status, 0, j.stderr);
  same(rows(j.stdout, true), want, '--json');
  e.dispose();
});

test('lines from --input FILE or stdin, any batch size: input order, blank lines included, a summary on stderr', async () => {
  const lines = Array.from({ length: 45 }, (_, i) => (i % 9 === 4 ? '' : `${TEXTS[i % TEXTS.length] || 'empty'} ${'on the mat '.repeat(i % 4)}`.trim()));
  const file = join(dir, 'lines.txt');
  writeFileSync(file, `${lines.join('\r\n')}\n`);
  const e = await aw.loadModel(folder);
  const want = await e.embed(lines);
  for (const [what, args, input] of [['--input', ['--input', file]], ['stdin', [], `${lines.join('\n')}\n`], ['--input -', ['--input', '-'], lines.join('\n')],
    ['--batch-size 4', ['--input', file, '--batch-size', '4']], ['--batch-size 1', ['--input', file, '--batch-size', '1']]]) {
    const r = cli(['--model', folder, ...args], input);
    assert.equal(r.status, 0, `${what}: ${r.stderr}`);
    same(rows(r.stdout), want, what);
    assert.match(r.stderr, /^attnwasm: 45 texts in \d+\.\d\d s \(\d+(\.\d)?\/s\): 45 embedded\n$/, `${what}: summary only (stderr is no terminal)`);
  }
  const p = cli(['--model', folder, '--input', file, '--batch-size', '8', '--progress']);
  assert.equal(p.status, 0, p.stderr);
  assert.match(p.stderr, /\r\x1b\[K\[#*\.*\] \d+\/45 texts/, 'a progress bar with --progress');
  e.dispose();
});

test('the folder decides pooling and Normalize; --pooling, --no-normalize, --normalize, --prompt, --dtype, --threads and files override', async () => {
  const files = encoderFolder({ normalize: false, pooling: { pooling_mode_cls_token: true } });
  const plainDir = writeFolder(join(dir, 'cls'), files);
  const check = async (args, options, what, embedOptions = {}) => {
    const r = cli(['--model', plainDir, ...args, ...TEXTS]);
    assert.equal(r.status, 0, `${what}: ${r.stderr}`);
    const e = await aw.loadModel(plainDir, options);
    same(rows(r.stdout), await e.embed(TEXTS, embedOptions), what);
    e.dispose();
  };
  await check([], {}, 'the folder: cls, not normalized');
  await check(['--pooling', 'mean+max', '--normalize'], { pooling: 'mean+max', normalize: true }, '--pooling --normalize');
  await check(['--pooling', 'lasttoken', '--no-normalize', '--prompt', 'query: '], { pooling: 'lasttoken', normalize: false }, '--prompt', { prompt: 'query: ' });
  await check(['--dtype', 'q8', '--threads', '2'], { dtype: 'q8' }, '--dtype q8 on 2 threads');
  // model.safetensors with --config and --tokenizer (no sentence-transformers files: mean).
  const r = cli(['--model', join(plainDir, 'model.safetensors'), '--config', join(plainDir, 'config.json'), '--tokenizer', join(plainDir, 'tokenizer.json'), ...TEXTS]);
  assert.equal(r.status, 0, r.stderr);
  const e = await aw.loadModel(files.get('model.safetensors'), { config: files.get('config.json'), tokenizer: files.get('tokenizer.json') });
  assert.equal(e.pooling, 'mean');
  same(rows(r.stdout), await e.embed(TEXTS), 'model.safetensors with --config and --tokenizer');
  e.dispose();
});

test('usage errors exit 2 naming the flag; a model that fails to load exits 1', () => {
  const usage = [
    [[], /^attnwasm: embed: --model is needed/],
    [['--model', folder, '--input', 'x', 'text'], /^attnwasm: embed: give the texts or --input, not both/],
    [['--model', folder, '--batch-size', '0', 'x'], /^attnwasm: --batch-size: expected a whole number >= 1, got '0'/],
    [['--model', folder, '--threads', 'many', 'x'], /^attnwasm: --threads: expected a whole number >= 1, got 'many'/],
    [['--model', folder, '--pooling', 'avg', 'x'], /^attnwasm: --pooling: expected one of 'cls', 'max', 'mean'/],
    [['--model', folder, '--temperature', '1', 'x'], /^attnwasm: embed: unknown option --temperature/],
    [['--model', folder, '--input', join(dir, 'missing.txt')], /^attnwasm: --input: cannot read/],
    [['--model'], /^attnwasm: --model needs a value/],
    [['--model', join(folder, 'model.safetensors'), '--config', join(folder, 'config.json'), 'x'], /^attnwasm: embed: this model has no tokenizer/],
  ];
  for (const [args, re] of usage) {
    const r = cli(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
    assert.equal(r.stdout, '');
  }
  const bad = cli(['--model', join(dir, 'nowhere'), 'x']);
  assert.equal(bad.status, 1, bad.stderr);
  assert.match(bad.stderr, /^attnwasm: /);
  const h = cli(['--help']);
  assert.equal(h.status, 0);
  assert.match(h.stdout, /^attnwasm embed — sentence embeddings/);
});
