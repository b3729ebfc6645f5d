// The byte-level BPE tokenizer (bindings/tokenizer.js, 'attnwasm/tokenizer') against Hugging Face's
// Rust `tokenizers`: goldens made by tests/data/make_tokenizer_goldens.mjs from GPT-2's tokenizer.json
// (its first 3 000 merges) and five variants laid out as Llama 3's, Qwen2's and SmolLM's files
// (tests/data/tokenizer_cases.mjs). Then the round trip, the streaming decoder, the refusals of
// other kinds of tokenizer.json, argument errors, and the time to encode 100 000 characters.
// Pure JS: no wasm.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BPE } from '@huggingface/tokenizers';
import { Tokenizer } from '../../bindings/tokenizer.js';
import { AttnWasmError } from '../../bindings/errors.js';
import { variants, TEXTS, rng } from '../data/tokenizer_cases.mjs';

const dir = new URL('../data/goldens/tokenizer/', import.meta.url);
const baseText = readFileSync(new URL('gpt2_3k.json', dir), 'utf8');
const base = JSON.parse(baseText);
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8'));
const VARIANTS = variants(base);
const tokenizers = Object.fromEntries(Object.entries(VARIANTS).map(([name, json]) => [name, Tokenizer.fromJSON(json)]));
const show = (s) => JSON.stringify(s);

test('the goldens cover every variant', () => {
  assert.deepEqual(Object.keys(expected.variants), Object.keys(VARIANTS));
  for (const v of Object.values(expected.variants)) assert.equal(v.texts.length, TEXTS.length);
});

for (const [name, want] of Object.entries(expected.variants)) {
  test(`${name}: ids, pre-tokenized pieces and decoded text as Hugging Face tokenizers (Rust) gives them`, () => {
    const tok = tokenizers[name];
    assert.equal(tok.vocabSize, want.vocabSize, 'vocabSize');
    for (const c of want.texts) {
      const at = `text ${show(c.text)}`;
      assert.deepEqual(tok.preTokenize(c.text), c.pieces, `${at}: pieces`);
      const ids = tok.encode(c.text, { addSpecialTokens: false });
      assert.ok(ids instanceof Int32Array, 'encode returns an Int32Array');
      assert.deepEqual([...ids], c.ids, `${at}: ids`);
      assert.deepEqual([...tok.encode(c.text)], c.idsWithSpecial, `${at}: ids with special tokens (the default)`);
      const decoded = c.decoded ?? c.text;
      assert.equal(tok.decode(c.idsWithSpecial), decoded, `${at}: decode`);
      assert.equal(tok.decode(c.idsWithSpecial, { skipSpecialTokens: true }), c.decodedSkipSpecial ?? decoded, `${at}: decode skipping special tokens`);
    }
    for (const c of want.decodes) {
      assert.equal(tok.decode(c.ids), c.text, `decode ${show(c.ids)}`);
      assert.equal(tok.decode(Int32Array.from(c.ids), { skipSpecialTokens: true }), c.textSkipSpecial, `decode ${show(c.ids)} skipping special tokens`);
    }
    for (const [token, id] of want.tokenToId) assert.equal(tok.tokenToId(token), id ?? undefined, `tokenToId(${show(token)})`);
    for (const [id, token] of want.idToToken) assert.equal(tok.idToToken(id), token ?? undefined, `idToToken(${id})`);
  });
}

