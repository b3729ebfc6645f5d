// attnwasm/tokenizer's refusals and argument errors for the SentencePiece-style BPE, WordPiece and
// Unigram kinds, tokenizer_config.json and the batch entry points (the byte-level kind's are in
// tokenizer.test.mjs): every message names the field or argument, what is supported or expected
// and what was given; ids at the edges; the Precompiled charsmap's reading.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tokenizer } from '../../bindings/tokenizer.js';
import { AttnWasmError } from '../../bindings/errors.js';
import { hubFiles } from '../data/tokenizer_hub_cases.mjs';

const FILES = hubFiles();
/** A copy of a hub file's tokenizer.json changed by `edit`. */
function edited(name, edit) {
  const json = structuredClone(FILES[name].json);
  edit(json);
  return json;
}

// [what, tokenizer.json, tokenizer_config.json, code, message]
const REFUSALS = [
  ['a WordLevel model', edited('bert', (j) => { j.model.type = 'WordLevel'; }), undefined, 'ERR_UNSUPPORTED', "tokenizer.json model.type: expected 'BPE' or 'WordPiece' or 'Unigram', got 'WordLevel'"],
  ['no decoder', edited('bert', (j) => { j.decoder = null; }), undefined, 'ERR_UNSUPPORTED', 'tokenizer.json decoder: expected a decoder (Replace, ByteFallback, Fuse, Strip, Metaspace, WordPiece or a Sequence of them), got null'],
  ['a CTC decoder', edited('bert', (j) => { j.decoder = { type: 'CTC', pad_token: '<pad>' }; }), undefined, 'ERR_UNSUPPORTED', "decoder.type: expected 'Replace' or 'ByteFallback' or 'Fuse' or 'Strip' or 'Metaspace' or 'WordPiece' or 'Sequence', got 'CTC'"],
  ['ByteFallback after Fuse', edited('llama2', (j) => { j.decoder.decoders = [{ type: 'Fuse' }, { type: 'ByteFallback' }]; }), undefined, 'ERR_UNSUPPORTED',
    'decoder.decoders[1].type: expected ByteFallback before any Fuse (after it the text is one string), got ByteFallback after a Fuse'],
  ['a Replace of two characters after Fuse', edited('llama2', (j) => { j.decoder.decoders = [{ type: 'Fuse' }, { type: 'Replace', pattern: { String: '▁▁' }, content: ' ' }]; }), undefined, 'ERR_UNSUPPORTED',
    'decoder.decoders[1].type: expected Replace before any Fuse'],
  ['an NMT normalizer', edited('xlmr', (j) => { j.normalizer = { type: 'Nmt' }; }), undefined, 'ERR_UNSUPPORTED', "normalizer.type: expected 'NFC' or 'NFD' or 'NFKC' or 'NFKD' or 'Lowercase' or 'Strip' or 'StripAccents' or 'Prepend' or 'Replace' or 'BertNormalizer' or 'Precompiled' or 'Sequence', got 'Nmt'"],
  ['a ByteLevel pre-tokenizer with a WordPiece model', edited('bert', (j) => { j.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: false }; }), undefined, 'ERR_UNSUPPORTED', "model.type: expected 'BPE', got 'WordPiece'"],
  ['a UnicodeScripts pre-tokenizer', edited('xlmr', (j) => { j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'UnicodeScripts' }] }; }), undefined, 'ERR_UNSUPPORTED',
    "pre_tokenizer.pretokenizers[0].type: expected 'Metaspace' or 'Split' or 'Digits' or 'BertPreTokenizer' or 'Whitespace' or 'WhitespaceSplit' or 'Punctuation' or 'Sequence', got 'UnicodeScripts'"],
  ['a Metaspace replacement of two characters', edited('xlmr', (j) => { j.pre_tokenizer.replacement = '▁▁'; }), undefined, 'ERR_INVALID_ARGUMENT', "pre_tokenizer.replacement: expected one character, got '▁▁'"],
  ['add_prefix_space false with prepend_scheme always', edited('xlmr', (j) => { j.pre_tokenizer.add_prefix_space = false; }), undefined, 'ERR_INVALID_ARGUMENT', "pre_tokenizer.add_prefix_space: false does not match prepend_scheme 'always'"],
  ['a Split behavior that is not one', edited('bert', (j) => { j.pre_tokenizer = { type: 'Split', pattern: { String: 'x' }, behavior: 'Merged', invert: false }; }), undefined, 'ERR_INVALID_ARGUMENT', "pre_tokenizer.behavior: expected one of 'Removed', 'Isolated', 'MergedWithPrevious', 'MergedWithNext', 'Contiguous', got 'Merged'"],
  ['a catastrophic Replace regex', edited('xlmr', (j) => { j.normalizer.normalizers[1].pattern.Regex = '( +)+x'; }), undefined, 'ERR_UNSUPPORTED', 'normalizer.normalizers[1].pattern.Regex: expected a regex that cannot backtrack catastrophically'],
  ['a charsmap that is not base64', edited('xlmr', (j) => { j.normalizer.normalizers[0].precompiled_charsmap = '!!!'; }), undefined, 'ERR_INVALID_ARGUMENT', 'normalizer.normalizers[0].precompiled_charsmap: expected base64'],
  ['a charsmap whose trie is longer than the blob', edited('xlmr', (j) => { j.normalizer.normalizers[0].precompiled_charsmap = btoa('\xff\x00\x00\x00abcd'); }), undefined, 'ERR_INVALID_ARGUMENT',
    'precompiled_charsmap: the trie size (255 bytes) does not fit in the 4 bytes after it'],
  ['BPE unk_token not in the vocabulary', edited('llama2', (j) => { j.model.unk_token = '<nope>'; }), undefined, 'ERR_INVALID_ARGUMENT', "model.unk_token: '<nope>' is not in model.vocab"],
  ['WordPiece unk_token not in the vocabulary', edited('bert', (j) => { j.model.unk_token = '[NOPE]'; }), undefined, 'ERR_INVALID_ARGUMENT', "model.unk_token: '[NOPE]' is not in model.vocab"],
  ['WordPiece max_input_chars_per_word negative', edited('bert', (j) => { j.model.max_input_chars_per_word = -1; }), undefined, 'ERR_INVALID_ARGUMENT', 'model.max_input_chars_per_word: expected an integer in [0, 9007199254740991], got -1'],
  ['a WordPiece id past int32', edited('bert', (j) => { j.model.vocab.zzzz = 2 ** 31; }), undefined, 'ERR_INVALID_ARGUMENT', "model.vocab['zzzz']: expected an id (an integer in [0, 2^31 - 1]), got 2147483648"],
  ['a Unigram entry without a score', edited('xlmr', (j) => { j.model.vocab[7] = ['x']; }), undefined, 'ERR_INVALID_ARGUMENT', "model.vocab[7]: expected [piece, score], got ['x']"],
  ['a Unigram unk_id past the vocabulary', edited('xlmr', (j) => { j.model.unk_id = 702; }), undefined, 'ERR_INVALID_ARGUMENT', 'model.unk_id: expected an integer in [0, 701], got 702'],
  ['a Unigram piece with an unpaired surrogate', edited('xlmr', (j) => { j.model.vocab[7] = ['\ud800', -1]; }), undefined, 'ERR_INVALID_ARGUMENT', 'model.vocab[7]: the piece has an unpaired surrogate'],
  ['an added token with another id than the Rust library gives it', edited('xlmr', (j) => { j.added_tokens[4].id = 5; }), undefined, 'ERR_INVALID_ARGUMENT',
    "added_tokens[4].id: expected 701 (the id the tokenizers library gives '<mask>': its id in model.vocab), got 5"],
  ['BertProcessing with an id outside the vocabulary', edited('bert', (j) => { j.post_processor = { type: 'BertProcessing', sep: ['[SEP]', 99999], cls: ['[CLS]', 101] }; }), undefined, 'ERR_INVALID_ARGUMENT',
    'post_processor.sep: expected an id of the vocabulary or added_tokens, got 99999'],
  ['left padding', edited('bert', (j) => { j.padding = { strategy: 'BatchLongest', direction: 'Left', pad_id: 0, pad_type_id: 0, pad_token: '[PAD]' }; }), undefined, 'ERR_UNSUPPORTED', "padding.direction: expected 'Right', got 'Left'"],
  ['a config whose bos_token is not a token', FILES.llama2.json, { tokenizer_class: 'LlamaTokenizer', bos_token: '<nope>' }, 'ERR_INVALID_ARGUMENT', "tokenizer_config.json bos_token: '<nope>' is not a token of tokenizer.json"],
  ['add_eos_token without an eos_token', FILES.llama2.json, { tokenizer_class: 'LlamaTokenizerFast', add_eos_token: true, eos_token: null }, 'ERR_INVALID_ARGUMENT',
    'tokenizer_config.json eos_token: expected a token, got null (add_eos_token is true: transformers refuses this too)'],
  ['add_bos_token that is not a boolean', FILES.llama2.json, { tokenizer_class: 'GemmaTokenizer', add_bos_token: 'yes' }, 'ERR_INVALID_ARGUMENT', "tokenizer_config.json add_bos_token: expected a boolean, got 'yes'"],
  ['a pad_token that is not a token', FILES.bert.json, { pad_token: { content: '<nope>' } }, 'ERR_INVALID_ARGUMENT', "tokenizer_config.json pad_token: '<nope>' is not a token of tokenizer.json"],
  ['a pad_token of another type', FILES.bert.json, { pad_token: 5 }, 'ERR_INVALID_ARGUMENT', 'tokenizer_config.json pad_token: expected a token (a string or { content: string }) or null, got 5'],
  ['a model_max_length of 0', FILES.bert.json, { model_max_length: 0 }, 'ERR_INVALID_ARGUMENT', 'tokenizer_config.json model_max_length: expected a number >= 1, got 0'],
  ['a config key given twice', FILES.bert.json, '{"pad_token": "[PAD]", "pad_token": "[UNK]"}', 'ERR_INVALID_ARGUMENT', "tokenizer_config.json (top level): the key 'pad_token' is given twice"],
  ['a config that is not JSON', FILES.bert.json, '{"pad_token": ', 'ERR_INVALID_ARGUMENT', 'tokenizer_config.json: not JSON'],
];

