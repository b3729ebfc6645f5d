// Writes a Hugging Face-style causal LM checkpoint of a real model's shape with random weights: config.json
// and model.safetensors (or, with --shards N, model-0000i-of-0000N.safetensors and
// model.safetensors.index.json), BF16 like the hub's files, tensors named as Hugging Face names them.
// Values: uniform in ±1/√in_features (the embedding ±0.05), norms 1, biases ±0.02, from a seeded generator
// (xorshift32), so a run of the script always writes the same bytes. Streamed to disk: memory stays a few
// MiB whatever the size (Llama-3.2-1B's shape is a 2.47 GB file).
//
// Usage: node tools/make_checkpoint.mjs <shape> <dir> [--shards N] [--dtype bf16|f32] [--seed S]
//   shapes: smollm2-135m, smollm2-360m, qwen2.5-0.5b, llama-3.2-1b (its llama3 RoPE scaling included),
//   tiny (a 2-layer test model)
// Also importable: SHAPES, writeCheckpoint(shape, dir, options).
import { mkdirSync, openSync, writeSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const llama = (o) => ({
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_act: 'silu', rms_norm_eps: 1e-5,
  attention_bias: false, mlp_bias: false, ...o,
});
const qwen2 = (o) => ({
  architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', hidden_act: 'silu', rms_norm_eps: 1e-6,
  use_sliding_window: false, ...o,
});

/** config.json of each shape: the hub's values for every key the family reads. */
export const SHAPES = {
  'smollm2-135m': llama({ vocab_size: 49152, hidden_size: 576, intermediate_size: 1536, num_hidden_layers: 30,
    num_attention_heads: 9, num_key_value_heads: 3, head_dim: 64, max_position_embeddings: 8192, rope_theta: 100000,
    tie_word_embeddings: true, bos_token_id: 1, eos_token_id: 2 }),
  'smollm2-360m': llama({ vocab_size: 49152, hidden_size: 960, intermediate_size: 2560, num_hidden_layers: 32,
    num_attention_heads: 15, num_key_value_heads: 5, head_dim: 64, max_position_embeddings: 8192, rope_theta: 100000,
    tie_word_embeddings: true, bos_token_id: 1, eos_token_id: 2 }),
  'qwen2.5-0.5b': qwen2({ vocab_size: 151936, hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24,
    num_attention_heads: 14, num_key_value_heads: 2, max_position_embeddings: 32768, rope_theta: 1000000,
    tie_word_embeddings: true, bos_token_id: 151643, eos_token_id: 151643 }),
  'llama-3.2-1b': llama({ vocab_size: 128256, hidden_size: 2048, intermediate_size: 8192, num_hidden_layers: 16,
    num_attention_heads: 32, num_key_value_heads: 8, head_dim: 64, max_position_embeddings: 131072, rope_theta: 500000,
    rope_scaling: { factor: 32.0, high_freq_factor: 4.0, low_freq_factor: 1.0, original_max_position_embeddings: 8192,
      rope_type: 'llama3' },
    tie_word_embeddings: true, bos_token_id: 128000, eos_token_id: [128001, 128008, 128009] }),
  tiny: llama({ vocab_size: 300, hidden_size: 72, intermediate_size: 100, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, head_dim: 18, max_position_embeddings: 512, rope_theta: 10000,
    tie_word_embeddings: false, bos_token_id: 1, eos_token_id: 2 }),
};

/** [name, shape, kind] of every tensor, in the hub's order; kind: 'embed', 'weight', 'norm' or 'bias'. */
export function tensorsOf(c) {
  const E = c.hidden_size, I = c.intermediate_size, D = c.head_dim ?? E / c.num_attention_heads;
  const Q = c.num_attention_heads * D, KV = c.num_key_value_heads * D;
  const bias = c.model_type === 'qwen2';
  const t = [['model.embed_tokens.weight', [c.vocab_size, E], 'embed']];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    t.push([`${p}input_layernorm.weight`, [E], 'norm']);
    for (const [n, out] of [['q', Q], ['k', KV], ['v', KV]]) {
      t.push([`${p}self_attn.${n}_proj.weight`, [out, E], 'weight']);
      if (bias) t.push([`${p}self_attn.${n}_proj.bias`, [out], 'bias']);
    }
    t.push([`${p}self_attn.o_proj.weight`, [E, Q], 'weight']);
    t.push([`${p}post_attention_layernorm.weight`, [E], 'norm']);
    t.push([`${p}mlp.gate_proj.weight`, [I, E], 'weight'], [`${p}mlp.up_proj.weight`, [I, E], 'weight'],
      [`${p}mlp.down_proj.weight`, [E, I], 'weight']);
  }
  t.push(['model.norm.weight', [E], 'norm']);
  if (!c.tie_word_embeddings) t.push(['lm_head.weight', [c.vocab_size, E], 'weight']);
  return t;
}

