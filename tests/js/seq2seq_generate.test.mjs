// Seq2seq generation's search (bindings/seq2seq_generate.js, logits_process.js, torch_f32.js) against transformers
// v4.40.2's own generate() on a toy encoder–decoder whose logits JS recomputes bit for bit (goldens:
// tests/data/make_seq2seq_search_goldens.py): sequences exactly, sequences_scores within 1e-5, and the settings
// generate() ran with; torch.topk's tie order, log_softmax / softmax's float32 bits and the warpers against torch;
// streaming, sampling's determinism, the state freed on every path, aborts, and errors that name the option.
// No wasm build needed: the stepper is plain JS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  resolveGenerationConfig, generateSeq2Seq, streamSeq2Seq, SEQ2SEQ_OPTIONS, topkLargest, logSoftmaxF32, softmaxF32,
  logitsWarpers,
} from '../../bindings/seq2seq_generate.js';
import { topkLargestShifted } from '../../bindings/torch_f32.js';

const golden = JSON.parse(readFileSync(new URL('../data/goldens/seq2seq_search.json', import.meta.url), 'utf8'));
const fround = Math.fround;
const err = (fn, expected) => assert.throws(fn, expected);

/**
 * The goldens' toy decoder as a stepper: logits = (A[src, last % R] + B[t - 1]) + C[prev % R], float32 adds in
 * that order (the C term from the second position on). Counts begin/free calls; `hooks.onStep(n)` runs before the
 * n-th step (it may throw, or abort a controller).
 */
function toyStepper(name, sources, hooks = {}) {
  const m = golden.models[name];
  const { V, R } = m;
  const A = Float32Array.from(m.A.flat(2)), B = Float32Array.from(m.B.flat()), C = Float32Array.from(m.C.flat());
  const stats = { begun: 0, freed: 0, steps: 0, live: new Set() };
  const stepper = {
    vocabSize: V,
    stats,
    begin(rows, capacity) {
      assert.equal(rows % sources.length, 0, 'rows: a whole number per source');
      const k = rows / sources.length;
      const st = { capacity, k, src: Int32Array.from({ length: rows }, (_, r) => sources[Math.floor(r / k)]), hist: Array.from({ length: rows }, () => []) };
      stats.begun++;
      stats.live.add(st);
      return st;
    },
    step(st, tokens) {
      assert.ok(stats.live.has(st), 'step on a live state');
      hooks.onStep?.(++stats.steps, st);
      const rows = st.hist.length, out = new Float32Array(rows * V);
      for (let r = 0; r < rows; r++) {
        const h = st.hist[r];
        h.push(tokens[r]);
        assert.ok(h.length <= st.capacity, 'within the capacity');
        const t = h.length, last = h[t - 1] % R, prev = t >= 2 ? h[t - 2] % R : -1;
        for (let v = 0; v < V; v++) {
          let x = fround(A[(st.src[r] * R + last) * V + v] + B[(t - 1) * V + v]);
          if (prev >= 0) x = fround(x + C[prev * V + v]);
          out[r * V + v] = x;
        }
      }
      return out;
    },
    reorder(st, parents) {
      assert.ok(stats.live.has(st), 'reorder on a live state');
      assert.ok(parents.every((p, r) => st.src[p] === st.src[r]), 'parents of the same source');
      st.hist = Array.from(parents, (p) => st.hist[p].slice());
    },
    // hooks.keep: the optional keep(state, places) — the state keeps those of its sources (ascending places).
    keep: hooks.keep ? (st, places) => {
      assert.ok(stats.live.has(st), 'keep on a live state');
      const held = st.hist.length / st.k;
      assert.ok(places instanceof Int32Array && places.length >= 1 && places.length < held, `keep: 1 … ${held - 1} places, got ${places.length}`);
      places.forEach((p, i) => assert.ok(p >= (i ? places[i - 1] + 1 : 0) && p < held, 'keep: ascending places of held sources'));
      const rows = Array.from(places, (p) => Array.from({ length: st.k }, (_, j) => p * st.k + j)).flat();
      st.src = Int32Array.from(rows, (r) => st.src[r]);
      st.hist = rows.map((r) => st.hist[r]);
      stats.kept = (stats.kept ?? 0) + 1;
    } : undefined,
    free(st) {
      assert.ok(stats.live.has(st), 'freed once');
      stats.live.delete(st);
      stats.freed++;
    },
  };
  return stepper;
}

const asList = (v) => (v === null ? null : Array.isArray(v) ? v : [v]);

