// Small Hugging Face-style causal LM checkpoints written in JS for the loading tests (load_*.test.mjs and
// tests/browser/load_stream.test.mjs): a config.json, the state dict with HF's names and seeded values,
// safetensors bytes in F32 / BF16 / F16, and sharded layouts (model.safetensors.index.json + shards).
// Not a test file. Values are exact in the dtype asked for (generated, then rounded to nearest even), so
// the same numbers can be written as BF16 and as F32 and must load to the same model.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 → bfloat16 bits, round to nearest, ties to even (finite inputs). */
export function bf16Bits(x) {
  f32[0] = x;
  const u = u32[0];
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}
/** bfloat16 bits → float32 (exact). */
export function bf16Value(h) {
  u32[0] = (h << 16) >>> 0;
  return f32[0];
}
/** float32 → float16 bits, round to nearest, ties to even (subnormals included; finite inputs). */
export function f16Bits(x) {
  f32[0] = x;
  const u = u32[0];
  const sign = (u >>> 16) & 0x8000;
  const e = (u >>> 23) & 0xff;
  let m = u & 0x7fffff;
  const E = e - 127 + 15;
  if (E >= 31) return sign | 0x7c00;
  if (E <= 0) {  // a subnormal half: h × 2^-24
    if (E < -10) return sign;
    m |= 0x800000;
    const shift = 14 - E;
    let h = m >>> shift;
    const rem = m & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (E << 10) | (m >>> 13);
  const rem = m & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;  // a carry into the exponent is right
  return sign | h;
}
/** float16 bits → float32 (exact). */
export function f16Value(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  return e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
}
/** The values rounded to `dtype` ('F32': unchanged; 'BF16', 'F16': to nearest even), as float32. */
export function roundTo(values, dtype) {
  if (dtype === 'F32') return Float32Array.from(values);
  const conv = dtype === 'BF16' ? (x) => bf16Value(bf16Bits(x)) : (x) => f16Value(f16Bits(x));
  return Float32Array.from(values, conv);
}

/** A seeded generator of floats uniform in [-scale/2, scale/2) (an LCG; the same numbers on every engine). */
export function seeded(seed) {
  let s = seed >>> 0;
  return (n, scale) => Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return ((s >>> 8) / 2 ** 24 - 0.5) * scale;
  });
}

/**
 * A config.json for a small Llama or Qwen2 model. hidden / heads must be even (the head size); awkward
 * sizes are the point (hidden 40 or 72, intermediate 100, vocab 77).
 */