test('files of the SentencePiece-style BPE, WordPiece and Unigram kinds: refusals name the field, what is supported and what the file has', () => {
  for (const [what, json, config, code, message] of REFUSALS) {
    assert.throws(() => Tokenizer.fromJSON(json, config), (e) => {
      assert.ok(e instanceof AttnWasmError, `${what}: ${e}`);
      assert.equal(e.code, code, `${what}: ${e.message}`);
      assert.ok(e.message.includes(message), `${what}:\n  got      ${e.message}\n  expected ${message}`);
      return true;
    }, what);
  }
});

test('a Unigram file without unk_id refuses, at encode, the text no piece covers (as the Rust library fails)', () => {
  const tok = Tokenizer.fromJSON(edited('xlmr', (j) => { delete j.model.unk_id; }));
  assert.equal(tok.decode(tok.encode('hello', { addSpecialTokens: false })), 'hello');
  assert.throws(() => tok.encode('hello ☃'), (e) => e.code === 'ERR_INVALID_ARGUMENT' && e.message.startsWith("tokenizer.json model.unk_id: the text has '☃'"));
  assert.equal(tok.decode(tok.encode('still fine', { addSpecialTokens: false })), 'still fine');
});

test('argument errors of encodeInputs, encodeBatch and fromJSON\'s config: TypeError / RangeError / AttnWasmError naming the argument', () => {
  const bert = Tokenizer.fromJSON(FILES.bert.json, FILES.bert.config);
  const llama = Tokenizer.fromJSON(FILES.llama2.json, FILES.llama2.config);
  const check = (fn, Class, code, message) => assert.throws(fn, (e) => e instanceof Class && e.code === code && e.message.includes(message), message);
  check(() => Tokenizer.fromJSON(FILES.bert.json, 42), TypeError, 'ERR_INVALID_TYPE', 'tokenizer_config.json: expected the parsed object, its text or its bytes (a Uint8Array or ArrayBuffer), got number');
  check(() => bert.encodeInputs(5), TypeError, 'ERR_INVALID_TYPE', 'text: expected a string, got number');
  check(() => bert.encodeInputs('x', { padding: 'longest' }), TypeError, 'ERR_INVALID_TYPE', "encodeInputs options: unknown option 'padding' (expected one of addSpecialTokens, maxLength, truncation, pair)");
  check(() => bert.encodeBatch('x'), TypeError, 'ERR_INVALID_TYPE', 'texts: expected an Array of strings or [text, pair] arrays, got string');
  check(() => bert.encodeBatch(['x', 7]), TypeError, 'ERR_INVALID_TYPE', 'texts[1]: expected a string or a [text, pair] array of two strings, got number');
  check(() => bert.encodeBatch(['x'], { padding: true }), TypeError, 'ERR_INVALID_TYPE', "padding: expected 'longest', 'max_length' or false, got boolean");
  check(() => bert.encodeBatch(['x'], { maxLength: 2.5 }), TypeError, 'ERR_INVALID_TYPE', 'maxLength: expected an integer, got 2.5');
  check(() => bert.encodeBatch(['x'], { maxLength: 0 }), RangeError, 'ERR_OUT_OF_RANGE', 'maxLength: expected an integer in [1, 2147483647], got 0');
  check(() => bert.encodeBatch(['x'], { truncation: 'yes' }), TypeError, 'ERR_INVALID_TYPE', "truncation: expected true, false, 'longest_first', 'only_first' or 'only_second', got 'yes'");
  // maxLength at the edge: the special tokens alone fit, one fewer does not
  assert.deepEqual([...bert.encodeInputs('hello world', { maxLength: 2 }).inputIds], [101, 102]);
  assert.deepEqual([...bert.encodeInputs('hello world', { maxLength: 3 }).inputIds], [101, 7592, 102]);
  check(() => bert.encodeInputs('hello', { maxLength: 1 }), RangeError, 'ERR_OUT_OF_RANGE', 'maxLength: expected at least 2 (the special tokens this tokenizer adds to a text), got 1');
  assert.deepEqual([...bert.encodeInputs('hello world', { maxLength: 1, addSpecialTokens: false }).inputIds], [7592]);
  // padding needed without a pad token; not needed; max_length without a length; false with unequal lengths
  check(() => llama.encodeBatch(['a', 'a b c']), AttnWasmError, 'ERR_UNSUPPORTED', 'padding: the texts have 2 to 4 tokens and this tokenizer has no pad token');
  assert.deepEqual(llama.encodeBatch(['same', 'same']).shape, [2, 2]);
  check(() => llama.encodeBatch(['a'], { padding: 'max_length' }), RangeError, 'ERR_OUT_OF_RANGE', "maxLength: padding 'max_length' needs a maxLength");
  check(() => bert.encodeBatch(['a', 'a b'], { padding: false }), AttnWasmError, 'ERR_SHAPE', 'padding: false needs texts of one length in tokens, got lengths from 3 to 4');
  const padded = bert.encodeBatch(['a', 'a b'], { padding: 'max_length', maxLength: 6 });
  assert.deepEqual(padded.shape, [2, 6]);
  assert.deepEqual([...padded.inputIds], [101, 1037, 102, 0, 0, 0, 101, 1037, 1038, 102, 0, 0]);
  assert.deepEqual([...padded.attentionMask], [1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0]);
  assert.deepEqual(bert.encodeBatch([]).shape, [0, 0]);
  // decode at the edges of the vocabulary: the last id decodes, the first past it is refused
  for (const tok of [bert, llama, Tokenizer.fromJSON(FILES.xlmr.json)]) {
    const last = tok.vocabSize - 1;
    assert.equal(typeof tok.decode([last]), 'string');
    assert.equal(typeof tok.streamDecoder().push(last), 'string');
    check(() => tok.decode([last + 1]), RangeError, 'ERR_OUT_OF_RANGE', `ids[0]: expected an id of this tokenizer's vocabulary (${tok.vocabSize} ids), got ${last + 1}`);
    check(() => tok.streamDecoder().push(last + 1), RangeError, 'ERR_OUT_OF_RANGE', `id: expected an id of this tokenizer's vocabulary (${tok.vocabSize} ids), got ${last + 1}`);
  }
  assert.equal(llama.decode(llama.encode('still fine'), { skipSpecialTokens: true }), 'still fine');
});

