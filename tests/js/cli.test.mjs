// The CLI's batch mode (bin/attnwasm.mjs): translate reads one phrase per
// line from stdin or --input FILE and writes one line per input line (JSON
// lines with --json); classify takes many files and folders. A bad item in
// the middle is reported with its line number or file name, the others still
// complete, the exit code is 1, and a summary ends stderr. A progress bar
// appears on stderr only when it is a terminal (or with --progress). The
// one-item forms of translate and classify are tested in models.test.mjs;
// generate's here, all of them: streamed text against torch's reference and
// the library, seeds, JSON lines, batches, Ctrl-C, Hugging Face checkpoints.
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
after(() => { rmSync(dir, { recursive: true, force: true }); lm?.dispose(); });

const cli = (args, input) => spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', timeout: 60_000 });

// generate: the package's model and its torch reference (greedy, 40 tokens,
// not stopped at <eos>); a Hugging Face checkpoint without a tokenizer.
const LM = join(ROOT, 'models/lm/lm.safetensors');
const reference = JSON.parse(readFileSync(join(ROOT, 'models/lm/reference.json'), 'utf8')).items;
const HF_DIR = join(ROOT, 'tests/data/goldens/lm/models/llama_untied_gqa2_hd8');
const HF = { model: join(HF_DIR, 'model.safetensors'), config: join(HF_DIR, 'config.json') };
/** A batch line's text as a script reads it back: \n, \r, \t and \\ are a newline, a return, a tab and a backslash. */
const unescapeLine = (s) => s.replace(/\\([nrt\\])/g, (_, c) => ({ n: '\n', r: '\r', t: '\t', '\\': '\\' })[c]);
let lm;
/** Runs a generation to its end: the Generation (text, ids, stopReason, seed). */
async function finish(g) {
  for await (const t of g) void t;
  return g;
}
/** The library's generation of the same prompt and options, in this process, with the package's model. */
async function library(prompt, options) {
  lm ??= await (await init({ threads: 1 })).loadModel(LM);
  return finish(lm.generate(prompt, options));
}

/**
 * Spawns the CLI without waiting: onFirstOutput(child) runs at its first
 * stdout data. Resolves { code, signal, stdout, stderr, chunks, runningAtFirst }.
 */
function spawnCli(args, onFirstOutput = () => {}) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const r = { stdout: '', stderr: '', chunks: 0, runningAtFirst: null };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    r.stdout += d;
    if (r.chunks++ === 0) {
      r.runningAtFirst = child.exitCode === null && child.signalCode === null;
      r.first = d;
      onFirstOutput(child);
    }
  });
  child.stderr.on('data', (d) => { r.stderr += d; });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('close', (code, signal) => { clearTimeout(timer); resolve({ ...r, code, signal }); }));
}

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
    [['generate', 'The ', '--input', file], /^attnwasm: generate: give the prompt or --input, not both$/],
    [['generate', 'The ', 'end'], /^attnwasm: generate: unexpected argument 'end'/],
    [['generate', 'The ', '--temperature', 'hot'], /^attnwasm: --temperature: expected a number, got 'hot'$/],
    [['generate', '--temperature', '-1'], /^attnwasm: --temperature: expected a number in \[0, 1e6\] \(0: greedy\), got -1$/],
    [['generate', 'The ', '--top-k', '2.5'], /^attnwasm: --top-k: expected an integer, got 2\.5$/],
    [['generate', 'The ', '--top-p', '0'], /^attnwasm: --top-p: expected a number in \(0, 1\] \(1: off\), got 0$/],
    [['generate', 'The ', '--max-tokens', '0'], /^attnwasm: --max-tokens: expected an integer in \[1, \d+\], got 0$/],
    [['generate', 'The ', '--max-tokens', ''], /^attnwasm: --max-tokens: expected a number, got ''$/],
    [['generate', 'The ', '--seed', '1.5'], /^attnwasm: --seed: expected an integer, got 1\.5$/],
    [['generate', 'The ', '--seed'], /^attnwasm: --seed needs a value$/],
    [['generate', 'The ', '--config', 'config.json'], /^attnwasm: --config goes with --model/],
    [['generate', 'hi', '--model', HF.model, '--config', join(dir, 'absent.json')], /^attnwasm: --config: cannot read '.*absent\.json': ENOENT/],
    [['generate', 'hi', '--model', HF.model, '--config', HF.config],
      /^attnwasm: generate: this model has no tokenizer, so it takes no text: give --tokenizer tokenizer\.json, or the prompt as token ids with --ids/],
  ];
  for (const [args, message] of cases) {
    const r = cli(args, '');
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.trim(), message, args.join(' '));
    assert.equal(r.stdout, '');
  }
});

