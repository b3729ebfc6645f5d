// TokenClassifier on folders with only a slow tokenizer's files (issue 42): roberta_ner (vocab.json + merges.txt)
// and xlmr_ner (a Unigram sentencepiece.bpe.model), against transformers 4.40.2's token-classification pipeline as
// pipeline('token-classification', model=folder) runs them: through the fast tokenizer transformers converts the
// slow files to (tests/data/make_classifier_goldens.py, ner_golden_converted). Every aggregation strategy, with
// ignoreLabels default and [], on hard texts: accents, digits, runs of spaces, glued punctuation, many sub-tokens,
// a leading space, non-Latin text, emoji, special tokens typed in the text, the empty string, a text over maxTokens.
// bert_ner (WordPiece) is in classifier_goldens.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { init } from '../../bindings/index.js';
import * as boundary from '../../bindings/boundary.js';

const DIR = new URL('../data/goldens/classifiers/', import.meta.url);
const aw = await init({ threads: 1 });
const golden = (name) => JSON.parse(readFileSync(new URL(`${name}/expected.json`, DIR), 'utf8'));
const path = (name) => new URL(name, DIR).pathname;
const STRATEGIES = ['none', 'simple', 'first', 'average', 'max'];
// Scores: relative 1e-4. The decisions (tags, words, groups) are exact: the golden script keeps every choice the
// pipeline makes at least 1e-3 (in probability) from its runner-up, where the scores differ by ~1e-6.
const RTOL = 1e-4;

/** Code-point index → UTF-16 index of `text` (the goldens count code points, as Python's str). */
function unitsOf(text) {
  const at = [0];
  for (const c of text) at.push(at.at(-1) + c.length);
  return (k) => at[k];
}

const CASES = [
  { name: 'roberta_ner', tokenizerClass: 'RobertaTokenizer', files: ['config.json', 'merges.txt', 'model.safetensors', 'tokenizer_config.json', 'vocab.json'] },
  { name: 'xlmr_ner', tokenizerClass: 'XLMRobertaTokenizer', files: ['config.json', 'model.safetensors', 'sentencepiece.bpe.model', 'tokenizer_config.json'] },
];

for (const c of CASES) {
  test(`${c.name}: a slow ${c.tokenizerClass} folder gives the token-classification pipeline's entities for every strategy`, async (t) => {
    const x = golden(c.name);
    const ner = x.ner;
    const m = await aw.loadModel(path(c.name));
    assert.ok(m instanceof aw.TokenClassifier);
    assert.equal(m.tokenizer.tokenizerClass, c.tokenizerClass, 'the slow files, no tokenizer.json');
    assert.deepEqual(m.labels, x.labels);
    assert.equal(m.maxTokens, x.maxLength);
    // What the golden covers: the hard cases are there.
    const texts = ner.texts;
    assert.ok(texts.includes('') && texts.some((s) => [...s].length !== s.length) && texts.some((s) => /\p{Script=Cyrillic}/u.test(s)));
    assert.ok(ner.encodings.some((e) => e.ids.length === x.maxLength), 'a text cut to maxTokens');
    assert.ok(ner.decisionMargin >= 1e-3, `decision margin ${ner.decisionMargin}`);
    // Two cases attnwasm once got wrong. A word decoded by the pipeline is decoded again when words are grouped:
    // RoBERTa's ByteLevel decoder reads the 'é' of 'Café' as the byte 0xE9, so transformers' word is 'Caf\uFFFD'
    // (attnwasm gave 'Café'). A '<unk>' typed in the text is the unknown token: its word is the text and it starts a
    // word (attnwasm took RoBERTa's converted byte-level model, which has no unknown token, for the tokenizer).
    if (c.name === 'roberta_ner') assert.ok(ner.outputs.first[1].some((e) => e.word.startsWith('Caf\uFFFD')), 'the golden has Caf\uFFFD');
    assert.ok(ner.encodings[texts.indexOf('Hello<unk>world and the <mask> here')].ids.includes(3), 'a typed <unk> (id 3)');

    // Ids and offsets: the converted fast tokenizer's (the Rust library's), the slow class's ids.
    texts.forEach((text, i) => {
      const r = m.tokenizer.encode(text, { returnOffsets: true });
      const u = unitsOf(text);
      const want = ner.encodings[i];
      let { ids, offsets } = r;
      if (ids.length > x.maxLength) {  // truncation=True: the text's last tokens go, </s> stays
        ids = [...ids.slice(0, x.maxLength - 1), ids.at(-1)];
        offsets = [...offsets.slice(0, x.maxLength - 1), offsets.at(-1)];
      }
      assert.deepEqual(Array.from(ids), want.ids, `texts[${i}] ids`);
      assert.deepEqual(offsets, want.offsets.map(([s, e]) => [u(s), u(e)]), `texts[${i}] offsets`);
    });

    let worst = 0;
    let count = 0;
    for (const [ignoreLabels, outputs] of [[undefined, ner.outputs], [[], ner.outputsIgnoreNone]]) {
      for (const strategy of STRATEGIES) {
        const got = await m.classify(texts, { aggregationStrategy: strategy, ignoreLabels, batchSize: 5 });
        const want = outputs[strategy];
        assert.equal(got.length, want.length);
        want.forEach((w, i) => {
          const u = unitsOf(texts[i]);
          const what = `${strategy} ignoreLabels ${JSON.stringify(ignoreLabels)} texts[${i}] ${JSON.stringify(texts[i]).slice(0, 40)}`;
          assert.deepEqual(got[i].map(({ score, ...rest }) => rest), w.map(({ score, ...rest }) => ({ ...rest, start: u(rest.start), end: u(rest.end) })), what);
          w.forEach((e, k) => {
            const r = Math.abs(got[i][k].score - e.score) / (RTOL * Math.abs(e.score));
            assert.ok(r <= 1, `${what} [${k}] score ${got[i][k].score} vs ${e.score}`);
            worst = Math.max(worst, r);
            count++;
          });
        });
      }
    }
    t.diagnostic(`entities: ${count}; worst |score − transformers| / (1e-4·score): ${worst.toFixed(4)}`);
    m.dispose();
  });

  test(`${c.name}: the folder holds only the slow files, and the head's per-token logits are transformers'`, async () => {
    const x = golden(c.name);
    assert.deepEqual(readdirSync(new URL(c.name, DIR)).filter((f) => f !== 'expected.json').sort(), c.files);
    const e = await aw.loadModel(path(c.name), { task: 'embed' });
    const ids = Int32Array.from(x.singles.flatMap((s) => s.ids));
    const lengths = Int32Array.from(x.singles, (s) => s.ids.length);
    const [out] = boundary.models.embedderEmbed(e._rt, e._handle(), { ids: { data: ids, shape: [ids.length] }, lengths: { data: lengths, shape: [lengths.length] } }, { modes: 0, normalize: false, head: true });
    assert.deepEqual(out.shape, [ids.length, x.labels.length]);
    const want = x.tokenLogits.flat(2);
    want.forEach((w, i) => assert.ok(Math.abs(out.data[i] - w) <= x.tolerance.atol + x.tolerance.rtol * Math.abs(w), `tokenLogits[${i}]: ${out.data[i]} vs ${w}`));
    e.dispose();
  });
}
