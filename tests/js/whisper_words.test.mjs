// Word-level timestamps (transcribe's returnTimestamps: 'word', generate's returnTokenTimestamps) against
// transformers v4.40.2 itself: tests/data/goldens/whisper/words.json and words.bin (make_whisper_word_goldens.py, run
// by make_whisper_goldens.py), on the random Whisper folders of whisper.test.mjs.
//   - the alignment heads' cross-attention under teacher forcing (the native AlignmentWeights) against transformers'
//     output_attentions, within the goldens' atol + rtol·|x| on S·p (p × 1500: the probabilities of a near-uniform
//     attention are ~1/1500, where a plain 1e-4 would pass anything);
//   - transformers' own weights of one call (words.bin) through the JS path give its token times exactly (the
//     warped matrix is checked bit for bit on constructed weights in whisper_decode.test.mjs);
//   - generate()'s token times and the pipeline's word chunks equal transformers' (one window, chunks with their
//     frames cropped, long-form, Chinese / Japanese / Cantonese split on unicode, beams as noted below).
// Random models attend nearly uniformly, so a float32 difference could flip a DTW choice: every golden case was
// checked stable (its token times unchanged under 1e-5 relative noise on the weights, 6 trials; `stable` in the
// goldens), and the tests below insist on it.
// Beams: transformers v4.40.2 takes beam search's cross-attention rows from the wrong steps (beam_indices not shifted
// by the decoder prompt; fixed in later releases), so its times for beams are not reproduced: attnwasm teacher-forces
// each returned row, and the goldens' beam cases hold transformers' own DTW on those rows (output / token_timestamps)
// beside what 4.40.2 gives (output_4_40_2 / token_timestamps_4_40_2), which the tests check differ.
// Also: a folder without alignment_heads is refused by name; bad arguments to the native call give clear errors and
// the model keeps working.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, cpSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { goldenSignal } from '../data/whisper_signals.mjs';
import { extractTokenTimestamps } from '../../bindings/speech/token_timestamps.js';

