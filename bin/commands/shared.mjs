// What the CLI's commands share: the usage error (exit code 2), the flag parser, the one-thread runtime, the files
// named by flags, a --model's load options (--config, --tokenizer, --tokenizer-config, --dtype, a hub id's), and
// an error as a JSON line. Not here: many items with their progress and summary (batch.mjs), the sampling flags
// (generation.mjs), the entry's flag table and dispatch (../attnwasm.mjs).
import { readFile, stat } from 'node:fs/promises';

/** A mistake on the command line: reported as `attnwasm: <message>`, exit code 2, before any work. */
export class UsageError extends Error {
  code = 'ERR_USAGE';
}

/**
 * The arguments of a command line: `flags` maps a flag to the [key, value] it sets, `valued` lists the flags
 * that take the next argument (stored under the flag's name without '--'); any other '--' argument is a usage
 * error, `unknown(flag)` its message; the rest are positional, in `_`. Returns a new object (the caller's).
 * @param {string[]} argv
 * @param {{ flags: Record<string, [string, unknown]>, valued: string[], unknown: (flag: string) => string }} grammar
 * @returns {{ _: string[], [key: string]: unknown }}
 */
export function parseArgv(argv, { flags, valued, unknown }) {
  const args = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (Object.hasOwn(flags, a)) args[flags[a][0]] = flags[a][1];
    else if (valued.includes(a)) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      args[a.slice(2)] = argv[++i];
    } else if (a.startsWith('--')) throw new UsageError(unknown(a));
    else args._.push(a);
  }
  return args;
}

// One thread: the demo models are too small for the pthreads build to pay
// off. Measured on 2 cores (Node 20): init() 45 ms faster; 500 translations
// as fast; 300 classifications 0.9–1.4 s against 1.5–1.8 s with 'auto'. The
// results are bit-identical either way.
/** A whole-number flag's value (args[flag], its text) >= min, or undefined when not given; else a UsageError. */
export function count(args, flag, min) {
  const v = args[flag];
  if (v === undefined) return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!(n >= min)) throw new UsageError(`--${flag}: expected a whole number >= ${min}, got '${v}'`);
  return n;
}

export const THREADS = 1;

/** The bytes (or with `encoding` the text) of a file named by a flag; a file that cannot be read is a usage error. */
export async function readFlagFile(flag, path, encoding) {
  try {
    return await readFile(path, encoding);
  } catch (e) {
    throw new UsageError(`${flag}: cannot read '${path}': ${e.message}`);
  }
}

/** Whether `path` names a folder (false for anything that cannot be read). */
export const isFolder = async (path) => {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
};

/**
 * loadModel's options from --config, --tokenizer, --tokenizer-config and --dtype (the files read here), and a
 * hub id's --revision and progress line (cache.mjs). The folder's own files, its chat template among them, are
 * the loader's to find.
 */
export async function loadOptions(args) {
  const load = {};
  if (args.config !== undefined) load.config = new Uint8Array(await readFlagFile('--config', args.config));
  if (args.tokenizer !== undefined) load.tokenizer = new Uint8Array(await readFlagFile('--tokenizer', args.tokenizer));
  if (args['tokenizer-config'] !== undefined) {
    if (load.tokenizer === undefined && !await isFolder(args.model)) throw new UsageError('--tokenizer-config goes with --tokenizer (or a --model folder that has tokenizer.json)');
    load.tokenizerConfig = new Uint8Array(await readFlagFile('--tokenizer-config', args['tokenizer-config']));
  }
  if (args.dtype !== undefined) load.dtype = args.dtype;
  if (args['bounded-head']) load.boundedHead = true;  // loadModel refuses it, by name, for a model it does not fit
  Object.assign(load, (await import('./cache.mjs')).hubLoadOptions(args));  // a hub id's --revision, progress
  return load;
}

/** A failed item's or turn's error as its JSON line gives it: { code, message[, suggestion] }. */
export const errorJson = (e) => ({ code: e.code ?? 'ERR_INTERNAL', message: e.message, ...(e.suggestion ? { suggestion: e.suggestion } : {}) });

/** Milliseconds to three decimals, for JSON lines. */
export const round = (ms) => Math.round(ms * 1000) / 1000;
