// SentencePiece model files and slow-tokenizer folders that must be refused, by code and by name
// (a truncated or corrupt protobuf, wrong wire types, no pieces, what sentencepiece refuses on
// loading, missing files, unknown classes and language codes), argument errors, and long hostile
// inputs that must finish (bounded work; their times are in bench/tokenizer_spm.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SentencePieceProcessor, tokenizerFromFolder } from '../../bindings/tokenizer.js';
import { folderReader, modelBytes } from './spm_folders.mjs';

// A protobuf writer for the hand-made models below.
const varint = (n) => {
  const out = [];
  let v = BigInt.asUintN(64, BigInt(n));
  do {
    let b = Number(v & 127n);
    v >>= 7n;
    if (v) b |= 128;
    out.push(b);
  } while (v);
  return out;
};
const field = (num, wire, payload) => [...varint(num * 8 + wire), ...payload];
const bytesField = (num, b) => field(num, 2, [...varint(b.length), ...b]);
const str = (num, s) => bytesField(num, [...new TextEncoder().encode(s)]);
const int = (num, v) => field(num, 0, varint(v));
const f32 = (num, x) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setFloat32(0, x, true);
  return field(num, 5, [...b]);
};
const piece = (p, score = 0, type = 1) => bytesField(1, [...str(1, p), ...f32(2, score), ...int(3, type)]);
const model = (...parts) => Uint8Array.from(parts.flat());
const UNK = piece('<unk>', 0, 2);
const trainer = (...parts) => bytesField(2, parts.flat());

/** Asserts fn throws AttnWasmError `code` whose message has every one of `parts`. */
function refuses(fn, code, ...parts) {
  assert.throws(fn, (e) => {
    assert.equal(e.name, 'AttnWasmError', e.stack);
    assert.equal(e.code, code, e.message);
    for (const p of parts) assert.ok(e.message.includes(p), `"${e.message}" lacks "${p}"`);
    return true;
  });
}

test('a hand-made model reads as the library would: pieces, scores, unknown runs, byte pieces', () => {
  const sp = SentencePieceProcessor.fromBytes(model(UNK, piece('▁a', -1), piece('b', -2), piece('▁', -3), trainer(int(3, 1))), 'tiny.model');
  assert.equal(sp.size, 4);
  assert.deepEqual(sp.encode('a b'), { pieces: ['▁a', '▁', 'b'], ids: [1, 3, 2] });
  assert.deepEqual(sp.encode('axyb').pieces, ['▁a', 'xy', 'b']); // an unknown run is one piece
  assert.equal(sp.decodeIds([1, 0, 2]), 'a ⁇ b');
  assert.equal(Math.fround(-1), sp.scoreOf(1));
});

test('corrupt model files are refused with ERR_INVALID_ARGUMENT naming the file and the field', () => {
  const good = modelBytes('uni_bf');
  refuses(() => SentencePieceProcessor.fromBytes(good.subarray(0, good.length >> 1), 'source.spm'), 'ERR_INVALID_ARGUMENT', 'source.spm', 'truncated');
  refuses(() => SentencePieceProcessor.fromBytes(good.subarray(0, 3), 'x.model'), 'ERR_INVALID_ARGUMENT', 'x.model');
  refuses(() => SentencePieceProcessor.fromBytes(new Uint8Array(0), 'spiece.model'), 'ERR_INVALID_ARGUMENT', 'spiece.model pieces', 'none');
  refuses(() => SentencePieceProcessor.fromBytes(model(trainer(int(3, 1))), 'm.model'), 'ERR_INVALID_ARGUMENT', 'pieces', 'none');
  // wrong wire types: pieces as a varint, a piece's score as a varint, a group
  refuses(() => SentencePieceProcessor.fromBytes(model(int(1, 5)), 'm.model'), 'ERR_INVALID_ARGUMENT', 'm.model pieces[0]', 'wire type 0');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, bytesField(1, [...str(1, 'a'), ...int(2, 3)])), 'm.model'), 'ERR_INVALID_ARGUMENT', 'pieces[1].score', 'wire type 0');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, field(7, 3, [])), 'm.model'), 'ERR_INVALID_ARGUMENT', 'group');
  refuses(() => SentencePieceProcessor.fromBytes(model([0x80, 0x80]), 'm.model'), 'ERR_INVALID_ARGUMENT', 'truncated');
  refuses(() => SentencePieceProcessor.fromBytes(model(Array(11).fill(0xff)), 'm.model'), 'ERR_INVALID_ARGUMENT', 'longer than 10 bytes');
  refuses(() => SentencePieceProcessor.fromBytes(model([0x0a, 0x7f, 1, 2]), 'm.model'), 'ERR_INVALID_ARGUMENT', 'says 127 bytes follow');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, bytesField(1, [...bytesField(1, [0xff, 0xfe])])), 'm.model'), 'ERR_INVALID_ARGUMENT', 'pieces[1].piece', 'UTF-8');
});

