// The CLI's batch mode (bin/attnwasm.mjs): translate reads one phrase per
// line from stdin or --input FILE and writes one line per input line (JSON
// lines with --json); classify takes many files and folders. A bad item in
// the middle is reported with its line number or file name, the others still
// complete, the exit code is 1, and a summary ends stderr. A progress bar
// appears on stderr only when it is a terminal (or with --progress). The
// one-item forms are tested in models.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'bin/attnwasm.mjs');
const heldout = JSON.parse(readFileSync(join(ROOT, 'models/translator/heldout_expected.json'), 'utf8'));
const [EN, FR, DE] = [0, 1, 2].map((c) => heldout.items.slice(0, 6).map((row) => row[c]));
const SUMMARY = (n, ok, failed) => new RegExp(`^attnwasm: ${n} phrases in \\d+\\.\\d\\d s \\(\\d+(\\.\\d)?/s\\): ${ok} translated${failed ? `, ${failed}` : ''}$`, 'm');

let dir;
before(() => { dir = mkdtempSync(join(tmpdir(), 'attnwasm-cli-batch-')); });
after(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args, input) => spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', timeout: 60_000 });

test('translate: stdin, one line out per line in; a bad line in the middle; blank lines stay blank', () => {
  const input = [EN[0], EN[1], '', 'forty-twoo', EN[2], '   ', EN[3]].join('\n') + '\n';
  const r = cli(['translate'], input);
  assert.equal(r.status, 1, r.stderr);
  assert.deepEqual(r.stdout.split('\n'), [FR[0], FR[1], '', '', FR[2], '', FR[3], '']);
  assert.match(r.stderr, /^attnwasm: line 4: text: 'forty-twoo' is not a number from 0 to 999 999: 'twoo' is not an English number word\. Did you mean 'forty-two'\?$/m);
  assert.match(r.stderr, SUMMARY(5, 4, '1 failed \\(line 4\\)'));
  assert.doesNotMatch(r.stderr, /\r/, 'no progress bar when stderr is not a terminal');
  // All good: exit 0, CRLF input, no trailing newline.
  const ok = cli(['translate', '--to', 'de'], `${EN[4]}\r\n${EN[5]}`);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout, `${DE[4]}\n${DE[5]}\n`);
  assert.match(ok.stderr, SUMMARY(2, 2));
});

test('translate --input FILE --json: one JSON object per phrase, errors with their line', () => {
  const file = join(dir, 'phrases.txt');
  writeFileSync(file, [EN[0], '', 'seventy-one', 'seventy-sevven', EN[1]].join('\n'));
  const r = cli(['translate', '--input', file, '--json', '--to', 'de']);
  assert.equal(r.status, 1, r.stderr);
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((o) => o.line), [1, 3, 4, 5]);
  const [a, b, bad, c] = lines;
  assert.deepEqual({ input: a.input, text: a.text }, { input: EN[0], text: DE[0] });
  assert.deepEqual(b.tokens, ['ein', 'und', 'siebzig']);
  assert.equal(b.text, 'einundsiebzig');
  for (const o of [a, b, c]) assert.ok(Number.isFinite(o.ms) && o.ms >= 0, `ms: ${o.ms}`);
  assert.equal(bad.input, 'seventy-sevven');
  assert.equal(bad.error.code, 'ERR_NOT_A_NUMBER');
  assert.match(bad.error.message, /^text: 'seventy-sevven' is not a number from 0 to 999 999: 'sevven' is not an English number word/);
  assert.equal(bad.error.suggestion, 'seventy-seven');
  assert.equal(c.text, DE[1]);
  assert.match(r.stderr, /^attnwasm: line 4: text: 'seventy-sevven' is not a number/m);
  assert.match(r.stderr, SUMMARY(4, 3, '1 failed \\(line 4\\)'));
  // The one-phrase form with --json: one object, no summary.
  const one = cli(['translate', 'forty-two', '--json']);
  assert.equal(one.status, 0);
  assert.deepEqual(JSON.parse(one.stdout).text, 'quarante-deux');
  assert.equal(one.stderr, '');
  // Typed variants in a batch: translated, and JSON says what the model saw.
  const typed = cli(['translate', '--json'], 'Forty  Two\n1,234\none hundred and five\n');
  assert.equal(typed.status, 0, typed.stderr);
  const t = typed.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(t.map((o) => [o.input, o.normalized, o.text]), [
    ['Forty  Two', 'forty two', 'quarante-deux'],
    ['1,234', 'one thousand two hundred thirty-four', 'mille deux cent trente-quatre'],
    ['one hundred and five', 'one hundred and five', 'cent cinq'],
  ]);
  // One digit phrase: stderr says what was translated.
  const dig = cli(['translate', '42']);
  assert.equal(dig.status, 0, dig.stderr);
  assert.equal(dig.stdout, 'quarante-deux\n');
  assert.equal(dig.stderr, "attnwasm: translated 'forty-two'\n");
});