test('Precompiled: the charsmap\'s own rules, not NFKC (the goldens check it against the Rust crate on every text)', () => {
  const tok = Tokenizer.fromJSON(FILES.xlmr.json);
  const precompiled = (text) => tok._normalize(text).replace(/ {2,}/g, ' '); // the file's Sequence ends with that Replace
  // nmt_nfkc agrees with NFKC on fullwidth and mathematical letters, ligatures and circled digits …
  for (const text of ['ｆｕｌｌ ＡＢＣ', '𝔾𝕠𝕠𝕕 ﬁ ①', 'ไม่ได้พูดสักคำ', '㎏ ㈱']) assert.equal(precompiled(text), text.normalize('NFKC'), text);
  // … and has rules of its own: zero-width and odd spaces, BOM, U+FFFD and '▁' become a space, DEL goes,
  // the fullwidth tilde stays (NFKC: '~'), ZWJ stays
  assert.equal(precompiled('a\u200bb\ufeffc\ufffdd▁e\u007ff'), 'a b c d ef');
  assert.equal(precompiled('～'), '～');
  assert.equal(precompiled('a\u200db'), 'a\u200db');
  // a long text is segmented by windows: the same as one piece at a time
  const piece = 'ｆｕｌｌ ไม่ได้ 👩‍👩‍👧‍👦 🇫🇷🇩🇪 e\u0301 ';
  assert.equal(tok._normalize(piece.repeat(400)), tok._normalize(piece).repeat(400));
});
