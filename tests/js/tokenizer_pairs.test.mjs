// Sentence pairs (encodeInputs { pair }, encodeBatch [text, pair] items, the truncation strategies)
// against tests/data/make_pair_goldens.mjs (Rust tokenizers 0.23.2 on tokenizer.json files) and
// make_pair_goldens.py (transformers 4.40.2's slow classes on vocab.txt / vocab.json + merges.txt /
// sentencepiece.bpe.model folders); the argument errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Tokenizer, tokenizerFromFolder } from '../../bindings/tokenizer.js';
import { AttnWasmError } from '../../bindings/errors.js';
import { pairLengths } from '../../bindings/tokenizer/truncation.js';
import { FILES, VARIANTS } from '../data/tokenizer_pair_files.mjs';
import { folderReader } from './spm_folders.mjs';

const ROOT = new URL('../../', import.meta.url);
const fast = JSON.parse(readFileSync(new URL('tests/data/goldens/tokenizer/pairs.json', ROOT), 'utf8'));
const slow = JSON.parse(readFileSync(new URL('tests/data/goldens/spm/pairs.json', ROOT), 'utf8'));
const list = (a) => Array.from(a);
const types = (a) => list(a).join('');

function fastTokenizer(name) {
  const base = JSON.parse(readFileSync(new URL(FILES[name].path, ROOT), 'utf8'));
  return Tokenizer.fromJSON(FILES[name].variant ? VARIANTS[FILES[name].variant](base) : base);
}

/** The full row with each text cut to its first k ids (the specials kept), from the reference's own ids. */
function cut(row, seqs, k) {
  const seen = [0, 0];
  const out = { ids: [], types: '' };
  for (let i = 0; i < row.ids.length; i++) {
    const s = seqs[i];
    if (s !== '-' && seen[s]++ >= k[s]) continue;
    out.ids.push(row.ids[i]);
    out.types += row.types[i];
  }
  return out;
}

/** One golden case against a tokenizer; returns the truncated records where ours and the reference differ. */
function checkCase(tok, c, what, seqsOf) {
  const full = tok.encodeInputs(c.text, { pair: c.pair, truncation: false });
  assert.deepEqual(list(full.inputIds), c.full.ids, `${what}: ids`);
  assert.equal(types(full.tokenTypeIds), c.full.types, `${what}: type ids`);
  assert.deepEqual(list(full.attentionMask), c.full.ids.map(() => 1));
  const plain = tok.encodeInputs(c.text, { pair: c.pair, addSpecialTokens: false, truncation: false });
  assert.deepEqual(list(plain.inputIds), c.plain.ids, `${what}: ids without special tokens`);
  if (c.plain.types) assert.equal(types(plain.tokenTypeIds), c.plain.types, `${what}: type ids without special tokens`);
  const differ = [];
  const records = c.noSpecial ? [...c.truncated, c.noSpecial] : c.truncated;
  for (const [maxLength, strategy, want, noSpecial] of records) {
    const opts = { pair: c.pair, maxLength, truncation: strategy, addSpecialTokens: !noSpecial };
    const label = `${what} maxLength ${maxLength} ${strategy}${noSpecial ? ' without special tokens' : ''}`;
    if (typeof want === 'string') {
      assert.throws(() => tok.encodeInputs(c.text, opts), (e) => e instanceof RangeError && e.message.includes(`maxLength ${maxLength}`)
        && e.message.includes(`${c.lengths[0]} + ${c.lengths[1]} ids`), `${label}: the reference fails (${want})`);
      continue;
    }
    const got = tok.encodeInputs(c.text, opts);
    const row = noSpecial ? c.plain : c.full;
    const expect = cut(row, seqsOf(row, c), want);
    if (JSON.stringify({ ids: list(got.inputIds), types: types(got.tokenTypeIds) }) === JSON.stringify(c.plain.types || !noSpecial ? expect : { ...expect, types: types(got.tokenTypeIds) })) continue;
    differ.push({ label, lengths: c.lengths, maxLength, added: c.full.ids.length - c.lengths[0] - c.lengths[1], noSpecial, want, got: list(got.inputIds) });
  }
  return differ;
}