for (const c of golden.cases) {
  test(`golden: ${c.name}`, async () => {
    const s = resolveGenerationConfig(c.generation_config, c.config, c.options);
    const stepper = toyStepper(c.model, c.sources);
    const inputs = { batchSize: c.sources.length };
    if (c.decoder_input_ids) inputs.decoderInputIds = c.decoder_input_ids;
    const { sequences, scores } = await generateSeq2Seq(stepper, s, inputs);

    // the settings generate() ran with
    const r = c.resolved, prompt = c.decoder_input_ids;
    const promptLength = !prompt ? 1 : prompt[0].length + (prompt.every((p) => p[0] !== s.decoderStartTokenId) ? 1 : 0);
    assert.equal(s.maxNewTokens !== null ? s.maxNewTokens + promptLength : s.maxLength, r.max_length, 'max_length');
    assert.equal(s.minNewTokens !== null ? s.minNewTokens + promptLength : s.minLength, r.min_length, 'min_length');
    assert.equal(s.numBeams, r.num_beams);
    assert.equal(s.doSample, r.do_sample);
    assert.equal(s.earlyStopping, r.early_stopping);
    assert.equal(s.lengthPenalty, r.length_penalty);
    assert.equal(s.numReturnSequences, r.num_return_sequences);
    assert.equal(s.noRepeatNgramSize, r.no_repeat_ngram_size);
    assert.equal(s.repetitionPenalty, r.repetition_penalty);
    assert.deepEqual(s.badWordsIds, r.bad_words_ids);
    assert.equal(s.forcedBosTokenId, r.forced_bos_token_id);
    assert.deepEqual(s.forcedEosTokenIds, asList(r.forced_eos_token_id));
    assert.deepEqual(s.eosTokenIds, asList(r.eos_token_id));
    assert.equal(s.padTokenId, r.pad_token_id);
    assert.equal(s.decoderStartTokenId, r.decoder_start_token_id ?? r.bos_token_id);

    assert.deepEqual(sequences.map((x) => [...x]), c.sequences, 'sequences');
    if (c.sequences_scores === null) assert.equal(scores, null);
    else {
      assert.equal(scores.length, c.sequences_scores.length);
      scores.forEach((x, i) => assert.ok(Math.abs(x - c.sequences_scores[i]) <= 1e-5, `sequences_scores[${i}]: ${x} vs ${c.sequences_scores[i]}`));
    }
    assert.equal(stepper.stats.begun, 1);
    assert.equal(stepper.stats.freed, 1, 'the state freed once');
  });
}

test('golden: sequences_scores are bit-exact (float32) in every beam case', async () => {
  let cases = 0;
  for (const c of golden.cases.filter((x) => x.sequences_scores)) {
    const s = resolveGenerationConfig(c.generation_config, c.config, c.options);
    const inputs = { batchSize: c.sources.length, ...(c.decoder_input_ids ? { decoderInputIds: c.decoder_input_ids } : {}) };
    const { scores } = await generateSeq2Seq(toyStepper(c.model, c.sources), s, inputs);
    assert.deepEqual([...scores], c.sequences_scores.map(fround), c.name);
    cases++;
  }
  assert.ok(cases > 60, `${cases} beam cases`);
});

test('golden: a stepper that fills the search\'s buffer (into) gives every case the same sequences and scores', async () => {
  for (const c of golden.cases) {
    const s = resolveGenerationConfig(c.generation_config, c.config, c.options);
    const inputs = { batchSize: c.sources.length, ...(c.decoder_input_ids ? { decoderInputIds: c.decoder_input_ids } : {}) };
    const inner = toyStepper(c.model, c.sources);
    let buffer = null, steps = 0;
    const filling = {
      ...inner,
      step(st, tokens, o) {
        const out = inner.step(st, tokens);
        assert.ok(o?.into instanceof Float32Array && o.into.length === out.length, 'into: the run\'s (rows, vocab) buffer');
        if (buffer === null) buffer = o.into;
        assert.equal(o.into, buffer, 'one buffer, reused every step');
        o.into.fill(NaN).set(out);
        steps++;
        return o.into;
      },
    };
    const want = await generateSeq2Seq(toyStepper(c.model, c.sources), s, inputs);
    const got = await generateSeq2Seq(filling, s, inputs);
    assert.deepEqual(got.sequences.map((q) => [...q]), want.sequences.map((q) => [...q]), c.name);
    assert.deepEqual(got.scores && [...got.scores], want.scores && [...want.scores], c.name);
    assert.ok(steps > 0, c.name);
  }
});

