// One's own models, exported from PyTorch with tools/export_safetensors.py
// (export_seq2seq, export_vit) by tests/data/make_model_goldens.py, load with
// aw.loadModel into the right family and give torch's numbers: greedy ids
// and logits, the beam search's ids, probabilities, class-token attention
// and rollout. Shapes differ from the demo models (sequence-first gelu
// post-norm seq2seq with 1 + 3 layers; 3-channel 12×12 ViT, pre-norm relu).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../bindings/index.js';

const dir = new URL('../data/goldens/models/', import.meta.url);
const expected = JSON.parse(readFileSync(new URL('expected.json', dir), 'utf8'));
const aw = await init({ threads: 1 });
const seq2seq = await aw.loadModel(new URL(expected.seq2seq.file, dir));
const vit = await aw.loadModel(readFileSync(new URL(expected.vit.file, dir)));
const maxAbs = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

test('loadModel picks the family from the file: a Translator for "translator", a Classifier for "vit"', async () => {
  assert.equal(seq2seq.constructor.name, 'Translator');
  assert.equal(vit.constructor.name, 'Classifier');
  assert.equal(seq2seq.sourceText, 'words');
  await assert.rejects(aw.loadClassifier(new URL(expected.seq2seq.file, dir)),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && /expected a "vit" model, got "translator"/.test(e.message));
  await assert.rejects(aw.loadTranslator(new URL(expected.vit.file, dir)),
    (e) => e.code === 'ERR_INVALID_ARGUMENT' && /expected a "translator" model, got "vit"/.test(e.message));
});

test('an exported nn.Transformer: greedy ids and logits (≤ 1e-4) and beam-3 ids equal torch', () => {
  const { items } = expected.seq2seq;
  assert.ok(items.some((it) => it.beam3Ids.join() !== it.greedyIds.join()), 'a case where the beam finds another answer');
  let worst = 0;
  for (const it of items) {
    const g = seq2seq.translate(it.text);
    const eos = seq2seq.config.eos;
    assert.deepEqual(g.tokenIds, it.greedyIds.filter((id) => id !== eos), it.text);
    assert.equal(g.text, g.tokens.join(' '));
    assert.equal(g.value, undefined);
    const b = seq2seq.translate(it.text, { beamSize: 3 });
    assert.deepEqual(b.tokenIds, it.beam3Ids.filter((id) => id !== eos), `${it.text}, beam 3`);
    const prefix = [seq2seq.config.langTokens.out, ...it.greedyIds];
    const logits = seq2seq.scoreFull(it.text, prefix.slice(0, -1));
    const V = logits.shape[1];
    it.greedyLogits.forEach((row, t) => { worst = Math.max(worst, maxAbs(Array.from(logits.data.subarray(t * V, (t + 1) * V)), row)); });
  }
  assert.ok(worst <= 1e-4, `max abs logit error ${worst}`);
  assert.throws(() => seq2seq.translate('w1 nope'), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /vocabulary has no 'nope'/.test(e.message));
  assert.throws(() => seq2seq.translate('   '), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /empty text/.test(e.message));
});

test('an exported ViT: probabilities, class-token attention and rollout equal torch (≤ 1e-4)', () => {
  const c = vit.config;
  for (const it of expected.vit.items) {
    const r = vit.classify(Float32Array.from(it.image));
    assert.ok(maxAbs(Array.from(r.probabilities), it.probabilities) <= 1e-4, 'probabilities');
    assert.equal(r.attention.layers, c.numLayers);
    assert.equal(r.attention.heads, c.nhead);
    assert.equal(r.attention.grid, 4);
    assert.ok(maxAbs(Array.from(r.attention.data), it.attention) <= 1e-4, 'attention');
    assert.ok(maxAbs(Array.from(r.rollout), it.rollout) <= 1e-4, 'rollout');
    const best = it.probabilities.indexOf(Math.max(...it.probabilities));
    assert.equal(r.index, best);
    assert.equal(r.label, 'abcde'[best]);
  }
  assert.throws(() => vit.classify(new Float32Array(144)),
    (e) => e.code === 'ERR_SHAPE' && e.message === 'image: expected 3×12×12 = 432 values, got 144');
  const rgba = { data: new Uint8ClampedArray(4 * 144).fill(128), width: 12, height: 12 };
  assert.equal(vit.classify(rgba).probabilities.length, 5, 'an ImageData gives the three RGB channels');
});

test.after(() => {
  seq2seq.dispose();
  vit.dispose();
});