test('the goldens tell the variants apart (each rule they test changes some ids)', () => {
  const ids = (name, text) => show(expected.variants[name].texts.find((c) => c.text === text).ids);
  // GPT-2 keeps digit runs, Llama 3 groups of up to 3, Qwen2 and SmolLM one digit each.
  const digits = '1234567890';
  assert.notEqual(ids('gpt2', digits), ids('llama3', digits));
  assert.notEqual(ids('llama3', digits), ids('qwen2', digits));
  assert.equal(expected.variants.qwen2.texts.find((c) => c.text === digits).ids.length, 10);
  // Rust's \s has U+0085 (NEL) and not U+FEFF, unlike JS's; Rust's Digits takes ½ ² Ⅻ.
  assert.deepEqual(expected.variants.gpt2.texts.find((c) => c.text === 'a \u0085b').pieces, ['a', 'Ġ', 'Âħ', 'b']);
  assert.deepEqual(expected.variants.smollm.texts.find((c) => c.text === '½¾ x²³ Ⅻ ⅷ ① ⒈').pieces.slice(0, 2), ['Â½', 'Â¾']);
  // ignore_merges: ' Zzyzx' is one vocabulary entry that no merge makes.
  assert.deepEqual(expected.variants.llama3.texts.find((c) => c.text === ' Zzyzx Zzyzx').ids, [tokenizers.llama3.tokenToId('ĠZzyzx'), tokenizers.llama3.tokenToId('ĠZzyzx')]);
  // lstrip takes the spaces before <mask>; <|end_of_text|> wins over its prefix <|end|>.
  const added = tokenizers.gpt2_added;
  assert.deepEqual([...added.encode('a  <mask>')], [added.tokenToId('a'), added.tokenToId('<mask>')]);
  assert.deepEqual([...added.encode('<|end_of_text|>')], [added.tokenToId('<|end_of_text|>')]);
});

test('round trip: decode(encode(text)) === text, for every text of the goldens and 400 random ones', () => {
  // Where the Rust library does not give the text back either (the goldens' `decoded`): the NFC
  // normalizer; lstrip / rstrip tokens take the spaces beside them; added tokens written in byte
  // symbols decode as the bytes they stand for ('<Ġ>' as '< >').
  const changes = (name, text) => (name === 'qwen2' && text.normalize('NFC') !== text)
    || (name === 'gpt2_added' && /\p{White_Space}<mask>|\[R\]\p{White_Space}|<Ġ>|Ġword/u.test(text));
  for (const [name, tok] of Object.entries(tokenizers)) {
    for (const text of TEXTS) {
      if (changes(name, text)) continue;
      assert.equal(tok.decode(tok.encode(text, { addSpecialTokens: false })), text, `${name}: ${show(text)}`);
    }
  }
  const pool = [...'aZé ß\t\n\r  0123456789½٣.,!?\'"-_<>|', 'Ġ', '\u0085', '\ufeff', '\u3000', '你', '한', 'ก', '\u0301', '😀', '👍🏽', '👩‍👩‍👧', '🇫🇷', "'s", "'LL", '<|endoftext|>', '<|im_start|>', '<|begin_of_text|>'];
  const next = rng(25);
  for (let i = 0; i < 400; i++) {
    let text = '';
    for (let n = Math.floor(next() * 40); n > 0; n--) text += pool[Math.floor(next() * pool.length)];
    for (const name of ['gpt2', 'llama3', 'smollm', 'split_string']) {
      const tok = tokenizers[name];
      assert.equal(tok.decode(tok.encode(text, { addSpecialTokens: false })), text, `${name}: ${show(text)}`);
    }
  }
});

test("the merges equal @huggingface/tokenizers' BPE on 3 000 random pieces and long runs (a second reference)", () => {
  // tokenizer.js merges ids itself (the Rust algorithm on integer ids); the JS library's BPE class
  // on the same vocabulary and merges is an independent implementation of the same rule.
  for (const name of ['gpt2', 'llama3']) {
    const json = VARIANTS[name];
    const tok = tokenizers[name];
    const theirs = new BPE({ ...json.model, ignore_merges: false }); // merge() is the merging alone
    const symbols = tok.preTokenize(TEXTS.join(' ')).join('');
    const next = rng(7);
    const pieces = [];
    for (let i = 0; i < 3000; i++) {
      const start = Math.floor(next() * symbols.length);
      pieces.push(symbols.slice(start, start + 1 + Math.floor(next() * 12)));
    }
    pieces.push('Ġ'.repeat(5000), 'a'.repeat(4001), 'Ġthe'.repeat(1000));
    for (const piece of pieces) {
      const want = theirs([piece]).map((token) => tok.tokenToId(token));
      assert.deepEqual([...tok._bpe.merge(piece)], want, `${name}: ${show(piece.slice(0, 40))}`);
    }
  }
});