test('golden: a stepper that drops the sources the search is done with (keep) gives every case the same sequences and scores', async () => {
  let dropped = 0, saved = 0;
  for (const c of golden.cases) {
    const s = resolveGenerationConfig(c.generation_config, c.config, c.options);
    const inputs = { batchSize: c.sources.length, ...(c.decoder_input_ids ? { decoderInputIds: c.decoder_input_ids } : {}) };
    const rowsStepped = (stepper) => {
      let n = 0;
      return { stepper: { ...stepper, step(st, tokens, o) { n += tokens.length; return stepper.step(st, tokens, o); } }, rows: () => n };
    };
    const plain = rowsStepped(toyStepper(c.model, c.sources));
    const inner = toyStepper(c.model, c.sources, { keep: true });
    const keeping = rowsStepped(inner);
    const want = await generateSeq2Seq(plain.stepper, s, inputs);
    const got = await generateSeq2Seq(keeping.stepper, s, inputs);
    assert.deepEqual(got.sequences.map((q) => [...q]), want.sequences.map((q) => [...q]), c.name);
    assert.deepEqual(got.scores && [...got.scores], want.scores && [...want.scores], c.name);
    assert.equal(inner.stats.freed, 1, c.name);
    if (c.sources.length === 1) assert.equal(inner.stats.kept, undefined, `${c.name}: one source, nothing to drop`);
    dropped += inner.stats.kept ?? 0;
    saved += plain.rows() - keeping.rows();
    assert.ok(keeping.rows() <= plain.rows(), c.name);
    assert.equal(keeping.rows() < plain.rows(), (inner.stats.kept ?? 0) > 0, `${c.name}: fewer rows stepped exactly when a source left`);
  }
  assert.ok(dropped >= 2 && saved > 0, `the goldens' batches finish at different steps: ${dropped} drops, ${saved} rows fewer`);
});

// ---- torch_f32.js against torch -----------------------------------------------------------------------------------

function lcgInts(seed, n, m, every, nanAt) {
  let x = seed;
  return Float32Array.from({ length: n }, (_, i) => {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    let v = (x >> 16) % m;
    if (every && (x >> 8) % every === 0) v = -Infinity;
    if (nanAt.includes(i)) v = NaN;
    return v;
  });
}

function lcgFloats(seed, n, scale) {
  let x = seed;
  return Float32Array.from({ length: n }, () => {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    return ((x >> 8) / 8388608 - 0.5) * scale;
  });
}

test('topkLargest: torch.topk\'s indices, ties (and NaN, -inf) in torch\'s order, both of its paths', () => {
  let partial = 0;
  for (const t of golden.topk) {
    const row = lcgInts(t.seed, t.n, t.m, t.every, t.nan_at);
    const { indices, values } = topkLargest(row, t.k);
    assert.deepEqual([...indices], t.indices, `n ${t.n} k ${t.k} m ${t.m} seed ${t.seed}`);
    assert.deepEqual([...values], t.indices.map((i) => row[i]));
    partial += t.k * 64 <= t.n;
  }
  assert.ok(partial > 20 && partial < golden.topk.length, 'rows of both paths');
  assert.throws(() => topkLargest(new Float32Array(3), 4), RangeError);
  assert.deepEqual([...topkLargest(Float32Array.of(1, 2), 0).indices], []);
});

test('topkLargestShifted: topkLargest of the rows plus their beam scores, ties and NaN included, without writing them', () => {
  let checked = 0;
  for (const t of golden.topk) {
    const x = Float32Array.from(lcgInts(t.seed, t.n, t.m, t.every, t.nan_at));
    for (const rows of [1, 2, 3, 4]) {
      if (t.n % rows) continue;
      const rowLen = t.n / rows;
      // integer shifts keep integer ties across rows; -1e9 is a fresh beam's score; 0.5 makes new values; infinities, NaN
      for (const add of [Float32Array.from({ length: rows }, (_, r) => r % 2), Float32Array.from({ length: rows }, (_, r) => (r ? -1e9 : 0)), Float32Array.from({ length: rows }, (_, r) => 0.5 * r - 1), Float32Array.from({ length: rows }, (_, r) => [3, -Infinity, Infinity, NaN][r])]) {
        const before = x.slice();
        const y = Float32Array.from(x, (v, i) => fround(v + add[Math.floor(i / rowLen)]));
        const want = topkLargest(y, t.k), got = topkLargestShifted(x, rowLen, add, t.k);
        assert.deepEqual([...got.indices], [...want.indices], `n ${t.n} k ${t.k} rows ${rows} add ${[...add]}`);
        assert.deepEqual([...got.values], [...want.values]);
        assert.deepEqual(x, before, 'x is not written');
        checked++;
      }
    }
  }
  assert.ok(checked > 80, `${checked} cases`);
});

