// Weight types and thread counts against each other, interleaved: on a shared machine whose load drifts between
// one configuration's run and the next (bench/lm.mjs measures them one after another), the ratio of two
// configurations measured in alternation is what holds. Every model is loaded once into one runtime; each round
// runs every (threads, dtype) configuration once, in an order rotated from round to round: a fresh generation of
// --prompt tokens and --steps greedy steps. Reported per configuration: the median over rounds of the round's
// median step (and the prefill: the first token's time); per ratio, the median over rounds of that round's
// ratio — against f32 at the same thread count, q4 against q4a16, and each thread count against the first.
//
// Threads: with one count, that build (1: the single-thread build); with several (--threads 1,2), the pthreads
// build switched between them (runtime._setThreads): 1 thread there is the pthreads build's own, which
// bench/lm.mjs's '1p' compares with the single-thread build's. The read bandwidth of one core and of the largest
// count, measured at the start and at the end, bounds a decoding step: the bytes its weights take, once.
//
// Usage: node bench/lm_ab.mjs [--shape smollm2-135m] [--dir /tmp/attnwasm-fits] [--dtypes f32,q4a16,q4]
//        [--threads 1] [--relaxed] [--rounds 7] [--prompt 32] [--steps 16] [--json]
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describeMachine, median, readBandwidthThreads } from './lib.mjs';
import { SHAPES, writeCheckpoint } from '../tools/make_checkpoint.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i < 0 ? dflt : argv[i + 1]; };
const SHAPE = opt('--shape', 'smollm2-135m');
const DIR = opt('--dir', '/tmp/attnwasm-fits');
const DTYPES = String(opt('--dtypes', 'f32,q4a16,q4')).split(',');
const THREADS = String(opt('--threads', '1')).split(',').map(Number);
const RELAXED = argv.includes('--relaxed');
const ROUNDS = Number(opt('--rounds', 7));
const PROMPT = Number(opt('--prompt', 32));
const STEPS = Number(opt('--steps', 16));
const JSON_OUT = argv.includes('--json');
const log = (s) => { if (!JSON_OUT) console.log(s); };
if (!SHAPES[SHAPE]) throw new Error(`--shape: one of ${Object.keys(SHAPES).join(', ')}`);

const dir = join(DIR, SHAPE);
if (!existsSync(join(dir, 'model.safetensors'))) writeCheckpoint(SHAPE, dir);
const maxThreads = Math.max(...THREADS);
const { init } = await import('../bindings/index.js');
const aw = await init({ threads: maxThreads, relaxedSimd: RELAXED });
const caps = aw.capabilities();
log(`# ${describeMachine()}; Node ${process.version}`);
log(`# ${SHAPE}, random weights; ${caps.build} build${caps.relaxedSimd ? ', relaxed SIMD' : ''}; threads ${THREADS.join(', ')}; ` +
  `${ROUNDS} rounds of a ${PROMPT}-token prompt and ${STEPS} steps per configuration`);
const readBefore = [await readBandwidthThreads(1), await readBandwidthThreads(maxThreads)];
const models = {};
for (const d of DTYPES) models[d] = await aw.loadModel(dir, { dtype: d });
const vocab = models[DTYPES[0]].vocabSize;
let s = 99;
const prompt = Int32Array.from({ length: PROMPT }, () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s % vocab; });

const configs = THREADS.flatMap((t) => DTYPES.map((d) => ({ t, d, key: `${t}/${d}` })));
const step = Object.fromEntries(configs.map((c) => [c.key, []]));     // per round: the median step, ms
const prefill = Object.fromEntries(configs.map((c) => [c.key, []]));  // per round: the first token, ms
for (let r = 0; r < ROUNDS; r++) {
  for (let i = 0; i < configs.length; i++) {
    const c = configs[(i + r) % configs.length];
    if (maxThreads > 1) aw._setThreads(c.t);
    const ms = [];
    for await (const tok of models[c.d].generate(prompt, { maxNewTokens: STEPS + 1, stopTokens: [] })) ms.push(tok.ms);
    prefill[c.key].push(ms[0]);
    if (STEPS > 0) step[c.key].push(median(ms.slice(1)));
  }
}
const readAfter = [await readBandwidthThreads(1), await readBandwidthThreads(maxThreads)];

// Ratios per round (b's time / a's: how many times faster a is), then their median.
const ratio = (series, a, b) => median(series[a].map((x, i) => series[b][i] / x));
const rows = configs.map(({ t, d, key }) => {
  const bytes = models[d].weightBytes - (d === 'f32' ? 0 : models[d].weightTypes.f32 ?? 0);
  const row = { threads: t, dtype: d, prefillMs: +median(prefill[key]).toFixed(1), weightMB: +(bytes / 1e6).toFixed(1) };
  if (STEPS > 0) {
    const ms = median(step[key]);
    Object.assign(row, { decodeStepMs: +ms.toFixed(2), decodeTokensPerSecond: +(1000 / ms).toFixed(1), weightGBps: +(bytes / ms / 1e6).toFixed(2) });
  }
  const vs = (other, name) => {
    if (!step[other] || other === key) return;
    if (STEPS > 0) row[`decodeVs${name}`] = +ratio(step, key, other).toFixed(2);
    row[`prefillVs${name}`] = +ratio(prefill, key, other).toFixed(2);
  };
  if (d !== 'f32') vs(`${t}/f32`, 'F32');
  if (d === 'q4') vs(`${t}/q4a16`, 'Q4a16');
  if (t !== THREADS[0]) vs(`${THREADS[0]}/${d}`, `${THREADS[0]}Thread`);
  return row;
});
const gb = (x) => +(x / 1e9).toFixed(1);
const result = { machine: describeMachine(), node: process.version, shape: SHAPE, build: caps.build, relaxed: caps.relaxedSimd,
  rounds: ROUNDS, prompt: PROMPT, steps: STEPS, readGBps: { before: readBefore.map(gb), after: readAfter.map(gb), threads: [1, maxThreads] }, rows };
for (const r of rows) {
  const extra = Object.entries(r).filter(([k]) => k.includes('Vs')).map(([k, v]) => `${k} ${v}×`).join(', ');
  log(`threads ${r.threads}, ${r.dtype}: prefill ${r.prefillMs} ms` + (STEPS > 0 ? `, decode ${r.decodeStepMs} ms = ${r.decodeTokensPerSecond} tok/s, ` +
    `${r.weightMB} MB of weights per token at ${r.weightGBps} GB/s` : '') + (extra ? `; ${extra}` : ''));
}
log(`read bandwidth (1 core, ${maxThreads} cores): before ${result.readGBps.before.join(', ')} GB/s, after ${result.readGBps.after.join(', ')} GB/s`);
for (const m of Object.values(models)) m.dispose();
await aw.close();
if (JSON_OUT) console.log(JSON.stringify(result, null, 1));
