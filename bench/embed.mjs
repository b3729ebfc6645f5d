// Sentence embeddings at all-MiniLM-L6-v2's shape (hidden 384, 6 layers, 12 heads, intermediate 1536,
// vocab 30 522; random weights from bench/export_encoder_onnx.py): attnwasm's Embedder against
// onnxruntime-web (wasm EP, float32) on the same weights, both in one Node process per thread count,
// their runs alternated so that a noisy machine slows both alike. Not a test. Workloads (issue 32):
//   bulk     1 000 seeded sentences of 8-64 tokens (ids drawn directly: [CLS] random [SEP]; no tokenizer)
//            -> mean-pooled, normalized embeddings; sentences/s. onnxruntime-web as Transformers.js runs
//            it: batches of 32 in input order, each padded to its longest sentence, mean pooling and
//            normalization in JS. attnwasm: embedIds(all, { batchSize: 32 }) (it may sort by length).
//   latency  one 16-token sentence, the same two paths; median of many calls; at 1 thread, its bound: the
//            sentence's multiply-adds at the same run's SIMD peak (sentenceBound).
// Needs bench/onnx/embed (/usr/bin/python3 bench/export_encoder_onnx.py) and bench/node_modules (npm ci).
// Usage: node bench/embed.mjs [--threads 1|2|all] [--sentences 1000] [--rounds 2] [--latency-calls 200]
//        [--json] [--ort-only]
// --threads all (default) runs this script once per thread count (1, then 2) in a child process each:
// onnxruntime-web's wasm backend reads env.wasm.numThreads once, when its first session is created, so
// one process cannot time both thread counts.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DIR, describeMachine, kernelBench, median, peakProbe, quantile, rng } from './lib.mjs';

const EMBED_DIR = join(BENCH_DIR, 'onnx', 'embed');
const MODEL_DIR = join(EMBED_DIR, 'minilm');
const ONNX_PATH = join(EMBED_DIR, 'minilm.onnx');
const HIDDEN = 384;
const CLS = 101, SEP = 102, PAD = 0;

function args() {
  const a = process.argv.slice(2);
  const get = (name, dft) => { const i = a.indexOf(name); return i >= 0 ? a[i + 1] : dft; };
  const threads = get('--threads', 'all');
  if (!['1', '2', 'all'].includes(threads)) throw new RangeError(`--threads: expected 1, 2 or all, got ${threads}`);
  const int = (name, dft, min) => {
    const v = Number(get(name, dft));
    if (!Number.isInteger(v) || v < min) throw new RangeError(`${name}: expected an integer >= ${min}, got ${get(name, dft)}`);
    return v;
  };
  return { threads, sentences: int('--sentences', 1000, 1), rounds: int('--rounds', 2, 1),
    latencyCalls: int('--latency-calls', 200, 10), json: a.includes('--json'), ortOnly: a.includes('--ort-only') };
}

/** n sentences of 8..64 ids (specials included): Int32Array each, [CLS] w... [SEP], w in [1000, 30522). */
export function makeSentences(n, seed = 20261205) {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    const len = 8 + Math.floor(r() * 57);
    const ids = new Int32Array(len);
    ids[0] = CLS;
    ids[len - 1] = SEP;
    for (let i = 1; i < len - 1; i++) ids[i] = 1000 + Math.floor(r() * (30522 - 1000));
    return ids;
  });
}

// ------------------------------------------------------------------------------------------------
// onnxruntime-web: Transformers.js's way (padded batches in input order, pooling in JS)
// ------------------------------------------------------------------------------------------------

