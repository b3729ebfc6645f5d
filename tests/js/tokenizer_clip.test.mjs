// CLIP's and SigLIP's tokenizers (bindings/tokenizer/slow_clip.js, slow_siglip.js, folder.js, and the
// tokenizer.json path for CLIP's file: bpe.js end_of_word_suffix, Split Removed/invert) against the
// goldens of tests/data/make_clip_tokenizer_goldens.py (transformers v4.40.2's CLIPTokenizer without
// ftfy and SiglipTokenizer, loaded with AutoTokenizer.from_pretrained) and .mjs (Rust tokenizers 0.23.2
// on CLIPConverter's tokenizer.json). CLIP's vocabulary is the real one cut to the texts' merges.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { Tokenizer, tokenizerFromFolder } from '../../bindings/tokenizer.js';

const G = new URL('../data/goldens/clip_tokenizer/', import.meta.url);
const slow = JSON.parse(readFileSync(new URL('slow.json', G), 'utf8'));
const fast = JSON.parse(readFileSync(new URL('fast.json', G), 'utf8'));
const list = (a) => Array.from(a);
const SHARED = { 'vocab.json': 'clip/vocab.json', 'merges.txt': 'clip/merges.txt', 'spiece.model': 'siglip.model' };

/** A golden folder's readFile: its own files, and the vocabulary files its manifest row names; `drop` leaves files out. */
function folderReader(name, drop = []) {
  const shared = slow.manifest[name][0] === 'clip' ? ['vocab.json', 'merges.txt'] : ['spiece.model'];
  return (file) => {
    if (drop.includes(file)) return undefined;
    if (shared.includes(file)) return readFileSync(new URL(SHARED[file], G));
    const url = new URL(`folders/${name}/${file}`, G);
    return existsSync(url) ? readFileSync(url) : undefined;
  };
}

/** Code-point offsets (Rust's) → UTF-16 ones (ours) of `text`. */
function utf16Offsets(text, offsets) {
  const at = [0];
  for (const c of text) at.push(at[at.length - 1] + c.length);
  return offsets.map(([s, e]) => [at[s], at[e]]);
}

for (const [name, f] of Object.entries(slow.folders)) {
  test(`slow ${f.class} (${name}): tokens, ids, decode and the processor's padded batches equal transformers'`, async () => {
    const tok = await tokenizerFromFolder(folderReader(name), { slow: true });
    assert.equal(tok.tokenizerClass, f.class);
    for (const [i, c] of f.cases.entries()) {
      const what = `${name} text ${i} ${JSON.stringify(c.text).slice(0, 40)}`;
      assert.deepEqual(tok.tokenize(c.text), c.tokens, `${what}: tokens`);
      assert.deepEqual(list(tok.encode(c.text)), c.ids, `${what}: ids`);
      assert.deepEqual(list(tok.encode(c.text, { addSpecialTokens: false })), c.ids_plain, `${what}: ids without special tokens`);
      assert.equal(tok.decode(c.ids), c.decoded, `${what}: decode`);
      assert.equal(tok.decode(c.ids, { skipSpecialTokens: true }), c.decoded_skip, `${what}: decode skipping special tokens`);
      const s = tok.streamDecoder({ skipSpecialTokens: true });
      assert.equal(c.ids.map((id) => s.push(id)).join('') + s.end(), c.decoded_skip, `${what}: stream decoder`);
    }
    for (const [i, b] of f.batches.entries()) {
      // CLIPProcessor: padding=True (the longest, no truncation); SiglipProcessor: padding='max_length' (model_max_length 64), truncation.
      const options = b.kwargs.padding === 'max_length' ? { padding: 'max_length', truncation: true } : { truncation: false };
      const got = tok.encodeBatch(b.texts, options);
      const [n, T] = got.shape;
      assert.equal(n, b.input_ids.length);
      assert.equal(T, b.input_ids[0].length, `${name} batch ${i}: length`);
      for (let r = 0; r < n; r++) {
        assert.deepEqual(list(got.inputIds.subarray(r * T, (r + 1) * T)), b.input_ids[r], `${name} batch ${i} row ${r}`);
        assert.deepEqual(list(got.attentionMask.subarray(r * T, (r + 1) * T)), b.attention_mask[r], `${name} batch ${i} mask ${r}`);
      }
    }
  });
}

test("CLIP's tokenizer.json (tokenizerFromFolder, Tokenizer.fromJSON): ids, offsets and decode equal the Rust library's", async () => {
  const tok = await tokenizerFromFolder(folderReader('clip_hub'));
  assert.ok(tok instanceof Tokenizer);
  for (const [i, c] of fast.cases.entries()) {
    const what = `text ${i} ${JSON.stringify(c.text).slice(0, 40)}`;
    assert.deepEqual(list(tok.encode(c.text)), c.ids, `${what}: ids`);
    assert.deepEqual(list(tok.encode(c.text, { addSpecialTokens: false })), c.ids_plain, `${what}: ids without special tokens`);
    assert.deepEqual(tok.encode(c.text, { returnOffsets: true }).offsets, utf16Offsets(c.text, c.offsets), `${what}: offsets`);
    assert.equal(tok.decode(c.ids), c.decoded, `${what}: decode`);
    assert.equal(tok.decode(c.ids, { skipSpecialTokens: true }), c.decoded_skip, `${what}: decode skipping special tokens`);
  }
  // The slow class without ftfy and the fast file disagree where BasicTokenizer acts (CJK ideographs
  // split apart, control and format characters dropped: ZWJ, BOM, U+0085), where Python and Rust
  // lowercase apart (Σ at a word's end) and where the slow regex's IGNORECASE reads "'ſ" as "'s":
  // each side is checked against its own library above.
  const slowIds = new Map(slow.folders.clip_hub.cases.map((c) => [c.text, c.ids]));
  const differ = fast.cases.filter((c) => slowIds.get(c.text).join() !== c.ids.join()).map((c) => c.text);
  assert.deepEqual(differ, ['日本語のテキスト 中文 한국어', 'emoji 😀👍🏽 family 👨\u200d👩\u200d👧', 'ΣΑΣ ΟΔΟΣ İstanbul', '\x00nul\x07bell\ufeffbom\u200bzw',
    'a\x85b\u2028c', "it'ſ a \u212a"]);
  // CLIPProcessor's padding: tokenizer_config.json's pad_token (<|endoftext|>) to the longest text.
  const b = tok.encodeBatch(slow.folders.clip_hub.batches[0].texts);
  assert.deepEqual(list(b.inputIds), slow.folders.clip_hub.batches[0].input_ids.flat());
});

