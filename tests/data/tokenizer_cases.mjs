// The tokenizer.json files and texts of the tokenizer goldens, shared by the
// generator (make_tokenizer_goldens.mjs, which runs the reference: Hugging
// Face's Rust `tokenizers`) and the test (tests/js/tokenizer.test.mjs, which
// runs bindings/tokenizer.js): both build every variant from the same file,
// goldens/tokenizer/gpt2_3k.json (GPT-2's tokenizer.json with its first 3 000
// merges). The variants copy the layouts of real checkpoints' files.

/** Llama 3's Split regex (Meta-Llama-3-8B tokenizer.json): digits in groups of 1–3. */
export const LLAMA3_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
/** Qwen2's Split regex: single digits. */
export const QWEN2_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const byteLevel = (useRegex) => ({ type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: useRegex });
const split = (pattern) => ({ type: 'Split', pattern, behavior: 'Isolated', invert: false });

/**
 * added_tokens entries with the ids the tokenizers library gives them: a
 * token already in the vocabulary keeps its id, any other takes the next id
 * after the vocabulary and the added tokens before it.
 */
function added(vocab, tokens) {
  const size = Object.keys(vocab).length;
  let max = -1;
  return tokens.map(([content, flags = {}]) => {
    const id = content in vocab ? vocab[content] : (max >= size ? max + 1 : size);
    max = Math.max(max, id);
    return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...flags };
  });
}

/** name → tokenizer.json, each built from the GPT-2 file `base` (not modified). */
export function variants(base) {
  const vocab = base.model.vocab;
  const core = { ...vocab };
  delete core['<|endoftext|>'];
  const out = {};
  // GPT-2 as it ships: ByteLevel with GPT-2's regex, <|endoftext|> in the vocabulary.
  out.gpt2 = base;
  // Added tokens and their flags: lstrip/rstrip, a longest-first pair, a normalized
  // non-special token, tokens whose characters are (<Ġ>) or are not (ÿ€) all byte
  // symbols, a token already in the vocabulary (Ġword).
  out.gpt2_added = { ...base, added_tokens: added(vocab, [['<|endoftext|>'], ['<mask>', { lstrip: true }], ['<|end|>'], ['<|end_of_text|>'],
    ['[R]', { rstrip: true }], ['hello world', { normalized: true, special: false }], ['ÿ€', { special: false }], ['<Ġ>'], ['Ġword', { special: false }]]) };
  // Llama 3: Split regex + ByteLevel without its own regex, <|begin_of_text|> added by a
  // TemplateProcessing, ignore_merges (ĠZzyzx is in the vocabulary but no merge makes it),
  // merges as pairs, special tokens after the vocabulary.
  const l3vocab = { ...core, 'ĠZzyzx': Object.keys(core).length };
  const l3added = added(l3vocab, [['<|begin_of_text|>'], ['<|end_of_text|>'], ['<|start_header_id|>'], ['<|end_header_id|>'], ['<|eot_id|>']]);
  const bos = l3added[0].id;
  out.llama3 = { ...base, added_tokens: l3added,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [split({ Regex: LLAMA3_REGEX }), byteLevel(false)] },
    post_processor: { type: 'Sequence', processors: [{ type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true }, { type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '<|begin_of_text|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '<|begin_of_text|>', type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } }],
      special_tokens: { '<|begin_of_text|>': { id: '<|begin_of_text|>', ids: [bos], tokens: ['<|begin_of_text|>'] } } }] },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { ...base.model, continuing_subword_prefix: null, end_of_word_suffix: null, ignore_merges: true,
      vocab: l3vocab, merges: base.model.merges.map((m) => m.split(' ')) } };
  // Qwen2: NFC normalizer, single-digit Split regex, no BOS; a normalized added token
  // written decomposed (matched after NFC).
  out.qwen2 = { ...base, added_tokens: added(core, [['<|endoftext|>'], ['<|im_start|>'], ['<|im_end|>'], ['cafe\u0301!', { normalized: true, special: false }]]),
    normalizer: { type: 'NFC' },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [split({ Regex: QWEN2_REGEX }), { ...byteLevel(false), trim_offsets: false }] },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { ...base.model, vocab: core, ignore_merges: false } };
  // SmolLM / SmolLM2: Digits (each digit alone) before a ByteLevel with GPT-2's regex.
  out.smollm = { ...base, added_tokens: added(core, [['<|endoftext|>'], ['<|im_start|>'], ['<|im_end|>']]),
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevel(true)] },
    model: { ...base.model, vocab: core } };
  // A literal-string Split and Digits that keep digit runs together.
  out.split_string = { ...base,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [split({ String: '\n\n' }), { type: 'Digits', individual_digits: false }, byteLevel(true)] } };
  return out;
}