async function ortEngine(ort, threads) {
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(ONNX_PATH, {
    executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3,
  });
  /** One padded batch → last_hidden_state (b, T, E) as a Float32Array (owned by the caller). */
  async function forward(batch) {
    const b = batch.length;
    const T = batch.reduce((m, s) => Math.max(m, s.length), 0);
    const ids = new BigInt64Array(b * T), mask = new BigInt64Array(b * T), types = new BigInt64Array(b * T);
    batch.forEach((s, i) => {
      for (let t = 0; t < T; t++) {
        ids[i * T + t] = BigInt(t < s.length ? s[t] : PAD);
        mask[i * T + t] = t < s.length ? 1n : 0n;
      }
    });
    const feeds = {
      input_ids: new ort.Tensor('int64', ids, [b, T]),
      attention_mask: new ort.Tensor('int64', mask, [b, T]),
      token_type_ids: new ort.Tensor('int64', types, [b, T]),
    };
    const out = await session.run(feeds);
    const y = out.last_hidden_state;
    const data = y.data;
    y.dispose?.();
    return { data, T };
  }
  /** Mean pooling over the real tokens then L2 normalization, as Transformers.js's mean_pooling + normalize. */
  function poolInto(dst, row, h, T, len, bi) {
    const E = HIDDEN;
    const acc = new Float64Array(E);
    for (let t = 0; t < len; t++) {
      const o = (bi * T + t) * E;
      for (let e = 0; e < E; e++) acc[e] += h[o + e];
    }
    let norm = 0;
    for (let e = 0; e < E; e++) { acc[e] /= len; norm += acc[e] * acc[e]; }
    norm = Math.max(Math.sqrt(norm), 1e-12);
    for (let e = 0; e < E; e++) dst[row * E + e] = acc[e] / norm;
  }
  return {
    name: `onnxruntime-web ${ort.env.versions?.web ?? ''}`.trim(),
    async embed(sentences, batchSize = 32) {
      const out = new Float32Array(sentences.length * HIDDEN);
      let padded = 0;
      for (let s = 0; s < sentences.length; s += batchSize) {
        const batch = sentences.slice(s, s + batchSize);
        const { data, T } = await forward(batch);
        padded += batch.length * T;
        batch.forEach((x, i) => poolInto(out, s + i, data, T, x.length, i));
      }
      return { data: out, shape: [sentences.length, HIDDEN], padded };
    },
    forward,
    release: () => session.release(),
  };
}

// ------------------------------------------------------------------------------------------------
// attnwasm: the Embedder API (issue 32, docs/embeddings.md), as this benchmark uses it:
//   const aw = await init({ threads });
//   const embedder = await aw.loadModel(folder, { pooling: 'mean', normalize: true });
//        folder: a sentence-transformers folder (its modules.json already says mean + Normalize)
//   embedder.embedIds(idsList, { batchSize })
//        idsList: Array<Int32Array>, one per sentence, specials included, no padding
//        → { data: Float32Array (n × d, owned by the caller), shape: [n, d] }, rows in idsList's order
//   embedder.forward({ inputIds, attentionMask, tokenTypeIds })   tensors { data: Int32Array, shape: [B, T] }
//        → { lastHiddenState: { data, shape: [B, T, E] }, poolerOutput: { data, shape: [B, E] } | null }
//   embedder.dispose()
// Should the API go missing, the attnwasm side is skipped with the reason and only onnxruntime-web is timed.
// ------------------------------------------------------------------------------------------------

async function attnwasmEngine(threads) {
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads });
  if (typeof aw.loadModel !== 'function') throw new Error('aw.loadModel is missing');
  const embedder = await aw.loadModel(MODEL_DIR, { pooling: 'mean', normalize: true });
  for (const fn of ['embedIds', 'forward']) {
    if (typeof embedder?.[fn] !== 'function') {
      embedder?.dispose?.();
      throw new Error(`aw.loadModel(<sentence-transformers folder>) returned ${embedder?.constructor?.name ?? typeof embedder} without ${fn}()`);
    }
  }
  const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
  return {
    name: `attnwasm ${version}`,
    async embed(sentences, batchSize = 32) {
      return embedder.embedIds(sentences, { batchSize });
    },
    forward(inputIds, attentionMask, tokenTypeIds, shape) {
      return embedder.forward({ inputIds: { data: inputIds, shape }, attentionMask: { data: attentionMask, shape },
        tokenTypeIds: { data: tokenTypeIds, shape } });
    },
    release: () => embedder.dispose(),
  };
}

// ------------------------------------------------------------------------------------------------
// Checks and timing
// ------------------------------------------------------------------------------------------------

function f32(t) {
  const bytes = Buffer.from(t.base64, 'base64');
  const out = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}