test('streaming decoder: an emoji split across byte tokens comes out whole, never as U+FFFD halves', () => {
  const tok = tokenizers.gpt2;
  const ids = tok.encode('😀');
  assert.equal(ids.length, 4, 'the trimmed GPT-2 vocabulary has 😀 as its 4 bytes');
  const stream = tok.streamDecoder();
  assert.deepEqual([...ids].map((id) => stream.push(id)), ['', '', '', '😀']);
  assert.equal(stream.end(), '');
  // ZWJ sequences and skin tones: every piece is whole characters, and the pieces join to the text.
  const text = 'I 👍🏽 👩‍👩‍👧‍👦 🧑🏿‍🚀 🇫🇷, ok';
  const pieces = [...tok.encode(text)].map((id) => stream.push(id));
  assert.ok(pieces.every((p) => !p.includes('\ufffd') && p.toWellFormed() === p), show(pieces));
  assert.equal(pieces.join('') + stream.end(), text);
  // An incomplete sequence at the end is U+FFFD, as decode gives it; the decoder then starts afresh.
  assert.equal(stream.push(ids[0]) + stream.push(ids[1]), '');
  assert.equal(stream.end(), '\ufffd');
  assert.equal(stream.end(), '');
  assert.equal(ids.reduce((s, id) => s + stream.push(id), ''), '😀');
  // skipSpecialTokens leaves the special tokens out, as decode does.
  const eot = tok.tokenToId('<|endoftext|>');
  const skip = tok.streamDecoder({ skipSpecialTokens: true });
  assert.equal(skip.push(eot), '');
  assert.equal(tok.streamDecoder().push(eot), '<|endoftext|>');
});

test('streaming decoder: the pushed texts joined with end() equal decode(ids), for every id sequence of the goldens', () => {
  for (const [name, want] of Object.entries(expected.variants)) {
    const tok = tokenizers[name];
    const sequences = [...want.texts.map((c) => c.idsWithSpecial), ...want.decodes.map((c) => c.ids)];
    for (const skipSpecialTokens of [false, true]) {
      const stream = tok.streamDecoder({ skipSpecialTokens });
      for (const ids of sequences) {
        let text = '';
        for (const id of ids) text += stream.push(id);
        assert.equal(text + stream.end(), tok.decode(ids, { skipSpecialTokens }), `${name}: ${show(ids)}`);
      }
    }
  }
});

test('tokenizer.json in any form (text, bytes, object) and merges in either form give the same tokenizer', () => {
  const text = 'Hello, world! 1234 😀';
  const want = [...tokenizers.gpt2.encode(text)];
  const bytes = new TextEncoder().encode(baseText);
  for (const form of [baseText, bytes, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)]) {
    assert.deepEqual([...Tokenizer.fromJSON(form).encode(text)], want);
  }
  const pairs = { ...base, model: { ...base.model, merges: base.model.merges.map((m) => m.split(' ')) } };
  assert.deepEqual([...Tokenizer.fromJSON(pairs).encode(text)], want);
  // The input is read, not kept or changed: a frozen object works and stays equal.
  const frozen = structuredClone(VARIANTS.llama3);
  const deepFreeze = (o) => { Object.values(o).forEach((v) => v && typeof v === 'object' && deepFreeze(v)); return Object.freeze(o); };
  deepFreeze(frozen);
  assert.deepEqual([...Tokenizer.fromJSON(frozen).encode(text)], [...tokenizers.llama3.encode(text)]);
  assert.deepEqual(frozen, VARIANTS.llama3);
});

test('TemplateProcessing: special tokens before and after the text, several ids per token, only with addSpecialTokens', () => {
  const json = edited((j) => {
    const template = j.post_processor.processors[1];
    template.single.push({ SpecialToken: { id: '<|eot_id|>', type_id: 0 } });
    template.special_tokens['<|eot_id|>'] = { id: '<|eot_id|>', ids: [3261, 3260], tokens: ['<|eot_id|>', '<|end_header_id|>'] };
  }, 'llama3');
  const tok = Tokenizer.fromJSON(json);
  const text = tok.encode('Hi', { addSpecialTokens: false });
  assert.deepEqual([...tok.encode('Hi')], [tok.tokenToId('<|begin_of_text|>'), ...text, 3261, 3260]);
  assert.equal(tok.idToToken(3261), '<|eot_id|>');
  assert.equal(tok.decode(tok.encode('Hi'), { skipSpecialTokens: true }), 'Hi');
});

