// The causal LM family at SmolLM2-135M's shape (issue 24, README "Language
// models"): hidden 576, 30 layers, 9 heads of 64, 3 key-value heads,
// intermediate 1536, vocab 49 152, tied — random weights (BF16 in the file,
// float32 in memory, as any checkpoint), loaded with aw.loadModel(bytes,
// { config }) as a Hugging Face checkpoint is. With --shape, another of
// tools/make_checkpoint.mjs's shapes (llama-3.2-1b, qwen2.5-0.5b, …), written
// once into --dir and loaded from that folder. For each thread count and dtype:
//
//   prefill   tokens/s of a --prompt-token prompt (default 128; the first
//             token's time: the prompt through every layer, the last row's
//             logits, the argmax); beside it (SmolLM2-135M, or --gemm) the same
//             run's time of the same matrix products on the float32 GEMM kernel
//             alone (bench/lib.mjs kernelBench, one thread, the build's own:
//             the prompt's rows through the seven projections × layers, one row
//             through the head): prefill efficiency = that time / the prefill's
//             (one thread; with more the GEMM figure is still one thread's, so
//             the ratio shows the threads' gain)
//   decode    tokens/s of greedy steps after that prompt (median step time),
//             the weight bytes a step reads (every matrix once, in its dtype)
//             and the rate it reads them at (GB/s); against wasm's read
//             bandwidth measured in the same run: one core (bench/stream_read.wat:
//             256 MiB read as f32x4, the roofline of a product whose matrix is
//             read once), the same number of cores at once (readBandwidthThreads:
//             a step split over N threads can at most stream that), and a copy
//             bandwidth (a 128 MiB memmove, TypedArray#copyWithin, counted as
//             STREAM does: bytes read + written) (target ≥ 0.7 of the read bound
//             at batch 1, one thread)
//   ratios    in the same run: decode and prefill against f32 (same threads),
//             q4 against q4a16 (the same 4-bit weights with int16 activations:
//             the arithmetic q4 had before issue 43), and each thread count
//             against 1 thread (same dtype)
//
// Medians of --runs (default 5) prefills and of every decode step. Machine,
// caches and the Node version are printed beside the figures; ratios, not
// absolute times, are what carry to another machine. The thread list runs
// unchanged at any count (--threads 1,2,4,8,16 on a larger machine: init's
// limit is its own, the pool is sized per run).
//
// Usage: node bench/lm.mjs [--shape NAME] [--dir /tmp/attnwasm-fits] [--prompt 128] [--runs N] [--decode N]
//        [--threads 1,2 (1p: the pthreads build at 1 thread)] [--dtypes f32,bf16,q8,q4,q4a16] [--relaxed] [--gemm | --no-gemm] [--json]
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describeMachine, kernelBench, median, readBandwidth, readBandwidthThreads } from './lib.mjs';
import { SHAPES, writeCheckpoint } from '../tools/make_checkpoint.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i < 0 ? dflt : argv[i + 1]; };
const RUNS = Number(opt('--runs', 5));
const DECODE = Number(opt('--decode', 48));
// Thread counts; '1p' is one thread on the pthreads build (init with 2, then 1): what that build costs by itself.
const THREADS = String(opt('--threads', '1,2')).split(',').map((t) => ({ n: parseInt(t, 10), pthreads: t.endsWith('p') || parseInt(t, 10) > 1, label: t }));
// Weight types: 'bf16' is the file as stored; the others convert while loading (dtype).
const DTYPES = String(opt('--dtypes', 'f32,bf16,q8,q4,q4a16')).split(',');
const JSON_OUT = argv.includes('--json');
const RELAXED = argv.includes('--relaxed');  // the relaxed-SIMD build (default: the baseline one)
const SHAPE = opt('--shape', 'smollm2-135m');
const DIR = opt('--dir', '/tmp/attnwasm-fits');
const PROMPT = Number(opt('--prompt', 128));
const GEMM = argv.includes('--gemm') || (SHAPE === 'smollm2-135m' && !argv.includes('--no-gemm'));
if (SHAPE !== 'smollm2-135m' && !SHAPES[SHAPE]) throw new Error(`--shape: one of ${Object.keys(SHAPES).join(', ')}`);

const CONFIG = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_act: 'silu', vocab_size: 49152, hidden_size: 576,
  intermediate_size: 1536, num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, head_dim: 64,
  max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true,
};
const E = CONFIG.hidden_size, I = CONFIG.intermediate_size, V = CONFIG.vocab_size, L = CONFIG.num_hidden_layers;
const KD = CONFIG.num_key_value_heads * CONFIG.head_dim;
const PROJ = [['q', E, E], ['k', E, KD], ['v', E, KD], ['o', E, E], ['gate', E, I], ['up', E, I], ['down', I, E]];