/** Both engines against torch on check.json's padded batch (real positions only). */
async function checkTorch(engines) {
  const c = JSON.parse(readFileSync(join(EMBED_DIR, 'check.json'), 'utf8'));
  const want = f32(c.lastHiddenState);
  const [B, T] = c.shape;
  const flat = (rows) => Int32Array.from(rows.flat());
  const out = {};
  for (const [key, eng] of Object.entries(engines)) {
    let got;
    if (key === 'ort') got = (await eng.forward(c.inputIds.map((r, i) => Int32Array.from(r.slice(0, c.attentionMask[i].reduce((a, x) => a + x, 0)))))).data;
    else got = (await eng.forward(flat(c.inputIds), flat(c.attentionMask), flat(c.tokenTypeIds), [B, T])).lastHiddenState.data;
    let m = 0;
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        if (!c.attentionMask[b][t]) continue;
        for (let e = 0; e < HIDDEN; e++) {
          const i = (b * T + t) * HIDDEN + e;
          m = Math.max(m, Math.abs(got[i] - want[i]));
        }
      }
    }
    out[key] = m;
  }
  return out;
}

async function timeIt(fn) {
  const t0 = performance.now();
  const r = await fn();
  return { ms: performance.now() - t0, r };
}

async function runOne(opts, threads) {
  const loadBefore = loadavg()[0];
  const ort = await import('onnxruntime-web');
  const engines = { ort: await ortEngine(ort, threads) };
  let awSkipped = null;
  if (!opts.ortOnly) {
    try {
      engines.aw = await attnwasmEngine(threads);
    } catch (e) {
      awSkipped = `${e.code ?? e.name}: ${e.message}`;
    }
  } else awSkipped = '--ort-only';
  const sentences = makeSentences(opts.sentences);
  const tokens = sentences.reduce((a, s) => a + s.length, 0);
  const torchDiff = await checkTorch(engines);

  // warm-up: a slice of the bulk run, then the single sentence for ~1 s each
  const r16 = rng(16);
  const one = [Int32Array.from({ length: 16 }, (_, i) => (i === 0 ? CLS : i === 15 ? SEP : 1000 + Math.floor(r16() * 29522)))];
  for (const e of Object.values(engines)) {
    await e.embed(sentences.slice(0, 64));
    for (const t0 = performance.now(); performance.now() - t0 < 1000;) await e.embed(one, 1);
  }

  // bulk: rounds alternated ABBA so that drift hits both alike
  const bulk = Object.fromEntries(Object.keys(engines).map((k) => [k, []]));
  let padded = 0, embeddings = {};
  for (let r = 0; r < opts.rounds; r++) {
    const order = r % 2 ? Object.keys(engines).reverse() : Object.keys(engines);
    for (const k of order) {
      const { ms, r: res } = await timeIt(() => engines[k].embed(sentences, 32));
      bulk[k].push(ms);
      if (k === 'ort') padded = res.padded;
      embeddings[k] = res.data;
    }
  }
  // latency: blocks of 10 calls alternated, the first call of a block not counted
  const lat = Object.fromEntries(Object.keys(engines).map((k) => [k, []]));
  const BLOCK = 10;
  while (lat.ort.length < opts.latencyCalls) {
    for (const k of Object.keys(engines)) {
      for (let i = 0; i < BLOCK; i++) {
        const { ms } = await timeIt(() => engines[k].embed(one, 1));
        if (i > 0) lat[k].push(ms);
      }
    }
  }
  const agree = engines.aw ? (() => {
    const a = embeddings.aw, o = embeddings.ort;
    let minCos = Infinity;
    for (let i = 0; i < sentences.length; i++) {
      let dot = 0;
      for (let e = 0; e < HIDDEN; e++) dot += a[i * HIDDEN + e] * o[i * HIDDEN + e];
      minCos = Math.min(minCos, dot);
    }
    return { maxAbsDiff: maxAbsDiff(a, o), minCosine: minCos };
  })() : null;
  const result = {
    threads, machine: describeMachine(), node: process.version, loadAverage: [loadBefore, loadavg()[0]],
    engines: Object.fromEntries(Object.entries(engines).map(([k, e]) => [k, e.name])),
    attnwasmSkipped: awSkipped,
    workload: { sentences: sentences.length, tokens, ortPaddedTokens: padded, batchSize: 32, latencyTokens: 16 },
    maxDiffFromTorch: torchDiff, agreement: agree,
    bulk: Object.fromEntries(Object.entries(bulk).map(([k, ms]) => [k, { medianMs: median(ms), runsMs: ms,
      sentencesPerSecond: sentences.length / (median(ms) / 1000) }])),
    latency: Object.fromEntries(Object.entries(lat).map(([k, ms]) => [k, { medianMs: median(ms),
      p10Ms: quantile(ms, 0.1), p90Ms: quantile(ms, 0.9), calls: ms.length }])),
  };
  if (engines.aw) {
    result.ratios = {
      bulkSentencesPerSecond: result.bulk.aw.sentencesPerSecond / result.bulk.ort.sentencesPerSecond,
      latency: result.latency.ort.medianMs / result.latency.aw.medianMs,
    };
    if (threads === 1) result.bound = await sentenceBound(result.latency.aw.medianMs, result.latency.ort.medianMs, () => engines.aw.embed(one, 1));
  }
  for (const e of Object.values(engines)) await e.release();
  return result;
}

