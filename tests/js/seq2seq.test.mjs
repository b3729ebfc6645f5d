// The hub's encoder–decoders (issue 40): Marian (shared, separate and old-style vocabularies), BART, mBART,
// M2M100 / NLLB, T5, T5 v1.1 and mT5 folders written by transformers v4.40.2 itself
// (tests/data/make_seq2seq_goldens.py), against transformers run in float64:
//   forward: encoder_last_hidden_state and teacher-forced logits on right-padded batches, within 1e-4 + 1e-4·|x|;
//   generate: sequences equal to transformers' generate() (greedy and beam search under the folder's
//     generation_config.json and each case's options: lengths, length penalties, early stopping, several returned
//     sequences, n-gram blocking, repetition penalty, forced first and last tokens, bad words), one source at a
//     time and as a padded batch; sequences_scores within 1e-4.
// Then what a user meets: errors by name with the model still working, the decoding state freed on every path
// (end, break, abort, error), the stream of one source, translate() with a tokenizer.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { ints, optionsOf } from './helpers.mjs';

const DIR = fileURLToPath(new URL('../data/goldens/seq2seq/', import.meta.url));
const x = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8'));
const aw = await init({ threads: 1 });
after(() => aw.close());


/** The worst |got − want| / (atol + rtol·|want|). */
function worst(got, want) {
  assert.equal(got.length, want.length);
  let w = 0;
  for (let i = 0; i < want.length; i++) w = Math.max(w, Math.abs(got[i] - want[i]) / (x.atol + x.rtol * Math.abs(want[i])));
  return w;
}

/** transformers' generate kwargs as Seq2SeqLM#generate options. */

/** A folder's goldens: its own, or those of the folder it must equal (marian_old: marian's). */
const goldensOf = (f) => (f.same_goldens_as ? x.folders.find((g) => g.folder === f.same_goldens_as) : f);

for (const f of x.folders) {
  const g = goldensOf(f);
  test(`${f.folder}: forward as transformers' ${f.class}`, async () => {
    const m = await aw.loadModel(join(DIR, f.folder));
    try {
      assert.ok(m instanceof aw.Seq2SeqLM);
      assert.equal(m.modelType, f.model_type);
      for (const c of g.forward) {
        const out = m.forward({ inputIds: ints(c.input_ids), attentionMask: ints(c.attention_mask), decoderInputIds: ints(c.decoder_input_ids) });
        assert.deepEqual(out.logits.shape, c.logits_shape, c.name);
        assert.deepEqual(out.encoderLastHiddenState.shape, c.encoder_shape, c.name);
        const wl = worst(out.logits.data, c.logits), wh = worst(out.encoderLastHiddenState.data, c.encoder_last_hidden_state);
        assert.ok(wl <= 1, `${c.name}: logits off by ${wl} tolerances`);
        assert.ok(wh <= 1, `${c.name}: encoder states off by ${wh} tolerances`);
      }
    } finally {
      m.dispose();
    }
  });

  if (!g.generate) continue;
  test(`${f.folder}: generate as transformers' generate()`, async () => {
    const m = await aw.loadModel(join(DIR, f.folder));
    try {
      const inp = g.generate_inputs;
      for (const c of g.generate) {
        const o = optionsOf(c.kwargs);
        const runs = [...inp.sources.map((src, i) => [`${c.name}, source ${i} alone`, { inputIds: ints([src]) }, c.single[i]]),
          [`${c.name}, the padded batch`, { inputIds: ints(inp.input_ids), attentionMask: ints(inp.attention_mask) }, c.batch]];
        for (const [what, input, run] of runs) {
          const gen = m.generate(input, o);
          let sequences, scores;
          if (typeof gen.then === 'function') ({ sequences, scores } = await gen);
          else {  // one source, greedy: the stream
            while (!(await gen.next()).done);
            sequences = [gen.sequence];
            scores = null;
          }
          assert.deepEqual(sequences.map((q) => Array.from(q)), run.sequences, `${what}: sequences`);
          if (run.sequences_scores === null) assert.equal(scores, null, what);
          else {
            assert.equal(scores.length, run.sequences_scores.length, what);
            scores.forEach((q, j) => assert.ok(Math.abs(q - run.sequences_scores[j]) <= 1e-4, `${what}: score ${j}: ${q} vs ${run.sequences_scores[j]}`));
          }
        }
      }
    } finally {
      m.dispose();
    }
  });
}