test('logSoftmaxF32 and softmaxF32: torch 1.13\'s float32 bits (Sleef exp/log, 8 lanes then a tree)', () => {
  for (const t of golden.softmax) {
    const x = lcgFloats(t.seed, t.n, t.scale);
    if (t.n > 20) for (let i = 0; i < t.n; i += 7) x[i] = -Infinity;
    let am = 0;
    for (let i = 1; i < t.n; i++) if (x[i] > x[am]) am = i;
    const y = logSoftmaxF32(x, t.n, new Float32Array(t.n));
    assert.equal(-y[am], t.logsum, `log-sum, n ${t.n} scale ${t.scale}`);
    for (let i = 0; i < t.n; i++) assert.equal(y[i], fround(fround(x[i] - x[am]) - t.logsum));
    const p = softmaxF32(x, t.n);
    assert.equal(p[am], t.inv, `1 / sum, n ${t.n} scale ${t.scale}`);
  }
  // in place, several rows
  const rows = lcgFloats(7, 3 * 40, 5), copy = rows.slice();
  logSoftmaxF32(rows, 40);
  for (let r = 0; r < 3; r++) assert.deepEqual(rows.subarray(r * 40, r * 40 + 40), logSoftmaxF32(copy.subarray(r * 40, r * 40 + 40), 40, new Float32Array(40)));
});

test('logitsWarpers: Temperature, TopK and TopP as transformers\' warpers compute them', () => {
  const base = { temperature: 1, topK: null, topP: 1 };
  for (const w of golden.warpers) {
    const x = lcgFloats(w.seed, w.n, w.scale);
    const s = { ...base, [{ temperature: 'temperature', top_k: 'topK', top_p: 'topP' }[w.kind]]: w.arg };
    const warpers = logitsWarpers(s);
    assert.equal(warpers.length, 1);
    const y = x.slice();
    warpers[0].apply(new Int32Array(0), 0, y);
    if (w.kind === 'temperature') assert.deepEqual([...y], w.out.map(fround), `${w.kind} ${w.arg}`);
    else {
      const removed = [];
      y.forEach((v, i) => { if (v === -Infinity) removed.push(i); else assert.equal(v, x[i]); });
      assert.deepEqual(removed, w.removed, `${w.kind} ${w.arg} n ${w.n}`);
    }
  }
});

// ---- streaming and sampling -----------------------------------------------------------------------------------

const collect = async (g) => { const out = []; for await (const t of g) out.push(t); return out; };
const settingsOf = (options, config = { pad_token_id: 0, eos_token_id: 1, bos_token_id: 2, decoder_start_token_id: 2 }) =>
  resolveGenerationConfig(null, config, options);
/** Settings of a model without an eos id: generation runs to maxLength. */
const endless = (options) => resolveGenerationConfig(null, { pad_token_id: 0, decoder_start_token_id: 2 }, options);

test('streamSeq2Seq: the tokens generateSeq2Seq puts after the start token; eos ends it (not yielded); maxLength', async () => {
  for (const src of [0, 1, 2]) {
    for (const maxLength of [4, 20]) {
      const s = settingsOf({ maxLength });
      const [want] = (await generateSeq2Seq(toyStepper('rand', [src]), s)).sequences;
      const stepper = toyStepper('rand', [src]);
      const g = streamSeq2Seq(stepper, s);
      const tokens = await collect(g);
      assert.deepEqual(tokens.map((t) => t.index), tokens.map((_, i) => i));
      assert.deepEqual([...g.sequence], [...want]);
      const endsOnEos = want[want.length - 1] === 1;
      assert.deepEqual([2, ...tokens.map((t) => t.id), ...(endsOnEos ? [1] : [])], [...want]);
      assert.deepEqual(g.ids, tokens.map((t) => t.id));
      assert.equal(g.stopReason, endsOnEos ? 'stop' : 'length');
      assert.equal(stepper.stats.freed, 1);
      assert.deepEqual(await g.next(), { done: true, value: undefined });
    }
  }
});

