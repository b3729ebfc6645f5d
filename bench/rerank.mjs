// Reranking at cross-encoder/ms-marco-MiniLM-L-6-v2's shape (BERT, hidden 384, 6 layers, 12 heads, one logit;
// random weights from bench/export_reranker_onnx.py): attnwasm's CrossEncoder against onnxruntime-web (wasm EP,
// float32) on the same weights, 1 thread, in one Node process, their runs alternated so that a noisy machine slows
// both alike. Not a test. Workload (issue 42): 100 seeded (query, passage) pairs of 64-256 tokens ([CLS] query
// [SEP] passage [SEP], queries of 6-14 tokens, token types 0 then 1; ids drawn directly, no tokenizer) -> one
// logit each. onnxruntime-web as Transformers.js runs a cross-encoder: batches of 32 in input order, each padded
// to its longest pair; and, the best case for it, the pairs sorted by length first. attnwasm: logitsOfIds(pairs, types, { batchSize: 32 }) (each pair at its own length).
// Both engines are first checked against torch (check.json). Needs bench/onnx/rerank
// (/usr/bin/python3 bench/export_reranker_onnx.py) and bench/node_modules (npm ci in bench/).
// Usage: node bench/rerank.mjs [--pairs 100] [--rounds 3] [--json]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, describeMachine, median, rng } from './lib.mjs';

const DIR = join(BENCH_DIR, 'onnx', 'rerank');
const CLS = 101, SEP = 102, PAD = 0;

function args() {
  const a = process.argv.slice(2);
  const get = (name, dft) => { const i = a.indexOf(name); return i >= 0 ? Number(a[i + 1]) : dft; };
  return { pairs: get('--pairs', 100), rounds: get('--rounds', 3), json: a.includes('--json') };
}

/** n pairs of 64..256 tokens: { ids, types } Int32Arrays. */
function makePairs(n, seed = 20261206) {
  const r = rng(seed);
  const word = () => 1000 + Math.floor(r() * (30522 - 1000));
  return Array.from({ length: n }, () => {
    const len = 64 + Math.floor(r() * 193), q = 6 + Math.floor(r() * 9);
    const ids = new Int32Array(len), types = new Int32Array(len);
    ids[0] = CLS;
    for (let i = 1; i <= q; i++) ids[i] = word();
    ids[q + 1] = SEP;
    for (let i = q + 2; i < len - 1; i++) ids[i] = word();
    ids[len - 1] = SEP;
    types.fill(1, q + 2);
    return { ids, types };
  });
}

async function ortEngine() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(join(DIR, 'msmarco.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 });
  async function forward(batch) {
    const b = batch.length, T = batch.reduce((m, p) => Math.max(m, p.ids.length), 0);
    const ids = new BigInt64Array(b * T), mask = new BigInt64Array(b * T), types = new BigInt64Array(b * T);
    batch.forEach((p, i) => {
      for (let t = 0; t < T; t++) {
        const real = t < p.ids.length;
        ids[i * T + t] = BigInt(real ? p.ids[t] : PAD);
        mask[i * T + t] = real ? 1n : 0n;
        types[i * T + t] = BigInt(real ? p.types[t] : 0);
      }
    });
    const out = await session.run({ input_ids: new ort.Tensor('int64', ids, [b, T]), attention_mask: new ort.Tensor('int64', mask, [b, T]), token_type_ids: new ort.Tensor('int64', types, [b, T]) });
    return out.logits.data;
  }
  return {
    name: `onnxruntime-web ${ort.env.versions?.web ?? ''}`.trim(),
    async score(pairs) {
      const out = new Float32Array(pairs.length);
      for (let s = 0; s < pairs.length; s += 32) out.set(await forward(pairs.slice(s, s + 32)), s);
      return out;
    },
    /** The best case for padding: batches of pairs of similar length (sorted), results put back in order. */
    async scoreSorted(pairs) {
      const order = pairs.map((p, i) => i).sort((a, b) => pairs[a].ids.length - pairs[b].ids.length);
      const out = new Float32Array(pairs.length);
      for (let s = 0; s < pairs.length; s += 32) {
        const idx = order.slice(s, s + 32);
        const got = await forward(idx.map((i) => pairs[i]));
        idx.forEach((i, j) => { out[i] = got[j]; });
      }
      return out;
    },
    release: () => session.release(),
  };
}

async function attnwasmEngine() {
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads: 1 });
  const ce = await aw.loadModel(join(DIR, 'msmarco'));
  if (!(ce instanceof aw.CrossEncoder)) throw new Error(`loadModel gave ${ce.constructor.name}, not a CrossEncoder`);
  const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
  return {
    name: `attnwasm ${version}`,
    async score(pairs) {
      return (await ce.logitsOfIds(pairs.map((p) => p.ids), pairs.map((p) => p.types), { batchSize: 32 })).data;
    },
    release: () => ce.dispose(),
  };
}