/** The checkpoint: HF names, BF16 values uniform in ±scale (a seeded generator), metadata {"format": "pt"}. */
function checkpoint() {
  const tensors = [['model.embed_tokens.weight', [V, E], 0.05]];
  const names = { q: 'self_attn.q_proj', k: 'self_attn.k_proj', v: 'self_attn.v_proj', o: 'self_attn.o_proj', gate: 'mlp.gate_proj', up: 'mlp.up_proj', down: 'mlp.down_proj' };
  for (let l = 0; l < L; l++) {
    for (const [p, inF, outF] of PROJ) tensors.push([`model.layers.${l}.${names[p]}.weight`, [outF, inF], 1 / Math.sqrt(inF)]);
    tensors.push([`model.layers.${l}.input_layernorm.weight`, [E], -1], [`model.layers.${l}.post_attention_layernorm.weight`, [E], -1]);
  }
  tensors.push(['model.norm.weight', [E], -1]);
  const header = { __metadata__: { format: 'pt' } };
  let off = 0;
  for (const [name, shape] of tensors) {
    const bytes = shape.reduce((a, b) => a * b) * 2;
    header[name] = { dtype: 'BF16', shape, data_offsets: [off, off + bytes] };
    off += bytes;
  }
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const out = new Uint8Array(8 + h.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(new TextEncoder().encode(h), 8);
  const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
  let s = 1;
  for (const [name, , scale] of tensors) {
    const [b, e] = header[name].data_offsets;
    const u16 = new Uint16Array(out.buffer, 8 + h.length + b, (e - b) / 2);
    if (scale < 0) { u16.fill(0x3f80); continue; }  // norms: 1.0
    for (let i = 0; i < u16.length; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      f32[0] = (s / 2 ** 32 - 0.5) * 2 * scale;
      u16[i] = u32[0] >>> 16;
    }
  }
  return out;
}

/** Copy bandwidth, bytes read + written per second: median of 7 memmoves of 128 MiB. */
function copyBandwidth() {
  const n = 128 << 20, buf = new Uint8Array(2 * n);
  for (let i = 0; i < buf.length; i += 4096) buf[i] = i & 255;  // touch every page
  const ts = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    buf.copyWithin(r % 2 ? 0 : n, r % 2 ? n : 0, r % 2 ? 2 * n : n);
    ts.push(performance.now() - t0);
  }
  return (2 * n) / (median(ts) / 1000);
}

const log = (s) => { if (!JSON_OUT) console.log(s); };
log(`# ${describeMachine()}; Node ${process.version}`);
// The model: SmolLM2-135M's bytes made here, or another shape's folder (written once).
let source, config, layers, hidden, vocab;
if (SHAPE === 'smollm2-135m') {
  const t0 = performance.now();
  source = checkpoint();
  config = CONFIG;
  log(`# SmolLM2-135M shape, random weights: checkpoint ${(source.length / 2 ** 20).toFixed(0)} MiB BF16 made in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
} else {
  source = join(DIR, SHAPE);
  if (!existsSync(join(source, 'model.safetensors'))) {
    log(`# writing ${SHAPE} into ${source} (tools/make_checkpoint.mjs) …`);
    writeCheckpoint(SHAPE, source);
  }
  config = SHAPES[SHAPE];
  log(`# ${SHAPE} shape, random weights: ${source}`);
}
layers = config.num_hidden_layers; hidden = config.hidden_size; vocab = config.vocab_size;
const inter = config.intermediate_size, hd = config.head_dim ?? hidden / config.num_attention_heads;
const projections = [['q', hidden, config.num_attention_heads * hd], ['k', hidden, config.num_key_value_heads * hd],
  ['v', hidden, config.num_key_value_heads * hd], ['o', config.num_attention_heads * hd, hidden],
  ['gate', hidden, inter], ['up', hidden, inter], ['down', inter, hidden]];