test('streamSeq2Seq: break frees the state; an abort ends it with stopReason aborted; a step\'s error is rethrown', async () => {
  let stepper = toyStepper('rand', [2]);
  let g = streamSeq2Seq(stepper, endless({ maxLength: 30 }));
  for await (const t of g) if (t.index === 2) break;
  assert.equal(g.stopReason, 'aborted');
  assert.equal(stepper.stats.freed, 1);

  const ac = new AbortController();
  stepper = toyStepper('rand', [2], { onStep: (n) => { if (n === 3) ac.abort(); } });
  g = streamSeq2Seq(stepper, endless({ maxLength: 30, signal: ac.signal }));
  const got = await collect(g);
  assert.equal(g.stopReason, 'aborted');
  assert.equal(got.length, 3, 'the token of the step that aborted is still given');
  assert.equal(stepper.stats.freed, 1);

  stepper = toyStepper('rand', [2], { onStep: (n) => { if (n === 4) throw new Error('step failed'); } });
  g = streamSeq2Seq(stepper, endless({ maxLength: 30 }));
  await assert.rejects(collect(g), /step failed/);
  assert.equal(g.stopReason, 'error');
  assert.equal(stepper.stats.freed, 1);

  stepper = toyStepper('rand', [2]);
  g = streamSeq2Seq(stepper, settingsOf({ maxLength: 30 }));
  await g.return();
  assert.equal(stepper.stats.begun, 0, 'nothing begun before the first next()');
  assert.throws(() => streamSeq2Seq(toyStepper('rand', [0]), settingsOf({ numBeams: 2 })), { name: 'RangeError', message: /^numBeams: streaming/ });
  assert.throws(() => streamSeq2Seq(toyStepper('rand', [0]), settingsOf({}), { batchSize: 2 }), { name: 'TypeError', message: /unknown option 'batchSize'/ });
});

test('sampling: a seed gives the same tokens every time, another seed others; topK 1 is greedy; a source\'s draws do not depend on the batch', async () => {
  const run = async (options, sources = [0, 1, 2]) =>
    (await generateSeq2Seq(toyStepper('rand', sources), settingsOf({ doSample: true, maxLength: 20, ...options }), { batchSize: sources.length })).sequences.map((x) => [...x]);
  const a = await run({ seed: 7 });
  assert.deepEqual(await run({ seed: 7 }), a);
  assert.notDeepEqual(await run({ seed: 8 }), a);
  assert.deepEqual(await run({ seed: 9, topK: 1 }), await run({ doSample: false }));
  assert.deepEqual(await run({ seed: 9, topP: 0 }), await run({ doSample: false }), 'top_p 0 keeps the most probable alone');
  const alone = await run({ seed: 7 }, [1]);
  assert.deepEqual(alone[0].slice(0, a[1].length), a[1].slice(0, alone[0].length), 'source 1 alone draws what it drew in the batch');
  const four = await run({ seed: 7, numReturnSequences: 4 });
  assert.equal(four.length, 12);
  assert.ok(new Set(four.slice(0, 4).map(String)).size > 1, 'the rows of a source differ');
  // A stepper that drops finished sources (keep) draws the same tokens: each row keeps its own generator.
  for (const o of [{ seed: 7 }, { seed: 7, numReturnSequences: 4 }, { seed: 3, numReturnSequences: 2, maxLength: 12 }]) {
    const inner = toyStepper('rand', [0, 1, 2], { keep: true });
    const got = (await generateSeq2Seq(inner, settingsOf({ doSample: true, maxLength: 20, ...o }), { batchSize: 3 })).sequences.map((x) => [...x]);
    assert.deepEqual(got, await run(o), `keep, ${JSON.stringify(o)}`);
    assert.ok(inner.stats.kept >= 1, `keep, ${JSON.stringify(o)}: a source ended before the others and left`);
  }
  const streamed = await collect(streamSeq2Seq(toyStepper('rand', [0]), settingsOf({ doSample: true, maxLength: 20, seed: 7 })));
  assert.deepEqual([2, ...streamed.map((t) => t.id)], a[0].slice(0, streamed.length + 1));
});

test('sampling: the first token follows softmax(logits / temperature) (top-k 50 of 16: all)', async () => {
  const stepper = toyStepper('rand', [1]);
  const st = stepper.begin(1, 2);
  const logits = stepper.step(st, Int32Array.of(2));
  const p = softmaxF32(logits.map((x) => fround(x / fround(0.8))), 16);
  const counts = new Array(16).fill(0), n = 4000;
  for (let seed = 0; seed < n; seed++) {
    const { sequences } = await generateSeq2Seq(toyStepper('rand', [1]), settingsOf({ doSample: true, temperature: 0.8, maxNewTokens: 1, seed }));
    counts[sequences[0][1]]++;
  }
  counts.forEach((c, i) => assert.ok(Math.abs(c / n - p[i]) < 4.5 * Math.sqrt(p[i] * (1 - p[i]) / n) + 1e-3, `id ${i}: ${c / n} vs ${p[i]}`));
});

// ---- the state, aborts, the event loop --------------------------------------------------------------------------

