// Whisper (issue 41) against transformers v4.40.2 itself: tests/data/goldens/whisper/ (make_whisper_goldens.py:
// small random checkpoints saved by transformers with Whisper's special-token layout; its README describes every
// case). The inputs are the goldens' signals, made here bit for bit (tests/data/whisper_signals.mjs, hashes
// checked), their features by attnwasm/audio. Per folder: the encoder's states and the teacher-forced logits within
// atol + rtol·|x| (1e-4 each); detect_language's ids and probabilities; generate()'s sequences equal to
// transformers' (and its refusals, by message), the decoded text, the timestamps' offsets and the ASR text and
// chunks; long-form generation's sequences and segments; the pipeline's outputs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { goldenSignal } from '../data/whisper_signals.mjs';
import { whisperVocab, whisperDecode } from '../../bindings/speech/whisper_text.js';
import { decodeAsr, asrVocab } from '../../bindings/speech/asr_decode.js';
import { longForm } from '../../bindings/speech_transcribe.js';

/** A value as JSON holds it (undefined properties dropped), for deepEqual with the goldens. */
const plain = (v) => JSON.parse(JSON.stringify(v));

const DIR = fileURLToPath(new URL('../data/goldens/whisper/', import.meta.url));
const X = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8'));
const aw = await init({ threads: 1 });
const models = new Map();
after(() => { for (const m of models.values()) m.dispose(); });

/** A golden's signal record → its samples (checked against the goldens' length and hash). */
const samples = (rec) => goldenSignal(rec, X.sampling_rate ?? 16000);

async function model(folder) {
  if (!models.has(folder)) models.set(folder, await aw.loadModel(join(DIR, folder)));
  return models.get(folder);
}

const close = (got, want, what) => {
  const tol = X.atol + X.rtol * Math.abs(want);
  assert.ok(Math.abs(got - want) <= tol, `${what}: ${got} vs ${want} (tolerance ${tol})`);
};

/** The batch of features of a case's inputs: [B, nMels, 3000], or with padding 'longest' the whole input. */
function batchFeatures(m, inputs, featureKwargs) {
  const fs = inputs.map((n) => m.features(samples(n), featureKwargs ? { padding: 'longest', truncation: false } : undefined));
  const [, M, T] = fs[0].shape;
  const data = new Float32Array(fs.length * M * T);
  fs.forEach((f, i) => data.set(f.data, i * M * T));
  return { data, shape: [fs.length, M, T] };
}

/** transformers' generate kwargs → SpeechRecognizer#generate options. */
function options(kwargs) {
  const map = { language: 'language', task: 'task', return_timestamps: 'returnTimestamps', num_beams: 'numBeams',
    prompt_ids: 'promptIds', no_repeat_ngram_size: 'noRepeatNgramSize', max_new_tokens: 'maxNewTokens', max_length: 'maxLength' };
  const o = {};
  for (const [k, v] of Object.entries(kwargs)) {
    if (k === 'attention_mask' || k === 'return_segments') continue;
    if (!map[k]) throw new Error(`whisper.test: no option for the golden's kwarg ${k}`);
    o[map[k]] = v;
  }
  return o;
}

