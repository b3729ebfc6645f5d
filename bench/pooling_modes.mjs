// Several sentence-transformers pooling modes at once ('cls+max+mean') against one ('mean'), at
// all-MiniLM-L6-v2's shape (tools/make_checkpoint.mjs: random F32 weights, hidden 384, 6 layers), through this
// checkout and, with --root, another (its dist/ built) — in one process, one thread, calls alternated in rounds.
// Since issue 38 every mode asked for is pooled natively from one encoder pass (src/models/encoder.h Embed);
// before, the encoder ran once per mode. Prints per checkout the medians and cls+max+mean / mean (1.00: the
// modes cost nothing beside the pass; 3: a pass per mode). Not a test.
// Usage: node bench/pooling_modes.mjs [--root ../old-checkout] [--sentences 64] [--rounds 7]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeCheckpoint } from '../tools/make_checkpoint.mjs';
import { describeMachine, median } from './lib.mjs';

const argv = process.argv.slice(2);
const opt = (n, d) => { const i = argv.indexOf(n); return i < 0 ? d : argv[i + 1]; };
const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
const roots = [['this', here], ...(opt('--root') ? [['root', resolve(opt('--root'))]] : [])];
const SENTENCES = Number(opt('--sentences', 64));
const ROUNDS = Number(opt('--rounds', 7));

const dir = mkdtempSync(join(tmpdir(), 'aw-pooling-'));
try {
  writeCheckpoint('all-minilm-l6-v2', dir);
  // Seeded sentences of 8-64 tokens: [CLS] ids [SEP].
  let s = 7;
  const rand = (n) => { s = (s * 1664525 + 1013904223) >>> 0; return s % n; };
  const ids = Array.from({ length: SENTENCES }, () => [101, ...Array.from({ length: 6 + rand(57) }, () => 1000 + rand(29000)), 102]);
  const runs = [];
  for (const [name, root] of roots) {
    const aw = await (await import(pathToFileURL(join(root, 'bindings/index.js')).href)).init({ threads: 1 });
    for (const pooling of ['mean', 'cls+max+mean']) {
      const model = await aw.loadEmbedder(dir, { pooling });
      await model.embedIds(ids.slice(0, 4));  // warm: V8's tiers, the working memory
      runs.push({ name, pooling, model, times: [] });
    }
  }
  for (let r = 0; r < ROUNDS; r++) {
    for (const run of runs) {
      const t0 = performance.now();
      await run.model.embedIds(ids, { batchSize: 32 });
      run.times.push(performance.now() - t0);
    }
  }
  console.log(`${describeMachine()}\n${SENTENCES} sentences of 8-64 tokens, MiniLM-L6 shape, 1 thread, median of ${ROUNDS} rounds`);
  for (const [name, root] of roots) {
    const [one, three] = ['mean', 'cls+max+mean'].map((p) => median(runs.find((x) => x.name === name && x.pooling === p).times));
    console.log(`${name === 'this' ? 'this checkout' : root}: mean ${one.toFixed(1)} ms, cls+max+mean ${three.toFixed(1)} ms: ${(three / one).toFixed(2)}x`);
  }
  for (const run of runs) run.model.dispose();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