test('the state is freed once: on a normal end, when step throws, on an abort; an abort before the start begins nothing', async () => {
  for (const options of [{ maxLength: 12 }, { numBeams: 4, maxLength: 12 }]) {
    let stepper = toyStepper('rand', [0, 1]);
    await generateSeq2Seq(stepper, settingsOf(options), { batchSize: 2 });
    assert.deepEqual([stepper.stats.begun, stepper.stats.freed], [1, 1]);

    const boom = new Error('the model failed');
    stepper = toyStepper('rand', [0, 1], { onStep: (n) => { if (n === 3) throw boom; } });
    await assert.rejects(generateSeq2Seq(stepper, settingsOf(options), { batchSize: 2 }), (e) => e === boom);
    assert.deepEqual([stepper.stats.begun, stepper.stats.freed], [1, 1]);

    const ac = new AbortController();
    stepper = toyStepper('rand', [0, 1], { onStep: (n) => { if (n === 2) ac.abort(); } });
    await assert.rejects(generateSeq2Seq(stepper, settingsOf({ ...options, signal: ac.signal }), { batchSize: 2 }), { name: 'AbortError' });
    assert.deepEqual([stepper.stats.begun, stepper.stats.freed, stepper.stats.steps], [1, 1, 2]);

    stepper = toyStepper('rand', [0, 1]);
    const reason = new Error('stopped before');
    await assert.rejects(generateSeq2Seq(stepper, settingsOf({ ...options, signal: AbortSignal.abort(reason) }), { batchSize: 2 }), (e) => e === reason);
    assert.equal(stepper.stats.begun, 0);
  }
  const bad = toyStepper('rand', [0]);
  bad.step = () => new Float32Array(3);
  await assert.rejects(generateSeq2Seq(bad, settingsOf({})), { code: 'ERR_SHAPE', message: /stepper\.step: expected a Float32Array of rows × vocabSize = 1 × 16/ });
  assert.equal(bad.stats.freed, 1);
});

test('the event loop gets a turn between steps (beam search and greedy)', async () => {
  for (const options of [{ numBeams: 5, maxLength: 30 }, { maxLength: 30 }]) {
    let turns = 0, running = true;
    const tick = () => { turns++; if (running) setImmediate(tick); };
    setImmediate(tick);
    await generateSeq2Seq(toyStepper('rand', [0, 1, 2]), endless(options), { batchSize: 3 });
    running = false;
    assert.ok(turns >= 20, `${turns} turns in 29 steps`);
  }
});

// ---- settings and their errors ------------------------------------------------------------------------------------

test('resolveGenerationConfig: defaults, the option table, null clears, files read as transformers reads them', () => {
  assert.equal(SEQ2SEQ_OPTIONS.length, 23);
  const s = resolveGenerationConfig(null, { decoder_start_token_id: 0, eos_token_id: 1 }, { seed: 5 });
  assert.deepEqual({ ...s }, {
    mode: 'greedy', maxLength: 20, maxNewTokens: null, minLength: 0, minNewTokens: null, numBeams: 1, lengthPenalty: 1,
    earlyStopping: false, numReturnSequences: 1, noRepeatNgramSize: 0, repetitionPenalty: 1, badWordsIds: null,
    forcedBosTokenId: null, forcedEosTokenIds: null, renormalizeLogits: false, decoderStartTokenId: 0, eosTokenIds: [1], stopTokenIds: [1], padTokenId: 1,
    doSample: false, temperature: 1, topK: 50, topP: 1, seed: 5, signal: null,
  });
  assert.ok(Object.isFrozen(s));
  assert.equal(resolveGenerationConfig(null, { bos_token_id: 4 }, {}).decoderStartTokenId, 4);
  // eosTokenId null: no eos for the processors, but the search still stops at the model's (transformers 4.40)
  const noEos = resolveGenerationConfig({ eos_token_id: 3, pad_token_id: 0, decoder_start_token_id: 0 }, null, { eosTokenId: null });
  assert.deepEqual([noEos.eosTokenIds, noEos.stopTokenIds, noEos.padTokenId], [null, [3], 0]);
  err(() => resolveGenerationConfig({ eos_token_id: 3, decoder_start_token_id: 0 }, null, { eosTokenId: null }),
    { code: 'ERR_INVALID_ARGUMENT', message: /^padTokenId: stopping at eos id 3 \(generation_config\.json eos_token_id\) needs a pad id/ });
  assert.equal(resolveGenerationConfig(null, { decoder_start_token_id: 0, eos_token_id: 1 }, { padTokenId: 3 }).padTokenId, 3);
  assert.equal(resolveGenerationConfig({ decoder_start_token_id: 0, max_new_tokens: 5 }, null, { maxNewTokens: null, maxLength: 9 }).maxNewTokens, null);
  const seeds = new Set(Array.from({ length: 5 }, () => resolveGenerationConfig(null, { bos_token_id: 0 }).seed));
  assert.ok(seeds.size > 1, 'a random seed when none is given');
  // keys of generation_config.json that transformers sets but generate() does not read are ignored
  assert.equal(resolveGenerationConfig({ decoder_start_token_id: 0, no_timestamps_token_id: 5, use_cache: false, output_scores: true }, null).mode, 'greedy');
});