/**
 * The bound on one 16-token sentence (issue 42): its multiply-adds (the projections, the FFN and the attention
 * products of 6 layers: 342 MFLOP) at this run's single-core SIMD peak (lib.mjs peakProbe: fused chains of
 * f32x4 multiply + add, no memory) is the least time any float32 wasm SIMD code can take. Compared with attnwasm's
 * median and with the time the 1.6× target asks (onnxruntime-web's median ÷ 1.6).
 */
async function sentenceBound(awMs, ortMs, sentence) {
  const T = 16, E = HIDDEN, I = 1536, L = 6;
  const flops = L * (2 * T * E * E * 4 + 2 * T * E * I * 2 + 2 * 2 * T * T * E);
  const probe = await peakProbe();
  const peak = median([probe(), probe(), probe()]);  // GFLOP/s
  const floorMs = flops / (peak * 1e6);
  const targetMs = ortMs / 1.6;
  const bound = { flops, peakGflops: peak, floorMs, awFractionOfPeak: floorMs / awMs, targetMs, targetFractionOfPeak: floorMs / targetMs };
  // The sentence's products as the encoder runs them (query, key, value and output 384 → 384, the FFN's 384 → 1536
  // and 1536 → 384: ParallelGemmPacked over packed weights), timed alone (lib.mjs kernelBench) two ways: each
  // weight matrix reused, so in cache; and over copies of it filling 80 MB, so from memory, as the model's 6 layers
  // (42 MB of weights, more than this L3) stream theirs on every sentence. Blocks of sentences and of products
  // alternate, so that the machine's slow and fast spells fall on both; the medians are the blocks'.
  try {
    const kb = await kernelBench();
    const shapes = [[T, E, E, 4], [T, I, E, 1], [T, E, I, 1]];
    const copies = (n, k) => Math.ceil(80e6 / (4 * n * k));
    // To TurboFan: a fresh module's first calls can run in its baseline tier (docs/performance.md, "First calls").
    for (const t0 = performance.now(); performance.now() - t0 < 1500;)
      for (const [m, n, k] of shapes) { kb.gemm(m, n, k, 20); kb.gemmStreamed(m, n, k, copies(n, k), 1); }
    const blocks = { sentence: [], inCache: [], streamed: [] };
    for (let b = 0; b < 7; b++) {
      const t = [];
      for (let i = 0; i < 11; i++) {
        const t0 = performance.now();
        await sentence();
        if (i) t.push(performance.now() - t0);
      }
      blocks.sentence.push(median(t));
      blocks.inCache.push(L * shapes.reduce((a, [m, n, k, times]) => a + times * kb.gemm(m, n, k, 30), 0));
      blocks.streamed.push(L * shapes.reduce((a, [m, n, k, times]) => a + times * kb.gemmStreamed(m, n, k, copies(n, k), 3), 0));
    }
    const gemmFlops = L * (2 * T * E * E * 4 + 2 * T * E * I * 2);
    bound.blockSentenceMs = median(blocks.sentence);
    bound.gemmInCacheMs = median(blocks.inCache);
    bound.gemmStreamedMs = median(blocks.streamed);
    bound.gemmInCacheFractionOfPeak = gemmFlops / (peak * 1e6) / bound.gemmInCacheMs;
    bound.gemmStreamedFractionOfPeak = gemmFlops / (peak * 1e6) / bound.gemmStreamedMs;
    bound.streamedShareOfSentence = bound.gemmStreamedMs / bound.blockSentenceMs;
  } catch (e) {
    bound.gemmInCacheSkipped = `${e.code ?? e.name}: ${e.message}`;
  }
  return bound;
}

