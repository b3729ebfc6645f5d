// What quantized weights cost in quality (aw.loadModel(..., { dtype: 'q8' | 'q4' | 'q4a16' }); the arithmetic:
// src/kernels/qgemm.h). Not a test and not a timing: numbers of the models' outputs, printed as a table.
//
//   (a) the writing demo's model (models/lm: the character-level Llama of tools/models/train_lm.py) —
//       held-out bits per character at f32 / q8 / q4 / q4a16, measured exactly as train_lm.py's heldout_bits does:
//       the held-out fortunes (the last 5 % of random.Random(20261125)'s shuffle of the cleaned fortunes,
//       never trained on; 71 204 characters with their <eos>), <eos> in front, every position predicted
//       once with up to 127 characters of context (windows of 128, stride 64), by forward()'s logits.
//       The text is not in the repository: train_lm.py's own functions make it (python3 + torch, and
//       `apt-get download fortunes-min fortunes` into a cache folder, as the trainer does), checked against
//       the data digest in models/lm/train_log.txt. Beside it, the mean KL divergence of each position's
//       next-character distribution from f32's, and how often the top character agrees.
//   (b) a random SmolLM2-135M-shaped model (hidden 576, 30 layers, 9 heads of 64, 3 kv heads, intermediate
//       1536, vocab 49 152, tied, rope_theta 100 000; BF16 values from a seeded generator, as bench/lm.mjs
//       makes it) — the mean KL(BF16 as stored ‖ q8 / q4 / q4a16) of forward()'s next-token distributions over the
//       positions of a seeded random prompt. Random weights give near-uniform distributions (logits of
//       std ~0.7 over 49 152 tokens), where any KL is small; so the same weights are also run with the final
//       norm's weight raised to `--peak` (logits × that factor, exactly: each product's activation
//       quantization is per row and scale-free), which peaks the distributions the way a trained model's are
//       (their entropy is printed). Both are reported.
//
// Usage: node --experimental-wasm-relaxed-simd bench/quality.mjs [--threads N] [--relaxed] [--positions 256]
//        [--peak 8] [--only fortune|smollm] [--heldout ids.json] [--json]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine } from './lib.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i < 0 ? dflt : argv[i + 1]; };
const THREADS = Number(opt('--threads', 1));
const RELAXED = argv.includes('--relaxed');
const POSITIONS = Number(opt('--positions', 256));
const PEAK = Number(opt('--peak', 8));
const ONLY = opt('--only', null);
const JSON_OUT = argv.includes('--json');
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const log = (s = '') => { if (!JSON_OUT) console.log(s); };
// The quantized types compared: q4 and q4a16 hold the same 4-bit weights (int8 / int16 activations).
const QDTYPES = ['q8', 'q4', 'q4a16'];

// ---- numbers of distributions (float64) ----

/** log-softmax of row (length V) into out (Float64Array). */
function logSoftmax(row, out) {
  let m = -Infinity;
  for (let i = 0; i < row.length; i++) if (row[i] > m) m = row[i];
  let s = 0;
  for (let i = 0; i < row.length; i++) s += Math.exp(row[i] - m);
  const lse = m + Math.log(s);
  for (let i = 0; i < row.length; i++) out[i] = row[i] - lse;
  return out;
}

/** KL(p ‖ q) in nats from log-probabilities. */
function kl(lp, lq) {
  let s = 0;
  for (let i = 0; i < lp.length; i++) if (lp[i] > -Infinity) s += Math.exp(lp[i]) * (lp[i] - lq[i]);
  return s;
}

function entropy(lp) {
  let s = 0;
  for (let i = 0; i < lp.length; i++) if (lp[i] > -Infinity) s -= Math.exp(lp[i]) * lp[i];
  return s;
}

function argmax(row) {
  let b = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[b]) b = i;
  return b;
}

// ---- (a) the fortune model ----

