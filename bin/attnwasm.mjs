#!/usr/bin/env node
// attnwasm command line: the demo models from Node, one item or many.
//   attnwasm translate "forty-two" [--to fr|de] [--beam N]     one phrase
//   attnwasm translate [--input FILE] [--json]                 one phrase per line (stdin by default)
//   attnwasm classify digit.png|digit.pgm|digit.raw            one image
//   attnwasm classify a.png b.pgm folder/ [--json]             many images, folders
// Many items run in one process (one start-up, one model load): each item
// goes through translateItem/classifyItem, and an error thrown there becomes
// that item's error line while the others complete (exit code 1 at the end).
// A progress bar goes to stderr when it is a terminal, a summary at the end.
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { init, AttnWasmError } from '../bindings/index.js';
import { decodePgm, decodePng, greyToInk, mnistPreprocess } from '../bindings/helpers/index.js';

const HELP = `attnwasm — PyTorch-exact attention in WebAssembly: the demo models from Node

Usage:
  attnwasm translate "<English number words>" [--to fr|de] [--beam N] [--model FILE]
      Prints the French (default) or German spelling on one line. Numbers 0 to
      999 999 as people write them: "forty two", "one hundred and five",
      "a thousand", "eleven hundred", "1,234". Anything else is refused with
      a message on stderr and exit status 1.
      e.g. attnwasm translate "three hundred seventy-one" --to de
  attnwasm translate [--input FILE] [--json] [--to fr|de] [--beam N] [--model FILE]
      Without text: one phrase per line of FILE (or of stdin), one output line
      per input line: the translation, or an empty line for a phrase that
      fails (its line number and error go to stderr). Blank lines stay blank.
      e.g. attnwasm translate --to de < phrases.txt > german.txt
  attnwasm classify <image> [--model FILE] [--probs]
      Classifies a handwritten digit: a PNG (8-bit), a PGM (P2/P5) or a raw
      28×28 file of 784 bytes (255 = ink). Prints the digit (and with --probs
      the probability of each class).
  attnwasm classify <image|folder>... [--json] [--probs] [--model FILE]
      Several images, or folders (their .png, .pgm and .raw files, sorted):
      one line per image, "<file><TAB><digit>" (--probs: a TAB and the ten
      probabilities); a file that fails is reported on stderr.
  attnwasm --help | --version

Options:
  --to LANG        target language of translate: fr (French) or de (German)
  --beam N         beam size (1 = greedy, the default)
  --model FILE     a model file other than the one shipped in the package
  --probs          classify: also print the class probabilities
  --input FILE     translate: read the phrases from FILE ('-' = stdin)
  --json           one JSON object per line: translate {line, input, text,
                   tokens, ms}, classify {file, label, probabilities, ms};
                   a failed item {line|file, input, error: {code, message}}
  --progress, --no-progress
                   a progress bar on stderr (count, rate, time left); by
                   default only when stderr is a terminal

Many items (stdin, --input, several images, a folder) end with a summary on
stderr; the exit code is 1 if any item failed, 2 for a usage error.
`;

const MODELS = {
  translate: new URL('../models/translator/translator.safetensors', import.meta.url),
  classify: new URL('../models/vit/vit.safetensors', import.meta.url),
};
const VALUED = ['--to', '--beam', '--model', '--input'];
// One thread: the demo models are too small for the pthreads build to pay
// off. Measured on 2 cores (Node 20): init() 45 ms faster; 500 translations
// as fast; 300 classifications 0.9–1.4 s against 1.5–1.8 s with 'auto'. The
// results are bit-identical either way.
const THREADS = 1;
const IMAGE_EXT = /\.(png|pgm|raw)$/i;

class UsageError extends Error {
  code = 'ERR_USAGE';
}

function parse(argv) {
  const args = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') args.help = true;
    else if (a === '--version' || a === '-v') args.version = true;
    else if (a === '--probs' || a === '--json') args[a.slice(2)] = true;
    else if (a === '--progress' || a === '--no-progress') args.progress = a === '--progress';
    else if (VALUED.includes(a)) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      args[a.slice(2)] = argv[++i];
    } else if (a.startsWith('--')) throw new UsageError(`unknown option ${a} (see --help)`);
    else args._.push(a);
  }
  return args;
}

