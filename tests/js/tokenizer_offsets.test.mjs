// Tokenizer#encode(text, { returnOffsets: true }) against Hugging Face's Rust `tokenizers`: goldens
// made by tests/data/make_offset_goldens.mjs for every file and text of tokenizer_offset_files.mjs
// (26 files of every kind — byte-level BPE, SentencePiece-style BPE with byte fallback, WordPiece
// with each BertNormalizer setting, Unigram with Precompiled — on 137 hard texts), and slow BERT,
// RoBERTa and XLM-R folders through the fast tokenizer transformers converts them to. The reference
// counts code points; attnwasm gives UTF-16 units, so that text.slice(start, end) is the token's text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Tokenizer, tokenizerFromFolder } from '../../bindings/tokenizer.js';
import { OFFSET_TEXTS, offsetFiles, slowFolder } from '../data/tokenizer_offset_files.mjs';

const golden = JSON.parse(readFileSync(new URL('../data/goldens/tokenizer/offsets.json', import.meta.url), 'utf8'));
const slowGolden = JSON.parse(readFileSync(new URL('../data/goldens/tokenizer/slow_offsets.json', import.meta.url), 'utf8'));
const FILES = offsetFiles();
const show = (s) => JSON.stringify(s).slice(0, 80);

/** Code point offsets (flat) → UTF-16 [start, end] pairs of `text`. */
function units(text, flat) {
  const at = [0];
  for (const c of text.toWellFormed()) at.push(at[at.length - 1] + c.length);
  const out = [];
  for (let k = 0; k < flat.length; k += 2) out.push([at[flat[k]], at[flat[k + 1]]]);
  return out;
}

test('the offset goldens cover every file and text', () => {
  assert.deepEqual(Object.keys(golden.files), Object.keys(FILES));
  assert.equal(golden.texts, OFFSET_TEXTS.length);
});

for (const [name, want] of Object.entries(golden.files)) {
  test(`${name}: offsets as the Rust library gives them, with and without special tokens`, () => {
    const tok = Tokenizer.fromJSON(FILES[name].json, FILES[name].config);
    OFFSET_TEXTS.forEach((text, i) => {
      const [ids, flat] = want.texts[i];
      const offsets = units(text, flat);
      const got = tok.encode(text, { returnOffsets: true, addSpecialTokens: false });
      assert.deepEqual([...got.ids], ids, `${show(text)}: ids`);
      assert.deepEqual(got.offsets, offsets, `${show(text)}: offsets`);
      if (want.template) {
        const full = tok.encode(text, { returnOffsets: true });
        const [before, after] = want.template;
        assert.deepEqual(full.offsets, [...Array(before).fill([0, 0]), ...offsets, ...Array(after).fill([0, 0])], `${show(text)}: offsets with special tokens`);
        assert.deepEqual([...full.ids], [...tok.encode(text)], `${show(text)}: the ids of encode`);
      }
    });
  });
}

test('offsets slice the text: a WordPiece word, its subwords, a byte-level token inside an emoji', () => {
  const bert = Tokenizer.fromJSON(FILES.bert.json, FILES.bert.config);
  const text = 'Héllo, Tokenizers in 東京!';
  const r = bert.encode(text, { returnOffsets: true });
  // 'hello' (lowercased, accent stripped) covers 'Héllo'; '##izer' covers 'izer'; [CLS] and [SEP] cover nothing
  assert.deepEqual(r.offsets.map(([s, e]) => text.slice(s, e)), ['', 'Héllo', ',', 'Token', 'izer', 's', 'in', '東', '京', '!', '']);
  assert.deepEqual(r.offsets[0], [0, 0]);
  const l3 = Tokenizer.fromJSON(FILES.llama3.json, FILES.llama3.config);
  const e = l3.encode('a😀b', { returnOffsets: true, addSpecialTokens: false });
  // the emoji's 4 bytes split over tokens: each covers the whole emoji (2 UTF-16 units)
  assert.ok(e.offsets.some(([s, t]) => s === 1 && t === 3));
  assert.equal(e.offsets.at(-1)[1], 4);
});

test('returnOffsets: bad values are refused by name; false gives the Int32Array', () => {
  const tok = Tokenizer.fromJSON(FILES.bert.json, FILES.bert.config);
  assert.ok(tok.encode('x', { returnOffsets: false }) instanceof Int32Array);
  assert.throws(() => tok.encode('x', { returnOffsets: 'yes' }), (e) => e instanceof TypeError && /returnOffsets/.test(e.message));
  assert.throws(() => tok.encode('x', { returnOffset: true }), /returnOffset/);
});