test('classify: folders and files; a bad file is reported by name, the rest complete', async () => {
  const aw = await init({ threads: 1 });
  const digits = aw.loadSafetensors(readFileSync(join(ROOT, 'models/vit/heldout.safetensors')));
  const pixels = (i) => Buffer.from(digits.images.data.subarray(i * 784, (i + 1) * 784));
  const label = (i) => String(digits.labels.data[i]);
  const folder = join(dir, 'digits');
  mkdirSync(folder);
  // Numeric order (d2 before d10); notes.txt is not an image file.
  writeFileSync(join(folder, 'd1.pgm'), Buffer.concat([Buffer.from('P5\n28 28\n255\n'), pixels(1)]));
  writeFileSync(join(folder, 'd2.raw'), pixels(2));
  writeFileSync(join(folder, 'd10.pgm'), Buffer.concat([Buffer.from('P5\n28 28\n255\n'), pixels(10)]));
  writeFileSync(join(folder, 'bad.png'), 'this is not an image');
  writeFileSync(join(folder, 'notes.txt'), 'ignored');
  const single = join(dir, 'd3.raw');
  writeFileSync(single, pixels(3));
  const missing = join(dir, 'nope.pgm');
  const r = cli(['classify', folder, single, missing]);
  assert.equal(r.status, 1, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), [
    `${join(folder, 'd1.pgm')}\t${label(1)}`, `${join(folder, 'd2.raw')}\t${label(2)}`, `${join(folder, 'd10.pgm')}\t${label(10)}`,
    `${single}\t${label(3)}`]);
  assert.match(r.stderr, new RegExp(`^attnwasm: ${join(folder, 'bad.png')}: not a PNG, a PGM or a raw 28×28 file of 784 bytes$`, 'm'));
  assert.match(r.stderr, new RegExp(`^attnwasm: ${missing}: ENOENT`, 'm'));
  assert.match(r.stderr, new RegExp(`^attnwasm: 6 images in \\d+\\.\\d\\d s \\(\\d+(\\.\\d)?/s\\): 4 classified, 2 failed \\(${join(folder, 'bad.png')}, ${missing}\\)$`, 'm'));
  // --json --probs
  const j = cli(['classify', folder, '--json']);
  const objs = j.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(objs.map((o) => o.file), ['bad.png', 'd1.pgm', 'd2.raw', 'd10.pgm'].map((n) => join(folder, n)));
  assert.equal(objs[0].error.code, 'ERR_INVALID_ARGUMENT');
  assert.equal(objs[1].label, label(1));
  assert.equal(objs[1].probabilities.length, 10);
  assert.ok(Math.abs(objs[1].probabilities.reduce((a, b) => a + b, 0) - 1) < 1e-4);
  const p = cli(['classify', single, join(folder, 'd1.pgm'), '--probs']);
  assert.equal(p.status, 0, p.stderr);
  assert.match(p.stdout.split('\n')[0], new RegExp(`^${single}\\t${label(3)}\\t(\\d\\.\\d{4} ){9}\\d\\.\\d{4}$`));
});

test('progress bar: on a terminal (or --progress) it shows count, rate and time left, then clears; never on a pipe', () => {
  const file = join(dir, 'many.txt');
  writeFileSync(file, `${heldout.items.slice(0, 300).map((row) => row[0]).join('\n')}\n`);
  const forced = cli(['translate', '--input', file, '--progress']);
  assert.equal(forced.status, 0, forced.stderr);
  assert.match(forced.stderr, /\r\x1b\[K\[[#.]{24}\] \d+\/300 phrases {2}\d+\/s {2}[\d.]+s left/);
  assert.match(forced.stderr, /\r\x1b\[Kattnwasm: 300 phrases in/, 'the bar is cleared before the summary');
  assert.equal(forced.stdout.split('\n').length, 301);
  const piped = cli(['translate', '--input', file]);
  assert.doesNotMatch(piped.stderr, /\r|\x1b/);
  // A real terminal: util-linux script(1) gives the CLI a pseudo-terminal.
  const tty = spawnSync('script', ['-qec', `${process.execPath} ${CLI} translate --input ${file} > /dev/null`, '/dev/null'], { encoding: 'utf8', timeout: 60_000 });
  if (tty.error) return; // no script(1) here
  assert.equal(tty.status, 0, tty.stdout);
  assert.match(tty.stdout, /\[[#.]{24}\] \d+\/300 phrases/);
  const noBar = spawnSync('script', ['-qec', `${process.execPath} ${CLI} translate --input ${file} --no-progress > /dev/null`, '/dev/null'], { encoding: 'utf8', timeout: 60_000 });
  assert.doesNotMatch(noBar.stdout, /phrases {2}\d+\/s/);
});

test('a reader that stops early (| head -1): the CLI stops quietly', async () => {
  const file = join(dir, 'long.txt');
  writeFileSync(file, `${heldout.items.slice(0, 2000).map((row) => row[0]).join('\n')}\n`);
  const child = spawn(process.execPath, [CLI, 'translate', '--input', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /EPIPE|Error/);
});

test('usage errors exit 2 before any work', () => {
  const file = join(dir, 'one.txt');
  writeFileSync(file, 'one\n');
  const empty = join(dir, 'empty');
  mkdirSync(empty);
  const cases = [
    [['translate', 'one', '--input', file], /^attnwasm: translate: give the text or --input, not both$/],
    [['translate', '--input', join(dir, 'absent.txt')], /^attnwasm: --input: cannot read '.*absent\.txt': ENOENT/],
    [['translate', '--to', 'it'], /^attnwasm: --to: expected one of fr, de, got 'it'$/],
    [['translate', '--beam', 'two'], /^attnwasm: --beam: expected a whole number >= 1, got 'two'$/],
    [['translate', '--input'], /^attnwasm: --input needs a value$/],
    [['translate', 'one', 'two'], /^attnwasm: translate: unexpected argument 'two'/],
    [['classify'], /^attnwasm: classify: missing the image file/],
    [['classify', empty], /^attnwasm: .*empty: no \.png, \.pgm or \.raw files in this folder$/],
    [['frobnicate'], /^attnwasm: unknown command 'frobnicate'/],
  ];
  for (const [args, message] of cases) {
    const r = cli(args, '');
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.trim(), message, args.join(' '));
    assert.equal(r.stdout, '');
  }
});