test('models sentencepiece refuses on loading are refused; WORD and CHAR models are ERR_UNSUPPORTED', () => {
  refuses(() => SentencePieceProcessor.fromBytes(model(piece('a')), 'm.model'), 'ERR_INVALID_ARGUMENT', 'no piece has type UNKNOWN');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('a'), piece('a')), 'm.model'), 'ERR_INVALID_ARGUMENT', 'pieces[2].piece', 'already defined');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('')), 'm.model'), 'ERR_INVALID_ARGUMENT', 'pieces[1].piece', 'empty');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('<unk2>', 0, 2)), 'm.model'), 'ERR_INVALID_ARGUMENT', 'second UNKNOWN');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('a', 0, 9)), 'm.model'), 'ERR_INVALID_ARGUMENT', 'pieces[1].type', 'got 9');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('<0x41>', 0, 6)), 'm.model'), 'ERR_INVALID_ARGUMENT', 'byte_fallback is false');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('<0x41>', 0, 6), trainer(int(35, 1))), 'm.model'), 'ERR_INVALID_ARGUMENT', 'trainer_spec.byte_fallback', '1 of the 256');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('a'), trainer(int(3, 3))), 'm.model'), 'ERR_UNSUPPORTED', 'trainer_spec.model_type', 'WORD');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('a'), trainer(int(3, 7))), 'm.model'), 'ERR_INVALID_ARGUMENT', 'trainer_spec.model_type');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('<s>', 0, 3)), 'm.model'), 'ERR_INVALID_ARGUMENT', 'nothing to match');
  // the charsmap: too short, a trie size past the end
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('a'), bytesField(3, bytesField(2, [1, 2, 3]))), 'm.model'), 'ERR_INVALID_ARGUMENT', 'normalizer_spec.precompiled_charsmap');
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('a'), bytesField(3, bytesField(2, [200, 0, 0, 0, 1, 2]))), 'm.model'), 'ERR_INVALID_ARGUMENT', 'trie size 200');
  // a self-test the model does not pass (sentencepiece refuses to load it)
  const selfTest = (expected) => bytesField(4, bytesField(1, [...str(1, 'ab'), ...str(2, expected)]));
  refuses(() => SentencePieceProcessor.fromBytes(model(UNK, piece('▁a'), piece('b'), trainer(int(3, 2)), selfTest('▁ab')), 'm.model'), 'ERR_INVALID_ARGUMENT', 'self_test_data.samples[0]');
  assert.equal(SentencePieceProcessor.fromBytes(model(UNK, piece('▁a'), piece('b'), trainer(int(3, 2)), selfTest('▁a b')), 'm.model').size, 3);
});

test('argument errors: TypeError / RangeError naming the argument; the processor keeps working', () => {
  const sp = SentencePieceProcessor.fromBytes(modelBytes('uni_nfkc'), 'uni_nfkc.model');
  assert.throws(() => SentencePieceProcessor.fromBytes('not bytes'), { name: 'TypeError', code: 'ERR_INVALID_TYPE' });
  assert.throws(() => sp.encode(42), { name: 'TypeError', message: /text/ });
  assert.throws(() => sp.decodeIds([0, sp.size]), { name: 'RangeError', message: /ids\[1\].*uni_nfkc\.model/ });
  assert.throws(() => sp.decodeIds([1.5]), { name: 'TypeError', message: /ids\[0\]/ });
  assert.throws(() => sp.decodePieces('x'), { name: 'TypeError', message: /pieces/ });
  assert.throws(() => sp.idToPiece(-1), { name: 'RangeError' });
  assert.deepEqual(sp.encode('hello').ids, sp.encode('hello').ids);
});