/** Parameters of a config (the head counted once when tied). */
export const parameterCount = (c) => tensorsOf(c).reduce((a, [, s]) => a + s.reduce((x, y) => x * y, 1), 0);

const CHUNK = 1 << 20;  // values per write

/**
 * Writes the checkpoint into dir (created). Returns { files: [names], bytes, parameters }.
 * @param {string} shape a key of SHAPES
 * @param {string} dir
 * @param {{shards?: number, dtype?: 'bf16'|'f32', seed?: number}} [options]
 */
export function writeCheckpoint(shape, dir, { shards = 1, dtype = 'bf16', seed = 1 } = {}) {
  if (!SHAPES[shape]) throw new Error(`unknown shape ${shape}; one of ${Object.keys(SHAPES).join(', ')}`);
  const config = { ...SHAPES[shape], torch_dtype: dtype === 'bf16' ? 'bfloat16' : 'float32' };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  const tensors = tensorsOf(config);
  const esize = dtype === 'bf16' ? 2 : 4;
  const sizeOf = (s) => s.reduce((a, b) => a * b, 1) * esize;
  const total = tensors.reduce((a, [, s]) => a + sizeOf(s), 0);
  // Shards: consecutive tensors, each shard about total / shards bytes.
  const groups = [];
  let cur = [], curBytes = 0;
  for (const t of tensors) {
    if (cur.length && curBytes + sizeOf(t[1]) > total / shards && groups.length < shards - 1) {
      groups.push(cur);
      cur = [];
      curBytes = 0;
    }
    cur.push(t);
    curBytes += sizeOf(t[1]);
  }
  groups.push(cur);
  const names = groups.length === 1 ? ['model.safetensors']
    : groups.map((_, i) => `model-${String(i + 1).padStart(5, '0')}-of-${String(groups.length).padStart(5, '0')}.safetensors`);
  let state = seed >>> 0 || 1;
  const next = () => { state ^= state << 13; state >>>= 0; state ^= state >>> 17; state ^= state << 5; state >>>= 0; return state; };
  const f32 = new Float32Array(CHUNK), u32 = new Uint32Array(f32.buffer), u16 = new Uint16Array(CHUNK);
  const weightMap = {};
  let bytes = 0;
  groups.forEach((group, gi) => {
    const header = { __metadata__: { format: 'pt' } };
    let off = 0;
    for (const [name, s] of group) {
      header[name] = { dtype: dtype === 'bf16' ? 'BF16' : 'F32', shape: s, data_offsets: [off, off + sizeOf(s)] };
      off += sizeOf(s);
      weightMap[name] = names[gi];
    }
    let h = JSON.stringify(header);
    h += ' '.repeat((8 - (h.length % 8)) % 8);
    const fd = openSync(join(dir, names[gi]), 'w');
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(h.length));
    writeSync(fd, len);
    writeSync(fd, Buffer.from(h));
    for (const [, s, kind] of group) {
      const n = s.reduce((a, b) => a * b, 1);
      const scale = kind === 'embed' ? 0.05 : kind === 'bias' ? 0.02 : 1 / Math.sqrt(s[s.length - 1]);
      for (let i0 = 0; i0 < n; i0 += CHUNK) {
        const m = Math.min(CHUNK, n - i0);
        for (let i = 0; i < m; i++) f32[i] = kind === 'norm' ? 1 : (next() / 2 ** 32 - 0.5) * 2 * scale;
        if (dtype === 'bf16') {
          for (let i = 0; i < m; i++) {  // round to nearest even
            const b = u32[i];
            u16[i] = (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
          }
          writeSync(fd, new Uint8Array(u16.buffer, 0, m * 2));
        } else {
          writeSync(fd, new Uint8Array(f32.buffer, 0, m * 4));
        }
      }
    }
    closeSync(fd);
    bytes += 8 + h.length + off;
  });
  if (names.length > 1) {
    writeFileSync(join(dir, 'model.safetensors.index.json'),
      JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2));
  }
  return { files: names, bytes, parameters: parameterCount(config) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [shape, dir] = process.argv.slice(2);
  const opt = (name, d) => { const i = process.argv.indexOf(name); return i < 0 ? d : process.argv[i + 1]; };
  if (!SHAPES[shape] || !dir) {
    console.error(`usage: node tools/make_checkpoint.mjs <${Object.keys(SHAPES).join('|')}> <dir> [--shards N] [--dtype bf16|f32] [--seed S]`);
    process.exit(2);
  }
  const t0 = performance.now();
  const r = writeCheckpoint(shape, dir, { shards: Number(opt('--shards', 1)), dtype: opt('--dtype', 'bf16'), seed: Number(opt('--seed', 1)) });
  console.log(`${shape}: ${(r.parameters / 1e6).toFixed(1)} M parameters, ${r.files.length} file(s), ` +
    `${(r.bytes / 2 ** 20).toFixed(0)} MiB in ${dir} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}
