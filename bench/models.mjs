// Per-call time of the demo models through the API: translate (greedy and
// beam 4) and classify, medians over fixed inputs, in one process. With
// --root DIR it loads the bindings of another checkout (e.g. a worktree of an
// older commit with its dist/ built) so that two versions can be compared in
// alternating runs: node bench/models.mjs [--root DIR] [N=200]
import { readFileSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './lib.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--root');
const here = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = at >= 0 ? resolve(args.splice(at, 2)[1]) : here;
const N = Number(args[0] ?? 200);
const { init } = await import(pathToFileURL(join(root, 'bindings/index.js')).href);
const aw = await init({ threads: 1 });
const tr = await aw.loadTranslator(readFileSync(join(here, 'models/translator/translator.safetensors')));
const clf = await aw.loadClassifier(readFileSync(join(here, 'models/vit/vit.safetensors')));
const digits = aw.loadSafetensors(readFileSync(join(here, 'models/vit/heldout.safetensors')));
const phrases = ['three hundred seventy-one', 'nine hundred ninety-nine thousand nine hundred ninety-nine', 'forty-two',
  'eighty thousand one', 'six hundred eighty-one thousand two hundred four'];

function time(fn) {
  const ms = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    fn(i);
    ms.push(performance.now() - t0);
  }
  return median(ms);
}
const ink = (i) => Float32Array.from(digits.images.data.subarray((i % 100) * 784, (i % 100 + 1) * 784), (v) => v / 255);
const inks = Array.from({ length: 100 }, (_, i) => ink(i));
for (let i = 0; i < 20; i++) { tr.translate(phrases[i % 5]); clf.classify(inks[i]); }  // warm-up
const out = {
  root,
  translateGreedyMs: time((i) => tr.translate(phrases[i % 5], { to: i % 2 ? 'de' : 'fr' })),
  translateBeam4Ms: time((i) => tr.translate(phrases[i % 5], { to: i % 2 ? 'de' : 'fr', beamSize: 4 })),
  classifyMs: time((i) => clf.classify(inks[i % 100])),
};
console.log(JSON.stringify(out));