test('resolveGenerationConfig: errors name the option (TypeError / RangeError with codes) or the file and field', () => {
  const cfg = { decoder_start_token_id: 0, eos_token_id: 1, pad_token_id: 0 };
  const opt = (o) => () => resolveGenerationConfig(null, cfg, o);
  err(opt({ numBeams: 0 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: 'numBeams: expected an integer >= 1, got 0' });
  err(opt({ numBeams: 2.5 }), { name: 'TypeError', code: 'ERR_INVALID_TYPE', message: 'numBeams: expected an integer, got 2.5' });
  err(opt({ numBeams: '4' }), { name: 'TypeError', code: 'ERR_INVALID_TYPE', message: 'numBeams: expected an integer, got "4"' });
  err(opt({ maxLength: 1 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: /^maxLength: expected an integer > 1/ });
  err(opt({ maxNewTokens: 0 }), { name: 'RangeError', message: 'maxNewTokens: expected an integer >= 1, got 0' });
  err(opt({ numBeams: 3, numReturnSequences: 4 }), { name: 'RangeError', message: 'numReturnSequences: expected at most numBeams (3), got 4' });
  err(opt({ numReturnSequences: 2 }), { name: 'RangeError', message: /^numReturnSequences: expected 1 with greedy search/ });
  err(opt({ earlyStopping: 'always' }), { name: 'RangeError', message: 'earlyStopping: expected true, false or \'never\', got "always"' });
  err(opt({ earlyStopping: 1 }), { name: 'TypeError', message: /^earlyStopping: / });
  err(opt({ lengthPenalty: NaN }), { name: 'RangeError', message: 'lengthPenalty: expected a finite number, got NaN' });
  err(opt({ repetitionPenalty: 0 }), { name: 'RangeError', message: /^repetitionPenalty: expected a number > 0/ });
  err(opt({ eosTokenId: 'x' }), { name: 'TypeError', message: /^eosTokenId: expected a token id, an array of token ids or null/ });
  err(opt({ eosTokenId: [1, -2] }), { name: 'RangeError', message: 'eosTokenId[1]: expected a token id >= 0, got -2' });
  err(opt({ eosTokenId: [] }), { name: 'RangeError', message: /^eosTokenId: expected a token id or a non-empty array/ });
  err(opt({ badWordsIds: [[]] }), { name: 'RangeError', message: 'badWordsIds[0]: expected a non-empty array of token ids, got []' });
  err(opt({ badWordsIds: [3] }), { name: 'TypeError', message: 'badWordsIds[0]: expected an array of token ids, got 3' });
  err(opt({ badWordsIds: [[1]] }), { name: 'RangeError', message: /^badWordsIds: expected a bad word other than \[eos\]/ });
  err(opt({ doSample: 1 }), { name: 'TypeError', message: 'doSample: expected a boolean, got 1' });
  err(opt({ doSample: true, temperature: 0 }), { name: 'RangeError', message: /^temperature: expected a number > 0 when sampling/ });
  err(opt({ doSample: true, topP: 1.5 }), { name: 'RangeError', message: /^topP: expected a number in \[0, 1\]/ });
  err(opt({ doSample: true, topK: -1 }), { name: 'RangeError', message: 'topK: expected an integer >= 0, got -1' });
  err(opt({ seed: 1.5 }), { name: 'TypeError', message: 'seed: expected an integer, got 1.5' });
  err(opt({ signal: {} }), { name: 'TypeError', message: 'signal: expected an AbortSignal, got Object' });
  err(opt({ num_beams: 2 }), { name: 'TypeError', message: /^generate options: unknown option 'num_beams' \(expected one of maxLength, / });
  err(opt('fast'), { name: 'TypeError', message: 'generate options: expected an object, got string' });
  err(opt({ doSample: true, numBeams: 4 }), { code: 'ERR_UNSUPPORTED', message: /^doSample: doSample with numBeams 4 asks for beam sampling/ });
  err(() => resolveGenerationConfig(null, {}, {}), { code: 'ERR_INVALID_ARGUMENT', message: /^decoderStartTokenId: neither decoder_start_token_id nor bos_token_id is set \(config\.json\)/ });
  err(() => resolveGenerationConfig([], cfg, {}), { name: 'TypeError', message: /^generationConfig: / });
  err(() => resolveGenerationConfig(null, 'x', {}), { name: 'TypeError', message: /^config: / });
  // values from the files
  err(() => resolveGenerationConfig({ ...cfg, num_beams: 0 }, null, {}), { name: 'AttnWasmError', code: 'ERR_INVALID_ARGUMENT', message: 'generation_config.json num_beams: expected an integer >= 1, got 0' });
  err(() => resolveGenerationConfig(null, { ...cfg, early_stopping: 'yes' }, {}), { code: 'ERR_INVALID_ARGUMENT', message: 'config.json early_stopping: expected true, false or \'never\', got "yes"' });
  err(() => resolveGenerationConfig({ ...cfg, decoder_start_token_id: [0, 0] }, null, {}), { code: 'ERR_UNSUPPORTED', message: /^generation_config\.json decoder_start_token_id: one id per source/ });
  err(() => resolveGenerationConfig({ ...cfg, suppress_tokens: [3] }, null, {}), { code: 'ERR_UNSUPPORTED', message: /^generation_config\.json suppress_tokens: \[3\] asks for SuppressTokensLogitsProcessor/ });
  err(() => resolveGenerationConfig({ ...cfg, num_beams: 4, num_beam_groups: 2, diversity_penalty: 0 }, null, {}), { code: 'ERR_UNSUPPORTED', message: /num_beam_groups: 2 asks for group beam search/ });
  err(() => resolveGenerationConfig({ ...cfg, penalty_alpha: 0.6, top_k: 4 }, null, {}), { code: 'ERR_UNSUPPORTED', message: /penalty_alpha: 0\.6 asks for contrastive search/ });
  // what does not take effect is not refused
  assert.equal(resolveGenerationConfig({ ...cfg, typical_p: 0.5, num_beam_groups: 2 }, null, {}).mode, 'greedy');
  assert.equal(resolveGenerationConfig({ ...cfg, temperature: 0, top_p: 7 }, null, {}).mode, 'greedy');
});

test('generateSeq2Seq: run-time errors (the vocabulary, the decoder prompt against maxLength, the stepper, the inputs)', async () => {
  const s = settingsOf({ maxLength: 4 });
  await assert.rejects(generateSeq2Seq(toyStepper('rand', [0]), s, { decoderInputIds: [2, 3, 4, 5] }),
    { name: 'RangeError', message: 'maxLength: expected a length past the decoder prompt\'s 4 tokens (start token included), got 4' });
  const { sequences } = await generateSeq2Seq(toyStepper('rand', [0]), settingsOf({ maxNewTokens: 2 }), { decoderInputIds: [3, 4] });
  assert.deepEqual([...sequences[0]].slice(0, 3), [2, 3, 4], 'the start token put first');
  assert.equal(sequences[0].length, 5, 'maxNewTokens counts from the prompt');
  await assert.rejects(generateSeq2Seq(toyStepper('rand', [0]), settingsOf({ eosTokenId: 16 })),
    { name: 'RangeError', message: 'eosTokenId: expected token ids in [0, 16) (the stepper\'s vocabSize), got 16' });
  await assert.rejects(generateSeq2Seq(toyStepper('rand', [0]), resolveGenerationConfig({ decoder_start_token_id: 2, forced_bos_token_id: 40 }, null)),
    { code: 'ERR_INVALID_ARGUMENT', message: 'generation_config.json forced_bos_token_id: expected token ids in [0, 16) (the stepper\'s vocabSize), got 40' });
  await assert.rejects(generateSeq2Seq(toyStepper('rand', [0]), s, { decoderInputIds: [2, 99] }), { name: 'RangeError', message: 'decoderInputIds[1]: expected a token id in [0, 16), got 99' });
  await assert.rejects(generateSeq2Seq(toyStepper('rand', [0, 1]), s, { batchSize: 2, decoderInputIds: [[2], [2, 3]] }), { name: 'RangeError', message: /one length/ });
  await assert.rejects(generateSeq2Seq(toyStepper('rand', [0]), s, { batchSize: 0 }), { name: 'RangeError', message: /^batchSize: / });
  await assert.rejects(generateSeq2Seq(toyStepper('rand', [0]), { ...s }), { name: 'TypeError', message: /^settings: expected resolveGenerationConfig\(\)'s result/ });
  await assert.rejects(generateSeq2Seq({ vocabSize: 16, begin() {}, step() {}, free() {} }, settingsOf({ numBeams: 2 })), { name: 'TypeError', message: 'stepper.reorder: expected a function, got undefined' });
  await assert.rejects(generateSeq2Seq({ ...toyStepper('rand', [0]), vocabSize: 0 }, s), { name: 'RangeError', message: /^stepper\.vocabSize: / });
  await assert.rejects(generateSeq2Seq(toyStepper('pos', [0]), settingsOf({ numBeams: 2, eosTokenId: new Array(12).fill(1) })),
    { name: 'RangeError', message: 'numBeams: beam search ranks 26 candidates per source, more than numBeams × vocabSize = 24' });
});
