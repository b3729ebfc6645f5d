// Items per second of the CLI's batch mode against one CLI process per item
// (what scripting `attnwasm translate "…"` in a loop costs), for both demo
// models. Not a test; the README quotes its output ("The CLI").
//
//   node bench/cli_batch.mjs [--phrases 1000] [--images 500] [--spawns 20] [--rounds 5]
//
// translate: the first N held-out phrases (models/translator/heldout_expected.json)
// as one `attnwasm translate --input FILE` process, against `attnwasm translate
// "<phrase>"` spawned once per phrase. classify: N held-out digits
// (models/vit/heldout.safetensors) written as PGM files into a folder, as one
// `attnwasm classify FOLDER` process, against `attnwasm classify FILE` per file.
// Every figure is wall time of whole processes (start-up and model load
// included), run from this shell one after another; the batch and the
// per-item runs alternate round by round so that load from other users hits
// both alike. Items per second: batch = N / median batch time; per item =
// 1 / median process time.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../bindings/index.js';
import { describeMachine, median } from './lib.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CLI = join(ROOT, 'bin/attnwasm.mjs');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const PHRASES = arg('phrases', 1000), IMAGES = arg('images', 500), SPAWNS = arg('spawns', 20), ROUNDS = arg('rounds', 5);
const machine = describeMachine();
const loadavg = () => Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);

/** Wall seconds of one CLI process (stdout discarded, must exit 0). */
function timeCli(args) {
  const t0 = performance.now();
  execFileSync(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  return (performance.now() - t0) / 1000;
}

const dir = mkdtempSync(join(tmpdir(), 'attnwasm-cli-bench-'));
try {
  const heldout = JSON.parse(readFileSync(join(ROOT, 'models/translator/heldout_expected.json'), 'utf8'));
  const phrases = heldout.items.slice(0, PHRASES).map((row) => row[0]);
  const phraseFile = join(dir, 'phrases.txt');
  writeFileSync(phraseFile, `${phrases.join('\n')}\n`);
  const aw = await init({ threads: 1 });
  const digits = aw.loadSafetensors(readFileSync(join(ROOT, 'models/vit/heldout.safetensors')));
  const folder = join(dir, 'digits');
  execFileSync('mkdir', [folder]);
  const files = [];
  for (let i = 0; i < IMAGES; i++) {
    const f = join(folder, `${String(i).padStart(4, '0')}.pgm`);
    writeFileSync(f, Buffer.concat([Buffer.from('P5\n28 28\n255\n'), Buffer.from(digits.images.data.subarray(i * 784, (i + 1) * 784))]));
    files.push(f);
  }

  const jobs = {
    translate: { n: phrases.length, batch: ['translate', '--input', phraseFile], one: (i) => ['translate', phrases[i % phrases.length]] },
    classify: { n: files.length, batch: ['classify', folder], one: (i) => ['classify', files[i % files.length]] },
  };
  const times = Object.fromEntries(Object.keys(jobs).map((k) => [k, { batch: [], one: [] }]));
  const load = [loadavg()];
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, job] of Object.entries(jobs)) {
      times[name].batch.push(timeCli(job.batch));
      for (let s = 0; s < Math.ceil(SPAWNS / ROUNDS); s++) times[name].one.push(timeCli(job.one(r * SPAWNS + s)));
    }
    load.push(loadavg());
    process.stderr.write(`round ${r + 1}/${ROUNDS} done (load ${load.at(-1)})\n`);
  }
  const rows = Object.entries(jobs).map(([name, job]) => {
    const batchS = median(times[name].batch), oneS = median(times[name].one);
    const batchRate = job.n / batchS, oneRate = 1 / oneS;
    return { name, n: job.n, batchS, oneS, batchRate, oneRate, ratio: batchRate / oneRate, runs: times[name] };
  });
  console.log(`${machine}; Node ${process.version}, load average ${Math.min(...load)}–${Math.max(...load)}, ${ROUNDS} batch runs and ${rows[0].runs.one.length} single-item processes per command (medians)\n`);
  console.log('| command | batch: one process | items/s | one process per item | items/s | ratio |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.n} items in ${r.batchS.toFixed(2)} s | ${r.batchRate.toFixed(0)} | ${(r.oneS * 1000).toFixed(0)} ms | ${r.oneRate.toFixed(2)} | **${r.ratio.toFixed(0)}×** |`);
  }
  mkdirSync(join(ROOT, 'bench/out'), { recursive: true });
  writeFileSync(join(ROOT, 'bench/out/cli_batch.json'), JSON.stringify({ date: new Date().toISOString(), machine, node: process.version, load, rows }, null, 1));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