function render(results) {
  const lines = [];
  const r0 = results[0];
  lines.push(`machine: ${r0.machine}; Node ${r0.node}`);
  lines.push(`engines: ${Object.values(r0.engines).join(', ')}${r0.attnwasmSkipped ? ` (attnwasm skipped: ${r0.attnwasmSkipped})` : ''}`);
  lines.push(`bulk: ${r0.workload.sentences} sentences, ${r0.workload.tokens} tokens (onnxruntime-web computes ${r0.workload.ortPaddedTokens} with its padding, batches of 32 in input order)`);
  for (const r of results) {
    const d = Object.entries(r.maxDiffFromTorch).map(([k, v]) => `${k} ${v.toExponential(1)}`).join(', ');
    lines.push(`-- ${r.threads} thread${r.threads > 1 ? 's' : ''} (1-minute load average ${r.loadAverage[0].toFixed(2)} at the start: well above 0 means other work shared the cores; max |diff| from torch on check.json: ${d}${r.agreement ? `; embeddings attnwasm vs ort: max |diff| ${r.agreement.maxAbsDiff.toExponential(1)}, min cosine ${r.agreement.minCosine.toFixed(7)}` : ''})`);
    for (const k of Object.keys(r.bulk)) {
      lines.push(`   ${r.engines[k].padEnd(24)} bulk ${r.bulk[k].medianMs.toFixed(0).padStart(7)} ms = ${r.bulk[k].sentencesPerSecond.toFixed(1).padStart(7)} sentences/s;  16 tokens: median ${r.latency[k].medianMs.toFixed(2)} ms (p10 ${r.latency[k].p10Ms.toFixed(2)}, p90 ${r.latency[k].p90Ms.toFixed(2)})`);
    }
    if (r.ratios) lines.push(`   attnwasm / onnxruntime-web: ${r.ratios.bulkSentencesPerSecond.toFixed(2)}× the sentences/s (target ≥ 2× at 1 thread), ${r.ratios.latency.toFixed(2)}× faster on one sentence (target ≥ 1.6×)`);
    if (r.bound) {
      const b = r.bound;
      lines.push(`   one 16-token sentence: ${(b.flops / 1e6).toFixed(0)} MFLOP; at this run's SIMD peak (${b.peakGflops.toFixed(1)} GFLOP/s) ${b.floorMs.toFixed(2)} ms: attnwasm runs at ${(100 * b.awFractionOfPeak).toFixed(0)}% of the peak; 1.6× onnxruntime-web (${b.targetMs.toFixed(2)} ms) would need ${(100 * b.targetFractionOfPeak).toFixed(0)}% of it`);
      if (b.gemmInCacheMs !== undefined) lines.push(`   its products timed alone, in blocks alternated with the sentence's (${b.blockSentenceMs.toFixed(2)} ms there): ${b.gemmStreamedMs.toFixed(2)} ms with the weights streamed from memory as in the model (${(100 * b.streamedShareOfSentence).toFixed(0)}% of the sentence's time; ${(100 * b.gemmStreamedFractionOfPeak).toFixed(0)}% of the peak), ${b.gemmInCacheMs.toFixed(2)} ms with them in cache (${(100 * b.gemmInCacheFractionOfPeak).toFixed(0)}%): streaming costs ${(b.gemmStreamedMs / b.gemmInCacheMs).toFixed(2)}× the time`);
      else if (b.gemmInCacheSkipped) lines.push(`   (products in cache not timed: ${b.gemmInCacheSkipped})`);
    }
  }
  return lines.join('\n');
}

async function main() {
  const opts = args();
  if (!existsSync(ONNX_PATH) || !existsSync(join(MODEL_DIR, 'model.safetensors'))) {
    throw new Error(`${EMBED_DIR} is missing: run /usr/bin/python3 bench/export_encoder_onnx.py first`);
  }
  let results;
  if (opts.threads === 'all') {
    results = [1, 2].map((t) => {
      const argv = [fileURLToPath(import.meta.url), '--threads', String(t), '--json', '--sentences', String(opts.sentences),
        '--rounds', String(opts.rounds), '--latency-calls', String(opts.latencyCalls), ...(opts.ortOnly ? ['--ort-only'] : [])];
      return JSON.parse(execFileSync(process.execPath, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 }));
    });
  } else {
    results = [await runOne(opts, Number(opts.threads))];
  }
  if (opts.json) process.stdout.write(JSON.stringify(opts.threads === 'all' ? results : results[0]) + '\n');
  else console.log(render(results));
}

await main();
// onnxruntime-web's worker threads (2 threads) would keep Node alive.
process.exit(0);