export function lmConfig({ modelType = 'llama', hidden = 40, inter = 100, vocab = 77, layers = 2, heads = 4, kvHeads = 2, tied = false } = {}) {
  return {
    architectures: [modelType === 'qwen2' ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM'], model_type: modelType,
    hidden_act: 'silu', vocab_size: vocab, hidden_size: hidden, intermediate_size: inter, num_hidden_layers: layers,
    num_attention_heads: heads, num_key_value_heads: kvHeads, max_position_embeddings: 256, rms_norm_eps: 1e-5,
    rope_theta: 10000, tie_word_embeddings: tied, bos_token_id: 1, eos_token_id: 2,
  };
}

/**
 * The state dict of `config` as [{ name, shape, values }], in the order HF saves it (embedding, layers,
 * norm, lm_head). Matrices uniform in ±0.6·(scale), norms 1 ± 0.25, Qwen2's q/k/v biases ±0.1, every value
 * rounded to `exact` ('F32', 'BF16' or 'F16') so the file may store it in that dtype exactly.
 * `lmHead`: write lm_head.weight for a tied model too (then a copy of the embedding).
 */
export function lmTensors(config, { seed = 1, exact = 'F32', lmHead = false } = {}) {
  const rnd = seeded(seed);
  const E = config.hidden_size, I = config.intermediate_size, V = config.vocab_size;
  const D = E / config.num_attention_heads, KD = D * config.num_key_value_heads;
  const qwen = config.model_type === 'qwen2';
  const out = [];
  const add = (name, shape, values) => out.push({ name, shape, values: roundTo(values, exact) });
  const matrix = (rows, cols) => rnd(rows * cols, 1.2);
  const norm = (n) => rnd(n, 0.5).map((x) => 1 + x);
  add('model.embed_tokens.weight', [V, E], rnd(V * E, 2));
  for (let l = 0; l < config.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    add(`${p}input_layernorm.weight`, [E], norm(E));
    add(`${p}self_attn.q_proj.weight`, [E, E], matrix(E, E));
    if (qwen) add(`${p}self_attn.q_proj.bias`, [E], rnd(E, 0.2));
    add(`${p}self_attn.k_proj.weight`, [KD, E], matrix(KD, E));
    if (qwen) add(`${p}self_attn.k_proj.bias`, [KD], rnd(KD, 0.2));
    add(`${p}self_attn.v_proj.weight`, [KD, E], matrix(KD, E));
    if (qwen) add(`${p}self_attn.v_proj.bias`, [KD], rnd(KD, 0.2));
    add(`${p}self_attn.o_proj.weight`, [E, E], matrix(E, E));
    add(`${p}post_attention_layernorm.weight`, [E], norm(E));
    add(`${p}mlp.gate_proj.weight`, [I, E], matrix(I, E));
    add(`${p}mlp.up_proj.weight`, [I, E], matrix(I, E));
    add(`${p}mlp.down_proj.weight`, [E, I], matrix(E, I));
  }
  add('model.norm.weight', [E], norm(E));
  if (!config.tie_word_embeddings) add('lm_head.weight', [V, E], rnd(V * E, 1));
  else if (lmHead) out.push({ name: 'lm_head.weight', shape: [V, E], values: out[0].values });
  return out;
}

const SIZE = { F32: 4, BF16: 2, F16: 2 };

/** One tensor's values as little-endian bytes of `dtype` (rounded to nearest even). */
export function encode(values, dtype) {
  if (dtype === 'F32') return new Uint8Array(Float32Array.from(values).buffer);
  const h = new Uint16Array(values.length);
  const conv = dtype === 'BF16' ? bf16Bits : f16Bits;
  for (let i = 0; i < values.length; i++) h[i] = conv(values[i]);
  return new Uint8Array(h.buffer);
}

/** The safetensors header (its JSON padded to 8 bytes) and data size of tensors stored in `dtype`. */
function headerOf(tensors, dtype, metadata) {
  const header = { __metadata__: metadata };
  let off = 0;
  for (const t of tensors) {
    const d = t.dtype ?? (t.shape.length >= 2 ? dtype : 'F32');
    const n = t.values.length * SIZE[d];
    header[t.name] = { dtype: d, shape: t.shape, data_offsets: [off, off + n] };
    off += n;
  }
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  return { header, text: h, dataBytes: off };
}

/**
 * Safetensors bytes of `tensors`: matrices in `dtype` ('F32', 'BF16', 'F16'), vectors (norms, biases) in F32
 * as checkpoints often keep them, unless a tensor says its own `dtype`. Metadata {"format": "pt"}.
 */
export function safetensors(tensors, { dtype = 'F32', metadata = { format: 'pt' } } = {}) {
  const { header, text, dataBytes } = headerOf(tensors, dtype, metadata);
  const h = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + h.length + dataBytes);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  for (const t of tensors) out.set(encode(t.values, header[t.name].dtype), 8 + h.length + header[t.name].data_offsets[0]);
  return out;
}

/** The shard file names HF writes: model-00001-of-00003.safetensors … */
export const shardName = (i, n) => `model-${String(i + 1).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`;

/**
 * A sharded checkpoint: tensor i in shard shardOf(i, name) (default: round robin over `shards`, so one
 * layer's tensors are spread over every shard). Returns { files: Map name → bytes (the shards and the
 * index), index: the index object, names: the shard names }.
 */
export function sharded(tensors, { shards = 3, dtype = 'F32', shardOf = (i) => i % shards } = {}) {
  const names = Array.from({ length: shards }, (_, i) => shardName(i, shards));
  const parts = names.map(() => []);
  tensors.forEach((t, i) => parts[shardOf(i, t.name)].push(t));
  const files = new Map();
  const weightMap = {};
  let total = 0;
  parts.forEach((p, i) => {
    const bytes = safetensors(p, { dtype });
    files.set(names[i], bytes);
    for (const t of p) weightMap[t.name] = names[i];
    total += bytes.byteLength;
  });
  const index = { metadata: { total_size: total }, weight_map: weightMap };
  files.set('model.safetensors.index.json', new TextEncoder().encode(JSON.stringify(index, null, 2)));
  return { files, index, names };
}

/** A few rows of ids (B, T) below `vocab`, seeded. */
export function sampleIds(vocab, B = 2, T = 7, seed = 3) {
  let s = seed;
  const data = Int32Array.from({ length: B * T }, () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s % vocab; });
  return { data, shape: [B, T] };
}

/** Bitwise equality of two Float32Arrays, naming the first differing element. */
export function sameBits(a, b) {
  if (a.length !== b.length) return `lengths ${a.length} and ${b.length}`;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length), y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return `element ${i}: ${a[i]} vs ${b[i]}`;
  return null;
}
