// A folder with a tokenizer.json as well: the fast tokenizer (Tokenizer.fromJSON, the Rust library's
// ids) against the slow one (tokenizerFromFolder, the Python class's ids) on the golden folders, the
// tokenizer.json laid out as transformers' converters write it (spm_convert.mjs). They agree on every
// text but the ones pinned below, each for a known difference between transformers' fast and slow
// tokenizers (not of this code): the converters drop byte_fallback (XLM-R, NLLB: the fast tokenizer
// writes <unk> where the slow one writes <0xNN> pieces; compared after fusing such runs into <unk>)
// and user-defined pieces; the Rust Precompiled normalizer takes the first rule, sentencepiece the
// longest (①② → '12!'); SpmConverter's Strip-right and Replace(' {2,}') treat whitespace other than
// sentencepiece (a trailing '\r\n', a literal '▁', leading spaces with T5's legacy=false); T5's slow
// class adds no second </s> to a text ending with one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tokenizer, tokenizerFromFolder } from '../../bindings/tokenizer.js';
import { expected, folderReader } from './spm_folders.mjs';
import { convertSlow } from './spm_convert.mjs';

const PINNED = {
  xlmr_hub: [], bert_hub: [], bert_cased_saved: [], roberta_hub: [],
  xlmr_saved: [9, 23, 24, 29], nllb_hub: [9, 23, 24, 29], // ①② ; '\r\n' ; '▁' ; the user-defined piece <sep2>
  t5_hub: [9, 23, 24, 36], t5_saved: [9, 23, 24, 36], // ①② ; '\r\n' ; '▁' ; text ending with </s>
  t5_nonlegacy_saved: [4, 9, 23, 24, 35, 36, 44], // and leading spaces
};

for (const [name, pinned] of Object.entries(PINNED)) {
  test(`fast and slow tokenizers of ${name} agree except on the known differences`, async () => {
    const read = folderReader(name);
    const slow = await tokenizerFromFolder(read);
    const fast = Tokenizer.fromJSON(convertSlow(slow, read), read('tokenizer_config.json'));
    assert.equal((await tokenizerFromFolder((f) => (f === 'tokenizer.json' ? JSON.stringify(convertSlow(slow, read)) : read(f)))).constructor, Tokenizer);
    const unk = fast.tokenToId(slow.specialToken('unk_token'));
    const differ = [];
    expected.folders[name].rows.forEach((r, i) => {
      // A run of byte-fallback pieces of the slow tokenizer is one <unk> of the fast one.
      const slowIds = [];
      for (const id of r.ids) {
        const byte = /^<0x[0-9A-F]{2}>$/.test(slow.idToToken(id));
        if (!byte) slowIds.push(id);
        else if (slowIds[slowIds.length - 1] !== -1) slowIds.push(-1);
      }
      const want = slowIds.map((id) => (id === -1 ? unk : id));
      if (JSON.stringify(Array.from(fast.encode(expected.texts[i]))) !== JSON.stringify(want)) differ.push(i);
    });
    assert.deepEqual(differ, pinned, `texts where the fast and slow ids differ: ${differ.map((i) => JSON.stringify(expected.texts[i])).join(', ')}`);
  });
}
