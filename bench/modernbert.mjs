// Bulk embeddings at answerdotai/ModernBERT-base's shape (hidden 768, 22 layers, 12 heads, intermediate 1152,
// vocabulary 50 368; every third layer global, the others a window of 128; random F32 weights from
// bench/export_modernbert_onnx.py): attnwasm's embedder against onnxruntime-web (wasm EP, float32) on the same
// weights, 1 thread, in one Node process, their runs alternated so that a noisy machine slows both alike. Not a
// test. Workload (issue 42): seeded texts of 8-512 tokens ([CLS] random ids [SEP]; ids drawn directly, no
// tokenizer) -> mean-pooled embeddings (sentence-transformers' pooling of a plain transformers folder).
// onnxruntime-web as Transformers.js runs it: batches of 32 in input order, each padded to its longest text,
// mean pooling in JS over the real tokens. attnwasm: embedIds(texts, { batchSize: 32 }) (each text at its own
// length). Both engines are first checked against torch (check.json). The workload is 1 000 texts; at
// ModernBERT-base's 110 M non-embedding parameters that is about 1.7 h of one core for the two engines together,
// so --texts chooses how many (the ratio is per token, and the lengths are drawn from the same distribution).
// Needs bench/onnx/modernbert (/usr/bin/python3 bench/export_modernbert_onnx.py) and bench/node_modules.
// Usage: node bench/modernbert.mjs [--texts 1000] [--rounds 1] [--json]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, describeMachine, median, peakProbe, rng } from './lib.mjs';

const DIR = join(BENCH_DIR, 'onnx', 'modernbert');
const CLS = 50281, SEP = 50282, PAD = 50283, E = 768;

function args() {
  const a = process.argv.slice(2);
  const get = (name, dft) => { const i = a.indexOf(name); return i >= 0 ? Number(a[i + 1]) : dft; };
  return { texts: get('--texts', 1000), rounds: get('--rounds', 1), json: a.includes('--json') };
}

/** n texts of 8..512 tokens: Int32Arrays [CLS] ids [SEP]. */
function makeTexts(n, seed = 20261205) {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    const len = 8 + Math.floor(r() * 505);
    const ids = new Int32Array(len);
    for (let i = 1; i < len - 1; i++) ids[i] = 1000 + Math.floor(r() * 49000);
    ids[0] = CLS;
    ids[len - 1] = SEP;
    return ids;
  });
}

async function ortEngine() {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(join(DIR, 'base.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 });
  return {
    name: `onnxruntime-web ${ort.env.versions?.web ?? ''}`.trim(),
    async embed(texts) {
      const out = new Float32Array(texts.length * E);
      for (let s = 0; s < texts.length; s += 32) {
        const batch = texts.slice(s, s + 32);
        const b = batch.length, T = batch.reduce((m, t) => Math.max(m, t.length), 0);
        const ids = new BigInt64Array(b * T).fill(BigInt(PAD)), mask = new BigInt64Array(b * T);
        batch.forEach((t, i) => t.forEach((id, k) => { ids[i * T + k] = BigInt(id); mask[i * T + k] = 1n; }));
        const h = (await session.run({ input_ids: new ort.Tensor('int64', ids, [b, T]), attention_mask: new ort.Tensor('int64', mask, [b, T]) })).last_hidden_state.data;
        batch.forEach((t, i) => {  // mean over the real tokens, as sentence-transformers' Pooling
          const dst = out.subarray((s + i) * E, (s + i + 1) * E);
          for (let k = 0; k < t.length; k++) for (let e = 0; e < E; e++) dst[e] += h[(i * T + k) * E + e];
          for (let e = 0; e < E; e++) dst[e] /= t.length;
        });
      }
      return out;
    },
    release: () => session.release(),
  };
}

async function attnwasmEngine() {
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads: 1 });
  const m = await aw.loadModel(join(DIR, 'base'));
  if (!(m instanceof aw.Embedder) || m.pooling !== 'mean' || m.normalize) throw new Error(`loadModel gave ${m.constructor.name} (${m.pooling}, normalize ${m.normalize})`);
  const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
  return {
    name: `attnwasm ${version}`,
    async embed(texts) { return (await m.embedIds(texts, { batchSize: 32 })).data; },
    release: () => m.dispose(),
  };
}