test('folders: missing files, unknown classes and corrupt files are refused by name', async () => {
  const files = (map) => (name) => map[name];
  await assert.rejects(tokenizerFromFolder(files({})), { code: 'ERR_INVALID_ARGUMENT', message: /no tokenizer\.json and no slow tokenizer's files/ });
  await assert.rejects(tokenizerFromFolder(files({ 'tokenizer_config.json': '{"tokenizer_class": "GPT2Tokenizer"}' })),
    { code: 'ERR_UNSUPPORTED', message: /tokenizer_config\.json tokenizer_class: expected one of MarianTokenizer.*got 'GPT2Tokenizer'/ });
  await assert.rejects(tokenizerFromFolder(files({ 'config.json': '{"model_type": "marian"}', 'source.spm': modelBytes('uni_nfkc'), 'vocab.json': '{}' })),
    { code: 'ERR_INVALID_ARGUMENT', message: /^target\.spm: MarianTokenizer needs this file/ });
  // Cut inside its last record (a cut between records is a valid, smaller protobuf: sentencepiece reads it too).
  const t5 = modelBytes('t5like');
  await assert.rejects(tokenizerFromFolder(files({ 'spiece.model': t5.subarray(0, t5.length - 1) })), { code: 'ERR_INVALID_ARGUMENT', message: /^spiece\.model .*truncated/ });
  await assert.rejects(tokenizerFromFolder(files({ 'vocab.txt': 'a\n', 'tokenizer_config.json': '{"do_lower_case": true, "do_lower_case": false}' })),
    { code: 'ERR_INVALID_ARGUMENT', message: /tokenizer_config\.json.*given twice/ });
  await assert.rejects(tokenizerFromFolder(files({ 'sentencepiece.bpe.model': modelBytes('bpe_rules'), 'vocab.json': '{"<s>": 0}' })),
    { code: 'ERR_INVALID_ARGUMENT', message: /vocab\.json unk_token: '<unk>' is not in vocab\.json/ });
  await assert.rejects(tokenizerFromFolder(files({ 'sentencepiece.bpe.model': modelBytes('bpe_rules'), 'vocab.json': '{"<unk>": -1}' })),
    { code: 'ERR_INVALID_ARGUMENT', message: /vocab\.json '<unk>': expected an integer id/ });
  await assert.rejects(tokenizerFromFolder(() => 42), { name: 'TypeError', message: /readFile\('tokenizer_config\.json'\)/ });
  await assert.rejects(tokenizerFromFolder('folder'), { name: 'TypeError', message: /readFile/ });
  // A folder with tokenizer.json reads it (the fast tokenizer) unless { slow: true }.
  const xlmr = folderReader('xlmr_hub');
  const tj = readFileSync(new URL('../data/goldens/tokenizer/xlmr_unigram.json', import.meta.url));
  const fast = await tokenizerFromFolder((n) => (n === 'tokenizer.json' ? tj : xlmr(n)));
  assert.equal(fast.constructor.name, 'Tokenizer');
  assert.equal((await tokenizerFromFolder((n) => (n === 'tokenizer.json' ? tj : xlmr(n)), { slow: true })).tokenizerClass, 'XLMRobertaTokenizer');
  // A tokenizer.json of a kind not read here names the slow files beside it.
  const wordLevel = JSON.stringify({ model: { type: 'WordLevel', vocab: {} } });
  await assert.rejects(tokenizerFromFolder((n) => (n === 'tokenizer.json' ? wordLevel : xlmr(n))),
    { code: 'ERR_UNSUPPORTED', message: /model\.type.*WordLevel.*also has sentencepiece\.bpe\.model.*slow: true/ });
  await assert.rejects(tokenizerFromFolder((n) => (n === 'tokenizer.json' ? wordLevel : undefined)), { code: 'ERR_UNSUPPORTED', message: /^tokenizer\.json model\.type/ });
});

test('language codes: unknown ones are refused by name; known ones give the Python ids', async () => {
  const nllb = await tokenizerFromFolder(folderReader('nllb_hub'));
  refuses(() => nllb.encode('hi', { srcLang: 'xx_Latn' }), 'ERR_INVALID_ARGUMENT', "srcLang: expected one of this tokenizer's 202 language codes", "'xx_Latn'");
  refuses(() => nllb.encode('hi', { target: true, tgtLang: 'en' }), 'ERR_INVALID_ARGUMENT', 'tgtLang', "'en'");
  refuses(() => nllb.languageId('klingon'), 'ERR_INVALID_ARGUMENT', 'klingon');
  assert.equal(nllb.languageId('fra_Latn'), nllb.tokenToId('fra_Latn'));
  assert.deepEqual(Array.from(nllb.encode('hi', { target: true, tgtLang: 'deu_Latn' })).slice(0, 1), [nllb.tokenToId('deu_Latn')]);
  const m2m = await tokenizerFromFolder(folderReader('m2m_saved')); // language_codes 'wmt21': 8 languages
  refuses(() => m2m.encode('hi', { srcLang: 'fr' }), 'ERR_INVALID_ARGUMENT', "8 language codes", "'fr'");
  assert.equal(m2m.languageId('ru'), m2m.tokenToId('__ru__'));
  const marian = await tokenizerFromFolder(folderReader('marian_hub'));
  assert.deepEqual(marian.languageCodes, ['>>de<<', '>>fr<<', '>>es<<']);
  assert.deepEqual(Array.from(marian.encode('Hallo Welt', { tgtLang: 'fr' })), Array.from(marian.encode('>>fr<< Hallo Welt')));
  refuses(() => marian.encode('Hallo', { tgtLang: 'xx' }), 'ERR_INVALID_ARGUMENT', 'tgtLang', "3 target languages (de, fr, es)", "'xx'");
  const sep = await tokenizerFromFolder(folderReader('marian_sep_saved'));
  refuses(() => sep.encode('Hallo', { tgtLang: 'de' }), 'ERR_INVALID_ARGUMENT', 'it has none');
  assert.throws(() => marian.encode('x', { srcLang: 'en' }), { name: 'TypeError', message: /srcLang/ });
  assert.throws(() => marian.encode('x', { target: 'yes' }), { name: 'TypeError', message: /target: expected a boolean/ });
  assert.throws(() => nllb.encodeBatch(['x'], { srcLang: 7 }), { name: 'TypeError', message: /srcLang: expected a language code/ });
  refuses(() => nllb.encode('x', { srcLang: 'fra_Latn', tgtLang: 'nope' }), 'ERR_INVALID_ARGUMENT', 'tgtLang', "'nope'");
  assert.ok(Object.isFrozen(nllb));
  assert.throws(() => marian.decode([0, 1e9]), { name: 'RangeError', message: /ids\[1\]/ });
  assert.throws(() => nllb.decode(['a']), { name: 'TypeError', message: /ids\[0\]/ });
  assert.ok(nllb.encode('still works').length > 2);
});

test("T5's batches add no second </s> to a text ending with one, as its encode", async () => {
  const t5 = await tokenizerFromFolder(folderReader('t5_saved'));
  const texts = ['Hello world </s>', 'Hello world'];
  const b = t5.encodeBatch(texts, { padding: 'longest' });
  texts.forEach((t, i) => {
    const ids = Array.from(t5.encode(t));
    assert.deepEqual(Array.from(b.inputIds.subarray(i * b.shape[1], i * b.shape[1] + b.lengths[i])), ids);
    assert.deepEqual(Array.from(t5.encodeInputs(t).inputIds), ids);
  });
  assert.equal(b.lengths[0], b.lengths[1]);
});

test('100 000 characters of hostile text finish for every model kind (bounded work, no stack overflow)', async () => {
  const inputs = ['a'.repeat(100000), '😀👍🏽'.repeat(25000), ' '.repeat(99999) + 'x', '!'.repeat(100000)];
  for (const name of ['uni_nfkc', 'bpe_rules']) {
    const sp = SentencePieceProcessor.fromBytes(modelBytes(name), name);
    for (const text of [inputs[0], inputs[2], inputs[3]]) assert.ok(sp.encode(text).ids.length >= 1);
  }
  for (const [name, text] of [['bert_hub', inputs[3]], ['roberta_hub', inputs[0]], ['t5_nonlegacy_saved', inputs[2]]]) {
    const tok = await tokenizerFromFolder(folderReader(name));
    assert.ok(tok.decode(tok.encode(text)).length >= 1);
  }
});