// ---- generate ----

test('--help and generate --help describe generate and its flags, with an example that runs', () => {
  for (const args of [['--help'], ['generate', '--help']]) {
    const r = cli(args);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^ {2}attnwasm generate "<prompt>" \[--max-tokens N\]/m);
    assert.match(r.stdout, /^ {2}attnwasm generate \[--input FILE\]/m);
    for (const flag of ['--max-tokens', '--temperature', '--top-k', '--top-p', '--seed', '--ignore-eos', '--echo', '--ids', '--config', '--tokenizer']) {
      assert.match(r.stdout, new RegExp(`^ {2}${flag}\\b.* generate`, 'm'), flag);
    }
  }
  const example = cli(['--help']).stdout.match(/^ +e\.g\. attnwasm (generate "Q: What is " --temperature 0\.8 --seed 7)$/m);
  assert.ok(example);
  const r = cli(['generate', 'Q: What is ', '--temperature', '0.8', '--seed', '7']);
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.length > 1 && r.stdout.endsWith('\n'));
});

test('generate: greedy text is torch\'s (models/lm/reference.json) and the library\'s; --echo; stops at <eos> by default', async () => {
  for (const it of reference) {
    const r = cli(['generate', it.prompt, '--max-tokens', String(it.greedyIds.length), '--ignore-eos']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${it.greedyText}\n`, JSON.stringify(it.prompt));
    assert.equal(r.stderr, '', 'greedy: no seed to print');
  }
  const echo = cli(['generate', 'The ', '--max-tokens', '40', '--ignore-eos', '--echo']);
  assert.equal(echo.stdout, `The ${reference[1].greedyText}\n`);
  // The defaults (200 tokens at most, stop at <eos>) against the library's.
  for (const prompt of ['Q: What is ', 'A penny saved ']) {
    const r = cli(['generate', prompt]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${(await library(prompt, { maxNewTokens: 200 })).text}\n`);
  }
});

test('generate --seed: the same text twice, as the library samples it; without --seed the seed drawn is printed and repeats the run', async () => {
  const args = ['generate', 'Q: What is ', '--temperature', '0.8', '--seed', '7', '--max-tokens', '120', '--ignore-eos'];
  const a = cli(args);
  const b = cli(args);
  assert.equal(a.status, 0, a.stderr);
  assert.equal(a.stderr, '', 'a seed given is not printed');
  assert.equal(a.stdout, b.stdout);
  assert.equal(a.stdout, `${(await library('Q: What is ', { temperature: 0.8, seed: 7, maxNewTokens: 120, stopTokens: [] })).text}\n`);
  assert.notEqual(cli([...args.slice(0, 5), '8', ...args.slice(6)]).stdout, a.stdout, 'another seed, another text');
  // --top-k and --top-p reach the sampler.
  const k = cli(['generate', 'The ', '--temperature', '1.5', '--top-k', '3', '--top-p', '0.9', '--seed', '11', '--max-tokens', '80']);
  assert.equal(k.stdout, `${(await library('The ', { temperature: 1.5, topK: 3, topP: 0.9, seed: 11, maxNewTokens: 80 })).text}\n`);
  const drawn = cli(['generate', 'Q: What is ', '--temperature', '0.8', '--max-tokens', '60']);
  assert.equal(drawn.status, 0, drawn.stderr);
  const m = drawn.stderr.match(/^attnwasm: sampling with seed (\d+) \(--seed \1 repeats it\)\n$/);
  assert.ok(m, drawn.stderr);
  assert.equal(cli(['generate', 'Q: What is ', '--temperature', '0.8', '--max-tokens', '60', '--seed', m[1]]).stdout, drawn.stdout);
});

