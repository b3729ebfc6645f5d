// attnwasm classify: a handwritten digit (PNG, PGM or raw 28×28 bytes) through the package's ViT (or --model's).
//   attnwasm classify digit.png [--probs]                      one image: the digit (and the class probabilities)
//   attnwasm classify a.png b.pgm folder/ [--json]             many images, folders: a line each, through batch.mjs
// The flags are the entry's (../attnwasm.mjs).
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { init, AttnWasmError } from '../../bindings/index.js';
import { decodePgm, decodePng, greyToInk, mnistPreprocess } from '../../bindings/helpers/index.js';
import { UsageError, THREADS, errorJson, round } from './shared.mjs';
import { runBatch, summary } from './batch.mjs';

const MODEL = new URL('../../models/vit/vit.safetensors', import.meta.url);
const IMAGE_EXT = /\.(png|pgm|raw)$/i;

/** An image file as the classifier's input: 784 floats of ink in [0, 1], MNIST-formatted. */
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

/**
 * classify: `paths` are the images and folders named. Returns the exit code: 0, or 1 when an image of a batch
 * failed (one image's failure ends the process with its error).
 */
export async function classifyCommand(args, paths) {
  if (!paths.length) throw new UsageError('classify: missing the image file (see --help)');
  const files = await imageFiles(paths);
  const batch = paths.length > 1 || files[0] !== paths[0];
  const aw = await init({ threads: THREADS });
  const clf = await aw.loadClassifier(args.model ?? MODEL);
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