/** The texts every variant encodes. */
export const TEXTS = [
  '', 'Hello world', 'Hello, world! How are you?', ' leading space', 'trailing space ', ' ', '   ', 'a  b   c    d',
  'tabs\tand\t\ttabs', 'new\nline', 'two\n\nnewlines', 'crlf\r\nline', '\n\n\n', ' \n \n', 'end\n', 'mixed \t\n \t x', '\r\r\n  \n',
  "I'm sure it's fine, we're done, they've gone, I'll go, he'd say, don't.", "IT'S LOUD, WE'RE HERE, I'M", "'s 't 're 've 'm 'll 'd", "o'clock rock'n'roll", "it'ſ it'S it'K",
  '1234567890', 'pi is 3.14159, e is 2.71828', 'year 2024, 1,000,000 and 12345678901234567890', 'x1y22z333w4444', '٣٤٥ ١٢', '½¾ x²³ Ⅻ ⅷ ① ⒈', '১২৩ 四五 𝟙𝟚',
  'café naïve résumé', 'cafe\u0301 (decomposed) and café! cafe\u0301!', 'a\u0301\u0301 b\u0308', 'Ångström Œuvre straße ẞ ǅ ﬁ', 'Ελληνικά και русский язык', 'مرحبا بالعالم', 'हिन्दी भाषा', 'ภาษาไทย',
  '你好，世界！', '日本語のテキスト、カタカナ。', '한국어 텍스트', '中文English混合123',
  '😀', 'emoji 😀😃😄 faces', '👍🏽 thumbs, 👩‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 🇫🇷🇩🇪 flags', '❤️ heart with VS16', '🧑🏿‍🚀', '\u{1F600}\u{E0067}',
  'nbsp\u00a0here', 'ideographic\u3000space', 'a \u0085b', 'a \ufeffb', 'x\u0085\u0085 y', ' \u2028\u2029 z', 'a\u180eb c', 'zero\u200bwidth', 'vt\u000bff\u000c', 'x\u0000y\u0001z',
  '<|endoftext|>', 'before<|endoftext|>after', 'a <|endoftext|> b', '<|endoftext|><|endoftext|>', '<|endoftext|', '<|begin_of_text|>Hi<|eot_id|>',
  '<|im_start|>user\nHi there<|im_end|>\n', 'mask: <mask> and  <mask>.', '<|end|> <|end_of_text|> <|end_of_text|>x', 'a[R]  b [R]\nc', '<mask><mask>[R][R]',
  'x\u0085<mask>', 'x\ufeff<mask>', '[R]\u0085y', '[R]\ufeffy', 'x \u00a0<mask> [R]\u2003 y',
  'say hello world twice: hello world!', 'ÿ€ and ÿ€', 'a <Ġ> b', 'Ġword and Ġword', ' Zzyzx Zzyzx',
  'https://example.com/path?q=1&r=two#frag', 'def f(x):\n    return x ** 2  # square\n', '{"key": [1, 2, 3]}', '!!!???...', '---===___', '$100 & 50% off @home #tag',
  'supercalifragilisticexpialidocious', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'para one.\n\npara two.\n\n\npara 3',
];

/** A small deterministic PRNG (mulberry32) for the random id sequences. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
