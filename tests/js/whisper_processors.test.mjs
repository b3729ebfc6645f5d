// Whisper's logits processors (bindings/speech/whisper_processors.js) and torch's float32 logsumexp
// (bindings/speech/logsumexp_f32.js) against transformers v4.40.2 itself: tests/data/make_whisper_decode_goldens.py
// ran each processor on rows made by the LCG below (repeated here bit for bit) and recorded which ids became −inf;
// the rows are compared whole and exactly (Float32 bits), and the timestamp rule's two numbers (logsumexp of the
// timestamps' log-probs, the largest text log-prob) bit for bit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  suppressTokensProcessor, suppressTokensAtBeginProcessor, whisperTimestampProcessor, whisperLogitsProcessors,
} from '../../bindings/speech/whisper_processors.js';
import { logsumexpF32 } from '../../bindings/speech/logsumexp_f32.js';
import { logSoftmaxF32 } from '../../bindings/torch_f32.js';

const G = JSON.parse(readFileSync(new URL('../data/goldens/whisper_decode/goldens.json', import.meta.url), 'utf8'));
const V = G.V, TB = G.ids.timestamp_begin;
const bits = (x) => new Uint32Array(new Float32Array([x]).buffer)[0];

/** The golden script's row: 24 LCG bits as (k − 2^23) / 2^21, then `shift` added to the timestamps (float32). */
function row(seed, shift) {
  const out = new Float32Array(V);
  let s = seed & 0x7fffffff;
  for (let i = 0; i < V; i++) {
    s = (Math.imul(s, 1103515245) + 12345) & 0x7fffffff;
    out[i] = ((s >>> 7) & 0xffffff) / 2097152 - 4;
  }
  for (let i = TB; i < V; i++) out[i] = Math.fround(out[i] + shift);
  return out;
}

function build(c) {
  const p = c.params;
  if (c.kind === 'suppress') return suppressTokensProcessor(p.tokens);
  if (c.kind === 'begin_suppress') return suppressTokensAtBeginProcessor(p.tokens, p.begin_index);
  return whisperTimestampProcessor({
    noTimestampsTokenId: G.ids.notimestamps, eosTokenId: G.ids.eos, beginIndex: p.begin_index,
    maxInitialTimestampIndex: p.max_initial_timestamp_index,
  });
}

test('every processor case: the row after the processor equals transformers\' bit for bit', () => {
  let took = 0, left = 0;
  for (const c of G.processors) {
    const scores = row(c.seed, c.shift);
    const want = scores.slice();
    for (const [a, b] of c.masked) want.fill(-Infinity, a, b);
    build(c).apply(Int32Array.from(c.ids), c.ids.length, scores);
    const got = new Uint32Array(scores.buffer), exp = new Uint32Array(want.buffer);
    const bad = got.findIndex((x, i) => x !== exp[i]);
    assert.equal(bad, -1, `${c.kind} ${JSON.stringify(c.params)} ids ${c.ids} seed ${c.seed}: first difference at id ${bad}: ${scores[bad]} vs ${want[bad]}`);
    if (c.took === true) took++;
    if (c.took === false) left++;
  }
  assert.ok(took >= 10 && left >= 5, `the logsumexp rule both ways (${took} masked the text, ${left} did not)`);
});

test('the timestamp rule\'s logsumexp and largest text log-prob equal torch\'s float32 values bit for bit', () => {
  let n = 0;
  for (const c of G.processors.filter((x) => x.kind === 'timestamps')) {
    const pre = row(c.seed, c.shift);   // the row as rule 5 sees it: after rules 1-4
    whisperTimestampProcessor({
      noTimestampsTokenId: G.ids.notimestamps, eosTokenId: G.ids.eos, beginIndex: c.params.begin_index,
      maxInitialTimestampIndex: c.params.max_initial_timestamp_index, detectTimestampFromLogprob: false,
    }).apply(Int32Array.from(c.ids), c.ids.length, pre);
    const lp = logSoftmaxF32(pre, V, new Float32Array(V));
    const lse = logsumexpF32(lp, TB, V - TB);
    let m = -Infinity;
    for (let i = 0; i < TB; i++) if (lp[i] > m) m = lp[i];
    assert.equal(bits(lse), c.lse, `seed ${c.seed} shift ${c.shift}: logsumexp ${lse}`);
    assert.equal(bits(m), c.maxText, `seed ${c.seed} shift ${c.shift}: max text log-prob`);
    assert.equal(lse > m, c.took);
    n++;
  }
  assert.ok(n >= 30);
});

test('logsumexpF32: short runs, masked runs (max −inf: 0 used), a single value', () => {
  assert.equal(logsumexpF32(Float32Array.from([-Infinity, -Infinity, -Infinity]), 0, 3), -Infinity);
  assert.equal(logsumexpF32(Float32Array.from([2.5]), 0, 1), 2.5);
  assert.equal(logsumexpF32(Float32Array.from([0, 0, 0, 0]), 0, 4), Math.fround(Math.log(4)));
});

test('whisperLogitsProcessors: Whisper\'s list in _retrieve_logit_processors\' order; after the standard ones', () => {
  const config = { suppress_tokens: [1, 2], begin_suppress_tokens: [220, G.ids.eos], no_timestamps_token_id: G.ids.notimestamps, eos_token_id: G.ids.eos };
  for (const o of G.order.filter((x) => x.shortform)) {
    const names = whisperLogitsProcessors(config, { beginIndex: 3, returnTimestamps: o.settings.return_timestamps }).map((p) => p.name);
    assert.deepEqual(names, o.whisper);
    // generate() appends them to GenerationMixin's list: they follow every standard processor but LogitNormalization
    const first = o.full.indexOf(o.whisper[0]);
    assert.deepEqual(o.full.slice(first, first + names.length), names);
    assert.ok(o.full.slice(first + names.length).every((n) => n === 'LogitNormalization'));
  }
  const none = whisperLogitsProcessors({ no_timestamps_token_id: 5 }, { beginIndex: 3, returnTimestamps: false });
  assert.deepEqual(none, []);
  assert.throws(() => whisperLogitsProcessors({}, { beginIndex: 3, returnTimestamps: true }), /no_timestamps_token_id/);
});
