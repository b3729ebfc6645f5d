// A tiny chat model for the chat tests (tests/js/chat_lm.test.mjs, tests/js/cli_chat.test.mjs): a
// random Llama checkpoint (tests/js/lm_checkpoint.mjs) whose vocabulary is exactly a small byte-level
// BPE tokenizer.json (GPT-2's first merges, cut from tests/data/goldens/tokenizer/gpt2_3k.json) with
// ChatML's special tokens, and a tokenizer_config.json with a ChatML template in Qwen3's shape
// (enable_thinking=false writes an empty <think> block). Not a test file; nothing here is random
// at run time. The lm_head row of <|im_end|> is scaled up so that greedy replies end on their own
// after a few tokens (chat_lm.test.mjs checks that they do).
import { readFileSync } from 'node:fs';
import { lmConfig, lmTensors, safetensors } from '../js/lm_checkpoint.mjs';

const GPT2 = new URL('goldens/tokenizer/gpt2_3k.json', import.meta.url);
export const MERGES = 64;
/** The special tokens after the BPE vocabulary: ids V0, V0 + 1, V0 + 2 (V0 = 256 + MERGES). */
export const SPECIALS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
export const VOCAB = 256 + MERGES + SPECIALS.length;
export const ID = Object.fromEntries(SPECIALS.map((t, i) => [t, 256 + MERGES + i]));

/** ChatML as Qwen writes it, with Qwen3's enable_thinking switch and a system default of the template's own. */
export const CHAT_TEMPLATE = "{%- for message in messages %}{{ '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- endfor %}"
  + "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}";

/** The tokenizer.json (an object owned by the caller). */
export function chatTokenizerJson() {
  const full = JSON.parse(readFileSync(GPT2, 'utf8'));
  const vocab = {};
  for (const [token, id] of Object.entries(full.model.vocab)) if (id < 256 + MERGES) vocab[token] = id;
  const added = SPECIALS.map((content) => ({ id: ID[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  return { ...full, added_tokens: added, post_processor: null, model: { ...full.model, vocab, merges: full.model.merges.slice(0, MERGES) } };
}

/** tokenizer_config.json (an object owned by the caller). */
export function chatTokenizerConfig({ template = CHAT_TEMPLATE } = {}) {
  return {
    added_tokens_decoder: Object.fromEntries(SPECIALS.map((content) => [String(ID[content]), { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true }])),
    bos_token: null, eos_token: '<|im_end|>', pad_token: '<|endoftext|>', unk_token: null,
    model_max_length: 4096, tokenizer_class: 'Qwen2Tokenizer', chat_template: template,
  };
}

/** config.json: a small untied Llama over the tokenizer's ids; eos_token_id <|endoftext|>. */
export function chatModelConfig() {
  return { ...lmConfig({ vocab: VOCAB, hidden: 40, inter: 64, layers: 2, heads: 4, kvHeads: 2 }), max_position_embeddings: 2048, bos_token_id: null, eos_token_id: ID['<|endoftext|>'] };
}

/** The checkpoint's files by name: config.json, model.safetensors, tokenizer.json, tokenizer_config.json (bytes). */
export function chatCheckpoint({ seed = 7, endScale = 3 } = {}) {
  const config = chatModelConfig();
  const tensors = lmTensors(config, { seed });
  const head = tensors.find((t) => t.name === 'lm_head.weight');
  const E = config.hidden_size;
  const end = ID['<|im_end|>'];
  for (let i = 0; i < E; i++) head.values[end * E + i] *= endScale;
  const text = (o) => new TextEncoder().encode(JSON.stringify(o, null, 2));
  return new Map([
    ['config.json', text(config)],
    ['model.safetensors', safetensors(tensors)],
    ['tokenizer.json', text(chatTokenizerJson())],
    ['tokenizer_config.json', text(chatTokenizerConfig())],
  ]);
}