test('the folder loader: CLIP and SigLIP only by tokenizer_class or model_type; clear errors for missing files', async () => {
  // vocab.json + merges.txt alone are RoBERTa's (as AutoTokenizer cannot tell them apart either).
  const bare = (file) => (['vocab.json', 'merges.txt'].includes(file) ? readFileSync(new URL(SHARED[file], G)) : undefined);
  assert.equal((await tokenizerFromFolder(bare)).tokenizerClass, 'RobertaTokenizer');
  assert.equal((await tokenizerFromFolder(folderReader('clip_config'))).tokenizerClass, 'CLIPTokenizer');
  const textModel = (file) => (file === 'config.json' ? JSON.stringify({ model_type: 'clip_text_model' }) : bare(file));
  assert.equal((await tokenizerFromFolder(textModel)).tokenizerClass, 'CLIPTokenizer');
  assert.equal((await tokenizerFromFolder(folderReader('siglip_cased'))).tokenizerClass, 'SiglipTokenizer');
  await assert.rejects(tokenizerFromFolder(folderReader('clip_saved', ['merges.txt'])),
    { name: 'AttnWasmError', code: 'ERR_INVALID_ARGUMENT', message: 'merges.txt: CLIPTokenizer needs this file and the folder has none (and no tokenizer.json)' });
  await assert.rejects(tokenizerFromFolder(folderReader('clip_config', ['vocab.json'])), { code: 'ERR_INVALID_ARGUMENT', message: /^vocab\.json: CLIPTokenizer needs this file/ });
  await assert.rejects(tokenizerFromFolder(folderReader('siglip_saved', ['spiece.model'])),
    { code: 'ERR_INVALID_ARGUMENT', message: 'spiece.model: SiglipTokenizer needs this file and the folder has none (and no tokenizer.json)' });
  await assert.rejects(tokenizerFromFolder((f) => (f === 'vocab.json' ? '{"a": "x"}' : folderReader('clip_saved')(f))),
    { code: 'ERR_INVALID_ARGUMENT', message: "vocab.json 'a': expected an integer id in [0, 2^31 - 1], got 'x'" });
});

test('SigLIP: max_length padding (the processor\'s) to model_max_length 64, do_lower_case, eos not doubled', async () => {
  const tok = await tokenizerFromFolder(folderReader('siglip_saved'));
  const b = tok.encodeBatch(['a photo of a cat', 'a dog'], { padding: 'max_length' });
  assert.deepEqual(b.shape, [2, 64]);
  const eos = tok.tokenToId('</s>');
  assert.equal(eos, 1);
  assert.deepEqual(list(b.inputIds.subarray(64, 128)).slice(list(tok.encode('a dog')).length), new Array(64 - list(tok.encode('a dog')).length).fill(eos), 'pad id </s>');
  assert.deepEqual(list(tok.encode('A Photo, of a CAT!')), list(tok.encode('a photo of a cat')), 'lowercased, punctuation removed');
  const ids = list(tok.encode('a cat'));
  assert.deepEqual(list(tok.encode('a cat</s>')), ids, 'a text ending in </s> gets no second one');
  // A checkpoint whose text tower is longer: maxLength overrides model_max_length.
  assert.deepEqual(tok.encodeBatch(['a cat'], { padding: 'max_length', maxLength: 16 }).shape, [1, 16]);
});

test("CLIP-like tokenizer.json files refused: a vocabulary without a suffixed byte symbol, a suffix outside byte-level files", () => {
  const file = JSON.parse(readFileSync(new URL('folders/clip_hub/tokenizer.json', G), 'utf8'));
  const vocab = { ...file.model.vocab };
  delete vocab['a</w>'];
  const merges = file.model.merges.filter((m) => !m.split(' ').includes('a</w>') && m.replace(' ', '') !== 'a</w>');
  assert.throws(() => Tokenizer.fromJSON({ ...file, model: { ...file.model, vocab, merges } }),
    { code: 'ERR_UNSUPPORTED', message: /model\.vocab.*end_of_word_suffix '<\/w>'.*'a<\/w>'/ });
  const sp = { ...file, pre_tokenizer: { type: 'Whitespace' }, decoder: { type: 'Fuse' } };
  assert.throws(() => Tokenizer.fromJSON(sp), { code: 'ERR_UNSUPPORTED', message: /model\.end_of_word_suffix/ });
});