async function main() {
  const o = args();
  if (!existsSync(join(DIR, 'msmarco.onnx'))) throw new Error(`${DIR} is missing: run /usr/bin/python3 bench/export_reranker_onnx.py`);
  const ort = await ortEngine();
  const t0 = performance.now();
  const aw = await attnwasmEngine();
  const loadMs = performance.now() - t0;  // init() and loadModel of the 86 MB folder, in a fresh process
  const engines = { attnwasm: aw, ort, ortSorted: { name: `${ort.name}, pairs sorted by length`, score: (p) => ort.scoreSorted(p), release() {} } };
  // Both against torch on check.json's pairs.
  const c = JSON.parse(readFileSync(join(DIR, 'check.json'), 'utf8'));
  const b = Buffer.from(c.logits.base64, 'base64');
  const want = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  const checkPairs = c.inputIds.map((row, i) => ({ ids: Int32Array.from(row.slice(0, c.lengths[i])), types: Int32Array.from(c.tokenTypeIds[i].slice(0, c.lengths[i])) }));
  const check = {}, first = {};
  for (const [k, e] of Object.entries(engines)) {
    const t0 = performance.now();
    const got = await e.score(checkPairs);
    first[k] = performance.now() - t0;  // the first call of this process (V8's first tier, fresh memory)
    check[k] = Math.max(...Array.from(want, (w, i) => Math.abs(got[i] - w)));
    if (!(check[k] < 1e-3)) throw new Error(`${k}: max |logit - torch| ${check[k]}`);
  }
  // The same three pairs again, warm: what the first call cost beyond it.
  const warmCheck = {};
  for (const [k, e] of Object.entries(engines)) {
    const t0 = performance.now();
    await e.score(checkPairs);
    warmCheck[k] = performance.now() - t0;
  }
  const pairs = makePairs(o.pairs);
  const tokens = pairs.reduce((s, p) => s + p.ids.length, 0);
  const times = { attnwasm: [], ort: [], ortSorted: [] };
  await engines.attnwasm.score(pairs.slice(0, 8));  // first calls out of the timing (V8 tiers)
  await engines.ort.score(pairs.slice(0, 8));
  for (let r = 0; r < o.rounds; r++) {
    for (const k of r % 2 ? ['ortSorted', 'ort', 'attnwasm'] : ['attnwasm', 'ort', 'ortSorted']) {
      const t0 = performance.now();
      await engines[k].score(pairs);
      times[k].push(performance.now() - t0);
    }
  }
  const med = { attnwasm: median(times.attnwasm), ort: median(times.ort), ortSorted: median(times.ortSorted) };
  const result = {
    machine: describeMachine(), pairs: o.pairs, tokens, rounds: o.rounds, check, loadMs,
    firstCall: { ms: first.attnwasm, warmMs: warmCheck.attnwasm, ratio: first.attnwasm / warmCheck.attnwasm, ortMs: first.ort, ortWarmMs: warmCheck.ort },
    engines: { attnwasm: engines.attnwasm.name, ort: engines.ort.name },
    medianMs: med, pairsPerSecond: Object.fromEntries(Object.entries(med).map(([k, v]) => [k, o.pairs / v * 1000])),
    ratio: med.ort / med.attnwasm, ratioSorted: med.ortSorted / med.attnwasm,
  };
  for (const e of Object.values(engines)) await e.release();  // ortSorted shares ort's session
  if (o.json) console.log(JSON.stringify(result));
  else {
    console.log(`${result.machine}`);
    console.log(`rerank ${o.pairs} pairs (${tokens} tokens, 64-256 each), 1 thread, median of ${o.rounds}; max |logit - torch|: attnwasm ${check.attnwasm.toExponential(1)}, ort ${check.ort.toExponential(1)}`);
    console.log(`  ${result.engines.attnwasm}: ${med.attnwasm.toFixed(0)} ms (${result.pairsPerSecond.attnwasm.toFixed(1)} pairs/s)`);
    console.log(`  ${result.engines.ort}: ${med.ort.toFixed(0)} ms (${result.pairsPerSecond.ort.toFixed(1)} pairs/s)`);
    console.log(`  ${engines.ortSorted.name}: ${med.ortSorted.toFixed(0)} ms (${result.pairsPerSecond.ortSorted.toFixed(1)} pairs/s)`);
    console.log(`  attnwasm in this fresh process: init + load ${loadMs.toFixed(0)} ms; first call (3 pairs of 17-40 tokens) ${first.attnwasm.toFixed(1)} ms, then ${warmCheck.attnwasm.toFixed(1)} ms (${result.firstCall.ratio.toFixed(2)}x); onnxruntime-web ${first.ort.toFixed(1)} then ${warmCheck.ort.toFixed(1)} ms`);
    console.log(`  onnxruntime-web / attnwasm: ${result.ratio.toFixed(2)}x (input order, as Transformers.js), ${result.ratioSorted.toFixed(2)}x (sorted)`);
  }
}

await main();
