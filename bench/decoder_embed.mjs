// A decoder embedder at Qwen3-Embedding-0.6B's real shape (issue 42; docs/embeddings.md, "Decoder-based
// embedders"): hidden 1024, 28 layers, 16 query and 8 key/value heads of 128, intermediate 3072, vocabulary
// 151 669, tied — random BF16 weights under Qwen3Model's names with the model's sentence-transformers files and
// Qwen3's tokenizer (tools/make_checkpoint.mjs qwen3-embedding-0.6b, written once into --dir), loaded from that
// folder as a user loads the hub's. What a user meets, one process:
//
//   load      init + loadModel of the folder (1.2 GB of BF16 weights), and the process's memory after it
//   first     the first embed() in the process: one query with Qwen3-Embedding's instruction prompt
//   query     the same query, warm (median of --runs)
//   passages  --passages documents of 40–80 words (no prompt), batch 32, warm: passages/s and tokens/s
//   bound     each workload's matrix products (2 · the non-embedding parameters per token, attention's
//             4 · T² · heads · head_dim per layer) at this run's single-core SIMD peak (lib.mjs peakProbe, timed
//             beside it): the fraction of that peak the run reaches, the figure that carries to another machine
//
// No onnxruntime-web figure: exporting the 0.6B decoder to ONNX is not part of bench/ (the encoder workloads
// of bench/embed.mjs and bench/rerank.mjs carry the comparison). Machine, caches and Node version are printed.
//
// --shape embeddinggemma-300m: EmbeddingGemma-300m's (hidden 768, 24 layers, 3 query heads and 1 key/value head of
// 256, intermediate 1152, vocabulary 262 144; bidirectional, sliding layers of |i − j| < 257; mean pooling, 2_Dense
// 768 → 3072 and 3_Dense back, Gemma 3's tokenizer with <eos> appended, its query prompt). The FLOP count leaves
// out the Dense products (2 · 2 · 768 · 3072 per text, under 0.3 % of a 20-token query's).
//
// Usage: node bench/decoder_embed.mjs [--shape qwen3-embedding-0.6b|embeddinggemma-300m] [--dir /tmp/attnwasm-<shape>]
//        [--runs 5] [--passages 32] [--threads 1] [--json]
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describeMachine, median, peakProbe, rng } from './lib.mjs';
import { SHAPES, parameterCount, writeCheckpoint } from '../tools/make_checkpoint.mjs';

const opt = (name, d) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? d : process.argv[i + 1];
};
const dir = opt('--dir', `/tmp/attnwasm-${opt('--shape', 'qwen3-embedding-0.6b')}`);
const runs = Number(opt('--runs', 5));
const passages = Number(opt('--passages', 32));
const threads = Number(opt('--threads', 1));
const json = process.argv.includes('--json');

const WORDS = 'the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there been one all we their has would when if so no what out up more into some could them other time than like then now only its'.split(' ');

async function main() {
  const shape = opt('--shape', 'qwen3-embedding-0.6b');
  if (!['qwen3-embedding-0.6b', 'embeddinggemma-300m'].includes(shape)) throw new Error(`--shape: expected qwen3-embedding-0.6b or embeddinggemma-300m, got ${shape}`);
  const c = SHAPES[shape];
  if (!existsSync(join(dir, 'model.safetensors'))) {
    const t0 = performance.now();
    writeCheckpoint(shape, dir);
    console.error(`wrote ${dir} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const probe = await peakProbe();
  const t0 = performance.now();
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads });
  const m = await aw.loadModel(dir);
  const loadMs = performance.now() - t0;
  const rssAfterLoad = process.memoryUsage().rss;
  if (m.constructor.name !== 'DecoderEmbedder') throw new Error(`expected a DecoderEmbedder, got ${m.constructor.name}`);
  const query = 'What is the capital of China and how many people live there?';
  const queryTokens = m.tokenizer.encodeInputs(`${m.prompts.query}${query}`, { maxLength: m.maxTokens }).inputIds.length;
  let t = performance.now();
  await m.embed([query], { promptName: 'query' });
  const firstMs = performance.now() - t;
  const queryMs = [];
  for (let r = 0; r < runs; r++) {
    t = performance.now();
    await m.embed([query], { promptName: 'query' });
    queryMs.push(performance.now() - t);
  }
  const next = rng(20261205);
  const docs = Array.from({ length: passages }, () => Array.from({ length: 40 + Math.floor(next() * 41) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' '));
  const docTokens = docs.map((d) => m.tokenizer.encodeInputs(d, { maxLength: m.maxTokens }).inputIds.length);
  const passageMs = [];
  for (let r = 0; r < Math.max(1, Math.ceil(runs / 2)); r++) {
    t = performance.now();
    await m.embed(docs, { batchSize: 32 });
    passageMs.push(performance.now() - t);
  }
  const peak = median(Array.from({ length: 5 }, () => probe(40)));
  // FLOPs: every non-embedding parameter once per token (mul + add), attention's QKᵀ and PV per layer.
  const nonEmbed = parameterCount({ ...c }) - c.vocab_size * c.hidden_size;
  const flops = (T) => 2 * nonEmbed * T + c.num_hidden_layers * 4 * T * T * c.num_attention_heads * c.head_dim;
  const boundMs = (f) => f / (peak * 1e6);
  const qMed = median(queryMs), pMed = median(passageMs);
  const pFlops = docTokens.reduce((s, T) => s + flops(T), 0);
  const out = {
    machine: describeMachine(), node: process.version, threads, peakGflops: peak,
    parameters: parameterCount({ ...c }), weightBytes: m.weightBytes, loadMs, rssAfterLoadMiB: rssAfterLoad / 2 ** 20,
    shape, query: { tokens: queryTokens, firstMs, medianMs: qMed, boundMs: boundMs(flops(queryTokens)), ofPeak: boundMs(flops(queryTokens)) / qMed },
    passages: { count: passages, tokens: docTokens.reduce((a, b) => a + b, 0), medianMs: pMed, perSecond: passages / (pMed / 1000),
      tokensPerSecond: docTokens.reduce((a, b) => a + b, 0) / (pMed / 1000), boundMs: boundMs(pFlops), ofPeak: boundMs(pFlops) / pMed },
  };
  m.dispose();
  await aw.close();
  if (json) {
    console.log(JSON.stringify(out));
    return;
  }
  console.log(`machine: ${out.machine}; Node ${out.node}; ${threads} thread(s); SIMD peak this run ${peak.toFixed(1)} GFLOP/s`);
  console.log(`${shape}'s shape: ${(out.parameters / 1e6).toFixed(0)} M parameters, ${(out.weightBytes / 2 ** 20).toFixed(0)} MiB of weights as stored`);
  console.log(`load: init + loadModel ${(loadMs / 1000).toFixed(2)} s; process RSS after it ${out.rssAfterLoadMiB.toFixed(0)} MiB`);
  console.log(`query (${queryTokens} tokens with the instruction): first call ${firstMs.toFixed(0)} ms, warm median ${qMed.toFixed(0)} ms; ` +
    `its products at the SIMD peak ${out.query.boundMs.toFixed(0)} ms: ${(100 * out.query.ofPeak).toFixed(0)} % of the peak`);
  console.log(`passages: ${passages} of ${out.passages.tokens} tokens in ${pMed.toFixed(0)} ms (median): ${out.passages.perSecond.toFixed(1)} passages/s, ` +
    `${out.passages.tokensPerSecond.toFixed(0)} tokens/s; ${(100 * out.passages.ofPeak).toFixed(0)} % of the peak`);
}

await main();