test('generate --json: a line per token, whose texts join to the text, then the summary a script reads', () => {
  const it = reference[3];
  const r = cli(['generate', it.prompt, '--json', '--max-tokens', '40', '--ignore-eos']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const last = lines.pop();
  assert.deepEqual(lines.map((t) => t.index), [...it.greedyIds.keys()]);
  assert.deepEqual(lines.map((t) => t.id), it.greedyIds);
  for (const t of lines) {
    assert.deepEqual(Object.keys(t), ['index', 'id', 'text', 'ms']);
    assert.ok(Number.isFinite(t.ms) && t.ms >= 0);
  }
  assert.equal(lines.map((t) => t.text).join(''), it.greedyText);
  assert.deepEqual(Object.keys(last), ['prompt', 'text', 'ids', 'stopReason', 'seed', 'tokens', 'promptTokens', 'ms', 'firstTokenMs', 'tokensPerSecond']);
  assert.deepEqual({ ...last, seed: 0, ms: 0, firstTokenMs: 0, tokensPerSecond: 0 }, {
    prompt: it.prompt, text: it.greedyText, ids: it.greedyIds, stopReason: 'length', seed: 0, tokens: 40,
    promptTokens: it.promptIds.length, ms: 0, firstTokenMs: 0, tokensPerSecond: 0,
  });
  assert.ok(Number.isSafeInteger(last.seed));
  assert.ok(last.firstTokenMs > 0 && last.firstTokenMs <= last.ms && last.tokensPerSecond > 0, JSON.stringify(last));
  // A prompt the model cannot read: an error line, exit 1.
  const bad = cli(['generate', 'café', '--json']);
  assert.equal(bad.status, 1);
  assert.deepEqual(JSON.parse(bad.stdout), { prompt: 'café', error: { code: 'ERR_INVALID_ARGUMENT',
    message: "text: this model's vocabulary has no 'é' (U+00E9, character 3); it writes printable ASCII, tab and newline only" } });
  assert.match(bad.stderr, /^attnwasm: text: this model's vocabulary has no 'é'/);
});

test('generate: batch from --input or stdin, one line per prompt (newlines and tabs escaped), a bad line reported, the same seed on every line', async () => {
  const file = join(dir, 'prompts.txt');
  writeFileSync(file, ['The ', '', 'café au lait', 'Q: What is '].join('\n'));
  const expected = [await library('The ', { maxNewTokens: 120, stopTokens: [] }), await library('Q: What is ', { maxNewTokens: 120, stopTokens: [] })];
  assert.ok(expected[0].text.includes('\n'), 'the test covers a newline in the text');
  const r = cli(['generate', '--input', file, '--max-tokens', '120', '--ignore-eos']);
  assert.equal(r.status, 1, r.stderr);
  assert.deepEqual(r.stdout.split('\n').map(unescapeLine), [expected[0].text, '', '', expected[1].text, '']);
  assert.match(r.stdout, /\\n/);
  assert.match(r.stderr, /^attnwasm: line 3: text: this model's vocabulary has no 'é' \(U\+00E9, character 3\)/m);
  assert.match(r.stderr, /^attnwasm: 3 prompts in \d+\.\d\d s \(\d+(\.\d)?\/s\): 2 generated, 1 failed \(line 3\)$/m);
  // stdin, --json: an object per prompt; the error with its line.
  const j = cli(['generate', '--json', '--max-tokens', '120', '--ignore-eos'], readFileSync(file, 'utf8'));
  assert.equal(j.status, 1, j.stderr);
  const [a, bad, b] = j.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual([a.line, a.prompt, a.text, a.ids, a.stopReason, a.tokens], [1, 'The ', expected[0].text, expected[0].ids, 'length', 120]);
  assert.deepEqual([bad.line, bad.prompt, bad.error.code], [3, 'café au lait', 'ERR_INVALID_ARGUMENT']);
  assert.deepEqual([b.line, b.text], [4, expected[1].text]);
  assert.equal(a.seed, b.seed, 'one seed for the batch');
  // Sampling: every line gets the same seed, so equal prompts give equal lines, and each is the one-prompt run's text.
  const one = cli(['generate', 'Q: What is ', '--temperature', '0.8', '--seed', '5', '--max-tokens', '100']);
  const s = cli(['generate', '--temperature', '0.8', '--seed', '5', '--max-tokens', '100'], 'Q: What is \nThe \nQ: What is \n');
  assert.equal(s.status, 0, s.stderr);
  const lines = s.stdout.split('\n');
  assert.equal(lines.length, 4);
  assert.equal(unescapeLine(lines[0]), one.stdout.slice(0, -1));
  assert.equal(lines[2], lines[0]);
  assert.equal(unescapeLine(lines[1]), (await library('The ', { temperature: 0.8, seed: 5, maxNewTokens: 100 })).text);
  // Without --seed, the one drawn is printed once; --echo puts the prompt first.
  const drawn = cli(['generate', '--temperature', '0.8', '--max-tokens', '20', '--echo'], 'The \nThe \n');
  assert.match(drawn.stderr, /^attnwasm: sampling with seed \d+ \(--seed \d+ repeats it\)\n/);
  const [x, y] = drawn.stdout.split('\n');
  assert.ok(x.startsWith('The ') && x === y, drawn.stdout);
});

test('generate streams: the first tokens reach stdout while it is still generating', async () => {
  const r = await spawnCli(['generate', 'The ', '--max-tokens', '1000', '--ignore-eos']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `${(await library('The ', { maxNewTokens: 1000, stopTokens: [] })).text}\n`);
  assert.ok(r.runningAtFirst, 'the process was still running at the first output');
  assert.ok(r.chunks > 1 && r.first.length < r.stdout.length / 2, `first chunk ${r.first.length} of ${r.stdout.length} characters, ${r.chunks} chunks`);
});

test('generate: Ctrl-C stops a long generation cleanly (what was written stays, the line ends, exit 130); in a batch, with the summary', async () => {
  // A generation that would run for minutes: the small checkpoint with room for 10^6 positions.
  const big = join(dir, 'config_1m.json');
  writeFileSync(big, JSON.stringify({ ...JSON.parse(readFileSync(HF.config, 'utf8')), max_position_embeddings: 1_000_000 }));
  const long = ['generate', '--model', HF.model, '--config', big, '--ids', '1,5,7', '--max-tokens', '500000', '--ignore-eos'];
  const interrupt = (child) => child.kill('SIGINT');
  const r = await spawnCli(long, interrupt);
  assert.ok(r.runningAtFirst, 'streamed: output while running');
  assert.equal(r.code, 130, r.stderr);
  assert.match(r.stdout, /^\d+(,\d+)*\n$/);
  const n = r.stdout.split(',').length;
  assert.equal(r.stderr, `attnwasm: stopped (Ctrl-C) after ${n} tokens\n`);
  // --json: the token lines so far, then the summary with stopReason 'aborted'.
  const j = await spawnCli([...long, '--json'], interrupt);
  assert.equal(j.code, 130, j.stderr);
  assert.ok(j.stdout.endsWith('\n'));
  const lines = j.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const last = lines.pop();
  assert.equal(last.stopReason, 'aborted');
  assert.equal(last.tokens, lines.length);
  assert.deepEqual(last.ids, lines.map((t) => t.id));
  // A batch: stops in the prompt it is on (its line is written, cut short), then the summary.
  const many = join(dir, 'many_prompts.txt');
  writeFileSync(many, 'The \n'.repeat(200));
  const b = await spawnCli(['generate', '--input', many, '--max-tokens', '1000', '--ignore-eos'], interrupt);
  assert.equal(b.code, 130, b.stderr);
  const out = b.stdout.split('\n');
  assert.equal(out.pop(), '');
  assert.ok(out.length < 200, `${out.length} lines`);
  assert.equal(unescapeLine(out[0]), (await library('The ', { maxNewTokens: 1000, stopTokens: [] })).text);
  // The signal may come while a prompt runs (its line is cut short) or between two (the batch ends there).
  assert.ok(out.every((line) => out[0].startsWith(line)), 'each line is the text or the start of it');
  assert.match(b.stderr, new RegExp(`^attnwasm: stopped \\(Ctrl-C\\)\nattnwasm: ${out.length} prompts? in \\d+\\.\\d\\d s \\([\\d.]+/s\\): ${out.length} generated\n$`));
});

test('generate --model: a Hugging Face checkpoint with --config (token ids in and out with --ids), --tokenizer, wrong files', async () => {
  // The package's weights read as a Hugging Face checkpoint: torch's greedy ids.
  const it = reference[1];
  const r = cli(['generate', '--model', LM, '--config', join(ROOT, 'models/lm/config.json'), '--ids', it.promptIds.join(','),
    '--max-tokens', '40', '--ignore-eos']);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `${it.greedyIds.join(',')}\n`);
  // The small checkpoint, ids as the library gives them; --echo; spaces or commas.
  const aw = await init({ threads: 1 });
  const hf = await aw.loadModel(readFileSync(HF.model), { config: readFileSync(HF.config) });
  const g = await finish(hf.generate([1, 5, 7], { maxNewTokens: 12 }));
  hf.dispose();
  const ids = cli(['generate', '--model', HF.model, '--config', HF.config, '--ids', '1 5, 7', '--max-tokens', '12', '--echo']);
  assert.equal(ids.status, 0, ids.stderr);
  assert.equal(ids.stdout, `${[1, 5, 7, ...g.ids].join(',')}\n`);
  const j = cli(['generate', '--model', HF.model, '--config', HF.config, '--ids', '1,5,7', '--max-tokens', '12', '--json']);
  const last = JSON.parse(j.stdout.trim().split('\n').at(-1));
  assert.deepEqual([last.ids, last.stopReason, 'text' in last], [g.ids, g.stopReason, false]);
  // Batch of ids, a bad line among them.
  const batch = cli(['generate', '--model', HF.model, '--config', HF.config, '--ids', '--max-tokens', '12'], '1,5,7\n1,x\n1,99\n');
  assert.equal(batch.status, 1);
  assert.deepEqual(batch.stdout.split('\n'), [g.ids.join(','), '', '', '']);
  assert.match(batch.stderr, /^attnwasm: line 2: --ids: expected token ids separated by commas \(e\.g\. 1,2,3\), got 'x'$/m);
  assert.match(batch.stderr, /^attnwasm: line 3: prompt\[1\]: expected an integer in \[0, 60\], got 99$/m);
  // --tokenizer is read and given to the model (here one too large for its vocabulary).
  const tok = cli(['generate', 'hi', '--model', HF.model, '--config', HF.config, '--tokenizer', join(ROOT, 'tests/data/goldens/tokenizer/gpt2_3k.json')]);
  assert.equal(tok.status, 1);
  assert.match(tok.stderr, /^attnwasm: tokenizer: it has \d+ ids, more than the model's vocab_size \(61\)\n$/);
  const wrong = cli(['generate', 'hi', '--model', join(ROOT, 'models/translator/translator.safetensors')]);
  assert.equal(wrong.status, 1);
  assert.match(wrong.stderr, /^attnwasm: source: attnwasm.config: expected a "causal_lm" model, got "translator"\n$/);
});