test('a slow BertTokenizer (vocab.txt only) gives the offsets of the fast tokenizer transformers converts it to', async () => {
  // The 'bert' golden file is bert-base-uncased's tokenizer.json, BertConverter's layout: the same vocabulary as vocab.txt.
  const vocab = Object.entries(FILES.bert.json.model.vocab).sort((a, b) => a[1] - b[1]);
  assert.ok(vocab.every(([, id], i) => id === i), 'ids 0 … n-1');
  const files = { 'vocab.txt': vocab.map(([t]) => `${t}\n`).join(''), 'tokenizer_config.json': JSON.stringify({ tokenizer_class: 'BertTokenizer', do_lower_case: true }) };
  const slow = await tokenizerFromFolder((name) => files[name]);
  const want = golden.files.bert;
  let compared = 0;
  OFFSET_TEXTS.forEach((text, i) => {
    const [ids, flat] = want.texts[i];
    const plain = [...slow.encode(text, { addSpecialTokens: false })];
    if (JSON.stringify(plain) !== JSON.stringify(ids)) {
      // the slow class's ids differ from the fast one's on this text: offsets are refused, not guessed
      assert.throws(() => slow.encode(text, { returnOffsets: true }), { code: 'ERR_UNSUPPORTED', message: /ids from BertTokenizer differ/ });
      return;
    }
    const r = slow.encode(text, { returnOffsets: true });
    assert.deepEqual(r.offsets, [[0, 0], ...units(text, flat), [0, 0]], `${show(text)}: offsets`);
    assert.deepEqual([...r.ids], [...slow.encode(text)], `${show(text)}: ids`);
    compared++;
  });
  assert.ok(compared >= OFFSET_TEXTS.length - 5, `compared ${compared} of ${OFFSET_TEXTS.length}`);
});

// Slow RobertaTokenizer and XLMRobertaTokenizer folders: goldens/tokenizer/slow_offsets.json holds, per
// text, transformers' slow ids and, where the fast tokenizer transformers' own converter builds from
// the folder gives the same ids, that tokenizer's offsets (the Rust library's), else null.
for (const [name, want] of Object.entries(slowGolden.files)) {
  test(`a slow ${want.class} (${name}) gives the offsets of the fast tokenizer transformers converts it to`, async () => {
    const slow = await tokenizerFromFolder(slowFolder(name));
    assert.equal(slow.constructor.name, want.class);
    let compared = 0;
    OFFSET_TEXTS.forEach((text, i) => {
      const [ids, flat] = want.texts[i];
      assert.deepEqual([...slow.encode(text, { addSpecialTokens: false })], ids, `${show(text)}: the slow class's ids`);
      if (flat === null) {
        // the converted tokenizer's ids differ from the slow class's on this text: offsets are refused, not guessed
        assert.throws(() => slow.encode(text, { returnOffsets: true }), { code: 'ERR_UNSUPPORTED', message: new RegExp(`ids from ${want.class} differ`) }, show(text));
        return;
      }
      const offsets = units(text, flat);
      const r = slow.encode(text, { returnOffsets: true, addSpecialTokens: false });
      assert.deepEqual([...r.ids], ids, `${show(text)}: ids`);
      assert.deepEqual(r.offsets, offsets, `${show(text)}: offsets`);
      const [before, after] = want.template;
      const full = slow.encode(text, { returnOffsets: true });
      assert.deepEqual(full.offsets, [...Array(before).fill([0, 0]), ...offsets, ...Array(after).fill([0, 0])], `${show(text)}: offsets with special tokens`);
      assert.deepEqual([...full.ids], [...slow.encode(text)], `${show(text)}: the ids of encode`);
      compared++;
    });
    assert.equal(compared, want.texts.filter((t) => t[1] !== null).length);
  });
}

test('slow classes without offsets refuse them by name', async () => {
  // a class without a converter here (T5Tokenizer)
  const t5 = await tokenizerFromFolder((f) => (f === 'spiece.model' ? readFileSync(new URL('../data/goldens/spm/models/t5like.model', import.meta.url)) : undefined));
  assert.throws(() => t5.encode('a', { returnOffsets: true }), { code: 'ERR_UNSUPPORTED', message: /T5Tokenizer .*not supported; they are for BertTokenizer, RobertaTokenizer, XLMRobertaTokenizer .*tokenizer\.json/ });
  // an XLMRobertaTokenizer with a BPE model (its converted tokenizer is not built)
  const bpe = readFileSync(new URL('../data/goldens/spm/models/bpe_rules.model', import.meta.url));
  const xlmr = await tokenizerFromFolder((f) => (f === 'sentencepiece.bpe.model' ? bpe : undefined));
  assert.throws(() => xlmr.encode('a', { returnOffsets: true }), { code: 'ERR_UNSUPPORTED', message: /XLMRobertaTokenizer .*not one attnwasm reads/ });
  // a RobertaTokenizer whose converted file attnwasm does not read (not all 256 byte symbols in its vocabulary); encode still works
  const roberta = await tokenizerFromFolder((name) => ({ 'vocab.json': '{"a": 0, "<unk>": 1, "<s>": 2, "</s>": 3, "<pad>": 4}', 'merges.txt': '#version: 0.2\n' })[name]);
  assert.throws(() => roberta.encode('a', { returnOffsets: true }), { code: 'ERR_UNSUPPORTED', message: /RobertaTokenizer .*not one attnwasm reads.*tokenizer\.json/ });
  assert.deepEqual([...roberta.encode('a')], [2, 0, 3]);
});