test('the layouts tested: an old save\'s tied copies and position tables; separate vocabularies', () => {
  const keys = (name) => Object.keys(x.folders.find((f) => f.folder === name).keys);
  for (const k of ['model.shared.weight', 'model.encoder.embed_tokens.weight', 'model.decoder.embed_tokens.weight', 'lm_head.weight',
    'model.encoder.embed_positions.weight', 'model.decoder.embed_positions.weight']) assert.ok(keys('marian_old').includes(k), k);
  assert.ok(!keys('marian').includes('model.encoder.embed_positions.weight') && !keys('marian').includes('lm_head.weight'));
  assert.ok(keys('marian_tied_dec').includes('model.decoder.embed_tokens.weight') && !keys('marian_tied_dec').includes('lm_head.weight'));
  assert.deepEqual(x.folders.find((f) => f.folder === 'marian_separate').keys['lm_head.weight'], [80, 16]);
});

test('the decoding state is freed: at the end, on break, on abort, on a step\'s error', async () => {
  const m = await aw.loadModel(join(DIR, 'marian'));
  try {
    const src = { inputIds: ints([[5, 6, 7, 8, 0]]) };
    await (await m.generate(src, { numBeams: 2, maxNewTokens: 4 }));  // warm: the allocator's first blocks
    const base = aw.memory().inUseBytes;
    await m.generate(src, { numBeams: 4, maxNewTokens: 6 });
    await m.generate({ inputIds: ints([[5, 6, 7, 0], [9, 10, 0, 95]]), attentionMask: ints([[1, 1, 1, 1], [1, 1, 1, 0]]) }, { numBeams: 1, maxNewTokens: 6 });
    const g = m.generate(src, { numBeams: 1, maxNewTokens: 8 });
    for await (const t of g) if (t.index === 1) break;
    assert.equal(g.stopReason, 'aborted');
    const ac = new AbortController();
    const p = m.generate(src, { numBeams: 3, maxNewTokens: 8, signal: ac.signal });
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
    // A step that fails (a target past max_position_embeddings): the state is freed with the error.
    await assert.rejects(m.generate(src, { numBeams: 2, maxLength: 200, minLength: 199 }), (e) => /decoder positions|maxLength/.test(e.message));
    assert.equal(aw.memory().inUseBytes, base, 'every decoding state freed');
  } finally {
    m.dispose();
  }
});

test('a step fills the search\'s buffer (into) with what a fresh array holds; its log-probabilities are log_softmax\'s', async () => {
  const m = await aw.loadModel(join(DIR, 'marian'));
  try {
    const st = m._stepper({ ...ints([[5, 6, 7, 8, 0]]), dtype: 'int32' }, null);
    const V = m.outputVocabSize, rows = 3;
    const a = st.begin(rows, 8), b = st.begin(rows, 8);
    try {
      const into = new Float32Array(rows * V).fill(NaN);
      const fresh = st.step(a, Int32Array.of(1, 2, 3));
      const got = st.step(b, Int32Array.of(1, 2, 3), { into });
      assert.equal(got, into, 'the buffer given is the one returned');
      assert.deepEqual(got, fresh);
      // log-probabilities: log_softmax in double of the same logits, within 3e-7 + an ulp (softmax.h f32_log_softmax)
      const lp = st.step(a, Int32Array.of(4, 5, 6), { logSoftmax: true, into });
      const logits = st.step(b, Int32Array.of(4, 5, 6));
      assert.equal(lp, into);
      for (let r = 0; r < rows; r++) {
        const row = logits.subarray(r * V, (r + 1) * V);
        const mx = Math.max(...row);
        let sum = 0;
        for (const v of row) sum += Math.exp(v - mx);
        const lse = mx + Math.log(sum);
        let total = 0;
        for (let j = 0; j < V; j++) {
          const want = row[j] - lse;
          assert.ok(Math.abs(lp[r * V + j] - want) <= 3e-7 + Math.abs(want) * 2 ** -23, `row ${r} token ${j}: ${lp[r * V + j]} vs ${want}`);
          total += Math.exp(lp[r * V + j]);
        }
        assert.ok(Math.abs(total - 1) < 1e-5, `row ${r} sums to ${total}`);
      }
      // renormalize_logits' native row (stepper.logSoftmaxRow, in place): log_softmax of the row again, the same bound
      const row = Float32Array.from(lp.subarray(0, V));
      row[3] = -Infinity;
      const masked = Float64Array.from(row);
      st.logSoftmaxRow(row);
      let msum = 0;
      for (const v of masked) msum += Math.exp(v);
      for (let j = 0; j < V; j++) {
        const want = masked[j] - Math.log(msum);
        assert.ok(j === 3 ? row[j] === -Infinity : Math.abs(row[j] - want) <= 3e-7 + Math.abs(want) * 2 ** -23, `renormalized token ${j}: ${row[j]} vs ${want}`);
      }
      // a buffer of another length is left alone: the step's own array
      const other = new Float32Array(V);
      const own = st.step(a, Int32Array.of(7, 8, 9), { into: other });
      assert.notEqual(own, other);
      assert.equal(own.length, rows * V);
      assert.ok(other.every((v) => v === 0));
    } finally {
      st.free(a);
      st.free(b);
    }
  } finally {
    m.dispose();
  }
});