const plain = (v) => JSON.parse(JSON.stringify(v));
const DIR = fileURLToPath(new URL('../data/goldens/whisper/', import.meta.url));
const X = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8'));
const W = JSON.parse(readFileSync(join(DIR, 'words.json'), 'utf8'));
const BIN = readFileSync(join(DIR, 'words.bin'));
const aw = await init({ threads: 1 });
const models = new Map();
const temps = [];
after(() => {
  for (const m of models.values()) m.dispose();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

async function model(folder) {
  if (!models.has(folder)) models.set(folder, await aw.loadModel(join(DIR, folder)));
  return models.get(folder);
}

/** A golden's signal record → its samples (checked against the goldens' length and hash). */
const samples = (rec) => goldenSignal(rec, X.sampling_rate ?? 16000);

/** transformers' generate kwargs → SpeechRecognizer#generate options. */
function options(kwargs) {
  const map = { language: 'language', return_timestamps: 'returnTimestamps', num_beams: 'numBeams', num_frames: 'numFrames' };
  const o = {};
  for (const [k, v] of Object.entries(kwargs)) {
    if (!map[k]) throw new Error(`whisper_words.test: no option for the golden's kwarg ${k}`);
    o[map[k]] = v;
  }
  return o;
}

/** The pipeline's call kwargs → transcribe options. */
function transcribeOptions(k) {
  const o = { returnTimestamps: k.return_timestamps };
  if (k.chunk_length_s !== undefined) o.chunkLengthS = k.chunk_length_s;
  if (k.stride_length_s !== undefined) o.strideLengthS = k.stride_length_s;
  return Object.assign(o, options(k.generate_kwargs ?? {}));
}

/** A features tensor of the inputs (B, mels, 3000). */
function features(m, inputs) {
  const fs = inputs.map((n) => m.features(samples(n)));
  const [, M, T] = fs[0].shape;
  const data = new Float32Array(fs.length * M * T);
  fs.forEach((f, i) => data.set(f.data, i * M * T));
  return { data, shape: [fs.length, M, T] };
}

/** The alignment weights of token rows through the model's decoding state (the path transcribe takes). */
function alignment(m, feats, rows, heads) {
  const stepper = m._stepper(feats);
  const state = stepper.begin(feats.shape[0], m.maxTargetPositions);
  try {
    const T = rows[0].length;
    const tokens = new Int32Array(rows.length * T);
    rows.forEach((r, i) => tokens.set(r, i * T));
    return stepper.alignment(state, tokens, rows.length, T, Int32Array.from(heads.flat()));
  } finally {
    stepper.free(state);
  }
}

for (const f of W.folders) {
  if (f.cross_attention) {
    test(`${f.folder}: the alignment heads' cross-attention under teacher forcing, within ${W.atol} + ${W.rtol}·|x| on S·p`, async () => {
      const m = await model(f.folder);
      const c = f.cross_attention;
      const [, H, T, S] = c.shape;
      const w = alignment(m, features(m, c.inputs.map((r) => r)), c.decoder_input_ids, c.heads);
      assert.deepEqual(w.shape, [1, H, T, S]);
      const want = new Float32Array(Uint8Array.from(Buffer.from(c.weights, 'base64')).buffer);
      const C = c.columns.length;
      let worst = 0;
      for (let h = 0; h < H; h++) for (let t = 0; t < T; t++) c.columns.forEach((s, j) => {
        const got = w.data[(h * T + t) * S + s] * S, ref = want[(h * T + t) * C + j] * S;
        const d = Math.abs(got - ref);
        worst = Math.max(worst, d / (W.atol + W.rtol * Math.abs(ref)));
        assert.ok(d <= W.atol + W.rtol * Math.abs(ref), `head ${c.heads[h]} position ${t} state ${s}: ${got / S} vs ${ref / S}`);
      });
      assert.ok(worst < 1, `worst ${worst}`);
      if (process.env.AW_WORDS_VERBOSE) console.log(`worst |difference| / tolerance: ${worst}`);
    });
  }

  if (f.raw) {
    test(`${f.folder}: transformers' own weights (${f.raw.case}, call ${f.raw.call}) give its token times exactly`, () => {
      const [H, T, S] = f.raw.shape;
      const weights = new Float32Array(BIN.buffer.slice(BIN.byteOffset + f.raw.offset, BIN.byteOffset + f.raw.offset + H * T * S * 4));
      const [ts] = extractTokenTimestamps(weights, { rows: 1, heads: H, T, S }, { medianFilterWidth: 7 });
      assert.deepEqual(Array.from(ts), f.raw.timestamps);
    });
  }

  for (const c of f.generate) {
    test(`${f.folder}: generate with returnTokenTimestamps, ${c.name}`, async () => {
      const m = await model(f.folder);
      const r = await m.generate({ inputFeatures: features(m, c.inputs) }, { ...options(c.kwargs), returnTokenTimestamps: true });
      assert.deepEqual(r.sequences.map((q) => Array.from(q)), c.sequences);
      assert.deepEqual(r.tokenTimestamps.map((q) => Array.from(q)), c.token_timestamps);
      if (c.token_timestamps_4_40_2) {  // beams: 4.40.2's rows are other hypotheses' and too short (see the top)
        assert.notDeepEqual(c.token_timestamps_4_40_2, c.token_timestamps);
        assert.ok(c.token_timestamps_4_40_2[0].length < c.sequences[0].length);
      }
    });
  }

  for (const c of f.pipeline) {
    test(`${f.folder}: the ASR pipeline with return_timestamps='word', ${c.name}`, async () => {
      assert.ok(!c.left_out, `left out of the goldens: ${c.left_out}`);
      if (c.stable !== undefined && c.stable !== null) assert.equal(c.stable, true, 'the golden is stable under 1e-5 noise');
      const m = await model(f.folder);
      const out = await m.transcribe(samples(c.input), transcribeOptions(c.call_kwargs));
      assert.deepEqual(plain(out), c.output);
      if (c.output_4_40_2) assert.notDeepEqual(c.output_4_40_2, c.output, 'the beam case shows 4.40.2\'s misaligned rows');
    });
  }
}

test("stream() with returnTimestamps 'word': each window's words as it is decoded, transcribe()'s word chunks in all", async () => {
  for (const [folder, name] of [['tiny', 'short_word'], ['tiny', 'unchunked_word'], ['tiny', 'chinese_longform_word'], ['en', 'longform_word']]) {
    const f = W.folders.find((x) => x.folder === folder);
    const c = f.pipeline.find((x) => x.name === name);
    const m = await model(folder);
    const o = transcribeOptions(c.call_kwargs);
    const words = [];
    const progress = [];
    for await (const w of m.stream(samples(c.input), { ...o, onProgress: (p) => progress.push(p.done) })) words.push(w);
    assert.ok(c.output.chunks.length > 0, `${folder}/${name}: the golden has words`);
    assert.deepEqual(plain(words), c.output.chunks, `${folder}/${name}`);
    assert.ok(progress.length >= 1);
  }
  const m = await model('tiny');
  await assert.rejects(async () => { for await (const s of m.stream(samples(W.folders[0].pipeline[0].input), { returnTimestamps: 'word', chunkLengthS: 10 })) void s; },
    (e) => /chunkLengthS: stream\(\) decodes windows in order/.test(e.message));
});

test('the word goldens cover one window, chunks, long-form, unicode languages and beams', () => {
  const names = W.folders.flatMap((f) => f.pipeline.map((c) => `${f.folder}/${c.name}`));
  for (const n of ['tiny/short_word', 'tiny/chunk10_word', 'tiny/chunk15_stride4_2_word', 'tiny/unchunked_word', 'tiny/chinese_word',
    'tiny/japanese_word', 'tiny/beam3_word', 'v3/cantonese_longform_word', 'en/longform_word']) assert.ok(names.includes(n), n);
  const words = W.folders.flatMap((f) => f.pipeline.flatMap((c) => c.output?.chunks ?? []));
  assert.ok(words.length >= 60, `${words.length} words`);
});

/** A copy of the tiny folder with its generation_config.json (and config.json) changed by `edit`. */
function editedTiny(edit) {
  const dir = mkdtempSync(join(tmpdir(), 'aw-words-'));
  temps.push(dir);
  cpSync(join(DIR, 'tiny'), dir, { recursive: true });
  const gc = JSON.parse(readFileSync(join(dir, 'generation_config.json'), 'utf8'));
  const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  edit(gc, cfg);
  writeFileSync(join(dir, 'generation_config.json'), JSON.stringify(gc));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(cfg));
  return dir;
}

test('a folder without alignment_heads: word timestamps refused by name, the rest still runs', async () => {
  const m = await aw.loadModel(editedTiny((gc) => { delete gc.alignment_heads; }));
  try {
    const x = samples(W.folders[0].pipeline[0].input);
    const refused = (e) => e.code === 'ERR_UNSUPPORTED' && /alignment_heads/.test(e.message);
    await assert.rejects(m.transcribe(x, { language: 'en', returnTimestamps: 'word' }), refused);
    await assert.rejects(m.transcribe(x, { language: 'en', returnTimestamps: 'word', chunkLengthS: 10 }), refused);
    await assert.rejects(m.generate(x, { language: 'en', returnTokenTimestamps: true }), refused);
    const r = await m.transcribe(x, { language: 'en', returnTimestamps: true });
    assert.equal(typeof r.text, 'string');
  } finally {
    m.dispose();
  }
});

test('bad alignment settings in the folder, bad options and bad native arguments: clear errors, the model keeps working', async () => {
  for (const [edit, re] of [
    [(gc) => { gc.alignment_heads = [[1]]; }, /alignment_heads\[0\]: expected a \[layer, head\] pair/],
    [(gc) => { gc.alignment_heads = []; }, /alignment_heads: expected a non-empty list/],
    [(gc, cfg) => { cfg.median_filter_width = 4; }, /median_filter_width: `filter_width` should be an odd number, got 4/],
  ]) {
    const m = await aw.loadModel(editedTiny(edit));
    try {
      await assert.rejects(m.transcribe(samples(W.folders[0].pipeline[0].input), { language: 'en', returnTimestamps: 'word' }),
        (e) => e.code === 'ERR_INVALID_ARGUMENT' && re.test(e.message));
    } finally {
      m.dispose();
    }
  }
  const m = await model('tiny');
  const x = samples(W.folders[0].pipeline[0].input);
  await assert.rejects(m.transcribe(x, { returnTimestamps: 'words' }), (e) => e instanceof TypeError && /returnTimestamps: expected true, false or 'word'/.test(e.message));
  await assert.rejects(m.generate(x, { returnTokenTimestamps: 'yes' }), (e) => e instanceof TypeError && /returnTokenTimestamps/.test(e.message));
  await assert.rejects(m.generate(x, { numFrames: 100 }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /numFrames/.test(e.message));
  // The native call: heads out of range, rows that are no multiple of the sources, ids outside the vocabulary.
  const feats = features(m, [W.folders[0].pipeline[0].input]);
  const row = [[m.decoderStartTokenId, 373, 473, 100]];
  assert.throws(() => alignment(m, feats, row, [[2, 0]]), (e) => e instanceof RangeError && e.message === 'alignmentHeads[0][0] (decoder layer): expected an integer in [0, 1], got 2');
  assert.throws(() => alignment(m, feats, row, [[1, 4]]), (e) => e instanceof RangeError && e.message === 'alignmentHeads[0][1] (head): expected an integer in [0, 3], got 4');
  assert.throws(() => alignment(m, feats, row, []), (e) => /alignmentHeads: expected \(pairs, 2\)|alignmentHeads: expected at least one/.test(e.message));
  assert.throws(() => alignment(m, features(m, [W.folders[0].pipeline[0].input, W.folders[0].pipeline[0].input]), row, [[1, 0]]),
    (e) => e.message === 'tokens: expected rows a multiple of the state\'s sources (2), got 1');
  assert.throws(() => alignment(m, feats, [[m.decoderStartTokenId, m.vocabSize]], [[1, 0]]), (e) => /tokens/.test(e.message) && new RegExp(String(m.vocabSize)).test(e.message));
  // Still works, and gives the golden's words.
  const c = W.folders[0].pipeline[0];
  assert.deepEqual(plain(await m.transcribe(samples(c.input), transcribeOptions(c.call_kwargs))), c.output);
});
