#!/usr/bin/env node
// attnwasm command line: the demo models from Node.
//   attnwasm translate "forty-two" [--to fr|de] [--beam N]
//   attnwasm classify digit.png|digit.pgm|digit.raw
import { readFile } from 'node:fs/promises';
import { init } from '../bindings/index.js';
import { decodePgm, decodePng, greyToInk, mnistPreprocess } from '../bindings/images.js';

const HELP = `attnwasm — PyTorch-exact attention in WebAssembly: the demo models from Node

Usage:
  attnwasm translate "<English number words>" [--to fr|de] [--beam N] [--model FILE]
      Prints the French (default) or German spelling on one line. Numbers 0 to
      999 999 as people write them: "forty two", "one hundred and five",
      "a thousand", "eleven hundred", "1,234". Anything else is refused with
      a message on stderr and exit status 1.
      e.g. attnwasm translate "three hundred seventy-one" --to de
  attnwasm classify <image> [--model FILE] [--probs]
      Classifies a handwritten digit: a PNG (8-bit), a PGM (P2/P5) or a raw
      28×28 file of 784 bytes (255 = ink). Prints the digit (and with --probs
      the probability of each class).
  attnwasm --help | --version

Options:
  --to LANG      target language of translate: fr (French) or de (German)
  --beam N       beam size (1 = greedy, the default)
  --model FILE   a model file other than the one shipped in the package
  --probs        classify: also print the class probabilities
`;

const MODELS = {
  translate: new URL('../models/translator/translator.safetensors', import.meta.url),
  classify: new URL('../models/vit/vit.safetensors', import.meta.url),
};

function parse(argv) {
  const args = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') args.help = true;
    else if (a === '--version' || a === '-v') args.version = true;
    else if (a === '--probs') args.probs = true;
    else if (a === '--to' || a === '--beam' || a === '--model') {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      args[a.slice(2)] = argv[++i];
    } else if (a.startsWith('--')) throw new Error(`unknown option ${a} (see --help)`);
    else args._.push(a);
  }
  return args;
}

async function readImage(path) {
  const bytes = new Uint8Array(await readFile(path));
  if (bytes.length === 784 && !/\.(png|pgm)$/i.test(path)) return Float32Array.from(bytes, (b) => b / 255);
  const img = bytes[0] === 0x89 ? await decodePng(bytes) : bytes[0] === 0x50 ? decodePgm(bytes) : null;
  if (!img) throw new Error(`${path}: not a PNG, a PGM or a raw 28×28 file of 784 bytes`);
  const ink = greyToInk(img);
  // A 28×28 image is taken as MNIST-formatted already; anything else is
  // centred and scaled the way MNIST digits are.
  if (img.width === 28 && img.height === 28) return ink;
  const digit = mnistPreprocess(ink, img.width, img.height);
  if (!digit) throw new Error(`${path}: the image has no ink (expected a dark digit on a light background, or light on dark)`);
  return digit;
}

async function main() {
  const args = parse(process.argv.slice(2));
  if (args.version) {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    console.log(pkg.version);
    return;
  }
  const [cmd, input, ...extra] = args._;
  if (args.help || !cmd) {
    process.stdout.write(HELP);
    return;
  }
  if (!(cmd in MODELS)) throw new Error(`unknown command '${cmd}' (expected translate or classify; see --help)`);
  if (!input) throw new Error(`${cmd}: missing ${cmd === 'translate' ? 'the English text' : 'the image file'} (see --help)`);
  if (extra.length) throw new Error(`${cmd}: unexpected argument '${extra[0]}' (quote the text: "forty-two")`);
  const aw = await init();
  if (cmd === 'translate') {
    const tr = await aw.loadTranslator(args.model ?? MODELS.translate);
    const beamSize = args.beam === undefined ? 1 : Number(args.beam);
    const r = tr.translate(input, { to: args.to ?? 'fr', beamSize });
    // Digits and commas became words before the model: say what it translated.
    if (r.input !== input.trim().toLowerCase().replace(/\s+/g, ' ')) console.error(`attnwasm: translated '${r.input}'`);
    console.log(r.text);
    tr.dispose();
  } else {
    const clf = await aw.loadClassifier(args.model ?? MODELS.classify);
    const r = clf.classify(await readImage(input));
    console.log(r.label);
    if (args.probs) for (let i = 0; i < r.probabilities.length; i++) console.log(`${clf.labels[i]} ${r.probabilities[i].toFixed(4)}`);
    clf.dispose();
  }
}

main().catch((e) => {
  console.error(`attnwasm: ${e.message}`);
  process.exit(e.code === 'ERR_INVALID_TYPE' || e.code === 'ERR_OUT_OF_RANGE' ? 2 : 1);
});
