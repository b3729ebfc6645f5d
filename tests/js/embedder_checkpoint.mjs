// Small sentence-transformers folders written in JS for the embedder tests (embedder*.test.mjs,
// cli_embed.test.mjs): a BERT or XLM-R checkpoint with Hugging Face's names (seeded values, F32), its
// config.json, a tokenizer.json (a tiny WordPiece vocabulary for BERT; the committed XLM-R-style Unigram
// file for XLM-R), tokenizer_config.json and sentence-transformers' modules.json, 1_Pooling/config.json,
// sentence_bert_config.json and 2_Normalize/. Not a test file.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seeded, safetensors } from './lm_checkpoint.mjs';
import { encoderTensorsOf } from '../../tools/make_checkpoint.mjs';

const ROOT = new URL('../../', import.meta.url);

// A WordPiece vocabulary that spells any lowercase ASCII word: whole words, then letters and ##letters.
const WORDS = ['the', 'a', 'cat', 'dog', 'sat', 'on', 'mat', 'ran', 'quick', 'brown', 'fox', 'hello', 'world', 'is', 'was', 'and',
  'query', 'passage', 'search', '##s', '##ed', '##ing', '.', ',', '!', '?', ':', "'", '-'];
const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');

/** A bert-base-uncased-style tokenizer.json over a vocabulary of 106 tokens ([PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4). */
export function bertTokenizer() {
  const tokens = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...WORDS, ...LETTERS, ...LETTERS.map((c) => `##${c}`)];
  const vocab = Object.fromEntries(tokens.map((t, i) => [t, i]));
  const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [special(0, '[PAD]'), special(1, '[UNK]'), special(2, '[CLS]'), special(3, '[SEP]'), special(4, '[MASK]')],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

/** The XLM-R-style Unigram tokenizer.json of the tokenizer goldens (702 ids, <pad> 1). */
export function xlmrTokenizer() {
  return JSON.parse(readFileSync(new URL('tests/data/goldens/tokenizer/xlmr_unigram.json', ROOT), 'utf8'));
}

/** A config.json of a small BertModel ('bert') or XLMRobertaModel ('xlm-roberta', 'roberta'). */
export function encoderConfig({ modelType = 'bert', vocab = 110, hidden = 32, heads = 4, layers = 2, inter = 64, maxPositions = 40 } = {}) {
  const bert = modelType === 'bert';
  return {
    architectures: [bert ? 'BertModel' : modelType === 'roberta' ? 'RobertaModel' : 'XLMRobertaModel'], model_type: modelType,
    vocab_size: vocab, hidden_size: hidden, num_hidden_layers: layers, num_attention_heads: heads, intermediate_size: inter,
    hidden_act: 'gelu', hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1,
    max_position_embeddings: bert ? maxPositions : maxPositions + 2, type_vocab_size: bert ? 2 : 1, initializer_range: 0.02,
    layer_norm_eps: 1e-12, pad_token_id: bert ? 0 : 1, position_embedding_type: 'absolute', use_cache: true,
    ...(bert ? {} : { bos_token_id: 0, eos_token_id: 2 }),
  };
}

/**
 * The state dict of `config` as [{ name, shape, values }] with BertModel's names (a pooler when `pooler`): the
 * tensors tools/make_checkpoint.mjs lists, in its order, with seeded values by kind.
 */
export function encoderTensors(config, { seed = 5, pooler = true } = {}) {
  const rnd = seeded(seed);
  const scale = { weight: 0.6, bias: 0.2 };
  return encoderTensorsOf(config).filter(([name]) => pooler || !name.startsWith('pooler.')).map(([name, shape, kind]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const values = kind === 'embed' ? rnd(n, name === 'embeddings.word_embeddings.weight' ? 2 : 1)
      : kind === 'norm' ? rnd(n, 0.5).map((x) => 1 + x) : rnd(n, scale[kind]);
    return { name, shape, values };
  });
}

/**
 * A sentence-transformers folder's files as a Map of path → bytes: config.json, model.safetensors,
 * tokenizer.json, tokenizer_config.json and, unless `st` is false, modules.json, 1_Pooling/config.json
 * (`pooling`: the Pooling config's keys), sentence_bert_config.json (`sbert`) and 2_Normalize/ (`normalize`).
 */
export function encoderFolder({ modelType = 'bert', st = true, pooling = { pooling_mode_mean_tokens: true }, normalize = true,
  sbert = { max_seq_length: 16, do_lower_case: false }, pooler = true, seed = 5, configOverrides = {}, extra = {} } = {}) {
  const bert = modelType === 'bert';
  const config = { ...encoderConfig({ modelType, vocab: bert ? 110 : 702 }), ...configOverrides };
  const enc = (x) => new TextEncoder().encode(typeof x === 'string' ? x : JSON.stringify(x, null, 2));
  const files = new Map();
  files.set('config.json', enc(config));
  files.set('model.safetensors', safetensors(encoderTensors(config, { seed, pooler })));
  files.set('tokenizer.json', enc(bert ? bertTokenizer() : xlmrTokenizer()));
  files.set('tokenizer_config.json', enc(bert
    ? { tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: 512, pad_token: '[PAD]', cls_token: '[CLS]', sep_token: '[SEP]', unk_token: '[UNK]', mask_token: '[MASK]' }
    : { tokenizer_class: 'XLMRobertaTokenizer', model_max_length: 512, pad_token: '<pad>', bos_token: '<s>', eos_token: '</s>', unk_token: '<unk>', cls_token: '<s>', sep_token: '</s>', mask_token: '<mask>' }));
  if (st) {
    const modules = [
      { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
      { idx: 1, name: '1', path: '1_Pooling', type: 'sentence_transformers.models.Pooling' },
    ];
    if (normalize) modules.push({ idx: 2, name: '2', path: '2_Normalize', type: 'sentence_transformers.models.Normalize' });
    files.set('modules.json', enc(modules));
    files.set('1_Pooling/config.json', enc({
      word_embedding_dimension: config.hidden_size, pooling_mode_cls_token: false, pooling_mode_mean_tokens: false, pooling_mode_max_tokens: false,
      pooling_mode_mean_sqrt_len_tokens: false, pooling_mode_weightedmean_tokens: false, pooling_mode_lasttoken: false, include_prompt: true, ...pooling,
    }));
    if (sbert) files.set('sentence_bert_config.json', enc(sbert));
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === null) files.delete(k);
    else files.set(k, typeof v === 'string' || !(v instanceof Uint8Array) ? enc(v) : v);
  }
  return files;
}

/** Writes a folder's files (encoderFolder's Map) under `dir`, with an empty 2_Normalize/ when modules.json names it. */
export function writeFolder(dir, files) {
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of files) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), bytes);
  }
  const modules = files.get('modules.json');
  if (modules && new TextDecoder().decode(modules).includes('2_Normalize')) mkdirSync(join(dir, '2_Normalize'), { recursive: true });
  return dir;
}
