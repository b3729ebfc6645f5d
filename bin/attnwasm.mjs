#!/usr/bin/env node
// attnwasm command line: the demo models from Node, one item or many.
//   attnwasm translate "forty-two" [--to fr|de] [--beam N]     one phrase
//   attnwasm translate [--input FILE] [--json]                 one phrase per line (stdin by default)
//   attnwasm classify digit.png|digit.pgm|digit.raw            one image
//   attnwasm classify a.png b.pgm folder/ [--json]             many images, folders
//   attnwasm generate "Once upon a time" [--temperature T]     text, streamed as it is generated
//   attnwasm generate [--input FILE] [--json]                  one prompt per line (stdin by default)
//   attnwasm chat --model FOLDER [--system TEXT]               a conversation: a user message per line of stdin
// Many items run in one process (one start-up, one model load): each item
// goes through translateItem/classifyItem/generateItem, and an error thrown
// there becomes that item's error line while the others complete (exit code
// 1 at the end). generate stops cleanly on Ctrl-C (exit code 130); chat's first Ctrl-C stops the
// assistant's turn, a second exits (130).
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
  attnwasm generate "<prompt>" [--max-tokens N] [--temperature T] [--top-k K]
          [--top-p P] [--seed S] [--ignore-eos] [--echo] [--json]
          [--model FILE [--config config.json] [--tokenizer tokenizer.json]]
      Writes the model's continuation of the prompt as it is generated, then
      a newline. The package's model writes fortune cookies, one character at
      a time (printable ASCII, tab and newline; anything else in the prompt is
      refused). Greedy unless --temperature is above 0; when sampling without
      --seed, the seed drawn is printed on stderr (--seed repeats the run).
      Ctrl-C stops it: the text so far stays, exit status 130.
      e.g. attnwasm generate "Q: What is " --temperature 0.8 --seed 7
  attnwasm generate [--input FILE] [--json] [generate's options]
      Without a prompt: one prompt per line of FILE (or of stdin), one output
      line per input line: the continuation with backslash, newline, carriage
      return and tab written as \\\\, \\n, \\r and \\t, or an empty line for a
      prompt that fails. Blank lines stay blank. Every prompt is generated with
      the same seed (--seed, or one drawn and printed), so a line's output does
      not depend on the lines before it. Ctrl-C ends the batch at once.
      e.g. attnwasm generate --temperature 0.8 --seed 1 < prompts.txt
  attnwasm chat --model <folder|model.safetensors> [--config config.json]
          [--tokenizer tokenizer.json] [--tokenizer-config tokenizer_config.json]
          [--chat-template FILE] [--chat-template-kwargs JSON] [--system "<text>"]
          [--dtype q8] [--max-new-tokens N] [--temperature T] [--top-k K]
          [--top-p P] [--seed S] [--show-prompt] [--json]
      A conversation with a chat model: each line of stdin is a user message
      (typed, or piped: one turn per line; blank lines are skipped), the
      assistant's reply is streamed to stdout and ends with a newline, and the
      conversation is kept for the next turn. The prompt is the model's chat
      template (tokenizer_config.json's chat_template, a chat_template.jinja in
      the folder, or --chat-template) rendered as transformers renders it; a
      reply ends at the template's end-of-turn token (<|eot_id|>, <|im_end|>,
      <end_of_turn>, ...), the model's eos or --max-new-tokens (default 512).
      Ctrl-C stops the reply being written (what it wrote stays in the
      conversation); a second Ctrl-C, or one while waiting for input, exits
      with status 130. A turn that fails (the conversation no longer fits the
      model's positions, a template error) is reported on stderr and left out
      of the conversation; the exit status is then 1.
      e.g. attnwasm chat --model ./Qwen3-0.6B --dtype q8 --chat-template-kwargs '{"enable_thinking": false}'
  attnwasm embed --model <folder|model.safetensors> ["text"... | --input FILE] [--json]
          [--pooling M] [--normalize] [--dtype q8] [--batch-size N]
      One vector per text, as sentence-transformers computes it from the
      folder's files (attnwasm embed --help lists every flag).
      e.g. attnwasm embed --model ./all-MiniLM-L6-v2 --input docs.txt > vectors.txt
  attnwasm cache ls | rm <organisation/name>   the models downloaded by hub id
      (attnwasm cache --help). Every --model also takes a hub id
      ('Qwen/Qwen2.5-0.5B-Instruct', with --revision REV): downloaded once,
      then read from the cache, also offline.
  attnwasm --help | --version

Options:
  --to LANG        target language of translate: fr (French) or de (German)
  --beam N         beam size (1 = greedy, the default)
  --model FILE     a model file other than the one shipped in the package, a
                   folder, or a hub id 'organisation/name' (cached)
  --revision REV   with a hub id: a branch, tag or commit (default main)
  --probs          classify: also print the class probabilities
  --input FILE     translate, generate: read the lines from FILE ('-' = stdin)
  --max-tokens N   generate: tokens to generate at most (default 200)
  --max-new-tokens N
                   the same (chat's default: 512)
  --temperature T  generate: 0 = greedy (the default); higher = more random
  --top-k K        generate: sample among the K most likely tokens (0 = all)
  --top-p P        generate: ... among the most likely tokens whose
                   probabilities sum to P (1 = all)
  --seed S         generate: the sampling seed, an integer (default: random)
  --ignore-eos     generate: go on past the model's end-of-text token (chat:
                   past the end-of-turn tokens)
  --echo           generate: write the prompt before its continuation
  --ids            generate: the prompts are token ids ("1,2,3"), for a model
                   without a tokenizer (whose output is ids too)
  --config FILE    generate, chat --model: a Hugging Face checkpoint's
                   config.json (default: the one in the model's folder)
  --tokenizer FILE generate, chat --model: its tokenizer.json (text in, text out)
  --tokenizer-config FILE
                   generate, chat --model: its tokenizer_config.json (special
                   tokens, chat template)
  --dtype TYPE     generate, chat --model: keep the weights as f32, bf16, f16,
                   q8 or q4 (default: as stored)
  --chat-template FILE
                   chat: the template to use (a chat_template.jinja), instead
                   of the folder's chat_template.jinja or tokenizer_config.json's
  --chat-template-kwargs JSON
                   chat: template variables, a JSON object, e.g.
                   '{"enable_thinking": false}' (Qwen3 without thinking)
  --system TEXT    chat: a system message to start the conversation with
  --show-prompt    chat: write each turn's prompt, as the template rendered it,
                   to stderr before the reply (--json: a "prompt" field)
  --json           one JSON object per line: translate {line, input, text,
                   tokens, ms}, classify {file, label, probabilities, ms};
                   generate one {index, id, text, ms} per token, then {prompt,
                   text, ids, stopReason, seed, tokens, promptTokens, ms,
                   firstTokenMs, tokensPerSecond} (the rate after the first
                   token); in a batch only that last object, with line;
                   chat one such object per turn, with turn and user (no
                   prompt unless --show-prompt: the rendered prompt);
                   a failed item {line|file, input|prompt, error: {code, message}}
  --progress, --no-progress
                   a progress bar on stderr (count, rate, time left); by
                   default only when stderr is a terminal

Many items (stdin, --input, several images, a folder) end with a summary on
stderr; the exit code is 1 if any item failed, 2 for a usage error, 130 when
generate or chat is stopped with Ctrl-C.
`;

const MODELS = {
  translate: new URL('../models/translator/translator.safetensors', import.meta.url),
  classify: new URL('../models/vit/vit.safetensors', import.meta.url),
  generate: new URL('../models/lm/lm.safetensors', import.meta.url),
  chat: null,  // --model is required
};
const VALUED = ['--to', '--beam', '--model', '--revision', '--input', '--max-tokens', '--max-new-tokens', '--temperature', '--top-k', '--top-p', '--seed', '--config',
  '--tokenizer', '--tokenizer-config', '--dtype', '--chat-template', '--chat-template-kwargs', '--system'];
const FLAGS = ['--probs', '--json', '--ids', '--echo', '--ignore-eos', '--show-prompt'];
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
    else if (FLAGS.includes(a)) args[a.slice(2)] = true;
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

// ---- generate ----

// The flags of generate's numbers, by the generate() option each sets.
const SAMPLING = { 'max-tokens': 'maxNewTokens', 'max-new-tokens': 'maxNewTokens', temperature: 'temperature', 'top-k': 'topK', 'top-p': 'topP', seed: 'seed' };
const MAX_TOKENS = 200;
const CHAT_MAX_TOKENS = 512;

/**
 * generate()'s options from the flags. The CLI checks only that each value
 * is a number; the ranges are generate()'s, checked once here (before any
 * prompt) with a prompt of one id, and a value it refuses becomes a usage
 * error naming the flag. Without --seed the seed is drawn here, so that
 * every prompt of a batch uses the same one.
 */
async function generationOptions(lm, args, signal, maxNewTokens = MAX_TOKENS) {
  const o = { maxNewTokens, seed: Math.floor(Math.random() * 2 ** 32), signal };
  if (args['max-tokens'] !== undefined && args['max-new-tokens'] !== undefined) throw new UsageError('give --max-tokens or --max-new-tokens (the same), not both');
  for (const [flag, key] of Object.entries(SAMPLING)) {
    const v = args[flag];
    if (v === undefined) continue;
    o[key] = v.trim() === '' ? NaN : Number(v);
    if (!Number.isFinite(o[key])) throw new UsageError(`--${flag}: expected a number, got '${v}'`);
  }
  if (args['ignore-eos']) o.stopTokens = [];
  try {
    await lm.generate([0], o).return();
  } catch (e) {
    const flag = Object.keys(SAMPLING).find((f) => args[f] !== undefined && e.message.startsWith(`${SAMPLING[f]}:`));
    if (flag) throw new UsageError(`--${flag}${e.message.slice(SAMPLING[flag].length)}`);
    throw e;
  }
  return o;
}

/** "1,2,3" or "1 2 3" → [1, 2, 3] (--ids); generate() checks them against the vocabulary. */
function parseIds(text) {
  const parts = text.trim() ? text.trim().split(/\s*[\s,]\s*/) : [];
  const bad = parts.find((p) => !/^\d+$/.test(p));
  if (bad !== undefined) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `--ids: expected token ids separated by commas (e.g. 1,2,3), got '${bad}'`);
  return parts.map(Number);
}

/**
 * One prompt through the model: onStart(g) before the first token, onToken(t)
 * for each. Returns { g, firstTokenMs, ms } (g.text, g.ids, g.stopReason …).
 * Throws what generate() throws (ERR_INVALID_ARGUMENT for a character the
 * model's vocabulary lacks).
 */
async function generateItem(lm, prompt, options, { onStart, onToken } = {}) {
  const t0 = performance.now();
  const g = lm.generate(prompt, options);
  onStart?.(g);
  let firstTokenMs = null;
  for await (const t of g) {
    firstTokenMs ??= performance.now() - t0;
    onToken?.(t);
  }
  return { g, firstTokenMs, ms: performance.now() - t0 };
}

/** The prompt as the model saw it (--echo): its text, or for a model without a tokenizer its ids. */
const promptText = (lm, g) => (lm.tokenizer ? lm.decode(g.promptIds, { skipSpecialTokens: true }) : g.promptIds.join(','));

/**
 * What generate writes for a generation: the text, or for a model without a
 * tokenizer the ids, comma-separated; with `echo` the prompt first.
 */
function generatedText(lm, g, echo) {
  const text = lm.tokenizer ? g.text : g.ids.join(',');
  return echo ? promptText(lm, g) + (!lm.tokenizer && text ? ',' : '') + text : text;
}

/** A batch line's text: backslash, newline, carriage return and tab as \\, \n, \r and \t. */
const escapeLine = (s) => s.replace(/[\\\n\r\t]/g, (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c]);

/** The JSON of a finished generation: a batch line's object, and the last line of one prompt's token lines. */
function generationJson(lm, { g, firstTokenMs, ms }) {
  const tokens = g.ids.length;
  return {
    ...(lm.tokenizer ? { text: g.text } : {}), ids: g.ids, stopReason: g.stopReason, seed: g.seed,
    tokens, promptTokens: g.promptIds.length, ms: round(ms),
    firstTokenMs: firstTokenMs === null ? null : round(firstTokenMs),
    // The rate after the first token (which carries the prompt's prefill).
    tokensPerSecond: tokens > 1 && ms > firstTokenMs ? round(((tokens - 1) * 1000) / (ms - firstTokenMs)) : null,
  };
}

/**
 * Ctrl-C: the first aborts `controller` (the command ends its line, notes it
 * and exits 130), a second exits at once.
 */
function stopOnInterrupt(controller) {
  process.on('SIGINT', () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  });
}

/** loadModel's options from --config, --tokenizer, --tokenizer-config and --dtype (the files read here). */
async function loadOptions(args) {
  const load = {};
  if (args.config !== undefined) load.config = new Uint8Array(await readFlagFile('--config', args.config));
  if (args.tokenizer !== undefined) load.tokenizer = new Uint8Array(await readFlagFile('--tokenizer', args.tokenizer));
  if (args['tokenizer-config'] !== undefined) {
    if (load.tokenizer === undefined && !await isFolder(args.model)) throw new UsageError('--tokenizer-config goes with --tokenizer (or a --model folder that has tokenizer.json)');
    load.tokenizerConfig = new Uint8Array(await readFlagFile('--tokenizer-config', args['tokenizer-config']));
  }
  if (args.dtype !== undefined) load.dtype = args.dtype;
  Object.assign(load, (await import('./commands/cache.mjs')).hubLoadOptions(args));  // a hub id's --revision, progress
  return load;
}

const isFolder = async (path) => {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
};

const CHAT_ONLY = ['chat-template', 'chat-template-kwargs', 'system', 'show-prompt'];

async function generateCommand(args, prompt) {
  if (prompt !== undefined && args.input !== undefined) throw new UsageError('generate: give the prompt or --input, not both');
  if (args.model === undefined) {
    for (const flag of ['config', 'tokenizer', 'tokenizer-config']) if (args[flag] !== undefined) throw new UsageError(`--${flag} goes with --model (the checkpoint it describes)`);
  }
  for (const flag of CHAT_ONLY) if (args[flag] !== undefined) throw new UsageError(`--${flag} is an option of chat, not of generate`);
  const controller = new AbortController();
  stopOnInterrupt(controller);
  const load = await loadOptions(args);
  const aw = await init({ threads: THREADS });
  const lm = await aw.loadCausalLM(args.model ?? MODELS.generate, load);
  if (!lm.tokenizer && !args.ids) {
    throw new UsageError('generate: this model has no tokenizer, so it takes no text: give --tokenizer tokenizer.json, or the prompt as token ids with --ids (e.g. --ids "1,2,3")');
  }
  const options = await generationOptions(lm, args, controller.signal);
  const promptOf = (text) => (args.ids ? parseIds(text) : text);
  const out = (s) => process.stdout.write(`${s}\n`);
  const interrupted = (what) => process.stderr.write(`attnwasm: stopped (Ctrl-C)${what}\n`);
  if (!args.json && options.temperature > 0 && args.seed === undefined) {
    process.stderr.write(`attnwasm: sampling with seed ${options.seed} (--seed ${options.seed} repeats it)\n`);
  }

  if (prompt !== undefined) {
    // One prompt: streamed, a token at a time, as generatedText() would put it.
    let r, written = 0;
    const write = (s) => { process.stdout.write(s); written += s.length; };
    try {
      r = await generateItem(lm, promptOf(prompt), options, args.json ? {
        onToken: (t) => out(JSON.stringify({ index: t.index, id: t.id, text: t.text, ms: round(t.ms) })),
      } : {
        onStart: (g) => { if (args.echo) write(promptText(lm, g)); },
        onToken: (t) => write(lm.tokenizer ? t.text : `${written ? ',' : ''}${t.id}`),
      });
    } catch (e) {
      if (args.json) out(JSON.stringify({ prompt, error: errorJson(e) }));
      else if (written) process.stdout.write('\n');
      throw e;
    }
    if (args.json) out(JSON.stringify({ prompt, ...generationJson(lm, r) }));
    else out(generatedText(lm, r.g, args.echo).slice(written));  // what the stream held back (an unfinished UTF-8 tail), and the newline
    lm.dispose();
    if (r.g.stopReason !== 'aborted') return 0;
    interrupted(` after ${r.g.ids.length} tokens`);
    return 130;
  }

  const { items, total } = await inputLines(args, controller.signal);
  const result = await runBatch(items, {
    total, noun: 'prompts', label: (it) => `line ${it.line}`, progress: args.progress ?? !!process.stderr.isTTY, signal: controller.signal,
    // A blank line is no item: it stays a blank line (text) or is left out (JSON).
    skip: (it) => !it.input.trim(),
    work: (it) => generateItem(lm, promptOf(it.input), options),
    write: (it, r) => {
      if (!args.json) out(r ? escapeLine(generatedText(lm, r.g, args.echo)) : '');
      else if (r) out(JSON.stringify({ line: it.line, prompt: it.input, ...generationJson(lm, r) }));
    },
    writeError: (it, e) => out(args.json ? JSON.stringify({ line: it.line, prompt: it.input, error: errorJson(e) }) : ''),
  });
  lm.dispose();
  if (controller.signal.aborted) interrupted('');
  process.stderr.write(`${summary(result, 'prompts', 'generated', (it) => `line ${it.line}`)}\n`);
  return controller.signal.aborted ? 130 : result.failed.length ? 1 : 0;
}

// ---- chat ----

/**
 * The lines of stdin one at a time as they come (typed or piped), without reading ahead of what
 * readline buffers; done at the end of input.
 */
function stdinLines() {
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  return rl[Symbol.asyncIterator]();
}

/**
 * chat: a conversation read from stdin, a user message per line; each reply streamed to stdout and
 * ended with a newline (--json: one object per turn). Ctrl-C: the first stops the reply being
 * written (the turn ends, what it wrote stays in the conversation), a second before another reply
 * completes — or one while waiting for input — exits with 130.
 */
async function chatCommand(args, rest) {
  if (rest.length) throw new UsageError(`chat: unexpected argument '${rest[0]}' (the user's messages are read from stdin, one per line; --system "…" for a system message)`);
  if (args.model === undefined) {
    throw new UsageError('chat: --model is needed: a chat model\'s folder (config.json, model.safetensors, tokenizer.json, tokenizer_config.json), '
      + 'or its model.safetensors with --config, --tokenizer and --tokenizer-config');
  }
  for (const flag of ['input', 'ids', 'echo']) if (args[flag] !== undefined) throw new UsageError(`--${flag} is an option of generate, not of chat`);
  let kwargs;
  if (args['chat-template-kwargs'] !== undefined) {
    try {
      kwargs = JSON.parse(args['chat-template-kwargs']);
    } catch (e) {
      throw new UsageError(`--chat-template-kwargs: expected a JSON object (e.g. '{"enable_thinking": false}'), got '${args['chat-template-kwargs']}' (${e.message})`);
    }
    if (kwargs === null || typeof kwargs !== 'object' || Array.isArray(kwargs)) {
      throw new UsageError(`--chat-template-kwargs: expected a JSON object (e.g. '{"enable_thinking": false}'), got '${args['chat-template-kwargs']}'`);
    }
  }
  // The template: --chat-template, else the folder's chat_template.jinja (which transformers prefers to
  // tokenizer_config.json's chat_template), else tokenizer_config.json's.
  let chatTemplate;
  if (args['chat-template'] !== undefined) chatTemplate = await readFlagFile('--chat-template', args['chat-template'], 'utf8');
  else if (await isFolder(args.model)) chatTemplate = await readFile(join(args.model, 'chat_template.jinja'), 'utf8').catch(() => undefined);
  const load = await loadOptions(args);
  const aw = await init({ threads: THREADS });
  const lm = await aw.loadCausalLM(args.model, load);
  if (!lm.tokenizer) {
    throw new UsageError('chat: this model has no tokenizer: give --tokenizer tokenizer.json and --tokenizer-config tokenizer_config.json (or a folder that has them)');
  }
  if (typeof lm.tokenizer.chatStopTokens !== 'function') {
    throw new UsageError("chat: this model's tokenizer is its file's character vocabulary, which has no chat template (give --tokenizer and --tokenizer-config)");
  }
  const base = await generationOptions(lm, args, undefined, CHAT_MAX_TOKENS);
  delete base.signal;
  const options = { ...base, chatTemplate, chatTemplateKwargs: kwargs };
  try {
    lm.tokenizer.chatStopTokens({ chatTemplate });  // no template: fail now, before any input
  } catch (e) {
    if (e.code !== 'ERR_INVALID_ARGUMENT') throw e;
    throw new AttnWasmError(e.code, `chat: ${e.message.replace(/^chatStopTokens: /, '').replace(/: pass that file's text as \{ chatTemplate \}$/, '')}; give --chat-template FILE (a chat_template.jinja)`);
  }
  if (!args.json && options.temperature > 0 && args.seed === undefined) {
    process.stderr.write(`attnwasm: sampling with seed ${options.seed} (--seed ${options.seed} repeats it)\n`);
  }

  const tty = !!process.stdin.isTTY;
  const messages = args.system !== undefined ? [{ role: 'system', content: args.system }] : [];
  const out = (s) => process.stdout.write(`${s}\n`);
  let controller = null;  // the running turn's
  let interrupted = false;  // a Ctrl-C since the last reply that completed
  process.on('SIGINT', () => {
    if (interrupted || !controller) {
      if (tty) process.stderr.write('\n');
      process.exit(130);
    }
    interrupted = true;
    controller.abort();
  });
  let turn = 0;
  let failed = 0;
  const lines = stdinLines();
  for (;;) {
    if (tty) process.stderr.write('> ');
    const { value: line, done } = await lines.next();
    if (done) {
      if (tty) process.stderr.write('\n');
      break;
    }
    if (!line.trim()) continue;
    turn++;
    messages.push({ role: 'user', content: line });
    controller = new AbortController();
    let written = '';
    const write = (s) => { process.stdout.write(s); written += s; };
    const t0 = performance.now();
    let firstTokenMs = null;
    let chat = null;
    try {
      chat = lm.chat(messages, { ...options, signal: controller.signal });
      if (args['show-prompt'] && !args.json) process.stderr.write(chat.prompt);
      for await (const t of chat) {
        firstTokenMs ??= performance.now() - t0;
        if (!args.json) write(t.text);
      }
    } catch (e) {
      if (written) process.stdout.write('\n');
      messages.pop();
      failed++;
      if (args.json) out(JSON.stringify({ turn, user: line, error: errorJson(e) }));
      process.stderr.write(`attnwasm: turn ${turn}: ${e.message}\n`);
      continue;
    } finally {
      controller = null;
    }
    const r = { g: chat, firstTokenMs, ms: performance.now() - t0 };
    if (args.json) out(JSON.stringify({ turn, user: line, ...(args['show-prompt'] ? { prompt: chat.prompt } : {}), ...generationJson(lm, r) }));
    else out(chat.text.slice(written.length));  // what the stream held back, and the newline
    messages.push(chat.message);
    if (chat.stopReason === 'aborted') process.stderr.write(`attnwasm: stopped (Ctrl-C) after ${chat.ids.length} tokens; Ctrl-C again to exit\n`);
    else interrupted = false;
    if (chat.stopReason === 'context') process.stderr.write(`attnwasm: turn ${turn}: the conversation reached the model's ${lm.maxPositions} positions\n`);
  }
  lm.dispose();
  return failed ? 1 : 0;
}

// ---- embed ----

const EMBED_HELP = `attnwasm embed — sentence embeddings (BERT, RoBERTa, XLM-R: all-MiniLM, bge, e5, gte, …)

Usage:
  attnwasm embed --model <folder|model.safetensors> "<text>" ...
  attnwasm embed --model <folder|model.safetensors> [--input FILE]
      Writes one vector per text on stdout: its numbers separated by spaces
      (--json: a JSON array per line), in the order of the texts. Without
      texts: one text per line of FILE (or of stdin, '-'), one vector per
      line, blank lines included (the empty text's vector); progress on
      stderr, a summary at the end. The model: a sentence-transformers folder
      (config.json, model.safetensors, tokenizer.json, modules.json,
      1_Pooling/config.json, ...: its pooling, Normalize and max_seq_length
      are used), or model.safetensors with --config and --tokenizer.
      e.g. attnwasm embed --model ./all-MiniLM-L6-v2 --input docs.txt > vectors.txt

Options:
  --model PATH           the folder, or its model.safetensors, or a hub id (required)
  --revision REV         with a hub id: a branch, tag or commit (default main)
  --config FILE          config.json (default: the folder's)
  --tokenizer FILE       tokenizer.json (default: the folder's)
  --tokenizer-config FILE  tokenizer_config.json (default: the folder's)
  --pooling MODE         mean, cls, max, mean_sqrt_len, weightedmean, lasttoken,
                         or several joined by + (default: the folder's; mean)
  --normalize, --no-normalize
                         L2-normalize the vectors, or not (default: the folder's
                         Normalize module)
  --prompt TEXT          text put before every text ('query: ')
  --prompt-name NAME     one of config_sentence_transformers.json's prompts
  --dtype TYPE           keep the weights as f32, bf16, f16, q8 or q4
  --batch-size N         texts per batch (default 32)
  --threads N|auto       threads for the model (default 1)
  --input FILE           the texts, one per line ('-' = stdin)
  --json                 a JSON array per line
  --progress, --no-progress
                         a progress bar on stderr (default: when stderr is a
                         terminal and the texts come from --input or stdin)
`;
const EMBED_VALUED = ['--model', '--revision', '--config', '--tokenizer', '--tokenizer-config', '--pooling', '--prompt', '--prompt-name', '--dtype', '--batch-size',
  '--threads', '--input'];
const EMBED_FLAGS = { '--normalize': ['normalize', true], '--no-normalize': ['normalize', false], '--json': ['json', true], '--progress': ['progress', true],
  '--no-progress': ['progress', false], '--help': ['help', true], '-h': ['help', true] };

/** A float32 as the fewest digits that read back as it (at most 9 significant). */
const float32Text = (v) => String(Number(v.toPrecision(9)));

/**
 * embed: the vectors of the texts given, or of each line of --input FILE or stdin, one line each on stdout
 * (space-separated numbers, or --json arrays), in batches of --batch-size; progress and a summary on stderr
 * for lines. Its own flags (`argv`: what follows 'embed'); the model loads through aw.loadEmbedder, the
 * folder's sentence-transformers files deciding pooling and normalization unless --pooling / --normalize say.
 */
async function embedCommand(argv) {
  const args = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a in EMBED_FLAGS) args[EMBED_FLAGS[a][0]] = EMBED_FLAGS[a][1];
    else if (EMBED_VALUED.includes(a)) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      args[a.slice(2)] = argv[++i];
    } else if (a.startsWith('--')) throw new UsageError(`embed: unknown option ${a} (see attnwasm embed --help)`);
    else args._.push(a);
  }
  if (args.help) {
    process.stdout.write(EMBED_HELP);
    return 0;
  }
  if (args.model === undefined) throw new UsageError('embed: --model is needed: a sentence-transformers folder, or model.safetensors with --config and --tokenizer');
  if (args._.length && args.input !== undefined) throw new UsageError('embed: give the texts or --input, not both');
  const count = (flag, min) => {
    const v = args[flag];
    if (v === undefined) return undefined;
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!(n >= min)) throw new UsageError(`--${flag}: expected a whole number >= ${min}, got '${v}'`);
    return n;
  };
  const batchSize = count('batch-size', 1) ?? 32;
  const threads = args.threads === 'auto' ? 'auto' : count('threads', 1) ?? 1;
  const load = await loadOptions(args);
  if (args.pooling !== undefined) load.pooling = args.pooling;
  if (args.normalize !== undefined) load.normalize = args.normalize;
  const embedOptions = { batchSize };
  if (args.prompt !== undefined) embedOptions.prompt = args.prompt;
  if (args['prompt-name'] !== undefined) embedOptions.promptName = args['prompt-name'];

  const aw = await init({ threads });
  let e;
  try {
    e = await aw.loadEmbedder(args.model, load);
  } catch (err) {
    if (err.code === 'ERR_INVALID_ARGUMENT' && /^pooling:/.test(err.message)) throw new UsageError(`--${err.message}`);
    throw err;
  }
  if (!e.tokenizer) throw new UsageError('embed: this model has no tokenizer: give --tokenizer tokenizer.json (or a folder that has one)');
  const write = (r) => {
    const d = r.shape[1];
    let out = '';
    for (let i = 0; i < r.shape[0]; i++) {
      const row = Array.from(r.data.subarray(i * d, (i + 1) * d), float32Text);
      out += args.json ? `[${row.join(',')}]\n` : `${row.join(' ')}\n`;
    }
    process.stdout.write(out);
  };
  if (args._.length) {
    write(await e.embed(args._, embedOptions));
    e.dispose();
    return 0;
  }
  // Lines: read whole (a file or stdin), embedded and written a chunk at a time.
  const text = args.input !== undefined && args.input !== '-' ? await readFlagFile('--input', args.input, 'utf8')
    : await (async () => { const chunks = []; for await (const c of process.stdin) chunks.push(c); return Buffer.concat(chunks).toString('utf8'); })();
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const bar = progressBar(args.progress ?? !!process.stderr.isTTY, lines.length, 'texts');
  const t0 = performance.now();
  const CHUNK = Math.max(batchSize, 1024);
  for (let at = 0; at < lines.length; at += CHUNK) {
    let done = 0;
    const r = await e.embed(lines.slice(at, at + CHUNK), {
      ...embedOptions,
      onProgress: (p) => { for (; done < p.done; done++) bar.tick(); },
    });
    write(r);
  }
  bar.clear();
  e.dispose();
  process.stderr.write(`${summary({ count: lines.length, failed: [], ms: performance.now() - t0 }, 'texts', 'embedded', () => '')}\n`);
  return 0;
}

async function main() {
  if (process.argv[2] === 'embed') return embedCommand(process.argv.slice(3));
  if (process.argv[2] === 'cache') return (await import('./commands/cache.mjs')).cacheCommand(process.argv.slice(3));
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
  if (!(cmd in MODELS)) throw new UsageError(`unknown command '${cmd}' (expected translate, classify, generate, chat, embed or cache; see --help)`);
  if (cmd === 'chat') return chatCommand(args, rest);
  if (cmd === 'translate') {
    if (rest.length > 1) throw new UsageError(`translate: unexpected argument '${rest[1]}' (quote the text: "forty-two")`);
    if (rest[0] === '') throw new UsageError('translate: missing the English text (see --help)');
    return translateCommand(args, rest[0]);
  }
  if (cmd === 'generate') {
    if (rest.length > 1) throw new UsageError(`generate: unexpected argument '${rest[1]}' (quote the prompt: "Once upon a time")`);
    return generateCommand(args, rest[0]);
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