test('tokenizer.json pairs: templates, type ids and truncation equal the Rust library (tokenizers 0.23.2) but where its early exit moves one id', () => {
  const differ = [];
  let records = 0;
  for (const [name, cases] of Object.entries(fast.files)) {
    const tok = fastTokenizer(name);
    cases.forEach((c, i) => {
      differ.push(...checkCase(tok, c, `${name} pair ${i}`, (row) => row.seqs));
      records += c.truncated.length + 1;
    });
  }
  assert.equal(records, 393);
  // tokenizers 0.23 tokenizes each text only until maxLength ids (its early exit, PR #1990) and
  // truncate_encodings then sees those lengths: when both texts reach maxLength and the budget is
  // odd, the extra id can go to the other text than truncate_encodings on the full lengths gives it
  // (tokenizers <= 0.22, which transformers v4.40 uses). We keep the full-length rule (docs/tokenizer.md).
  for (const d of differ) {
    const budget = d.maxLength - (d.noSpecial ? 0 : d.added);
    assert.ok(d.lengths[0] >= d.maxLength && d.lengths[1] >= Math.min(d.maxLength, d.lengths[1]) && budget % 2 === 1, `${d.label}: differs from the reference (${JSON.stringify(d.want)})`);
    assert.deepEqual(pairLengths(d.lengths[0], d.lengths[1], budget, 'longest_first', 'rust', () => ''), [d.want[1], d.want[0]], d.label);
  }
  assert.equal(differ.length, 5, 'the known early-exit cases');
});

test('slow classes\' pairs (BertTokenizer, RobertaTokenizer, XLMRobertaTokenizer) equal transformers\' build_inputs_with_special_tokens and truncate_sequences', async () => {
  for (const [name, f] of Object.entries(slow.folders)) {
    const tok = await tokenizerFromFolder(folderReader(name));
    assert.equal(tok.tokenizerClass, f.class);
    const added = (c) => c.full.ids.length - c.lengths[0] - c.lengths[1];
    // The slow rows name no text per id: a case's specials sit where the class puts them.
    const seqsOf = (row, c) => {
      const a = '0'.repeat(c.lengths[0]);
      const b = '1'.repeat(c.lengths[1]);
      return row === c.plain ? a + b : f.class === 'BertTokenizer' ? `-${a}-${b}-` : `-${a}--${b}-`;
    };
    f.cases.forEach((c, i) => {
      assert.equal(added(c), f.class === 'BertTokenizer' ? 3 : 4);
      const differ = checkCase(tok, c, `${name} pair ${i}`, seqsOf);
      assert.deepEqual(differ, [], `${name} pair ${i}`);
    });
  }
});

test('the two longest_first rules differ only in who gets the odd id', () => {
  // second longer, both cut to an odd budget: Rust gives the longer the extra id, the slow classes the first
  assert.deepEqual(pairLengths(10, 26, 5, 'longest_first', 'rust', () => ''), [2, 3]);
  assert.deepEqual(pairLengths(10, 26, 5, 'longest_first', 'python', () => ''), [3, 2]);
  assert.deepEqual(pairLengths(26, 10, 5, 'longest_first', 'rust', () => ''), [3, 2]);
  assert.deepEqual(pairLengths(26, 10, 5, 'longest_first', 'python', () => ''), [3, 2]);
  for (const rule of ['rust', 'python']) {
    assert.deepEqual(pairLengths(4, 30, 20, 'longest_first', rule, () => ''), [4, 16]); // only the longer cut
    assert.deepEqual(pairLengths(7, 7, 8, 'longest_first', rule, () => ''), [4, 4]);
    assert.deepEqual(pairLengths(3, 4, 7, 'only_second', rule, () => ''), [3, 4]); // nothing to cut
  }
  // A budget of 0: Rust empties both texts, the slow classes' only_second cannot cut (an error here).
  assert.deepEqual(pairLengths(3, 4, 0, 'only_second', 'rust', () => ''), [0, 0]);
  assert.throws(() => pairLengths(3, 4, 0, 'only_second', 'python', () => 'x'), RangeError);
});

test('encodeBatch: [text, pair] items and strings mixed, rows as encodeInputs gives them, padded', () => {
  const bert = Tokenizer.fromJSON(readFileSync(new URL(FILES.bert_template.path, ROOT)), { pad_token: '[PAD]' });
  const items = [['What is the capital?', 'Paris is the capital of France.'], 'a lone text', ['', 'empty query']];
  for (const truncation of ['only_second', 'longest_first', false]) {
    const o = { maxLength: 16, truncation };
    const b = bert.encodeBatch(items, o);
    const T = b.shape[1];
    items.forEach((it, i) => {
      const r = typeof it === 'string' ? bert.encodeInputs(it, o) : bert.encodeInputs(it[0], { ...o, pair: it[1] });
      assert.equal(b.lengths[i], r.inputIds.length);
      assert.deepEqual(list(b.inputIds.subarray(i * T, i * T + r.inputIds.length)), list(r.inputIds), `row ${i} ${truncation}`);
      assert.deepEqual(list(b.tokenTypeIds.subarray(i * T, i * T + r.inputIds.length)), list(r.tokenTypeIds));
      assert.ok(b.attentionMask.subarray(i * T + r.inputIds.length, (i + 1) * T).every((v) => v === 0));
      if (truncation) assert.ok(r.inputIds.length <= 16);
    });
  }
  // A lone text: every strategy cuts it from the right, as truncation: true always has.
  const cut = list(bert.encodeInputs('Paris is the capital of France.', { maxLength: 6 }).inputIds);
  for (const truncation of ['longest_first', 'only_first', 'only_second']) {
    assert.deepEqual(list(bert.encodeInputs('Paris is the capital of France.', { maxLength: 6, truncation }).inputIds), cut, truncation);
  }
});

