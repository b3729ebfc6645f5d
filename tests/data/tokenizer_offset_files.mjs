// The tokenizer.json files and texts of the offset goldens (make_offset_goldens.mjs runs the Rust
// reference on them; tests/js/tokenizer_offsets.test.mjs runs bindings/tokenizer/ on them): every
// file of the hub goldens (tokenizer_hub_cases.mjs: Llama 2 / Gemma 3 SentencePiece-style BPE with
// byte fallback, Llama 3 / Qwen3 byte-level, BERT WordPiece with its normalizer variants, an XLM-R
// Unigram with Precompiled and byte-fallback variants), the byte-level variants of
// tokenizer_cases.mjs (GPT-2 with its ByteLevel trim_offsets, added tokens with lstrip / rstrip,
// NFC), and the checked-in encoder goldens' files (RoBERTa's RobertaProcessing trim_offsets, and
// ByteLevel's add_prefix_space). Also
// the slow tokenizer folders (no tokenizer.json) whose offsets are those of the fast tokenizer
// transformers converts them to (SLOW_OFFSET_FOLDERS; goldens/tokenizer/slow_offsets.json).
import { readFileSync } from 'node:fs';
import { TEXTS, variants } from './tokenizer_cases.mjs';
import { HUB_TEXTS, hubFiles } from './tokenizer_hub_cases.mjs';

const ROOT = new URL('../../', import.meta.url);
const json = (path) => JSON.parse(readFileSync(new URL(path, ROOT), 'utf8'));

/** Texts beyond the hub's: entity-like sentences and what offsets find hard (combining marks, ligatures, expansions). */
export const OFFSET_TEXTS = [
  ...new Set([...HUB_TEXTS, ...TEXTS,
    'My name is Wolfgang and I live in Berlin.', 'Hugging Face Inc. is a company based in New York City.', 'Élodie Dupré met Søren Kierkegaard in Århus.',
    'İstanbul ﬁnal ǅemal ŉ', 'a\u0301\u0323b ạ\u0301 e\u0323\u0302', '\u1100\u1161\u11a8 각 ᄀ ᅡ', 'x\u0308\u0308 Å Å Å', '  <mask>  x  ', 'A.B.C. U.S.A.',
    'ｶﾞｷﾞ ﾊﾟ ㌀ ㍻', '⑴ ⒜ ㉑ ㋀ ㍱', 'Ǆ ǈ ǋ ﬀﬃ', 'x\u00ady', 'tab\there\u00a0and\u2009thin', '🇯🇵 🧑‍🤝‍🧑 e\u0301\u0301\u0301']),
];

/** name → { json, config }: the hub files, the byte-level variants and the encoder goldens' files. */
export function offsetFiles() {
  const out = hubFiles();
  const v = variants(json('tests/data/goldens/tokenizer/gpt2_3k.json'));
  for (const [name, file] of Object.entries(v)) out[`gpt2_${name}`] = { json: file };
  out.roberta = { json: json('tests/data/goldens/encoders/roberta_mean/tokenizer.json') };
  out.roberta_no_prefix = { json: { ...out.roberta.json, post_processor: { ...out.roberta.json.post_processor, add_prefix_space: false } } };
  // ByteLevel's add_prefix_space (RobertaTokenizerFast with add_prefix_space=True): a space before every part between added
  // tokens, kept in the first token's offsets by RobertaProcessing's add_prefix_space, and trimmed without it
  const prefixSpace = { ...out.roberta.json.pre_tokenizer, add_prefix_space: true };
  out.roberta_prefix_space = { json: { ...out.roberta.json, pre_tokenizer: prefixSpace, post_processor: { ...out.roberta.json.post_processor, add_prefix_space: true } } };
  out.roberta_prefix_trimmed = { json: { ...out.roberta.json, pre_tokenizer: prefixSpace, post_processor: { ...out.roberta.json.post_processor, add_prefix_space: false } } };
  out.bert_goldens = { json: json('tests/data/goldens/encoders/bert_cls_norm_lower/tokenizer.json') };
  out.xlm_roberta_goldens = { json: json('tests/data/goldens/encoders/xlm_roberta_mean/tokenizer.json') };
  return out;
}

const GOLDENS = 'tests/data/goldens/';
const ROBERTA = { 'vocab.json': 'spm/folders/roberta_hub/vocab.json', 'merges.txt': 'spm/folders/roberta_hub/merges.txt' };
const folder = (name, files) => Object.fromEntries(files.map((f) => [f, `spm/folders/${name}/${f}`]));

/**
 * Slow tokenizer folders: name → file name → its path under tests/data/goldens/ (a string) or, for
 * tokenizer_config.json, its content (an object). RobertaTokenizer (vocab.json + merges.txt) as on
 * the hub, saved with add_prefix_space, and with trim_offsets false (read by RobertaTokenizerFast
 * only); XLMRobertaTokenizer (sentencepiece.bpe.model) with a Unigram model and the nmt_nfkc
 * charsmap, and a Unigram with byte fallback (which the converted tokenizer lacks).
 */
export const SLOW_OFFSET_FOLDERS = {
  roberta_hub: ROBERTA,
  roberta_saved: folder('roberta_saved', ['vocab.json', 'merges.txt', 'tokenizer_config.json', 'special_tokens_map.json']),
  roberta_untrimmed: { ...ROBERTA, 'tokenizer_config.json': { tokenizer_class: 'RobertaTokenizer', add_prefix_space: true, trim_offsets: false } },
  xlmr_nfkc: { 'sentencepiece.bpe.model': 'spm/models/uni_nfkc.model', 'tokenizer_config.json': { model_max_length: 512 } },
  xlmr_byte_fallback: { 'sentencepiece.bpe.model': 'spm/models/uni_bf.model' },
};

/** A SLOW_OFFSET_FOLDERS entry as tokenizerFromFolder reads a folder: name → text, model bytes, or undefined. */
export function slowFolder(name) {
  const files = SLOW_OFFSET_FOLDERS[name];
  return (file) => {
    const f = files[file];
    if (f === undefined) return undefined;
    if (typeof f === 'object') return JSON.stringify(f);
    const bytes = readFileSync(new URL(GOLDENS + f, ROOT));
    return file.endsWith('.model') ? new Uint8Array(bytes) : bytes.toString('utf8');
  };
}

/** The absolute path of a SLOW_OFFSET_FOLDERS file (for the golden script). */
export const goldenPath = (f) => new URL(GOLDENS + f, ROOT).pathname;