// ---- the items ----

/**
 * One phrase through the translator: { text, tokens, input } where input is
 * what the model translated (typed digits and commas become words first).
 * Throws what translate() throws (ERR_NOT_A_NUMBER for a non-number).
 */
function translateItem(tr, phrase, options) {
  const r = tr.translate(phrase, options);
  return { text: r.text, tokens: r.tokens, input: r.input };
}
/** Whether the translator changed more than case and spaces of what was typed. */
const rewritten = (typed, normalised) => normalised !== typed.trim().toLowerCase().replace(/\s+/g, ' ');

async function readImage(path) {
  const bytes = new Uint8Array(await readFile(path));
  if (bytes.length === 784 && !/\.(png|pgm)$/i.test(path)) return Float32Array.from(bytes, (b) => b / 255);
  const img = bytes[0] === 0x89 ? await decodePng(bytes) : bytes[0] === 0x50 ? decodePgm(bytes) : null;
  if (!img) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'not a PNG, a PGM or a raw 28×28 file of 784 bytes');
  const ink = greyToInk(img);
  // A 28×28 image is taken as MNIST-formatted already; anything else is
  // centred and scaled the way MNIST digits are.
  if (img.width === 28 && img.height === 28) return ink;
  const digit = mnistPreprocess(ink, img.width, img.height);
  if (!digit) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'the image has no ink (expected a dark digit on a light background, or light on dark)');
  return digit;
}

/** One image file through the classifier: { label, probabilities }. */
async function classifyItem(clf, path) {
  const r = clf.classify(await readImage(path));
  return { label: r.label, probabilities: Array.from(r.probabilities) };
}

/** The bytes (or with `encoding` the text) of a file named by a flag; a file that cannot be read is a usage error. */
async function readFlagFile(flag, path, encoding) {
  try {
    return await readFile(path, encoding);
  } catch (e) {
    throw new UsageError(`${flag}: cannot read '${path}': ${e.message}`);
  }
}

/**
 * The lines of a batch (translate's phrases, generate's prompts), from
 * --input FILE or stdin: { items: {line, input}…, total } (total null while
 * stdin is typed). Typed lines stop coming once `signal` is aborted.
 */
async function inputLines(args, signal) {
  const source = args.input ?? '-';
  let text;
  if (source !== '-') {
    text = await readFlagFile('--input', source, 'utf8');
  } else if (process.stdin.isTTY) {
    // Typed at a terminal: each line is an item as soon as it is entered.
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    signal?.addEventListener('abort', () => lines.close());
    async function* typed() {
      let n = 0;
      for await (const line of lines) yield { line: ++n, input: line };
    }
    return { items: typed(), total: null };
  } else {
    const chunks = [];
    for await (const c of process.stdin) chunks.push(c);
    text = Buffer.concat(chunks).toString('utf8');
  }
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const items = lines.map((input, i) => ({ line: i + 1, input }));
  return { items, total: items.filter((it) => it.input.trim()).length };
}

/** The image files of classify's arguments: folders expand to their images, sorted by name. */
async function imageFiles(paths) {
  const byName = new Intl.Collator('en', { numeric: true }).compare;
  const files = [];
  for (const p of paths) {
    let isDir = false;
    try {
      isDir = (await stat(p)).isDirectory();
    } catch {
      // reported as that file's error
    }
    if (!isDir) {
      files.push(p);
      continue;
    }
    const names = (await readdir(p)).filter((n) => IMAGE_EXT.test(n) && !n.startsWith('.')).sort(byName);
    if (!names.length) throw new UsageError(`${p}: no .png, .pgm or .raw files in this folder`);
    for (const n of names) files.push(join(p, n));
  }
  return files;
}

// ---- many items: progress, summary ----