test('generation encodes a padded batch\'s unmasked positions only, and its steps give forward()\'s logits', async () => {
  // Begin packs the unmasked rows (forward() computes every position, as transformers does): right padding, left
  // padding and a hole in the middle, on a post-norm, a pre-norm with final norms (M2M100: positions from the ids)
  // and a learned-position family with an embedding norm (BART). T5 packs only when each source's tokens are one
  // run (its relative positions): the batch with a hole runs unpacked, the other packed.
  const batches = [
    [[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [0, 0, 1, 1, 1, 1], [1, 1, 0, 0, 1, 1]],
    [[1, 1, 1, 1, 0, 0], [0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [1, 0, 0, 0, 0, 0]],
  ];
  for (const folder of ['marian', 'm2m100', 'bart', 't5']) for (const masks of batches) {
    const m = await aw.loadModel(join(DIR, folder));
    try {
      const V = m.outputVocabSize, B = masks.length, T = 4;
      const ids = ints(masks.map((row, b) => row.map((on, j) => (on ? 5 + 3 * b + j : m.padTokenId ?? 1))));
      const mask = ints(masks);
      const dec = ints(masks.map((_, b) => [m.decoderStartTokenId, 7 + b, 9, 11 + b]));
      const want = m.forward({ inputIds: ids, attentionMask: mask, decoderInputIds: dec }).logits.data;
      const st = m._stepper({ ...ids, dtype: 'int32' }, { ...mask, dtype: 'int32' });
      const state = st.begin(B, 8);
      try {
        for (let t = 0; t < T; t++) {
          const got = st.step(state, Int32Array.from({ length: B }, (_, b) => dec.data[b * T + t]));
          for (let b = 0; b < B; b++) {
            for (let v = 0; v < V; v++) {
              const w = want[(b * T + t) * V + v], g = got[b * V + v];
              assert.ok(Math.abs(g - w) <= 1e-5 + 1e-5 * Math.abs(w), `${folder} source ${b} step ${t} token ${v}: ${g} vs forward's ${w}`);
            }
          }
        }
      } finally {
        st.free(state);
      }
    } finally {
      m.dispose();
    }
  }
});

test('keep: the sources left in the state step on as forward() computes them; bad places are refused by name', async () => {
  // Generation drops the sources it is done with (stepper.keep; seq2seq_run.js LiveSources): their rows, cross keys
  // and values, mask and cache leave the state and the others move down. Two beams per source (the same tokens,
  // so both rows are the source's forward() row), masks with padding on either side and a hole (T5 then unpacked).
  const masks = [[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [0, 0, 1, 1, 1, 1], [1, 1, 0, 0, 1, 1]];
  for (const folder of ['marian', 'm2m100', 'bart', 't5']) {
    const m = await aw.loadModel(join(DIR, folder));
    try {
      const V = m.outputVocabSize, B = masks.length, T = 5, k = 2;
      const ids = ints(masks.map((row, b) => row.map((on, j) => (on ? 5 + 3 * b + j : m.padTokenId ?? 1))));
      const mask = ints(masks);
      const dec = ints(masks.map((_, b) => [m.decoderStartTokenId, 7 + b, 9, 11 + b, 4 + 2 * b]));
      const want = m.forward({ inputIds: ids, attentionMask: mask, decoderInputIds: dec }).logits.data;
      const st = m._stepper({ ...ids, dtype: 'int32' }, { ...mask, dtype: 'int32' });
      const state = st.begin(B * k, 8);
      try {
        // the state's sources after each step: all, then places 1 and 3 (sources 1, 3), then place 1 (source 3)
        const held = [[0, 1, 2, 3], [0, 1, 2, 3], [1, 3], [3], [3]];
        for (let t = 0; t < T; t++) {
          if (t === 2) st.keep(state, Int32Array.of(1, 3));
          if (t === 3) {
            for (const [bad, message] of [[Int32Array.of(1, 0), /sources\[1\] \(ascending\): expected an integer in \[2, 1\], got 0/],
              [Int32Array.of(2), /sources\[0\] \(ascending\): expected an integer in \[0, 1\], got 2/],
              [new Int32Array(0), /sources\.length: expected an integer in \[1, 2\], got 0/]]) {
              assert.throws(() => st.keep(state, bad), message, `${folder}: keep(${[...bad]})`);
            }
            st.keep(state, Int32Array.of(1));
          }
          const srcs = held[t];
          const got = st.step(state, Int32Array.from({ length: srcs.length * k }, (_, r) => dec.data[srcs[Math.floor(r / k)] * T + t]));
          assert.equal(got.length, srcs.length * k * V, `${folder} step ${t}: the kept sources' rows`);
          srcs.forEach((b, i) => {
            for (let j = 0; j < k; j++) {
              for (let v = 0; v < V; v++) {
                const w = want[(b * T + t) * V + v], g = got[(i * k + j) * V + v];
                assert.ok(Math.abs(g - w) <= 1e-5 + 1e-5 * Math.abs(w), `${folder} step ${t} source ${b} beam ${j} token ${v}: ${g} vs forward's ${w}`);
              }
            }
          });
        }
      } finally {
        st.free(state);
      }
    } finally {
      m.dispose();
    }
  }
});

test('bad input: a clear error naming it, and the model keeps working', async () => {
  const m = await aw.loadModel(join(DIR, 'marian'));
  try {
    const src = { inputIds: ints([[5, 6, 7, 0]]) };
    const want = await m.generate(src, { numBeams: 2, maxNewTokens: 5 });
    const cases = [
      [() => m.generate(src, { numBeams: 0 }), /numBeams: expected an integer >= 1, got 0/],
      [() => m.generate(src, { numBeams: 2, numReturnSequences: 3 }), /numReturnSequences/],
      [() => m.generate(src, { maxLength: 1 }), /maxLength/],
      [() => m.generate(src, { numBeams: 2, decoderInputIds: [95, 5, 6, 7], maxLength: 3 }), /maxLength: expected a length past the decoder prompt's 4 tokens \(start token included\), got 3/],
      [() => m.generate(src, { nmBeams: 2 }), /nmBeams/],
      [() => m.generate(src, { forcedBosTokenId: 96 }), /forcedBosTokenId|forced_bos_token_id/],
      [() => m.generate({ inputIds: ints([[5, 6, 96]]) }, { numBeams: 2 }), /inputIds: id 96/],
      [() => m.generate({ inputIds: ints([[5, 6, 7]]), attentionMask: ints([[0, 0, 0]]) }, { numBeams: 2 }), /attentionMask: row 0 has no 1/],
      [() => m.generate({ inputIds: ints([[5, 6, 7]]), attentionMask: ints([[1, 1]]) }), /attentionMask: expected the shape of inputIds/],
      [() => m.generate(42), /input: expected a text/],
      [() => m.generate('a text'), /no tokenizer/],
      [() => m.forward({ inputIds: ints([[5, 6]]) }), /decoderInputIds/],
      [() => m.forward({ inputIds: ints([[5, 6]]), decoderInputIds: ints([[95], [95]]) }), /decoderInputIds: expected \(1, tokens\)/],
      [() => m.forward({ inputIds: ints([[5, 6]]), decoderInputIds: ints([[95, 200]]) }), /decoderInputIds: id 200/],
      [() => m.forward({ inputIds: { data: new Int32Array(65 * 1).fill(5), shape: [1, 65] }, decoderInputIds: ints([[95]]) }), /inputIds.shape\[1\] \(tokens\): expected an integer in \[1, 64\]/],
      [() => m.forward({ inputIds: ints([[5, 6]]), decoderInputIds: { data: new Int32Array(65).fill(5), shape: [1, 65] } }), /decoderInputIds.shape\[1\] \(tokens\): expected an integer in \[1, 64\]/],
    ];
    for (const [fn, re] of cases) {
      await assert.rejects(async () => fn(), re);
    }
    assert.deepEqual(await m.generate(src, { numBeams: 2, maxNewTokens: 5 }), want, 'still works');
  } finally {
    m.dispose();
  }
  await assert.rejects(async () => m.generate({ inputIds: ints([[5]]) }), /Seq2SeqLM: used after dispose\(\)/);
});
