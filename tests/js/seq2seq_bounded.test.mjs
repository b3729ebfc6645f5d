// Greedy search's bounded pass (seq2seq_generate.js BoundedChoice; loadModel's boundedHead, PackedWeight::KeepBound:
// a float32 head with a q8 copy): a float32 model's greedy steps read the head's q8 copy, bound every logit and
// compute exactly only the ids that can still win. What it must keep: transformers' sequences for every greedy
// golden case (processors included), the same sequences as the exact path on the same model, with or without
// renormalize_logits; the way back to the row's exact logits when the bounds cannot decide (too many candidates,
// NaN); no bounded pass where the head is not float32 (q8) or the run samples; errors by name from the native calls.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { ints, optionsOf } from './helpers.mjs';
import { generateSeq2Seq } from '../../bindings/seq2seq_generate.js';

const DIR = fileURLToPath(new URL('../data/goldens/seq2seq/', import.meta.url));
const x = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8'));
const aw = await init({ threads: 1 });
after(() => aw.close());

const rows = (r) => r.sequences.map((q) => Array.from(q));

/** The model's stepper with its calls counted; `exactOnly` drops the bounded pass (the ordinary path). */
function stepperOf(m, input, { exactOnly = false, widen = 0, nanAt = -1 } = {}) {
  const { ids, mask } = m._sources(input, {}, 'input');
  const s = m._stepper(ids, mask);
  const count = { bounded: 0, exact: 0, ids: 0, full: 0 };
  if (exactOnly) {
    const { bounded, stepBounded, exact, ...rest } = s;
    return { stepper: rest, count, B: ids.shape[0] };
  }
  return {
    B: ids.shape[0],
    count,
    stepper: {
      ...s,
      stepBounded: (state, tokens, o) => {
        count.bounded++;
        const b = s.stepBounded(state, tokens, o);
        if (widen) for (let i = 0; i < b.upper.length; i++) b.upper[i] += widen;  // bounds that decide nothing
        if (nanAt >= 0 && count.bounded === 2) b.lower[nanAt] = NaN;
        return b;
      },
      exact: (state, row, list) => {
        count.exact++;
        count.ids += list.length;
        if (list.length === m.outputVocabSize) count.full++;
        return s.exact(state, row, list);
      },
    },
  };
}

async function greedy(m, input, options, how) {
  const { stepper, count, B } = stepperOf(m, input, how);
  const r = await generateSeq2Seq(stepper, m._settings(options), { batchSize: B });
  return { sequences: rows(r), count };
}

for (const f of x.folders) {
  if (!f.generate) continue;
  test(`${f.folder}: the bounded pass gives transformers' greedy sequences, and the exact path's`, async (t) => {
    const m = await aw.loadModel(join(DIR, f.folder), { boundedHead: true });
    try {
      const inp = f.generate_inputs;
      let steps = 0, exactIds = 0, rowsChosen = 0;
      for (const c of f.generate) {
        if ((c.kwargs.num_beams ?? 1) !== 1) continue;
        const o = optionsOf(c.kwargs);
        const batch = { inputIds: ints(inp.input_ids), attentionMask: ints(inp.attention_mask) };
        const got = await greedy(m, batch, o);
        assert.deepEqual(got.sequences, c.batch.sequences, `${c.name}: the padded batch`);
        const plain = await greedy(m, batch, o, { exactOnly: true });
        assert.deepEqual(got.sequences, plain.sequences, `${c.name}: the exact path`);
        assert.equal(plain.count.bounded, 0);
        for (const [i, src] of inp.sources.entries()) {
          const one = await greedy(m, { inputIds: ints([src]) }, o);
          assert.deepEqual(one.sequences, c.single[i].sequences, `${c.name}: source ${i}`);
        }
        // And with renormalize_logits (LogitNormalization: the 'shift' processor) on.
        const norm = await greedy(m, batch, { ...o, renormalizeLogits: true });
        assert.deepEqual(norm.sequences, (await greedy(m, batch, { ...o, renormalizeLogits: true }, { exactOnly: true })).sequences, `${c.name}: renormalized`);
        steps += got.count.bounded;
        exactIds += got.count.ids;
        rowsChosen += got.count.exact;
        assert.equal(got.count.full, 0, `${c.name}: every row decided by its candidates`);
      }
      assert.ok(steps > 0, 'the bounded pass ran');
      t.diagnostic(`candidates: ${exactIds} exact ids over ${rowsChosen} rows`);
      // Candidates, not the vocabulary: a row's exact logits are a few ids of its V.
      assert.ok(exactIds / rowsChosen < m.outputVocabSize / 4, `${exactIds} exact ids over ${rowsChosen} rows (V ${m.outputVocabSize})`);
    } finally {
      m.dispose();
    }
  });
}

test('bounds that decide nothing, or a NaN, take the row\'s exact logits whole: the same tokens', async () => {
  const m = await aw.loadModel(join(DIR, 'marian'), { boundedHead: true });
  try {
    const inp = x.folders.find((f) => f.folder === 'marian').generate_inputs;
    const batch = { inputIds: ints(inp.input_ids), attentionMask: ints(inp.attention_mask) };
    const want = (await greedy(m, batch, { numBeams: 1, maxNewTokens: 10 }, { exactOnly: true })).sequences;
    // Marian's vocabulary here is under the 256-candidate cap: widened bounds make every id a candidate.
    const wide = await greedy(m, batch, { numBeams: 1, maxNewTokens: 10 }, { widen: 1e30 });
    assert.deepEqual(wide.sequences, want);
    // (all but the ids the processors mask: those have −inf bounds)
    assert.ok(wide.count.ids > wide.count.exact * m.outputVocabSize * 0.5, `ids computed exactly: ${JSON.stringify(wide.count)}, V ${m.outputVocabSize}`);
    const nan = await greedy(m, batch, { numBeams: 1, maxNewTokens: 10 }, { nanAt: 3 });
    assert.deepEqual(nan.sequences, want);
    assert.ok(nan.count.full >= 1, 'the NaN row took its exact logits whole');
  } finally {
    m.dispose();
  }
});

