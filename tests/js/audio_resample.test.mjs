// attnwasm/audio's resampler against torchaudio.functional.resample (float64; what transformers' ASR pipeline applies
// to an array given with another sampling_rate) from 7 rates, 12 345 Hz among them (gcd 5: 2469 → 3200 phases);
// streaming in blocks of any size equal to one call; and the difference from ffmpeg (what the pipeline reads files
// with) on the same signal, as docs/speech.md states it. Goldens: tests/data/make_whisper_feature_goldens.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Resampler, resample, toMono } from '../../bindings/audio/index.js';
import { signal, fnv1a } from '../data/whisper_signals.mjs';
import { loadGoldens, maxAbsDiff } from '../data/whisper_goldens.mjs';

const { doc, array } = loadGoldens();

test('golden: resample equals torchaudio\'s sinc resampler (float64) within 1e-6', (t) => {
  for (const [rate, g] of Object.entries(doc.resample.rates)) {
    const x = signal(g.signal, Number(rate));
    assert.equal(fnv1a(x), g.fnv1a, `${rate} Hz: regenerated input`);
    const y = resample(x, Number(rate), 16000);
    const want = array(g.torchaudio);
    assert.equal(y.length, want.length, `${rate} Hz: length`);
    const { worst, at } = maxAbsDiff(y, want);
    assert.ok(worst <= doc.tolerance.resample, `${rate} Hz: sample ${at}: got ${y[at]}, torchaudio ${want[at]}`);
    t.diagnostic(`${rate} Hz → 16 kHz: max |diff| ${worst.toExponential(2)} (torchaudio's float32 path differs from its float64 path by ${g.float32PathMaxAbsDiff.toExponential(2)})`);
  }
});

test('streaming: blocks of any size give the samples of one call, and flush ends the stream', () => {
  for (const [from, to] of [[44100, 16000], [8000, 16000], [48000, 16000], [12345, 16000], [16000, 16000], [16000, 22050]]) {
    const x = signal({ kind: 'noise', samples: 5000 + (from % 97), seed: from, ampLog2: -1 });
    const whole = resample(x, from, to);
    for (const block of [1, 7, 128, 441, 4999]) {
      const r = new Resampler(from, to);
      const parts = [];
      for (let i = 0; i < x.length; i += block) parts.push(r.process(x.subarray(i, i + block)));
      parts.push(r.flush());
      const joined = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
      let o = 0;
      for (const p of parts) { joined.set(p, o); o += p.length; }
      assert.equal(joined.length, whole.length, `${from}→${to}, blocks of ${block}: length`);
      assert.deepEqual(joined, whole, `${from}→${to}, blocks of ${block}`);
      assert.equal(r.flush().length, 0);
      assert.throws(() => r.process(x), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /flushed/.test(e.message));
    }
    assert.equal(whole.length, Math.ceil((to * x.length) / from));
  }
  assert.deepEqual(resample(Float32Array.of(0.5), 16000, 16000), Float32Array.of(0.5));
  assert.equal(resample(new Float32Array(0), 44100, 16000).length, 0);
  for (const bad of [0, 44100.5, -8000, 1e9, '16000']) {
    assert.throws(() => new Resampler(bad, 16000), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^fromRate: expected an integer sampling rate/.test(e.message));
  }
});

test('toMono: { data, samplingRate } and { channels } resample and average the channels as the pipeline (mean over channels)', () => {
  const g = doc.resample.rates['44100'];
  const x = signal(g.signal, 44100);
  assert.deepEqual(toMono({ data: x, samplingRate: 44100 }), resample(x, 44100, 16000));
  const a = signal({ kind: 'noise', samples: 3000, seed: 7, ampLog2: -1 }), b = signal({ kind: 'noise', samples: 3000, seed: 8, ampLog2: -2 });
  const mean = toMono({ channels: [a, b], samplingRate: 16000 });
  for (let i = 0; i < a.length; i++) assert.equal(mean[i], Math.fround((a[i] + b[i]) / 2));
  assert.deepEqual(toMono({ data: [a, b], samplingRate: 16000 }), mean);
  const same = toMono(a);
  assert.equal(same, a, 'a Float32Array at the rate is used as is');
  // An AudioBuffer-like object (the Web Audio API's).
  const buffer = { numberOfChannels: 2, sampleRate: 16000, length: 3000, getChannelData: (c) => [a, b][c] };
  assert.deepEqual(toMono(buffer), mean);
});

test('ffmpeg (transformers\' file path) vs this resampler on the fixed signal: the difference docs/speech.md states', (t) => {
  for (const [rate, g] of Object.entries(doc.resample.ffmpeg)) {
    const spec = g['0.125'].signal;
    const ours = resample(signal(spec, Number(rate)), Number(rate), 16000);
    const ffmpeg = array(g.ffmpeg);
    const m = Math.min(ours.length, ffmpeg.length);
    let s = 0, mx = 0;
    for (let i = 64; i < m - 64; i++) { const d = ours[i] - ffmpeg[i]; s += d * d; mx = Math.max(mx, Math.abs(d)); }
    const rms = Math.sqrt(s / (m - 128));
    // The same figure transformers' side measured (torchaudio vs ffmpeg), to float32 rounding.
    const want = g['0.125'];
    assert.ok(Math.abs(rms - want.innerRms) < 1e-6 && Math.abs(mx - want.innerMaxAbs) < 1e-6, `${rate} Hz: rms ${rms} vs ${want.innerRms}, max ${mx} vs ${want.innerMaxAbs}`);
    const l = g['2.0'];
    t.diagnostic(`${rate} Hz: vs ffmpeg on 2 s: rms ${l.innerRms.toExponential(2)} (signal rms ${l.signalRms.toFixed(3)}), max ${l.innerMaxAbs.toExponential(2)}, features max |diff| ${l.featuresMaxAbs.toFixed(3)}`);
  }
});