test("the package entry 'attnwasm/tokenizer' is this module", async () => {
  const entry = await import('attnwasm/tokenizer');
  assert.equal(entry.Tokenizer, Tokenizer);
});

/** A copy of the GPT-2 file (or another variant) changed by `edit`. */
function edited(edit, name = 'gpt2') {
  const json = structuredClone(VARIANTS[name]);
  edit(json);
  return json;
}

// [what, the file, code, message]: other kinds refused by name (ERR_UNSUPPORTED), malformed files
// (ERR_INVALID_ARGUMENT). Each message starts with 'tokenizer.json' and the field.
const REFUSALS = [
  ['a WordPiece model', edited((j) => { j.model = { type: 'WordPiece', vocab: { a: 0 }, unk_token: '[UNK]' }; }), 'ERR_UNSUPPORTED', "model.type: expected 'BPE', got 'WordPiece'"],
  ['a Unigram model', edited((j) => { j.model = { type: 'Unigram', vocab: [['a', -1]] }; }), 'ERR_UNSUPPORTED', "model.type: expected 'BPE', got 'Unigram'"],
  ['no model', edited((j) => { delete j.model; }), 'ERR_INVALID_ARGUMENT', 'model: expected an object, got nothing (the field is missing)'],
  ['BPE with byte fallback (SentencePiece kind)', edited((j) => { j.model.byte_fallback = true; }), 'ERR_UNSUPPORTED', 'model.byte_fallback: expected false (byte fallback is the SentencePiece kind), got true'],
  ['BPE dropout', edited((j) => { j.model.dropout = 0.1; }), 'ERR_UNSUPPORTED', 'model.dropout: expected null or 0 (BPE dropout is random: for training), got 0.1'],
  ['a WordPiece-style prefix', edited((j) => { j.model.continuing_subword_prefix = '##'; }), 'ERR_UNSUPPORTED', "model.continuing_subword_prefix: expected null or '', got '##'"],
  ['a normalizer of a type not read', edited((j) => { j.normalizer = { type: 'ByteLevel' }; }), 'ERR_UNSUPPORTED', "normalizer.type: expected 'NFC' or 'NFD' or"],
  ['a Sequence with a normalizer not read', edited((j) => { j.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFC' }, { type: 'Nmt' }] }; }), 'ERR_UNSUPPORTED', "normalizer.normalizers[1].type: expected 'NFC' or"],
  ['a Metaspace pre-tokenizer', edited((j) => { j.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }; }), 'ERR_UNSUPPORTED',
    "pre_tokenizer.type: expected 'ByteLevel' or 'Split' or 'Digits' or 'Sequence', got 'Metaspace'"],
  ['no pre-tokenizer', edited((j) => { j.pre_tokenizer = null; }), 'ERR_UNSUPPORTED', 'pre_tokenizer: expected a ByteLevel pre-tokenizer (alone or last in a Sequence), got null'],
  ['Whitespace in a Sequence', edited((j) => { j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Whitespace' }, j.pre_tokenizer] }; }), 'ERR_UNSUPPORTED',
    "pre_tokenizer.pretokenizers[0].type: expected 'ByteLevel' or 'Split' or 'Digits' or 'Sequence', got 'Whitespace'"],
  ['ByteLevel before a Split', edited((j) => { j.pre_tokenizer = { type: 'Sequence', pretokenizers: [j.pre_tokenizer, { type: 'Digits', individual_digits: true }] }; }), 'ERR_UNSUPPORTED',
    'pre_tokenizer.pretokenizers[0].type: expected ByteLevel as the last pre-tokenizer (it turns text into byte symbols), got ByteLevel before another pre-tokenizer'],
  ['a Sequence without ByteLevel', edited((j) => { j.pre_tokenizer = { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }] }; }), 'ERR_UNSUPPORTED',
    'pre_tokenizer: expected a ByteLevel pre-tokenizer (alone or last in a Sequence), got a Sequence without one'],
  ['ByteLevel without add_prefix_space (the Rust library needs it too)', edited((j) => { delete j.pre_tokenizer.add_prefix_space; }), 'ERR_INVALID_ARGUMENT',
    'pre_tokenizer.add_prefix_space: expected a boolean, got nothing (the field is missing)'],
  ['Split with no such behavior', edited((j) => { j.pre_tokenizer.pretokenizers[0].behavior = 'Merged'; }, 'llama3'), 'ERR_INVALID_ARGUMENT',
    "pre_tokenizer.pretokenizers[0].behavior: expected one of Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous, got 'Merged'"],
  ['Split invert not a boolean', edited((j) => { j.pre_tokenizer.pretokenizers[0].invert = 'yes'; }, 'llama3'), 'ERR_INVALID_ARGUMENT', 'pre_tokenizer.pretokenizers[0].invert: expected a boolean'],
  ['a possessive quantifier', edited((j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = '\\p{L}++|\\s+'; }, 'llama3'), 'ERR_UNSUPPORTED',
    "pre_tokenizer.pretokenizers[0].pattern.Regex: expected a regex without \\G, atomic groups or possessive quantifiers, got a possessive quantifier ++ in '\\p{L}++|\\s+'"],
  ['an atomic group', edited((j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = '(?>\\p{L}+)|\\s'; }, 'llama3'), 'ERR_UNSUPPORTED', 'an atomic group (?>…)'],
  ['\\G', edited((j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = '\\G\\p{L}'; }, 'llama3'), 'ERR_UNSUPPORTED', "got \\G in '\\G\\p{L}'"],
  ['a regex that is not one', edited((j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = '(\\p{L}'; }, 'llama3'), 'ERR_UNSUPPORTED',
    "pre_tokenizer.pretokenizers[0].pattern.Regex: '(\\p{L}' has no JavaScript RegExp translation"],
  ['no decoder', edited((j) => { j.decoder = null; }), 'ERR_UNSUPPORTED', 'decoder: expected a ByteLevel decoder, got null'],
  ['a Metaspace decoder', edited((j) => { j.decoder = { type: 'Metaspace', replacement: '▁' }; }), 'ERR_UNSUPPORTED', "decoder.type: expected 'ByteLevel', got 'Metaspace'"],
  ['BertProcessing', edited((j) => { j.post_processor = { type: 'BertProcessing', sep: ['</s>', 2], cls: ['<s>', 0] }; }), 'ERR_UNSUPPORTED',
    "post_processor.type: expected 'ByteLevel' or 'TemplateProcessing' or 'RobertaProcessing' or 'Sequence', got 'BertProcessing'"],
  ['a template naming a pair', edited((j) => { j.post_processor.processors[1].single.push({ Sequence: { id: 'B', type_id: 1 } }); }, 'llama3'), 'ERR_UNSUPPORTED',
    "post_processor.processors[1].single[2]: expected { SpecialToken: { id } } or one { Sequence: { id: 'A' } }, got an item with keys Sequence"],
  ['a template id outside the vocabulary', edited((j) => { j.post_processor.processors[1].special_tokens['<|begin_of_text|>'].ids = [99999]; }, 'llama3'), 'ERR_INVALID_ARGUMENT',
    "post_processor.processors[1].special_tokens['<|begin_of_text|>'].ids[0]: expected an id of the vocabulary or added_tokens, got 99999"],
  ['a merge of a token not in the vocabulary', edited((j) => { j.model.merges[5] = 'Ġ zzzz'; }), 'ERR_INVALID_ARGUMENT', "model.merges[5]: 'zzzz' (of the merge Ġ + zzzz) is not in model.vocab"],
  ['a merge of three parts', edited((j) => { j.model.merges[0] = 'Ġ t x'; }), 'ERR_INVALID_ARGUMENT', "model.merges[0]: expected 'a b' or ['a', 'b'], got 'Ġ t x'"],
  ['a vocabulary without a byte symbol', edited((j) => { delete j.model.vocab['Ā']; }), 'ERR_INVALID_ARGUMENT',
    "model.vocab: a byte-level vocabulary has all 256 byte symbols; 'Ā' (byte 0x00) is missing"],
  ['two tokens with one id', edited((j) => { j.model.vocab.zzzz = 5; }), 'ERR_INVALID_ARGUMENT', "model.vocab['zzzz']: id 5 is also the id of '&'"],
  ['an added token with another id than the Rust library gives it', edited((j) => { j.added_tokens[8].id = 5000; }, 'gpt2_added'), 'ERR_INVALID_ARGUMENT',
    "added_tokens[8].id: expected 1573 (the id the tokenizers library gives 'Ġword': its id in model.vocab), got 5000"],
  ['an added token past the next id', edited((j) => { j.added_tokens[1].id += 1; }, 'gpt2_added'), 'ERR_INVALID_ARGUMENT',
    "added_tokens[1].id: expected 3257 (the id the tokenizers library gives '<mask>': the next after model.vocab and the added tokens before it), got 3258"],
  ['single_word', edited((j) => { j.added_tokens[0].single_word = true; }), 'ERR_UNSUPPORTED', 'added_tokens[0].single_word: expected false, got true'],
  ['an added token without its flags', edited((j) => { delete j.added_tokens[0].lstrip; }), 'ERR_INVALID_ARGUMENT', 'added_tokens[0].lstrip: expected a boolean, got nothing (the field is missing)'],
  ['an added token twice', edited((j) => { j.added_tokens.push({ ...j.added_tokens[0] }); }), 'ERR_INVALID_ARGUMENT', "added_tokens[1].content: '<|endoftext|>' is added twice"],
  // Issue 28: what used to be accepted and then gave wrong ids or a hang.
  ['a key given twice (text)', baseText.replace('"vocab":{', '"vocab":{"zzzz":1,"zzzz":2,'), 'ERR_INVALID_ARGUMENT',
    "tokenizer.json model.vocab: the key 'zzzz' is given twice"],
  ['a key given twice (bytes)', new TextEncoder().encode(baseText.replace(/^\{/, '{"model":null,')), 'ERR_INVALID_ARGUMENT',
    "tokenizer.json (top level): the key 'model' is given twice"],
  ['an id of 2^40 (it would wrap to 0 in an Int32Array)', edited((j) => { j.model.vocab.zzzz = 2 ** 40; }), 'ERR_INVALID_ARGUMENT',
    "model.vocab['zzzz']: expected an id (an integer in [0, 2^31 - 1]), got 1099511627776"],
  ['an id of 2^31 (the first id past int32)', edited((j) => { j.model.vocab.zzzz = 2 ** 31; }), 'ERR_INVALID_ARGUMENT',
    "model.vocab['zzzz']: expected an id (an integer in [0, 2^31 - 1]), got 2147483648"],
  ['an id that is not an integer', edited((j) => { j.model.vocab.zzzz = 5.5; }), 'ERR_INVALID_ARGUMENT',
    "model.vocab['zzzz']: expected an id (an integer in [0, 2^31 - 1]), got 5.5"],
  ['a Split regex of 10^6 characters (compiled here, not at the first encode)', edited((j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = 'a'.repeat(1e6); }, 'llama3'),
    'ERR_UNSUPPORTED', `pre_tokenizer.pretokenizers[0].pattern.Regex: '${'a'.repeat(60)}…' (1000000 characters) does not compile as a JavaScript RegExp (SyntaxError: `],
  ['nested quantifiers that backtrack catastrophically', edited((j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = '(a+)+$'; }, 'llama3'), 'ERR_UNSUPPORTED',
    "pre_tokenizer.pretokenizers[0].pattern.Regex: expected a regex that cannot backtrack catastrophically (no repeated group that repeats or alternates inside), got a repeated group that repeats inside (as in (a+)+ or (a|ab)*) in '(a+)+$'"],
  ['a repeated alternation', edited((j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = "(?:\\s|'s)*x"; }, 'llama3'), 'ERR_UNSUPPORTED',
    'got a repeated group that alternates inside'],
  ['a Digits pattern nested in a bounded repeat', edited((j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = '(?:\\p{N}{1,3}){2,5}'; }, 'llama3'), 'ERR_UNSUPPORTED',
    'got a repeated group that repeats inside'],
  ['text that is not JSON', '{"model": ', 'ERR_INVALID_ARGUMENT', 'tokenizer.json: not JSON'],
  ['JSON that is not an object', '[1, 2]', 'ERR_INVALID_ARGUMENT', '(top level): expected an object, got Array'],
];

test('tokenizer.json of another kind is refused naming the field, what is supported and what the file has', () => {
  for (const [what, json, code, message] of REFUSALS) {
    assert.throws(() => Tokenizer.fromJSON(json), (e) => {
      assert.ok(e instanceof AttnWasmError, `${what}: ${e}`);
      assert.equal(e.code, code, `${what}: ${e.message}`);
      assert.ok(e.message.startsWith('tokenizer.json'), `${what}: ${e.message}`);
      assert.ok(e.message.includes(message), `${what}:\n  got      ${e.message}\n  expected ${message}`);
      return true;
    }, what);
  }
});

test('the largest ids pass: a vocabulary id of 2^31 - 1, and the regexes of the hub\'s byte-level tokenizers (no repeated group)', () => {
  const big = Tokenizer.fromJSON(edited((j) => { j.model.vocab['zzzz'] = 2 ** 31 - 1; }));
  assert.equal(big.tokenToId('zzzz'), 2 ** 31 - 1);
  assert.equal(big.idToToken(2 ** 31 - 1), 'zzzz');
  assert.equal(big.decode([2 ** 31 - 1]), 'zzzz');
  // GPT-4o's (o200k) pattern, with optional case-insensitive groups, and a safe repeated group.
  const o200k = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  for (const re of [o200k, '(?:ab)+', '[(a+)+]+', '\\(a+\\)+']) {
    const tok = Tokenizer.fromJSON(edited((j) => { j.pre_tokenizer.pretokenizers[0].pattern.Regex = re; }, 'llama3'));
    assert.equal(tok.decode(tok.encode("They'll say 12345 héllo\n\n", { addSpecialTokens: false })), "They'll say 12345 héllo\n\n", re);
  }
  // Llama 3's and Qwen2's own patterns are the llama3 and qwen2 variants; GPT-2's is the ByteLevel default.
  for (const name of ['gpt2', 'llama3', 'qwen2']) assert.ok(tokenizers[name] instanceof Tokenizer);
});

test('argument errors: TypeError / RangeError naming the argument, what was expected and what was received', () => {
  const tok = tokenizers.gpt2;
  const check = (fn, Class, code, message) => assert.throws(fn, (e) => e instanceof Class && e.code === code && e.message.includes(message), message);
  check(() => Tokenizer.fromJSON(42), TypeError, 'ERR_INVALID_TYPE', 'tokenizer.json: expected the parsed object, its text or its bytes (a Uint8Array or ArrayBuffer), got number');
  check(() => new Tokenizer({}), TypeError, 'ERR_INVALID_TYPE', 'Tokenizer: use Tokenizer.fromJSON(tokenizerJson)');
  check(() => tok.encode(42), TypeError, 'ERR_INVALID_TYPE', 'text: expected a string, got number');
  check(() => tok.encode('x', { addSpecial: true }), TypeError, 'ERR_INVALID_TYPE', "encode options: unknown option 'addSpecial' (expected one of addSpecialTokens, returnOffsets)");
  check(() => tok.encode('x', { addSpecialTokens: 1 }), TypeError, 'ERR_INVALID_TYPE', 'addSpecialTokens: expected a boolean, got number');
  check(() => tok.decode('abc'), TypeError, 'ERR_INVALID_TYPE', 'ids: expected an Array or typed array of token ids, got string');
  check(() => tok.decode([1, 2.5]), TypeError, 'ERR_INVALID_TYPE', 'ids[1]: expected an integer token id, got 2.5');
  check(() => tok.decode([1, 2, 99999]), RangeError, 'ERR_OUT_OF_RANGE', "ids[2]: expected an id of this tokenizer's vocabulary (3257 ids), got 99999");
  check(() => tok.decode([-1]), RangeError, 'ERR_OUT_OF_RANGE', "ids[0]: expected an id of this tokenizer's vocabulary (3257 ids), got -1");
  // At the edge: the last id decodes, the first past it (vocabSize) is refused, not decoded as 'undefined'.
  assert.equal(tok.vocabSize, 3257);
  assert.equal(tok.decode([3256]), tok.decode(tok.encode(tok.decode([3256]), { addSpecialTokens: false })));
  check(() => tok.decode([3257]), RangeError, 'ERR_OUT_OF_RANGE', "ids[0]: expected an id of this tokenizer's vocabulary (3257 ids), got 3257");
  check(() => tok.decode(Int32Array.of(5, 3257)), RangeError, 'ERR_OUT_OF_RANGE', "ids[1]: expected an id of this tokenizer's vocabulary (3257 ids), got 3257");
  assert.equal(typeof tok.streamDecoder().push(3256), 'string');
  check(() => tok.decode([1], { skipSpecial: true }), TypeError, 'ERR_INVALID_TYPE', "decode options: unknown option 'skipSpecial' (expected one of skipSpecialTokens)");
  check(() => tok.streamDecoder({ skip: true }), TypeError, 'ERR_INVALID_TYPE', "streamDecoder options: unknown option 'skip' (expected one of skipSpecialTokens)");
  check(() => tok.streamDecoder().push('7'), TypeError, 'ERR_INVALID_TYPE', 'id: expected an integer token id, got string');
  check(() => tok.streamDecoder().push(3257), RangeError, 'ERR_OUT_OF_RANGE', "id: expected an id of this tokenizer's vocabulary (3257 ids), got 3257");
  check(() => tok.tokenToId(5), TypeError, 'ERR_INVALID_TYPE', 'token: expected a string, got number');
  check(() => tok.idToToken('5'), TypeError, 'ERR_INVALID_TYPE', 'id: expected an integer, got string');
  check(() => tok.preTokenize(null), TypeError, 'ERR_INVALID_TYPE', 'text: expected a string, got null');
  // The tokenizer still works after every error.
  assert.equal(tok.decode(tok.encode('still fine')), 'still fine');
  assert.equal(tok.decode([]), '');
  assert.deepEqual([...tok.encode('')], []);
});

test('speed: encode 100 000 characters of text well under a second', (t) => {
  const root = new URL('../../', import.meta.url);
  const prose = readFileSync(new URL('README.md', root), 'utf8') + readFileSync(new URL('CHANGELOG.md', root), 'utf8') + TEXTS.join('\n');
  const text = prose.repeat(Math.ceil(100_000 / prose.length)).slice(0, 100_000);
  const bytes = new TextEncoder().encode(text).length;
  for (const name of ['gpt2', 'llama3']) {
    // Three fresh tokenizers (empty caches): the first call also pays for compiling the code; the
    // best of three is what the check uses, so that another process's load cannot fail it.
    const ms = [];
    let ids;
    for (let run = 0; run < 3; run++) {
      const tok = Tokenizer.fromJSON(VARIANTS[name]);
      const t0 = performance.now();
      ids = tok.encode(text, { addSpecialTokens: false });
      ms.push(performance.now() - t0);
      if (run === 0) {
        const t1 = performance.now();
        assert.equal(tok.decode(ids), text.toWellFormed());
        t.diagnostic(`${name}: ${text.length} characters (${bytes} UTF-8 bytes) → ${ids.length} ids; decode ${(performance.now() - t1).toFixed(0)} ms`);
      }
    }
    t.diagnostic(`${name}: encode ${ms.map((m) => m.toFixed(0)).join(', ')} ms (first call, then two more fresh tokenizers)`);
    assert.ok(Math.min(...ms) < 1000, `${name}: encode took ${ms.map((m) => m.toFixed(0)).join(', ')} ms`);
  }
});