test('no bounded pass without boundedHead, for a q8 head, sampling or beam search', async () => {
  const q8 = await aw.loadModel(join(DIR, 't5'), { dtype: 'q8', boundedHead: true });
  const f32 = await aw.loadModel(join(DIR, 't5'), { boundedHead: true });
  const plain = await aw.loadModel(join(DIR, 't5'));
  try {
    const src = { inputIds: ints([x.folders.find((f) => f.folder === 't5').generate_inputs.sources[0]]) };
    assert.equal((await greedy(q8, src, { numBeams: 1, maxNewTokens: 5 })).count.bounded, 0);
    assert.equal((await greedy(f32, src, { numBeams: 1, maxNewTokens: 5, doSample: true, seed: 3 })).count.bounded, 0);
    assert.equal((await greedy(f32, src, { numBeams: 2, maxNewTokens: 5 })).count.bounded, 0);
    assert.ok((await greedy(f32, src, { numBeams: 1, maxNewTokens: 5 })).count.bounded > 0);
    // Beam search reads the float32 head itself: the same sequences and scores, bit for bit.
    const beams = { numBeams: 3, numReturnSequences: 2, maxNewTokens: 6 };
    const [b1, b2] = [await f32.generate(src, beams), await plain.generate(src, beams)];
    assert.deepEqual(rows(b1), rows(b2));
    assert.deepEqual(Array.from(b1.scores), Array.from(b2.scores));
    assert.equal(f32.boundedHead, true);
    assert.equal(q8.boundedHead, false, 'a q8 head keeps no copy');
    assert.equal(plain.boundedHead, false);
    // Without boundedHead, the head is the float32 panels: no bounded pass.
    const { ids } = plain._sources(src, {}, 'input');
    const s = plain._stepper(ids, null), st = s.begin(1, 8);
    try { assert.equal(s.bounded(st), false); } finally { s.free(st); }
    assert.equal((await greedy(plain, src, { numBeams: 1, maxNewTokens: 5 })).count.bounded, 0);
    await assert.rejects(aw.loadModel(join(DIR, 't5'), { boundedHead: 1 }), { name: 'TypeError', message: 'boundedHead: expected a boolean, got number' });
    // Another family refuses it by name, and the module goes on.
    const bert = fileURLToPath(new URL('../data/goldens/encoders/bert_cls_norm_lower/', import.meta.url));
    await assert.rejects(aw.loadModel(bert, { boundedHead: true }), { code: 'ERR_INVALID_ARGUMENT', message: /^boundedHead: only an encoder-decoder translator takes boundedHead \(a q8 copy of a float32 head for greedy bounds\); this checkpoint is an encoder/ });
    (await aw.loadModel(bert)).dispose();
  } finally {
    q8.dispose();
    f32.dispose();
    plain.dispose();
  }
});

test('the native calls name what is wrong, and the model keeps working', async () => {
  const m = await aw.loadModel(join(DIR, 'bart'), { dtype: 'q8', boundedHead: true });
  const f = await aw.loadModel(join(DIR, 'bart'), { boundedHead: true });
  try {
    for (const [model, bounded] of [[m, false], [f, true]]) {
      const { ids } = model._sources({ inputIds: ints([[0, 5, 6, 2]]) }, {}, 'input');
      const s = model._stepper(ids, null);
      const st = s.begin(1, 8);
      try {
        assert.equal(s.bounded(st), bounded);
        const one = Int32Array.of(2);
        assert.throws(() => s.exact(st, 0, Int32Array.of(1)), /exact: no bounded step to complete/);
        if (!bounded) {
          assert.throws(() => s.stepBounded(st, one), /bounded: one token per row and a float32 head only/);
          continue;
        }
        const b = s.stepBounded(st, one);
        assert.throws(() => s.exact(st, 1, Int32Array.of(1)), { name: 'RangeError', message: 'row (of the last step): expected an integer in [0, 0], got 1' });
        assert.throws(() => s.exact(st, 0, Int32Array.of(3, model.outputVocabSize)), { name: 'RangeError', message: `exact (token ids): expected an integer in [0, ${model.outputVocabSize - 1}], got ${model.outputVocabSize}` });
        const e = s.exact(st, 0, Int32Array.of(0, 7));
        for (const [j, id] of [0, 7].entries()) assert.ok(b.lower[id] <= e[j] && e[j] <= b.upper[id], `id ${id}`);
      } finally {
        s.free(st);
      }
    }
    // Still working: a greedy run gives the golden batch sequences.
    const g = x.folders.find((q) => q.folder === 'bart');
    const c = g.generate.find((q) => q.name === 'greedy');
    const r = await f.generate({ inputIds: ints(g.generate_inputs.input_ids), attentionMask: ints(g.generate_inputs.attention_mask) }, optionsOf(c.kwargs));
    assert.deepEqual(rows(r), c.batch.sequences);
  } finally {
    m.dispose();
    f.dispose();
  }
});
