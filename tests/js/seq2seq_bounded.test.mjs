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
import { logitsProcessors } from '../../bindings/logits_process.js';

const DIR = fileURLToPath(new URL('../data/goldens/seq2seq/', import.meta.url));
const x = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8'));
const aw = await init({ threads: 1 });
after(() => aw.close());

const rows = (r) => r.sequences.map((q) => Array.from(q));

/**
 * The model's stepper with its calls counted; `exactOnly` drops the bounded pass (the ordinary path). Faults, for
 * the way back to exact logits: `widen` makes every row's bounds decide nothing (every id a candidate: best −inf's
 * neighbour, all ids listed); `nanBest` gives the second step's first row a NaN best (the model's word for a NaN
 * bound); `tooMany` says that the second step's first row has more candidates than the cap.
 */
function stepperOf(m, input, { exactOnly = false, widen = false, nanBest = false, tooMany = false } = {}) {
  const { ids, mask } = m._sources(input, {}, 'input');
  const s = m._stepper(ids, mask);
  const count = { bounded: 0, steps: 0, exact: 0, ids: 0, full: 0, touched: 0 };
  if (exactOnly) {
    const { bounded, stepBounded, select, exact, ...rest } = s;
    return { stepper: rest, count, B: ids.shape[0] };
  }
  const V = m.outputVocabSize;
  return {
    B: ids.shape[0],
    count,
    stepper: {
      ...s,
      step: (state, tokens, o) => {
        count.steps++;
        return s.step(state, tokens, o);
      },
      stepBounded: (state, tokens) => {
        count.bounded++;
        return s.stepBounded(state, tokens);
      },
      select: (state, counts, exclude, cap) => {
        count.touched += exclude.length;
        const got = s.select(state, counts, exclude, cap);
        const first = got.find((g) => g !== null);
        if (widen) {
          assert.ok(V <= cap, 'a vocabulary under the cap');
          let at = 0;
          got.forEach((g, i) => {
            if (g === null) return;
            const mine = new Set(exclude.subarray(at, at + counts[i]));  // the row's excluded ids are not listed
            at += counts[i];
            g.best = -3e38;
            g.ids = Int32Array.from({ length: V }, (_, k) => k).filter((k) => !mine.has(k));
            g.found = g.ids.length;
            for (let j = 1; j < g.pairs.length; j += 2) g.pairs[j] = 3e38;
          });
        }
        if (nanBest && count.bounded === 2) first.best = NaN;
        if (tooMany && count.bounded === 2) first.found = cap + 1;
        return got;
      },
      exact: (state, row, list) => {
        count.exact++;
        count.ids += list.length;
        if (list.length === V) count.full++;
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
    const wide = await greedy(m, batch, { numBeams: 1, maxNewTokens: 10 }, { widen: true });
    assert.deepEqual(wide.sequences, want);
    // (all but the ids the processors mask: those have −inf bounds)
    assert.ok(wide.count.ids > wide.count.exact * m.outputVocabSize * 0.5, `ids computed exactly: ${JSON.stringify(wide.count)}, V ${m.outputVocabSize}`);
    for (const fault of [{ nanBest: true }, { tooMany: true }]) {
      const got = await greedy(m, batch, { numBeams: 1, maxNewTokens: 10 }, fault);
      assert.deepEqual(got.sequences, want, JSON.stringify(fault));
      assert.equal(got.count.full, 1, `${JSON.stringify(fault)}: that row took its exact logits whole`);
    }
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
        const none = new Int32Array(0), V = model.outputVocabSize;
        assert.throws(() => s.select(st, Int32Array.of(0), none, 8), /select: no bounded step/);
        assert.equal(s.stepBounded(st, one), undefined, 'the bounds stay in the state');
        // The bounds whole, from the exact logits' ids: every id's pair, no id listed as another's.
        const everyId = Int32Array.from({ length: V }, (_, k) => k);
        const [w] = s.select(st, Int32Array.of(V), everyId, 8);
        assert.equal(w.best, -Infinity);
        const b = { lower: Float32Array.from({ length: V }, (_, k) => w.pairs[2 * k]), upper: Float32Array.from({ length: V }, (_, k) => w.pairs[2 * k + 1]) };
        assert.throws(() => s.exact(st, 1, Int32Array.of(1)), { name: 'RangeError', message: 'row (of the last step): expected an integer in [0, 0], got 1' });
        assert.throws(() => s.exact(st, 0, Int32Array.of(3, V)), { name: 'RangeError', message: `exact (token ids): expected an integer in [0, ${V - 1}], got ${V}` });
        const e = s.exact(st, 0, Int32Array.of(0, 7));
        for (const [j, id] of [0, 7].entries()) assert.ok(b.lower[id] <= e[j] && e[j] <= b.upper[id], `id ${id}`);
        // select's refusals: one message that says what the request holds; the state keeps working.
        const malformed = { code: 'ERR_INVALID_ARGUMENT', message: 'select: expected [cap 0-4096, a count per row, the ids]' };
        for (const [counts, excl, cap] of [[[-1, -1], [], 8], [[2], [1], 8], [[1], [1, 2], 8], [[1], [V], 8], [[1], [-1], 8], [[-2], [], 8], [[0], [], 5000], [[0], [], -1], [[], [], 8]]) {
          assert.throws(() => s.select(st, Int32Array.from(counts), Int32Array.from(excl), cap), malformed, `${counts} ${excl} ${cap}`);
        }
        // What it gives: the best lower bound and the ids that reach it among the ids not excluded, the excluded
        // ids' bounds, and the state's bounds as they were (the excluded ones are masked during the scan only).
        const ref = (excl, cap) => {
          let best = -Infinity;
          for (let k = 0; k < V; k++) if (!excl.includes(k) && b.lower[k] > best) best = b.lower[k];
          const above = [];
          for (let k = 0; k < V; k++) if (!excl.includes(k) && b.upper[k] >= best) above.push(k);
          return { best, found: Math.min(above.length, cap + 1), ids: above.slice(0, cap), pairs: excl.flatMap((k) => [b.lower[k], b.upper[k]]) };
        };
        const order = Array.from({ length: V }, (_, k) => k).sort((p, q) => b.lower[q] - b.lower[p]);
        for (const [excl, cap] of [[[], 256], [[order[0]], 256], [[order[0], order[1], order[0]], 256], [[order[2]], 1], [[], 0]]) {
          const [g] = s.select(st, Int32Array.of(excl.length), Int32Array.from(excl), cap);
          const want = ref(excl, cap);
          assert.deepEqual({ best: g.best, found: g.found, ids: Array.from(g.ids), pairs: Array.from(g.pairs) }, want, `excluded ${excl}, cap ${cap}`);
        }
        const [again] = s.select(st, Int32Array.of(V), everyId, 8);
        assert.deepEqual(Array.from(again.pairs), Array.from(w.pairs), 'the bounds as they were');
        assert.deepEqual(s.select(st, Int32Array.of(-1), none, 8), [null]);
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

test('every elementwise processor names the scores apply() may change (touches): all it changes, or null', () => {
  const V = 40;
  let seed = 7;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  for (const penalty of [1.3, 0.7]) {
    const s = {
      repetitionPenalty: penalty, noRepeatNgramSize: 2, badWordsIds: [[7], [3, 4], [5, 6, 8], [V + 5]], eosTokenIds: [2],
      minNewTokens: 3, forcedBosTokenId: 9, forcedEosTokenIds: [2], renormalizeLogits: false,
    };
    const ps = logitsProcessors(s, { promptLength: 1, maxLength: 12, minLength: 4, vocabSize: V });
    const elementwise = ps.filter((p) => p.bounds === 'elementwise');
    assert.deepEqual(elementwise.map((p) => p.name), ['RepetitionPenaltyLogitsProcessor', 'NoRepeatNGramLogitsProcessor',
      'NoBadWordsLogitsProcessor', 'MinLengthLogitsProcessor', 'MinNewTokensLengthLogitsProcessor', 'ForcedBOSTokenLogitsProcessor',
      'ForcedEOSTokenLogitsProcessor']);
    const changedSome = new Set(), all = new Set();
    for (let trial = 0; trial < 400; trial++) {
      const len = 1 + (trial % 11);
      const ids = Int32Array.from({ length: 12 }, (_, i) => (i === 0 ? 0 : [3, 4, 5, 6, 7, 1][Math.floor(rand() * 6)]));
      for (const p of elementwise) {
        const scores = Float32Array.from({ length: V }, () => rand() * 20 - 10), before = scores.slice();
        const t = p.touches(ids, len);
        p.apply(ids, len, scores);
        if (t === null) { all.add(p.name); continue; }
        const may = new Set(Array.from(t));
        for (let k = 0; k < V; k++) {
          if (!Object.is(scores[k], before[k])) {
            assert.ok(may.has(k), `${p.name} (penalty ${penalty}) changed id ${k} at len ${len}, ids ${ids.subarray(0, len)}; touches ${[...may]}`);
            changedSome.add(p.name);
          }
        }
      }
    }
    // Each changed something in these rows (the check above was not vacuous), the forced ones on their steps.
    assert.deepEqual([...changedSome].sort(), elementwise.map((p) => p.name).filter((n) => !n.startsWith('Forced')).sort());
    assert.deepEqual([...all].sort(), ['ForcedBOSTokenLogitsProcessor', 'ForcedEOSTokenLogitsProcessor']);
  }
});

test('a forced token\'s step is an ordinary one (every logit exact), the other steps bounded: the exact path\'s tokens', async () => {
  const m = await aw.loadModel(join(DIR, 't5'), { boundedHead: true });
  try {
    const inp = x.folders.find((f) => f.folder === 't5').generate_inputs;
    const batch = { inputIds: ints(inp.input_ids), attentionMask: ints(inp.attention_mask) };
    // maxNewTokens 6 with the start token: max_length 7; forced BOS at the first step (len 1), forced EOS at len 6.
    const o = { numBeams: 1, maxNewTokens: 6, minNewTokens: 6, forcedBosTokenId: 7, forcedEosTokenId: 3, repetitionPenalty: 1.5, noRepeatNgramSize: 2 };
    const got = await greedy(m, batch, o);
    assert.deepEqual(got.sequences, (await greedy(m, batch, o, { exactOnly: true })).sequences);
    for (const row of got.sequences) assert.deepEqual([row[1], row[6]], [7, 3]);
    assert.equal(got.count.steps, 2, 'the forced steps');
    assert.equal(got.count.bounded, 4, 'the others');
    assert.ok(got.count.touched > 0, 'the repeated ids and the banned ones went to the search');
    assert.equal(got.count.full, 0);
  } finally {
    m.dispose();
  }
});