const FORTUNE_DIGEST = '58a9f3a412f51777';  // models/lm/train_log.txt: sha256 of the cleaned fortunes in file order
const HELDOUT_PY = `
import hashlib, importlib.util, json, os, random, sys, tempfile
spec = importlib.util.spec_from_file_location("train_lm", sys.argv[1])
tl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tl)
folder, source = tl.data_dir(os.path.join(tempfile.gettempdir(), "attnwasm-fortunes"))
fortunes, dropped = tl.load_fortunes(folder)
digest = hashlib.sha256("\\x00".join(fortunes).encode()).hexdigest()
random.Random(20261125).shuffle(fortunes)
held = fortunes[-round(len(fortunes) * tl.HELDOUT_FRACTION):]
json.dump({"source": source, "digest": digest, "fortunes": len(held), "ids": tl.stream(held).tolist()}, sys.stdout)
`;

/** The held-out stream's ids (each fortune's characters, then <eos> = 0), as train_lm.py splits it. */
function heldoutIds() {
  const given = opt('--heldout', null);
  const cache = join(tmpdir(), 'attnwasm-fortunes', 'heldout_ids.json');
  let h;
  if (given) h = JSON.parse(readFileSync(given, 'utf8'));
  else if (existsSync(cache)) h = JSON.parse(readFileSync(cache, 'utf8'));
  else {
    const out = execFileSync('/usr/bin/python3', ['-c', HELDOUT_PY, join(ROOT, 'tools/models/train_lm.py')],
      { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
    h = JSON.parse(out);
    mkdirSync(join(tmpdir(), 'attnwasm-fortunes'), { recursive: true });
    writeFileSync(cache, JSON.stringify(h));
  }
  if (h.digest && !h.digest.startsWith(FORTUNE_DIGEST)) {
    throw new Error(`held-out text: the fortunes' digest ${h.digest.slice(0, 16)} is not the trainer's ${FORTUNE_DIGEST}`);
  }
  return h;
}

async function fortune(aw) {
  const h = heldoutIds();
  const metrics = JSON.parse(readFileSync(join(ROOT, 'models/lm/metrics.json'), 'utf8'));
  const source = new URL('../models/lm/lm.safetensors', import.meta.url);
  const dtypes = ['f32', ...QDTYPES];
  const models = {};
  for (const d of dtypes) models[d] = await aw.loadModel(source, { dtype: d });
  const V = models.f32.vocabSize, CTX = 128, STRIDE = CTX / 2;
  // train_lm.py heldout_bits: seq = <eos> + stream; windows [s, min(s + CTX, n)) of seq predict seq[s+1 ...];
  // the first window scores every position, the others only their last STRIDE.
  const seq = Int32Array.from([0, ...h.ids]);
  const n = seq.length - 1;
  const jobs = [];
  for (let s = 0; s < Math.max(1, n - CTX + STRIDE); s += STRIDE) jobs.push([s, Math.min(s + CTX, n), s === 0 ? 0 : CTX - STRIDE]);
  const nll = Object.fromEntries(dtypes.map((d) => [d, 0]));
  const klSum = Object.fromEntries(QDTYPES.map((d) => [d, 0])), agree = { ...klSum };
  let count = 0;
  const lp = Object.fromEntries(dtypes.map((d) => [d, new Float64Array(V)]));
  const t0 = performance.now();
  const BATCH = 16;
  for (let i = 0; i < jobs.length;) {
    // A batch of windows of one length (all CTX but the last).
    const len = jobs[i][1] - jobs[i][0];
    const batch = [];
    while (i < jobs.length && batch.length < BATCH && jobs[i][1] - jobs[i][0] === len) batch.push(jobs[i++]);
    const ids = new Int32Array(batch.length * len);
    batch.forEach(([s, e], b) => ids.set(seq.subarray(s, e), b * len));
    const logits = {};
    for (const d of dtypes) logits[d] = models[d].forward({ data: ids, shape: [batch.length, len] }).logits.data;
    batch.forEach(([s, e, first], b) => {
      for (let p = first; p < e - s; p++) {
        const target = seq[s + p + 1], at = (b * len + p) * V;
        for (const d of dtypes) {
          logSoftmax(logits[d].subarray(at, at + V), lp[d]);
          nll[d] -= lp[d][target];
        }
        for (const d of QDTYPES) {
          klSum[d] += kl(lp.f32, lp[d]);
          if (argmax(logits[d].subarray(at, at + V)) === argmax(logits.f32.subarray(at, at + V))) agree[d]++;
        }
        count++;
      }
    });
  }
  if (count !== n) throw new Error(`scored ${count} positions, expected ${n}`);
  const rows = dtypes.map((d) => ({
    dtype: d, weightBytes: models[d].weightBytes, bitsPerChar: nll[d] / count / Math.LN2,
    klNatsVsF32: d === 'f32' ? 0 : klSum[d] / count, top1AgreesWithF32: d === 'f32' ? 1 : agree[d] / count,
  }));
  for (const d of dtypes) models[d].dispose();
  return { params: metrics.params, positions: count, fortunes: h.fortunes, source: h.source, trainerBitsPerChar: metrics.heldoutBitsPerChar.model,
    seconds: (performance.now() - t0) / 1000, rows };
}

// ---- (b) a random SmolLM2-135M-shaped model ----

const CONFIG = {
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_act: 'silu', vocab_size: 49152, hidden_size: 576,
  intermediate_size: 1536, num_hidden_layers: 30, num_attention_heads: 9, num_key_value_heads: 3, head_dim: 64,
  max_position_embeddings: 8192, rms_norm_eps: 1e-5, rope_theta: 100000, tie_word_embeddings: true,
};

/**
 * The checkpoint of bench/lm.mjs: HF names, BF16 values uniform in ±1/√in_features (the embedding ±0.05) from
 * an LCG seeded with 1, norms 1, metadata {"format": "pt"}. Returns { bytes, setFinalNorm(value) } (the final
 * norm's BF16 values rewritten in place).
 */
function smollmCheckpoint() {
  const E = CONFIG.hidden_size, I = CONFIG.intermediate_size, V = CONFIG.vocab_size, L = CONFIG.num_hidden_layers;
  const KD = CONFIG.num_key_value_heads * CONFIG.head_dim;
  const PROJ = [['self_attn.q_proj', E, E], ['self_attn.k_proj', E, KD], ['self_attn.v_proj', E, KD], ['self_attn.o_proj', E, E],
    ['mlp.gate_proj', E, I], ['mlp.up_proj', E, I], ['mlp.down_proj', I, E]];
  const tensors = [['model.embed_tokens.weight', [V, E], 0.05]];
  for (let l = 0; l < L; l++) {
    for (const [p, inF, outF] of PROJ) tensors.push([`model.layers.${l}.${p}.weight`, [outF, inF], 1 / Math.sqrt(inF)]);
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
  const bf16 = (x) => { f32[0] = x; return u32[0] >>> 16; };
  let s = 1;
  for (const [name, , scale] of tensors) {
    const [b, e] = header[name].data_offsets;
    const u16 = new Uint16Array(out.buffer, 8 + h.length + b, (e - b) / 2);
    if (scale < 0) { u16.fill(bf16(1)); continue; }
    for (let i = 0; i < u16.length; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      u16[i] = bf16((s / 2 ** 32 - 0.5) * 2 * scale);
    }
  }
  const [nb, ne] = header['model.norm.weight'].data_offsets;
  const norm = new Uint16Array(out.buffer, 8 + h.length + nb, (ne - nb) / 2);
  return { bytes: out, setFinalNorm: (v) => norm.fill(bf16(v)) };
}

async function smollm(aw) {
  const t0 = performance.now();
  const ck = smollmCheckpoint();
  const V = CONFIG.vocab_size;
  let s = 7;
  const prompt = Int32Array.from({ length: POSITIONS }, () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s % V; });
  const ids = { data: prompt, shape: [1, POSITIONS] };
  const runs = [];
  for (const scale of [1, PEAK]) {
    ck.setFinalNorm(scale);
    const logits = {}, bytes = {};
    for (const d of [undefined, 'f32', ...QDTYPES]) {
      const lm = await aw.loadModel(ck.bytes, { config: CONFIG, dtype: d });
      bytes[d ?? 'bf16'] = lm.weightBytes;
      logits[d ?? 'bf16'] = lm.forward(ids).logits.data;
      lm.dispose();
    }
    const lp = new Float64Array(V), lq = new Float64Array(V);
    const rows = [];
    let ent = 0, std = 0;
    for (const d of ['f32', ...QDTYPES]) {
      let k = 0, agree = 0;
      for (let p = 0; p < POSITIONS; p++) {
        const a = logits.bf16.subarray(p * V, (p + 1) * V), b = logits[d].subarray(p * V, (p + 1) * V);
        logSoftmax(a, lp);
        logSoftmax(b, lq);
        k += kl(lp, lq);
        if (argmax(a) === argmax(b)) agree++;
        if (d === 'f32') {
          ent += entropy(lp);
          let m = 0, m2 = 0;
          for (let i = 0; i < V; i++) { m += a[i]; m2 += a[i] * a[i]; }
          std += Math.sqrt(m2 / V - (m / V) ** 2);
        }
      }
      rows.push({ dtype: d, weightBytes: bytes[d], klNats: k / POSITIONS, top1AgreesWithBf16: agree / POSITIONS });
    }
    runs.push({ finalNormWeight: scale, meanEntropyNats: ent / POSITIONS, uniformEntropyNats: Math.log(V),
      meanLogitStd: std / POSITIONS, bf16WeightBytes: bytes.bf16, rows });
  }
  return { positions: POSITIONS, seconds: (performance.now() - t0) / 1000, runs };
}

// ---- main ----

const { init } = await import('../bindings/index.js');
const aw = await init({ threads: THREADS, relaxedSimd: RELAXED });
const caps = aw.capabilities();
const result = { machine: describeMachine(), node: process.version, build: `${caps.build}${caps.relaxedSimd ? ', relaxed SIMD' : ''}`, threads: THREADS };
log(`# attnwasm quality of quantized weights (bench/quality.mjs)`);
log(`# ${result.machine}; Node ${process.version}; ${result.build} build, ${THREADS} thread(s)`);
const MB = (b) => `${(b / 1e6).toFixed(2)} MB`;
if (ONLY !== 'smollm') {
  const f = await fortune(aw);
  result.fortune = f;
  log(`\n(a) models/lm (fortune cookies, ${f.params} parameters): held-out bits per character, ${f.positions} characters ` +
    `(${f.fortunes} held-out fortunes; windows of 128, stride 64, as tools/models/train_lm.py; torch's figure for the stored F16 weights: ${f.trainerBitsPerChar}) [${f.seconds.toFixed(0)} s]`);
  log('| dtype | weights in memory | bits/char | Δ vs f32 | KL(f32 ‖ dtype), nats/char | top-1 = f32\'s |');
  log('|---|---:|---:|---:|---:|---:|');
  const ref = f.rows[0].bitsPerChar;
  for (const r of f.rows) {
    log(`| ${r.dtype} | ${MB(r.weightBytes)} | ${r.bitsPerChar.toFixed(4)} | ${r.dtype === 'f32' ? '—' : (r.bitsPerChar - ref >= 0 ? '+' : '') + (r.bitsPerChar - ref).toFixed(4)} | ` +
      `${r.dtype === 'f32' ? '—' : r.klNatsVsF32.toExponential(2)} | ${(r.top1AgreesWithF32 * 100).toFixed(2)} % |`);
  }
}
if (ONLY !== 'fortune') {
  const sm = await smollm(aw);
  result.smollm = sm;
  log(`\n(b) random SmolLM2-135M-shaped model (BF16 as stored; 135 M parameters): mean KL(bf16 ‖ dtype) of forward()'s next-token ` +
    `distributions over ${sm.positions} positions of a seeded random prompt [${sm.seconds.toFixed(0)} s]`);
  log('| final norm weight | logit std | entropy of bf16 (uniform: ' + sm.runs[0].uniformEntropyNats.toFixed(2) + ' nats) | dtype | weights in memory | KL, nats/token | top-1 = bf16\'s |');
  log('|---:|---:|---:|---|---:|---:|---:|');
  for (const run of sm.runs) {
    for (const r of run.rows) {
      log(`| ${run.finalNormWeight} | ${run.meanLogitStd.toFixed(2)} | ${run.meanEntropyNats.toFixed(2)} nats | ${r.dtype} | ${MB(r.weightBytes)} | ` +
        `${r.klNats.toExponential(2)} | ${(r.top1AgreesWithBf16 * 100).toFixed(1)} % |`);
    }
  }
  log(`(bf16 as stored: ${MB(sm.runs[0].bf16WeightBytes)} in memory. Final norm weight 1: the model as bench/lm.mjs makes it; ` +
    `${PEAK}: the same weights with logits × ${PEAK}, peaked like a trained model's.)`);
}
await aw.close();
if (JSON_OUT) console.log(JSON.stringify(result, null, 1));