for (const f of X.folders) {
  test(`${f.folder}: encoder states and teacher-forced logits within ${X.atol} + ${X.rtol}·|x|`, async () => {
    const m = await model(f.folder);
    for (const c of f.forward) {
      const features = batchFeatures(m, c.inputs);
      const r = m.forward({ inputFeatures: features, decoderInputIds: c.decoder_input_ids });
      assert.deepEqual(r.encoderLastHiddenState.shape, c.encoder_shape);
      const [B, S, E] = c.encoder_shape;
      const lg = c.logits.flat(Infinity), lse = c.logsumexp.flat(Infinity), am = c.argmax.flat(Infinity), ev = c.encoder_row_values.flat(Infinity);
      c.encoder_rows.forEach((row, k) => {
        for (let b = 0; b < B; b++) for (let e = 0; e < E; e++) {
          close(r.encoderLastHiddenState.data[(b * S + row) * E + e], ev[(b * c.encoder_rows.length + k) * E + e], `encoder[${b}, ${row}, ${e}]`);
        }
      });
      assert.deepEqual(r.logits.shape, c.logits_shape);
      const [, T, V] = c.logits_shape, cols = c.logit_columns;
      for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) {
        const row = r.logits.data.subarray((b * T + t) * V, (b * T + t + 1) * V);
        cols.forEach((col, j) => close(row[col], lg[(b * T + t) * cols.length + j], `logits[${b}, ${t}, ${col}]`));
        let mx = -Infinity, arg = 0;
        for (let v = 0; v < V; v++) if (row[v] > mx) { mx = row[v]; arg = v; }
        let sum = 0;
        for (let v = 0; v < V; v++) sum += Math.exp(row[v] - mx);
        close(mx + Math.log(sum), lse[b * T + t], `logsumexp[${b}, ${t}]`);
        assert.equal(arg, am[b * T + t], `argmax[${b}, ${t}]`);
      }
    }
  });

  if (f.detect_language) {
    test(`${f.folder}: detect_language's choice and probabilities`, async () => {
      const m = await model(f.folder);
      for (const c of f.detect_language) {
        const lists = m.detectLanguage({ inputFeatures: batchFeatures(m, c.inputs) });
        const rows = c.inputs.length > 1 ? lists : [lists];
        rows.forEach((list, b) => {
          assert.equal(list[0].id, c.language_ids[b], `input ${b}'s language`);
          const byId = [...list].sort((x, y) => x.id - y.id);
          const pr = c.probs.flat(Infinity);
          byId.forEach((l, j) => close(l.probability, pr[b * byId.length + j], `probability of ${l.token}`));
        });
      }
    });
  }

  for (const c of f.generate ?? []) {
    test(`${f.folder}: generate ${c.name}`, async () => {
      const m = await model(f.folder);
      const features = batchFeatures(m, c.inputs);
      const o = options(c.kwargs);
      if (c.error) {
        await assert.rejects(m.generate({ inputFeatures: features }, o), (e) => e.message.includes(c.error.message.split('\n')[0].slice(0, 60)),
          `refused as transformers refuses it: ${c.error.message}`);
        return;
      }
      const r = await m.generate({ inputFeatures: features }, o);
      assert.deepEqual(r.sequences.map((q) => Array.from(q)), c.sequences);
      if (c.text) assert.deepEqual(r.texts, c.text_from_lists ?? c.text);
      // The tokenizer's decodings of each row: with timestamps, their offsets, and the ASR pipeline's text and chunks.
      const v = whisperVocab(m.tokenizer);
      r.sequences.forEach((q, b) => {
        if (c.text_with_timestamps) assert.equal(whisperDecode(v, q, { decodeWithTimestamps: true }), c.text_with_timestamps[b]);
        if (c.offsets) assert.deepEqual(plain(whisperDecode(v, q, { skipSpecialTokens: true, outputOffsets: true }).offsets), c.offsets[b]);
        if (c.asr) assert.deepEqual(plain(decodeAsr(asrVocab(m.tokenizer, v.timestampBegin), [{ tokens: Array.from(q) }], { returnTimestamps: true })), c.asr[b]);
      });
    });
  }

  // Sequential long-form generation (inputs over 30 s, padding 'longest'): each input's windows through longForm
  // (speech_transcribe.js, the loop generate_with_fallback runs for a batch of one) give transformers' segments —
  // start and end as float32 values, tokens — and, concatenated, its sequences (a batch's rows padded after eos).
  for (const c of f.longform ?? []) {
    test(`${f.folder}: long-form generate ${c.name}`, async () => {
      const m = await model(f.folder);
      const o = options(c.kwargs);
      if (c.error) {
        // transformers refuses long-form without timestamps; the pipeline passes None (timestamps on), so the
        // refusal is generate's own: SpeechRecognizer#generate takes one 30 s window and refuses longer features.
        await assert.rejects(m.generate({ inputFeatures: m.featureExtractor.features(samples(c.inputs[0]), { padding: 'longest', truncation: false }) }, o));
        return;
      }
      const pad = m.config.pad_token_id;
      for (const [b, rec] of c.inputs.entries()) {
        const segments = [];
        for await (const w of longForm(m, samples(rec), { generate: o })) segments.push(...w.segments);
        const tokens = segments.flatMap((sg) => sg.tokens);
        const want = c.sequences[b];
        let end = want.length;
        while (end > tokens.length && want[end - 1] === pad) end--;
        assert.deepEqual(tokens, want.slice(0, end), `input ${b} (${rec.name}): sequence`);
        if (c.segments) assert.deepEqual(plain(segments), c.segments[b], `input ${b} (${rec.name}): segments`);
      }
    });
  }

  for (const c of f.pipeline ?? []) {
    test(`${f.folder}: the ASR pipeline, ${c.name}`, async () => {
      const m = await model(f.folder);
      const k = c.call_kwargs ?? {};
      const o = {};
      if (k.chunk_length_s !== undefined) o.chunkLengthS = k.chunk_length_s;
      if (k.stride_length_s !== undefined) o.strideLengthS = k.stride_length_s;
      if (k.return_timestamps !== undefined) o.returnTimestamps = k.return_timestamps;
      if (k.return_language !== undefined) o.returnLanguage = k.return_language;
      for (const [key, v] of Object.entries(k.generate_kwargs ?? {})) Object.assign(o, options({ [key]: v }));
      if (c.error) {
        await assert.rejects(m.transcribe(samples(c.input), o));
        return;
      }
      const out = await m.transcribe(samples(c.input), o);
      assert.deepEqual(plain(out), c.output);
    });
  }
}

test('the goldens are there', () => {
  assert.ok(X.folders.length >= 1);
  assert.ok(existsSync(join(DIR, X.folders[0].folder, 'config.json')));
});