const fmtTime = (s) => (s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`
  : s >= 60 ? `${Math.floor(s / 60)}m${String(Math.floor(s) % 60).padStart(2, '0')}s` : `${s.toFixed(s < 10 ? 1 : 0)}s`);

/**
 * A one-line progress bar on stderr: count, rate and time left (with a known
 * total). Redrawn at most every 100 ms; note() prints a line above it.
 */
function progressBar(enabled, total, noun) {
  const t0 = performance.now();
  let done = 0, shown = false, last = 0;
  const draw = (now) => {
    const s = (now - t0) / 1000;
    const rate = done / Math.max(s, 1e-9);
    let line;
    if (total) {
      const width = 24, filled = Math.round((width * done) / total);
      const left = rate > 0 ? fmtTime((total - done) / rate) : '?';
      line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${noun}  ${rate.toFixed(0)}/s  ${left} left`;
    } else {
      line = `${done} ${noun}  ${rate.toFixed(0)}/s  ${fmtTime(s)}`;
    }
    process.stderr.write(`\r\x1b[K${line}`);
    shown = true;
    last = now;
  };
  const clear = () => {
    if (shown) process.stderr.write('\r\x1b[K');
    shown = false;
  };
  return {
    tick() {
      done++;
      const now = performance.now();
      if (enabled && now - last >= 100) draw(now);
    },
    note(line) {
      const wasShown = shown;
      clear();
      process.stderr.write(`${line}\n`);
      if (wasShown) draw(performance.now());
    },
    clear,
  };
}

/**
 * Runs `work(item)` (which may throw) on each item of `items` (an array or an
 * async iterable), in order; `write(item, value, ms)` prints a result,
 * `writeError(item, error)` a failure's stdout line (if any); failures are
 * also noted on stderr as "<label>: <message>". An item for which `skip`
 * says true is no item: write(item, null) only. Yields to the event loop
 * every 100 ms (for a closed pipe, Ctrl-C); once `signal` is aborted no
 * further item starts. Returns { count, failed, ms }.
 */
async function runBatch(items, { total, noun, label, skip = () => false, work, write, writeError, progress, signal }) {
  const bar = progressBar(progress, total, noun);
  const failed = [];
  let count = 0;
  const t0 = performance.now();
  let yielded = t0;
  for await (const item of items) {
    if (signal?.aborted) break;
    if (skip(item)) {
      write(item, null);
      continue;
    }
    const t = performance.now();
    try {
      const value = await work(item);
      write(item, value, performance.now() - t);
    } catch (e) {
      failed.push(item);
      writeError(item, e);
      bar.note(`attnwasm: ${label(item)}: ${e.message}`);
    }
    count++;
    bar.tick();
    if (performance.now() - yielded > 100) {
      await new Promise((resolve) => setImmediate(resolve));
      yielded = performance.now();
    }
  }
  bar.clear();
  return { count, failed, ms: performance.now() - t0 };
}

/** "attnwasm: 1000 phrases in 2.31 s (433/s): 998 translated, 2 failed (line 17, line 503)" */
function summary({ count, failed, ms }, noun, verb, label) {
  const s = ms / 1000;
  const shown = failed.slice(0, 10).map(label).join(', ') + (failed.length > 10 ? ', …' : '');
  const rate = count && s > 0 ? ` (${(count / s).toFixed(count / s < 10 ? 1 : 0)}/s)` : '';
  return `attnwasm: ${count} ${count === 1 ? noun.replace(/s$/, '') : noun} in ${s.toFixed(2)} s${rate}: ${count - failed.length} ${verb}`
    + (failed.length ? `, ${failed.length} failed (${shown})` : '');
}

const errorJson = (e) => ({ code: e.code ?? 'ERR_INTERNAL', message: e.message, ...(e.suggestion ? { suggestion: e.suggestion } : {}) });
const round = (ms) => Math.round(ms * 1000) / 1000;

