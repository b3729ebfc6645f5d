// Writes a byte-level BPE tokenizer (tokenizer.json, GPT-2's kind, as SmolLM2's and Qwen2's are) with exactly
// the number of ids a model's vocab_size asks for, plus a tokenizer_config.json with a ChatML chat template
// (SmolLM2-Instruct's) and a generation_config.json: what a random checkpoint of a real shape
// (make_checkpoint.mjs) needs to chat in the open page and its tests. Not a trained tokenizer: its first
// merges are learned from a paragraph of English below, the rest pair printable ASCII symbols, so every id
// decodes to text (a random model writes random printable strings) and every merge is valid.
// Ids: 0 <|endoftext|>, 1 <|im_start|>, 2 <|im_end|> (special), then the 256 byte symbols, then the merges.
//
// Usage: node tools/make_tokenizer.mjs <dir> [--vocab N]   (default 49152, SmolLM2's)
// Also importable: byteLevelTokenizer(vocabSize), tokenizerConfig(), writeTokenizer(dir, vocabSize).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SPECIAL = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];

/** SmolLM2-Instruct's chat template (ChatML with a default system turn). */
export const CHAT_TEMPLATE = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
  + "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\\n' }}{% endif %}"
  + "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
  + "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

const TEXT = `Attention lets every token of a sequence look at the tokens before it and take what it needs from them.
A language model writes one token at a time: it reads the prompt once, keeps the keys and values of every
layer in a cache, and for each new token runs the whole stack of layers on that token alone. The weights are
the same for every token; what changes is the cache, which grows by one position each step. In the browser
the model runs in WebAssembly, and the page stays responsive when the work happens in a worker.`;

/** GPT-2's bytes_to_unicode: byte → the printable character byte-level vocabularies write it as. */
export const BYTE_SYMBOL = (() => {
  const keep = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const out = new Array(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(keep.includes(b) ? b : 256 + n++);
  return out;
})();

/** The words of the text as byte symbols, the way GPT-2's pre-tokenizer splits them (a space joins the word after it). */
function words(text) {
  return (text.match(/ ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+/g) ?? [])
    .map((w) => [...new TextEncoder().encode(w)].map((b) => BYTE_SYMBOL[b]));
}

/**
 * tokenizer.json of a byte-level BPE with exactly `vocabSize` ids (at least 259: the specials and the bytes).
 * @param {number} vocabSize
 * @returns {object} the parsed tokenizer.json (the caller's)
 */
export function byteLevelTokenizer(vocabSize = 49152) {
  if (!(Number.isInteger(vocabSize) && vocabSize >= SPECIAL.length + 256)) throw new RangeError(`vocabSize: expected an integer >= 259, got ${vocabSize}`);
  const vocab = new Map();
  SPECIAL.forEach((t, i) => vocab.set(t, i));
  for (const s of BYTE_SYMBOL) vocab.set(s, vocab.size);
  const merges = [];
  const add = (a, b) => {
    if (vocab.size >= vocabSize || vocab.has(a + b)) return false;
    merges.push(`${a} ${b}`);
    vocab.set(a + b, vocab.size);
    return true;
  };
  // Learned merges: the most frequent pair of the text, merged, until none occurs twice (or 400 merges).
  let seqs = words(TEXT);
  for (let r = 0; r < 400 && vocab.size < vocabSize; r++) {
    const counts = new Map();
    for (const s of seqs) for (let i = 0; i + 1 < s.length; i++) { const k = `${s[i]} ${s[i + 1]}`; counts.set(k, (counts.get(k) ?? 0) + 1); }
    let best = null, n = 1;
    for (const [k, c] of counts) if (c > n) { best = k; n = c; }
    if (!best) break;
    const [a, b] = best.split(' ');
    add(a, b);
    seqs = seqs.map((s) => {
      const out = [];
      for (let i = 0; i < s.length; i++) {
        if (i + 1 < s.length && s[i] === a && s[i + 1] === b) { out.push(a + b); i++; } else out.push(s[i]);
      }
      return out;
    });
  }
  // Filler: pairs of printable ASCII symbols, then those pairs followed by one more, in a fixed order.
  const ascii = [];
  for (let b = 32; b <= 126; b++) ascii.push(BYTE_SYMBOL[b]);
  for (const a of ascii) for (const b of ascii) add(a, b);
  outer: for (const a of ascii) {
    for (const b of ascii) for (const c of ascii) {
      if (vocab.size >= vocabSize) break outer;
      add(a + b, c);
    }
  }
  if (vocab.size !== vocabSize) throw new Error(`could not fill ${vocabSize} ids (${vocab.size})`);
  const added = SPECIAL.map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: { ...byteLevel, trim_offsets: false },
    decoder: byteLevel,
    model: {
      type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab: Object.fromEntries(vocab), merges,
    },
  };
}

/** tokenizer_config.json: the specials, SmolLM2-Instruct's chat template, eos <|im_end|>. */
export function tokenizerConfig() {
  return {
    add_prefix_space: false,
    added_tokens_decoder: Object.fromEntries(SPECIAL.map((content, id) => [String(id), { content, lstrip: false, normalized: false, rstrip: false, single_word: false, special: true }])),
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: '<|im_start|>',
    chat_template: CHAT_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    model_max_length: 8192,
    pad_token: '<|im_end|>',
    tokenizer_class: 'GPT2Tokenizer',
    unk_token: '<|endoftext|>',
    vocab_size: 49152,
  };
}

/** Writes tokenizer.json, tokenizer_config.json and generation_config.json into dir (created). */
export function writeTokenizer(dir, vocabSize = 49152) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(byteLevelTokenizer(vocabSize)));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ ...tokenizerConfig(), vocab_size: vocabSize }, null, 2));
  writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ bos_token_id: 1, eos_token_id: 2, pad_token_id: 2 }, null, 2));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2];
  const i = process.argv.indexOf('--vocab');
  const vocab = i < 0 ? 49152 : Number(process.argv[i + 1]);
  if (!dir) {
    console.error('usage: node tools/make_tokenizer.mjs <dir> [--vocab N]');
    process.exit(2);
  }
  writeTokenizer(dir, vocab);
  console.log(`byte-level BPE tokenizer with ${vocab} ids, tokenizer_config.json (ChatML template) and generation_config.json in ${dir}`);
}
