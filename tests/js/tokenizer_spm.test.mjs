// SentencePiece model files and the slow tokenizers' folders (bindings/tokenizer/sentencepiece.js,
// folder.js, slow_*.js) against the goldens of tests/data/make_spm_goldens.py: the real sentencepiece
// library (0.1.97) on five models trained there, and transformers v4.40.2's slow classes (Marian,
// T5, M2M100, NLLB, XLM-R, BERT, RoBERTa) loaded with from_pretrained on seventeen folders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SentencePieceProcessor, tokenizerFromFolder } from '../../bindings/tokenizer.js';
import { expected, folderReader, modelBytes } from './spm_folders.mjs';

const TEXTS = expected.texts;
const list = (a) => Array.from(a);

test('SentencePiece models: ids, pieces and decoding equal the sentencepiece library on every text', () => {
  const texts = [...TEXTS, ...expected.fuzz];
  let checked = 0;
  for (const [name, rows] of Object.entries(expected.models)) {
    const sp = SentencePieceProcessor.fromBytes(modelBytes(name), `${name}.model`);
    rows.forEach((r, i) => {
      const what = `${name} text ${i} ${JSON.stringify(texts[i]).slice(0, 50)}`;
      const got = sp.encode(texts[i]);
      assert.deepEqual(got.ids, r.ids, `${what}: ids`);
      if (r.decode !== undefined) { // the texts (the random ones have ids only)
        const pieces = r.ids.map((id, k) => r.pieces?.[k] ?? sp.idToPiece(id));
        assert.deepEqual(got.pieces, pieces, `${what}: pieces`);
        assert.equal(sp.decodeIds(r.ids), r.decode, `${what}: decode`);
        assert.equal(sp.decodePieces(pieces), r.decode_pieces ?? r.decode, `${what}: decode_pieces`);
      }
      checked++;
    });
  }
  assert.equal(checked, 5 * (TEXTS.length + expected.fuzz.length));
});

for (const [name, f] of Object.entries(expected.folders)) {
  test(`slow tokenizer ${f.class} (${name}): tokens, ids, target ids, decode, batches equal transformers'`, async () => {
    const tok = await tokenizerFromFolder(folderReader(name));
    assert.equal(tok.tokenizerClass, f.class);
    assert.equal(tok.vocabSize, f.size, 'vocabSize: len(tokenizer)');
    assert.ok(tok._maxId >= tok.vocabSize - 1);
    f.rows.forEach((r, i) => {
      const t = TEXTS[i];
      const what = `${name} text ${i} ${JSON.stringify(t).slice(0, 50)}`;
      const tokens = r.plain.map((id, k) => r.tokens?.[k] ?? tok.idToToken(id));
      assert.deepEqual(tok.tokenize(t), tokens, `${what}: tokens`);
      assert.deepEqual(list(tok.encode(t)), r.ids, `${what}: ids`);
      assert.deepEqual(list(tok.encode(t, { addSpecialTokens: false })), r.plain, `${what}: ids without special tokens`);
      if (r.target) assert.deepEqual(list(tok.encode(t, { target: true })), r.target, `${what}: target ids`);
      assert.equal(tok.decode(r.ids), r.decode, `${what}: decode`);
      assert.equal(tok.decode(Int32Array.from(r.ids), { skipSpecialTokens: true }), r.decode_skip ?? r.decode, `${what}: decode skipping special tokens`);
      // The stream decoder's pieces join to decode's text.
      const s = tok.streamDecoder();
      assert.equal(r.ids.map((id) => s.push(id)).join('') + s.end(), r.decode, `${what}: stream decoder`);
      const k = tok.streamDecoder({ skipSpecialTokens: true });
      assert.equal(r.ids.map((id) => k.push(id)).join('') + k.end(), r.decode_skip ?? r.decode, `${what}: stream decoder skipping special tokens`);
    });
    f.decodes.forEach((d, i) => {
      assert.equal(tok.decode(d.ids), d.decode, `${name} ids ${i}: decode`);
      assert.equal(tok.decode(d.ids, { skipSpecialTokens: true }), d.decode_skip, `${name} ids ${i}: decode skipping special tokens`);
    });
    const b = tok.encodeBatch(f.batch.texts, { maxLength: f.batch.max_length });
    const [n, T] = b.shape;
    assert.equal(n, f.batch.input_ids.length);
    for (let i = 0; i < n; i++) {
      assert.deepEqual(list(b.inputIds.subarray(i * T, (i + 1) * T)), f.batch.input_ids[i], `${name} batch row ${i}`);
      assert.deepEqual(list(b.attentionMask.subarray(i * T, (i + 1) * T)), f.batch.attention_mask[i], `${name} batch mask ${i}`);
    }
    if (f.src_lang) {
      f.src_lang.ids.forEach((ids, i) => assert.deepEqual(list(tok.encode(TEXTS[i], { srcLang: f.src_lang.lang })), ids, `${name} srcLang ${f.src_lang.lang} text ${i}`));
    }
  });
}
