// attnwasm/tokenizer on real hub files and the other kinds against Hugging Face's Rust `tokenizers`:
// goldens made by tests/data/make_tokenizer_hub_goldens.mjs from the files of
// tests/data/tokenizer_hub_cases.mjs — Llama 2 and Gemma 3 (SentencePiece-style BPE, byte fallback),
// Llama 3 and Qwen3 (byte-level BPE), BERT uncased (WordPiece) and an XLM-R-style Unigram file, with
// variants — on 122 texts each: ids with and without special tokens, type ids, decode with and
// without special tokens, the streaming decoder, batches; then tokenizer_config.json and the speed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Tokenizer } from '../../bindings/tokenizer.js';
import { hubFiles, HUB_TEXTS } from '../data/tokenizer_hub_cases.mjs';

const golden = JSON.parse(readFileSync(new URL('../data/goldens/tokenizer/hub.json', import.meta.url), 'utf8'));
const FILES = hubFiles();
const tokenizers = {};
const get = (name) => (tokenizers[name] ??= Tokenizer.fromJSON(FILES[name].json, FILES[name].config));
const show = (s) => JSON.stringify(s).slice(0, 120);

/** A golden text entry: [ids], [ids, types], [ids, decoded, decodedSkip] or [ids, decoded, decodedSkip, types]. */
function entry(e, text) {
  if (e.length === 2) return { ids: e[0], decoded: text, decodedSkip: text, types: e[1] };
  return { ids: e[0], decoded: e[1] ?? text, decodedSkip: e[2] ?? text, types: e[3] ?? null };
}

test('the goldens cover every file and every text', () => {
  assert.deepEqual(Object.keys(golden.files), Object.keys(FILES));
  assert.equal(golden.texts, HUB_TEXTS.length);
  for (const f of Object.values(golden.files)) assert.equal(f.texts.length, HUB_TEXTS.length);
});

for (const [name, want] of Object.entries(golden.files)) {
  test(`${name}: ids, type ids and decoded text as Hugging Face tokenizers (Rust) gives them`, () => {
    const tok = get(name);
    assert.equal(tok.vocabSize, want.vocabSize, 'vocabSize');
    HUB_TEXTS.forEach((text, i) => {
      const c = entry(want.texts[i], text);
      const at = `text ${show(text)}`;
      assert.deepEqual([...tok.encode(text, { addSpecialTokens: false })], c.ids, `${at}: ids`);
      const full = [...want.before, ...c.ids, ...want.after];
      assert.deepEqual([...tok.encode(text)], full, `${at}: ids with special tokens`);
      const inputs = tok.encodeInputs(text, { truncation: false });
      assert.deepEqual([...inputs.inputIds], full, `${at}: encodeInputs ids`);
      assert.deepEqual([...inputs.tokenTypeIds], c.types ?? full.map(() => 0), `${at}: type ids`);
      assert.ok(inputs.attentionMask.every((m) => m === 1) && inputs.attentionMask.length === full.length, `${at}: attention mask`);
      assert.equal(tok.decode(full), c.decoded, `${at}: decode`);
      assert.equal(tok.decode(Int32Array.from(full), { skipSpecialTokens: true }), c.decodedSkip, `${at}: decode skipping special tokens`);
    });
  });
}

test('streaming decoder: for every file and golden text the pushed pieces joined with end() equal decode(ids), each piece whole characters', () => {
  let checks = 0;
  for (const [name, want] of Object.entries(golden.files)) {
    const tok = get(name);
    for (const skipSpecialTokens of [false, true]) {
      const stream = tok.streamDecoder({ skipSpecialTokens });
      HUB_TEXTS.forEach((text, i) => {
        const full = [...want.before, ...entry(want.texts[i], text).ids, ...want.after];
        const pieces = full.map((id) => stream.push(id));
        const whole = tok.decode(full, { skipSpecialTokens });
        assert.equal(pieces.join('') + stream.end(), whole, `${name}: ${show(text)}`);
        // No piece ends inside a surrogate pair, and U+FFFD appears only where decode has it too.
        for (const p of pieces) assert.equal(p.toWellFormed(), p, `${name}: ${show(text)}: a piece cut a character`);
        if (!whole.includes('\ufffd')) assert.ok(pieces.every((p) => !p.includes('\ufffd')), `${name}: ${show(text)}: U+FFFD in a piece`);
        checks++;
      });
    }
  }
  assert.ok(checks > 3000);
});

test('byte fallback streams whole characters: an emoji that Llama 2 writes as four <0xNN> tokens comes out once, whole', () => {
  const tok = get('llama2');
  const ids = [...tok.encode('a 🦀 b', { addSpecialTokens: false })];
  const bytes = ids.filter((id) => /^<0x[0-9A-F]{2}>$/.test(tok.idToToken(id)));
  assert.equal(bytes.length, 4, show(ids.map((id) => tok.idToToken(id))));
  const stream = tok.streamDecoder();
  const pieces = ids.map((id) => stream.push(id));
  assert.ok(pieces.every((p) => !p.includes('\ufffd')));
  assert.equal(pieces.filter((p) => p.includes('🦀')).length, 1);
  assert.equal(pieces.join('') + stream.end(), 'a 🦀 b');
  // an invalid run decodes as one U+FFFD per byte, as the Rust ByteFallback decoder gives it
  const ff = tok.tokenToId('<0xFF>');
  assert.equal(tok.decode([ff, ff, tok.tokenToId('▁b')]), '\ufffd\ufffd b');
  assert.equal(stream.push(ff) + stream.push(ff) + stream.end(), '\ufffd\ufffd');
});