async function main() {
  const o = args();
  if (!existsSync(join(DIR, 'base.onnx'))) throw new Error(`${DIR} is missing: run /usr/bin/python3 bench/export_modernbert_onnx.py`);
  const probe = await peakProbe();
  const ort = await ortEngine();
  const t0 = performance.now();
  const aw = await attnwasmEngine();
  const loadMs = performance.now() - t0;  // init() and loadModel of the 596 MB folder, in a fresh process
  const engines = { attnwasm: aw, ort };
  // Both against torch on check.json's padded batch: the mean of each row's real tokens.
  const c = JSON.parse(readFileSync(join(DIR, 'check.json'), 'utf8'));
  const bytes = Buffer.from(c.lastHiddenState.base64, 'base64');
  const h = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const T = c.lastHiddenState.shape[1];
  const checkTexts = c.inputIds.map((row, i) => Int32Array.from(row.slice(0, c.lengths[i])));
  const want = new Float64Array(checkTexts.length * E);
  checkTexts.forEach((t, i) => { for (let k = 0; k < t.length; k++) for (let e = 0; e < E; e++) want[i * E + e] += h[(i * T + k) * E + e] / t.length; });
  const check = {};
  for (const [k, e] of Object.entries(engines)) {
    const got = await e.embed(checkTexts);
    check[k] = Math.max(...Array.from(want, (w, i) => Math.abs(got[i] - w)));
    if (!(check[k] < 1e-3)) throw new Error(`${k}: max |embedding - torch| ${check[k]}`);
  }
  const texts = makeTexts(o.texts);
  const tokens = texts.reduce((s, t) => s + t.length, 0);
  const padded = texts.reduce((s, _, i) => (i % 32 ? s : s + Math.max(...texts.slice(i, i + 32).map((t) => t.length)) * texts.slice(i, i + 32).length), 0);
  const times = { attnwasm: [], ort: [] };
  for (let r = 0; r < o.rounds; r++) {
    for (const k of r % 2 ? ['ort', 'attnwasm'] : ['attnwasm', 'ort']) {
      const t0 = performance.now();
      await engines[k].embed(texts);
      times[k].push(performance.now() - t0);
    }
  }
  const peak = median(Array.from({ length: 5 }, () => probe(40)));
  // the encoder's products per text: 2 · 110.0 M non-embedding parameters per token, attention 4 · T · S · E per layer
  // (S: T on global layers, at most 129 keys on local ones: |i − j| <= 64)
  const nonEmbed = 22 * (768 * 2304 + 768 * 768 + 768 * 2304 + 1152 * 768) + 0;
  const flops = texts.reduce((s, t) => {
    let att = 0;
    for (let l = 0; l < 22; l++) att += 4 * t.length * (l % 3 ? Math.min(t.length, 129) : t.length) * E;
    return s + 2 * nonEmbed * t.length + att;
  }, 0);
  const med = { attnwasm: median(times.attnwasm), ort: median(times.ort) };
  const result = {
    machine: describeMachine(), texts: o.texts, tokens, paddedTokens: padded, rounds: o.rounds, check, loadMs, peakGflops: peak,
    engines: { attnwasm: engines.attnwasm.name, ort: engines.ort.name }, medianMs: med,
    tokensPerSecond: Object.fromEntries(Object.entries(med).map(([k, v]) => [k, tokens / v * 1000])),
    ofPeak: (flops / (peak * 1e6)) / med.attnwasm, ratio: med.ort / med.attnwasm,
  };
  for (const e of Object.values(engines)) await e.release();
  if (o.json) console.log(JSON.stringify(result));
  else {
    console.log(`${result.machine}`);
    console.log(`ModernBERT-base shape, ${o.texts} texts (${tokens} tokens, 8-512 each; ${padded} once padded per batch of 32), 1 thread, median of ${o.rounds}; max |mean - torch|: attnwasm ${check.attnwasm.toExponential(1)}, ort ${check.ort.toExponential(1)}`);
    console.log(`  ${result.engines.attnwasm}: ${med.attnwasm.toFixed(0)} ms (${result.tokensPerSecond.attnwasm.toFixed(0)} tokens/s; ${(100 * result.ofPeak).toFixed(0)} % of this run's SIMD peak, ${peak.toFixed(1)} GFLOP/s)`);
    console.log(`  ${result.engines.ort}: ${med.ort.toFixed(0)} ms (${result.tokensPerSecond.ort.toFixed(0)} tokens/s)`);
    console.log(`  attnwasm init + load ${loadMs.toFixed(0)} ms; onnxruntime-web / attnwasm: ${result.ratio.toFixed(2)}x`);
  }
}

await main();