const { init } = await import('../bindings/index.js');
const kb = GEMM ? await kernelBench({ relaxed: RELAXED }) : null;
let gemmMs = null;  // the f32 GEMM of the prefill's products, measured once
const readOne = await readBandwidth(), copy = copyBandwidth();
const results = [];
for (const { n: threads, pthreads, label } of THREADS) {
  const readN = await readBandwidthThreads(threads);
  for (const dtype of DTYPES) {
    const aw = await init({ threads: pthreads ? Math.max(2, threads) : threads, relaxedSimd: RELAXED });
    if (pthreads && threads === 1) aw._setThreads(1);
    const tl = performance.now();
    const lm = await aw.loadModel(source, SHAPE === 'smollm2-135m' ? { config, dtype } : { dtype });
    const loadMs = performance.now() - tl;
    let s = 99;
    const prompt = Int32Array.from({ length: PROMPT }, () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s % vocab; });
    // Prefill: the first token's time, RUNS times (after one warm-up).
    const prefill = [];
    for (let r = 0; r <= RUNS; r++) {
      const g = lm.generate(prompt, { maxNewTokens: 1, stopTokens: [] });
      const { value } = await g.next();
      await g.return();
      if (r > 0) prefill.push(value.ms);
    }
    // Decode: greedy steps after the prompt.
    const steps = [];
    for await (const t of lm.generate(prompt, { maxNewTokens: DECODE + 1, stopTokens: [] })) if (t.index > 0) steps.push(t.ms);
    // The same products on the f32 GEMM kernel alone: the prompt's rows through each projection, one row through the head.
    if (kb && gemmMs === null) {
      gemmMs = layers * projections.reduce((a, [, inF, outF]) => a + median([0, 1, 2].map(() => kb.gemm(PROMPT, outF, inF, RUNS))), 0)
        + median([0, 1, 2].map(() => kb.gemm(1, vocab, hidden, RUNS)));
    }
    const prefillMs = median(prefill), stepMs = median(steps);
    const stepBytes = lm.weightBytes - (dtype === 'f32' ? 0 : lm.weightTypes.f32 ?? 0) - (dtype === 'f32' ? 4 * (2 * layers + 1) * hidden : 0);
    const boundMs = stepBytes / readOne * 1000, boundNMs = stepBytes / readN * 1000;
    const r = {
      threads: label, dtype, loadMs: Math.round(loadMs), prefillMs: +prefillMs.toFixed(1), prefillTokensPerSecond: Math.round(PROMPT / prefillMs * 1000),
      gemmMs: gemmMs === null ? null : +gemmMs.toFixed(1), prefillEfficiency: gemmMs === null ? null : +(gemmMs / prefillMs).toFixed(3),
      decodeStepMs: +stepMs.toFixed(2), decodeTokensPerSecond: +(1000 / stepMs).toFixed(1),
      weightMB: +(stepBytes / 1e6).toFixed(1), weightGBps: +(stepBytes / stepMs / 1e6).toFixed(2),
      readGBps: +(readOne / 1e9).toFixed(2), readThreadsGBps: +(readN / 1e9).toFixed(2), copyGBps: +(copy / 1e9).toFixed(2),
      boundStepMs: +boundMs.toFixed(2), fractionOfBound: +(boundMs / stepMs).toFixed(3), fractionOfThreadsBound: +(boundNMs / stepMs).toFixed(3),
      copyBoundFraction: +(stepBytes / copy * 1000 / stepMs).toFixed(3), heapMB: Math.round(aw.memory().heapBytes / 2 ** 20),
    };
    results.push(r);
    const ratio = (other, key) => (other ? +(other[key] / r[key]).toFixed(2) : null);
    const f32 = results.find((x) => x.threads === label && x.dtype === 'f32');
    const a16 = dtype === 'q4' ? results.find((x) => x.threads === label && x.dtype === 'q4a16') : null;
    const one = label !== '1' ? results.find((x) => x.threads === '1' && x.dtype === dtype) : null;
    Object.assign(r, {
      decodeVsF32: dtype === 'f32' ? null : ratio(f32, 'decodeStepMs'), prefillVsF32: dtype === 'f32' ? null : ratio(f32, 'prefillMs'),
      decodeVsQ4a16: ratio(a16, 'decodeStepMs'), prefillVsQ4a16: ratio(a16, 'prefillMs'),
      decodeVs1Thread: ratio(one, 'decodeStepMs'), prefillVs1Thread: ratio(one, 'prefillMs'),
    });
    const vs = [r.decodeVsF32 && `decode ${r.decodeVsF32}× f32's speed, prefill ${r.prefillVsF32}×`,
      r.decodeVsQ4a16 && `decode ${r.decodeVsQ4a16}× q4a16's, prefill ${r.prefillVsQ4a16}×`,
      r.decodeVs1Thread && `decode ${r.decodeVs1Thread}× 1 thread's, prefill ${r.prefillVs1Thread}×`].filter(Boolean);
    log(`threads ${label}${pthreads && threads === 1 ? ' (pthreads build)' : ''}, ${dtype}${vs.length ? ` (${vs.join('; ')})` : ''}: load ${r.loadMs} ms; prefill ${PROMPT} tokens ${r.prefillMs} ms = ${r.prefillTokensPerSecond} tok/s` +
      (r.gemmMs === null ? '; ' : `, GEMM of the same products ${r.gemmMs} ms → ${(r.prefillEfficiency * 100).toFixed(0)} % of the GEMM's speed; `) +
      `decode ${r.decodeStepMs} ms/token = ${r.decodeTokensPerSecond} tok/s, reading ${r.weightMB} MB of weights per token at ${r.weightGBps} GB/s: ` +
      `${(r.fractionOfBound * 100).toFixed(0)} % of one core's read bandwidth (${r.readGBps} GB/s), ` +
      `${(r.fractionOfThreadsBound * 100).toFixed(0)} % of ${threads} cores' (${r.readThreadsGBps} GB/s) ` +
      `(copy ${r.copyGBps} GB/s: ${(r.copyBoundFraction * 100).toFixed(0)} %); heap ${r.heapMB} MiB`);
    lm.dispose();
    await aw.close();
  }
}
if (JSON_OUT) console.log(JSON.stringify({ machine: describeMachine(), node: process.version, shape: SHAPE, config, prompt: PROMPT, runs: RUNS, relaxed: RELAXED, results }, null, 1));