async function translateCommand(args, text) {
  if (text !== undefined && args.input !== undefined) throw new UsageError('translate: give the text or --input, not both');
  const aw = await init({ threads: THREADS });
  const tr = await aw.loadTranslator(args.model ?? MODELS.translate);
  const to = args.to ?? tr.languages[0];
  if (!tr.languages.includes(to)) throw new UsageError(`--to: expected one of ${tr.languages.join(', ')}, got '${to}'`);
  const beamSize = args.beam === undefined ? 1 : Number(args.beam);
  if (!Number.isInteger(beamSize) || beamSize < 1) throw new UsageError(`--beam: expected a whole number >= 1, got '${args.beam}'`);
  const options = { to, beamSize };
  const out = (s) => process.stdout.write(`${s}\n`);
  if (text !== undefined && !args.json) {
    const r = translateItem(tr, text, options); // one phrase: as ever, errors end the process
    // Digits and commas became words before the model: say what it translated.
    if (rewritten(text, r.input)) process.stderr.write(`attnwasm: translated '${r.input}'\n`);
    out(r.text);
    return 0;
  }
  const batch = text === undefined;
  const { items, total } = batch ? await inputLines(args) : { items: [{ line: 1, input: text }], total: 1 };
  const result = await runBatch(items, {
    total, noun: 'phrases', label: (it) => `line ${it.line}`, progress: args.progress ?? (batch && !!process.stderr.isTTY),
    // A blank line is no item: it stays a blank line (text) or is left out (JSON).
    skip: (it) => !it.input.trim(),
    work: (it) => translateItem(tr, it.input, options),
    write: (it, r, ms) => {
      if (!args.json) out(r ? r.text : '');
      else if (r) out(JSON.stringify({ line: it.line, input: it.input, normalized: r.input, text: r.text, tokens: r.tokens, ms: round(ms) }));
    },
    writeError: (it, e) => out(args.json ? JSON.stringify({ line: it.line, input: it.input, error: errorJson(e) }) : ''),
  });
  tr.dispose();
  if (batch) process.stderr.write(`${summary(result, 'phrases', 'translated', (it) => `line ${it.line}`)}\n`);
  return result.failed.length ? 1 : 0;
}

async function classifyCommand(args, paths) {
  const files = await imageFiles(paths);
  const batch = paths.length > 1 || files[0] !== paths[0];
  const aw = await init({ threads: THREADS });
  const clf = await aw.loadClassifier(args.model ?? MODELS.classify);
  const out = (s) => process.stdout.write(`${s}\n`);
  if (!batch && !args.json) {
    // One image: as ever (the digit, then with --probs one line per class).
    let r;
    try {
      r = await classifyItem(clf, files[0]);
    } catch (e) {
      e.message = `${files[0]}: ${e.message}`;
      throw e;
    }
    out(r.label);
    if (args.probs) r.probabilities.forEach((p, i) => out(`${clf.labels[i]} ${p.toFixed(4)}`));
    return 0;
  }
  const result = await runBatch(files, {
    total: files.length, noun: 'images', label: (f) => f, progress: args.progress ?? (batch && !!process.stderr.isTTY),
    work: (f) => classifyItem(clf, f),
    write: (f, r, ms) => out(args.json
      ? JSON.stringify({ file: f, label: r.label, probabilities: r.probabilities, ms: round(ms) })
      : `${f}\t${r.label}${args.probs ? `\t${r.probabilities.map((p) => p.toFixed(4)).join(' ')}` : ''}`),
    writeError: (f, e) => { if (args.json) out(JSON.stringify({ file: f, error: errorJson(e) })); },
  });
  clf.dispose();
  if (batch) process.stderr.write(`${summary(result, 'images', 'classified', (f) => f)}\n`);
  return result.failed.length ? 1 : 0;
}

async function main() {
  const args = parse(process.argv.slice(2));
  if (args.version) {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    console.log(pkg.version);
    return 0;
  }
  const [cmd, ...rest] = args._;
  if (args.help || !cmd) {
    process.stdout.write(HELP);
    return 0;
  }
  if (!(cmd in MODELS)) throw new UsageError(`unknown command '${cmd}' (expected translate or classify; see --help)`);
  if (cmd === 'translate') {
    if (rest.length > 1) throw new UsageError(`translate: unexpected argument '${rest[1]}' (quote the text: "forty-two")`);
    if (rest[0] === '') throw new UsageError('translate: missing the English text (see --help)');
    return translateCommand(args, rest[0]);
  }
  if (!rest.length) throw new UsageError('classify: missing the image file (see --help)');
  return classifyCommand(args, rest);
}

// A reader that stops early (`| head`) closes the pipe: stop quietly.
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

main().then((code) => { process.exitCode = code; }, (e) => {
  console.error(`attnwasm: ${e.message}`);
  process.exitCode = e.code === 'ERR_USAGE' || e.code === 'ERR_INVALID_TYPE' || e.code === 'ERR_OUT_OF_RANGE' ? 2 : 1;
});