test('pair errors: TypeError / RangeError / AttnWasmError naming the argument', () => {
  const tok = fastTokenizer('bert_template');
  const check = (fn, Class, code, message) => assert.throws(fn, (e) => e instanceof Class && e.code === code && e.message.includes(message), message);
  check(() => tok.encodeInputs('x', { pair: 5 }), TypeError, 'ERR_INVALID_TYPE', 'pair: expected a string (the second text) or undefined, got number');
  check(() => tok.encodeInputs('x', { pair: 'y', truncation: 'longest' }), TypeError, 'ERR_INVALID_TYPE', "truncation: expected true, false, 'longest_first', 'only_first' or 'only_second', got 'longest'");
  check(() => tok.encodeBatch(['x'], { truncation: 1 }), TypeError, 'ERR_INVALID_TYPE', "truncation: expected true, false, 'longest_first', 'only_first' or 'only_second', got 1");
  check(() => tok.encodeBatch(['x', ['a', 7]]), TypeError, 'ERR_INVALID_TYPE', 'texts[1][1]: expected a string, got number');
  check(() => tok.encodeBatch([['a', 'b', 'c']]), TypeError, 'ERR_INVALID_TYPE', 'texts[0]: expected a string or a [text, pair] array of two strings, got an Array of length 3');
  check(() => tok.encodeBatch([{ text: 'a' }]), TypeError, 'ERR_INVALID_TYPE', 'texts[0]: expected a string or a [text, pair] array of two strings, got');
  check(() => tok.encodeInputs('x', { pair: 'y', maxLength: 2 }), RangeError, 'ERR_OUT_OF_RANGE', 'maxLength: expected at least 3 (the special tokens this tokenizer adds to a pair of texts), got 2');
  // The query alone longer than maxLength, only_second: the Rust library throws, the slow classes log and return it too long.
  const long = 'a very long query that does not fit at all in the length';
  check(() => tok.encodeBatch([['q', 'd'], [long, 'the document']], { maxLength: 12, truncation: 'only_second' }), RangeError, 'ERR_OUT_OF_RANGE', "texts[1] with maxLength 12: truncation 'only_second' cannot reach that length");
  // A TemplateProcessing without pair, asked for a pair.
  const json = JSON.parse(readFileSync(new URL(FILES.bert_template.path, ROOT), 'utf8'));
  delete json.post_processor.pair;
  const nopair = Tokenizer.fromJSON(json);
  assert.equal(nopair.encodeInputs('x').inputIds.length, 3);
  check(() => nopair.encodeInputs('x', { pair: 'y' }), AttnWasmError, 'ERR_UNSUPPORTED', 'post_processor.pair');
  check(() => nopair.encodeBatch([['x', 'y']]), AttnWasmError, 'ERR_UNSUPPORTED', 'post_processor.pair');
  const bad = structuredClone(JSON.parse(readFileSync(new URL(FILES.bert_template.path, ROOT), 'utf8')));
  bad.post_processor.pair = bad.post_processor.pair.filter((it) => !it.Sequence || it.Sequence.id !== 'B');
  const noB = Tokenizer.fromJSON(bad);
  assert.equal(noB.encodeInputs('x').inputIds.length, 3);
  check(() => noB.encodeInputs('x', { pair: 'y' }), AttnWasmError, 'ERR_UNSUPPORTED', "post_processor.pair: expected { Sequence: { id: 'A' } } and { Sequence: { id: 'B' } } (the two texts), got no 'B'");
  // The tokenizer keeps working after every error.
  assert.equal(tok.encodeInputs('x', { pair: 'y' }).inputIds.length, 5);
});

test('slow classes without pairs (T5) refuse them by name', async () => {
  const t5 = await tokenizerFromFolder(folderReader('t5_saved'));
  assert.throws(() => t5.encodeInputs('x', { pair: 'y' }), (e) => e instanceof AttnWasmError && e.code === 'ERR_UNSUPPORTED' && e.message.includes('T5Tokenizer'));
  assert.ok(t5.encodeInputs('x').inputIds.length > 0);
});