for (const [name, want] of Object.entries(golden.files)) {
  test(`${name}: batches (truncation keeps the special tokens, right padding) as encode_batch gives them`, () => {
    const tok = get(name);
    const BATCHES = [
      { texts: ['Hello world', 'a', '', 'The quick brown fox jumps over the lazy dog. '.repeat(6)], maxLength: 16 },
      { texts: ['same', 'same'], maxLength: null },
      { texts: ['naïve café', '你好，世界！', 'emoji 😀😃😄 faces and more words'], maxLength: 9, addSpecialTokens: false },
    ];
    BATCHES.forEach((b, k) => {
      const w = want.batches[k];
      const options = { maxLength: b.maxLength ?? undefined, truncation: b.maxLength !== null, addSpecialTokens: b.addSpecialTokens ?? true };
      const lengths = w.lengths;
      if (!tok._pad && new Set(w.ids.map((r) => r.length)).size > 1) {
        assert.throws(() => tok.encodeBatch(b.texts, options), (e) => e.code === 'ERR_UNSUPPORTED' && /^padding: the texts have \d+ to \d+ tokens and this tokenizer has no pad token/.test(e.message));
        // one by one, each row is the reference's row
        b.texts.forEach((text, i) => assert.deepEqual([...tok.encodeInputs(text, options).inputIds], w.ids[i], `${name} batch ${k} row ${i}`));
        return;
      }
      const got = tok.encodeBatch(b.texts, options);
      const T = w.ids[0].length;
      assert.deepEqual(got.shape, [b.texts.length, T], `${name} batch ${k}: shape`);
      assert.deepEqual([...got.lengths], lengths, `${name} batch ${k}: lengths`);
      assert.deepEqual([...got.inputIds], w.ids.flat(), `${name} batch ${k}: ids`);
      assert.deepEqual([...got.tokenTypeIds], w.types.flat(), `${name} batch ${k}: type ids`);
      assert.deepEqual([...got.attentionMask], lengths.flatMap((n) => Array.from({ length: T }, (_, j) => (j < n ? 1 : 0))), `${name} batch ${k}: mask`);
    });
  });
}

test('tokenizer_config.json: kept frozen as tok.config; add_bos_token / add_eos_token rebuild the template of Llama and Gemma classes only', () => {
  const l2 = get('llama2');
  assert.equal(l2.config.tokenizer_class, 'LlamaTokenizer');
  assert.ok(Object.isFrozen(l2.config));
  assert.throws(() => { l2.config.bos_token = 'x'; }, TypeError);
  const text = 'Hi there';
  const plain = [...l2.encode(text, { addSpecialTokens: false })];
  assert.deepEqual([...get('llama2_eos').encode(text)], [1, ...plain, 2], 'add_eos_token: </s> after the text');
  assert.deepEqual([...Tokenizer.fromJSON(FILES.llama2.json, { ...FILES.llama2.config, add_bos_token: false }).encode(text)], plain, 'add_bos_token: false');
  assert.deepEqual([...Tokenizer.fromJSON(FILES.llama2.json).encode(text)], [1, ...plain], 'no config: the file\'s template');
  // another class: the flags are the config's business, not the template's (Llama 3 is PreTrainedTokenizerFast)
  const l3 = FILES.llama3;
  const eos = Tokenizer.fromJSON(l3.json, { ...l3.config, add_eos_token: true });
  assert.deepEqual([...eos.encode(text)], [...get('llama3').encode(text)]);
  // the config in any form; { content } tokens (transformers' AddedToken) read as their content
  const cfg = { ...FILES.llama2.config, add_eos_token: true, eos_token: { content: '</s>', __type: 'AddedToken' } };
  for (const form of [cfg, JSON.stringify(cfg), new TextEncoder().encode(JSON.stringify(cfg))]) {
    assert.deepEqual([...Tokenizer.fromJSON(FILES.llama2.json, form).encode(text)], [1, ...plain, 2]);
  }
  // model_max_length is the default maxLength of encodeInputs / encodeBatch (Llama's 1e30: none)
  assert.equal(get('bert').encodeInputs('word '.repeat(600)).inputIds.length, 512);
  assert.equal(get('llama2').encodeInputs('word '.repeat(600)).inputIds.length, get('llama2').encode('word '.repeat(600)).length);
  assert.equal(get('bert').encode('word '.repeat(600)).length, 602, 'encode() never truncates');
  assert.equal(get('gemma3').config.chat_template.length > 100, true, 'chat_template is there for a chat-template module');
});

test('speed: encode 100 000 characters with each kind well under a second', (t) => {
  const root = new URL('../../', import.meta.url);
  const prose = readFileSync(new URL('README.md', root), 'utf8') + HUB_TEXTS.join('\n');
  const text = prose.repeat(Math.ceil(100_000 / prose.length)).slice(0, 100_000);
  for (const name of ['llama2', 'gemma3', 'bert', 'xlmr', 'llama3']) {
    const ms = [];
    let ids;
    for (let run = 0; run < 3; run++) {
      const tok = Tokenizer.fromJSON(FILES[name].json, FILES[name].config); // a fresh one: empty caches
      const t0 = performance.now();
      ids = tok.encode(text, { addSpecialTokens: false });
      ms.push(performance.now() - t0);
    }
    const t1 = performance.now();
    get(name).decode(ids);
    t.diagnostic(`${name}: ${text.length} characters → ${ids.length} ids: encode ${ms.map((m) => m.toFixed(0)).join(', ')} ms (fresh tokenizers), decode ${(performance.now() - t1).toFixed(0)} ms`);
    assert.ok(Math.min(...ms) < 1000, `${name}: encode took ${ms.map((m) => m.toFixed(0)).join(', ')} ms`);
  }
});
