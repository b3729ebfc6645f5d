// attnwasm/audio's WhisperFeatureExtractor against transformers v4.40.2's numpy feature extractor
// (tests/data/make_whisper_feature_goldens.py): tones, noise, silence, clipping, a chirp, quiet noise; 0.1 s, 12.3 s,
// 30 s and 75 s (trimmed, and whole with padding 'longest'); 80 and 128 mel bins; attention masks; a stored
// mel_filters; the chunked pipeline's chunks. Tolerance 1e-4 absolute on every compared value (the target;
// the differences seen are ~1e-6, float32 rounding of log10). Also: the mel filter banks, preprocessor_config.json
// refusals, and bad audio (empty, NaN, an 8-hour buffer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WhisperFeatureExtractor, melFilterBank, MAX_SAMPLES } from '../../bindings/audio/index.js';
import { signal, fnv1a } from '../data/whisper_signals.mjs';
import { loadGoldens } from '../data/whisper_goldens.mjs';

const { doc, array } = loadGoldens();
const TOL = doc.tolerance.features;
const extractors = new Map();
const extractor = (nMels) => {
  if (!extractors.has(nMels)) extractors.set(nMels, new WhisperFeatureExtractor({ feature_size: nMels }));
  return extractors.get(nMels);
};

/** Compares a result with a golden case: shape, sampled frames, per-mel and 10-frame block means, statistics. */
function check(got, c, label = c.name) {
  assert.deepEqual(got.shape, c.shape, `${label}: shape`);
  const [, nMels, T] = c.shape;
  const want = array(c.values);
  let worst = 0;
  c.frames.forEach((f, j) => {
    for (let m = 0; m < nMels; m++) {
      const d = Math.abs(got.data[m * T + f] - want[m * c.frames.length + j]);
      if (!(d <= TOL)) assert.fail(`${label}: mel ${m}, frame ${f}: got ${got.data[m * T + f]}, transformers ${want[m * c.frames.length + j]}`);
      worst = Math.max(worst, d);
    }
  });
  const melMean = array(c.melMean), blockMean = array(c.blockMean);
  for (let m = 0; m < nMels; m++) {
    let s = 0;
    for (let t = 0; t < T; t++) s += got.data[m * T + t];
    assert.ok(Math.abs(s / T - melMean[m]) <= TOL, `${label}: mean of mel ${m}: got ${s / T}, transformers ${melMean[m]}`);
  }
  for (let b = 0; b * 10 < T; b++) {
    let s = 0, n = 0;
    for (let m = 0; m < nMels; m++) for (let t = b * 10; t < Math.min(T, b * 10 + 10); t++) { s += got.data[m * T + t]; n++; }
    assert.ok(Math.abs(s / n - blockMean[b]) <= TOL, `${label}: mean of frames ${b * 10}…${b * 10 + 9}: got ${s / n}, transformers ${blockMean[b]}`);
  }
  let mn = Infinity, mx = -Infinity;
  for (const v of got.data) { mn = Math.min(mn, v); mx = Math.max(mx, v); }
  assert.ok(Math.abs(mn - c.stats.min) <= TOL && Math.abs(mx - c.stats.max) <= TOL, `${label}: range [${mn}, ${mx}] vs [${c.stats.min}, ${c.stats.max}]`);
  return worst;
}

const inputs = new Map();
function input(c) {
  const key = JSON.stringify(c.signal);
  if (!inputs.has(key)) {
    const x = signal(c.signal);
    assert.equal(fnv1a(x), c.input.fnv1a, `${c.name}: the regenerated input differs from the script's (whisper_signals.mjs vs signal())`);
    inputs.set(key, x);
  }
  return inputs.get(key);
}

test('golden: features equal transformers\' numpy WhisperFeatureExtractor within 1e-4', (t) => {
  let worst = 0;
  for (const c of doc.features.filter((x) => !x.chunk && !x.melFilters)) {
    const o = c.options;
    const got = extractor(c.nMels).features(input(c), { padding: o.padding, truncation: o.truncation, returnAttentionMask: o.returnAttentionMask ?? false });
    worst = Math.max(worst, check(got, c));
    if (c.attentionMask) {
      assert.deepEqual(got.attentionMask.shape, [1, c.attentionMask.length], `${c.name}: mask shape`);
      const ones = got.attentionMask.data.reduce((a, b) => a + b, 0);
      assert.equal(ones, c.attentionMask.ones, `${c.name}: mask ones`);
      assert.ok(got.attentionMask.data.subarray(0, ones).every((v) => v === 1), `${c.name}: mask starts with ones`);
    } else {
      assert.equal(got.attentionMask, undefined);
    }
  }
  t.diagnostic(`largest difference from transformers over the sampled frames: ${worst.toExponential(2)}`);
  const torch = Math.max(...doc.features.filter((c) => c.torchPathMaxAbsDiff !== null).map((c) => c.torchPathMaxAbsDiff));
  t.diagnostic(`(transformers' own numpy and torch paths differ by up to ${torch.toExponential(2)} on these inputs)`);
});

test('golden: chunkFeatures gives the chunked pipeline\'s chunks (chunk_iter) and their features', () => {
  const chunks = doc.features.filter((c) => c.chunk);
  const x = input(chunks[0]);
  assert.equal(fnv1a(x), chunks[0].input.fnv1a);
  const got = [...extractor(80).chunkFeatures(x, { chunkLengthS: 30, strideLengthS: 5 })];
  assert.equal(got.length, chunks.length);
  got.forEach((g, i) => {
    const c = chunks[i];
    assert.equal(g.start, c.chunk.start, `${c.name}: start`);
    assert.deepEqual(g.stride, c.chunk.stride, `${c.name}: stride`);
    assert.equal(g.isLast, c.chunk.isLast, `${c.name}: isLast`);
    check(g, c);
  });
  // The default chunk length is chunk_length (30 s) and the stride a sixth of it: the same chunks.
  assert.deepEqual([...extractor(80).chunkFeatures(x)].map((g) => g.stride), got.map((g) => g.stride));
});

test('golden: mel_filters from preprocessor_config.json with melFilters: \'config\'; ignored by default, as transformers', () => {
  const c = doc.features.find((x) => x.melFilters);
  // The stored bank: HTK filters without norm, (n_mels, bins) as old hub files store it.
  const htk = melFilterBank({ numFrequencyBins: 201, numMelFilters: 80, minFrequency: 0, maxFrequency: 8000, samplingRate: 16000, norm: null, melScale: 'htk' }).toDense();
  const stored = Array.from({ length: 80 }, (_, m) => Array.from({ length: 201 }, (_, f) => htk[f * 80 + m]));
  const config = { feature_size: 80, mel_filters: stored, n_samples: 480000, nb_max_frames: 3000 };
  check(new WhisperFeatureExtractor(config, { melFilters: 'config' }).features(input(c)), c);
  const slaney = doc.features.find((x) => x.name === 'tone_0.1s_80');
  check(new WhisperFeatureExtractor(config).features(input(c)), slaney, 'stored mel_filters ignored');
  // The (bins, n_mels) layout too.
  const rows = Array.from({ length: 201 }, (_, f) => Array.from(htk.subarray(f * 80, f * 80 + 80)));
  check(new WhisperFeatureExtractor({ ...config, mel_filters: rows }, { melFilters: 'config' }).features(input(c)), c, 'bins-first layout');
});

test('golden: the mel filter banks equal transformers\' mel_filter_bank (slaney) for 80 and 128 bins', () => {
  for (const [n, g] of Object.entries(doc.melFilters)) {
    const dense = extractor(Number(n)).config.bank.toDense();
    const weights = array(g.weights);
    let nonzero = 0;
    for (const v of dense) if (v !== 0) nonzero++;
    assert.equal(nonzero, weights.length, `${n} bins: non-zero count`);
    g.bins.forEach((f, i) => {
      const got = dense[f * Number(n) + g.mels[i]];
      assert.ok(Math.abs(got - weights[i]) <= 1e-15 + 1e-12 * Math.abs(weights[i]), `${n} bins: weight (${f}, ${g.mels[i]}): ${got} vs ${weights[i]}`);
    });
  }
});

test('preprocessor_config.json: defaults, derived sizes, refusals naming the key', () => {
  const fe = new WhisperFeatureExtractor(JSON.stringify({ feature_size: 128, sampling_rate: 16000, hop_length: 160, chunk_length: 30, n_fft: 400,
    n_samples: 480000, nb_max_frames: 3000, padding_value: 0.0, return_attention_mask: false, feature_extractor_type: 'WhisperFeatureExtractor',
    processor_class: 'WhisperProcessor', padding_side: 'right' }));
  assert.equal(fe.nMels, 128);
  assert.equal(fe.config.nSamples, 480000);
  assert.equal(new WhisperFeatureExtractor().nMels, 80);
  const refused = (cfg, code, mentions, options) => assert.throws(() => new WhisperFeatureExtractor(cfg, options), (e) => {
    assert.equal(e.code, code, e.message);
    for (const m of mentions) assert.match(e.message, new RegExp(m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    return true;
  });
  refused({ feature_size: 0 }, 'ERR_INVALID_ARGUMENT', ['feature_size', '0']);
  refused({ feature_size: 80.5 }, 'ERR_INVALID_ARGUMENT', ['feature_size']);
  refused({ n_fft: 401 }, 'ERR_INVALID_ARGUMENT', ['n_fft', 'even']);
  refused({ n_samples: 240000 }, 'ERR_INVALID_ARGUMENT', ['n_samples', '480000', '240000']);
  refused({ nb_max_frames: 1500 }, 'ERR_INVALID_ARGUMENT', ['nb_max_frames', '3000']);
  refused({ sampling_rate: '16000' }, 'ERR_INVALID_ARGUMENT', ['sampling_rate']);
  refused({ padding_value: null, return_attention_mask: 1 }, 'ERR_INVALID_ARGUMENT', ['return_attention_mask']);
  refused({ feature_extractor_type: 'ASTFeatureExtractor' }, 'ERR_UNSUPPORTED', ['feature_extractor_type', 'ASTFeatureExtractor']);
  refused({ padding_side: 'left' }, 'ERR_UNSUPPORTED', ['padding_side', 'left']);
  refused({}, 'ERR_INVALID_ARGUMENT', ['mel_filters'], { melFilters: 'config' });
  refused({ mel_filters: [[1, 2], [3, 4]] }, 'ERR_INVALID_ARGUMENT', ['mel_filters', '(80, 201)', '(2, 2)'], { melFilters: 'config' });
  refused({}, 'ERR_INVALID_ARGUMENT', ['melFilters'], { melFilters: 'stored' });
  refused('{"feature_size": 80, "feature_size": 128}', 'ERR_INVALID_ARGUMENT', ['feature_size', 'twice']);
  refused('{not json', 'ERR_INVALID_ARGUMENT', ['preprocessor_config.json', 'not JSON']);
});

test('bad audio: empty, NaN, Infinity, wrong types and options — errors name the argument; the extractor keeps working', () => {
  const fe = extractor(80);
  const err = (fn, code, re) => assert.throws(fn, (e) => { assert.equal(e.code, code, e.message); assert.match(e.message, re); return true; });
  err(() => fe.features(new Float32Array(0)), 'ERR_INVALID_ARGUMENT', /^audio: expected at least one sample, got an empty Float32Array/);
  err(() => fe.features({ data: new Float32Array(0), samplingRate: 44100 }), 'ERR_INVALID_ARGUMENT', /^audio\.data: expected at least one sample/);
  const x = new Float32Array(16000);
  x[1234] = NaN;
  err(() => fe.features(x), 'ERR_INVALID_ARGUMENT', /^audio: sample 1234 \(at 0\.077 s\) is NaN; expected finite samples/);
  x[1234] = 0; x[15999] = -Infinity;
  err(() => fe.features(x), 'ERR_INVALID_ARGUMENT', /sample 15999 .* is -Infinity/);
  err(() => fe.features({ channels: [new Float32Array(10), Float32Array.of(0, NaN, 0, 0, 0, 0, 0, 0, 0, 0)], samplingRate: 8000 }), 'ERR_INVALID_ARGUMENT', /^audio\.channels\[1\]: sample 1 .*NaN/);
  err(() => fe.features({ channels: [new Float32Array(10), new Float32Array(9)], samplingRate: 8000 }), 'ERR_SHAPE', /audio\.channels\[1\]: expected 10 samples/);
  err(() => fe.features({ data: new Float32Array(10), samplingRate: 44100.5 }), 'ERR_INVALID_ARGUMENT', /audio\.samplingRate: expected an integer sampling rate/);
  assert.throws(() => fe.features(new Float64Array(10)), (e) => e instanceof TypeError && /audio: expected a Float32Array .* got Float64Array/.test(e.message));
  assert.throws(() => fe.features({ data: new Float32Array(10) }), (e) => e instanceof TypeError && /audio\.samplingRate/.test(e.message));
  assert.throws(() => fe.features(x, { padding: 'longest', trunc: false }), (e) => e instanceof TypeError && /unknown option 'trunc'/.test(e.message));
  err(() => fe.features(new Float32Array(10), { padding: 'do_not_pad' }), 'ERR_INVALID_ARGUMENT', /padding: expected 'max_length' or 'longest'/);
  err(() => fe.features(new Float32Array(100), { padding: 'longest', truncation: false }), 'ERR_INVALID_ARGUMENT', /100 samples give no frame/);
  // Still works, and a NaN past the first 30 s is not read when trimming (transformers never sees it either).
  const long = new Float32Array(31 * 16000);
  long[30 * 16000 + 5] = NaN;
  assert.deepEqual(fe.features(long).shape, [1, 80, 3000]);
  err(() => fe.features(long, { padding: 'longest', truncation: false }), 'ERR_INVALID_ARGUMENT', /sample 480005 \(at 30\.000 s\)/);
  err(() => [...fe.chunkFeatures(long)], 'ERR_INVALID_ARGUMENT', /sample 480005/);
});

test('an 8-hour buffer: trimmed features and chunks work without reading it all; whole features and resampling are refused with the sizes named', () => {
  const fe = extractor(80);
  const hours8 = new Float32Array(8 * 3600 * 16000);  // 1.8 GB of address space; untouched pages cost no memory
  const rss0 = process.memoryUsage().rss;
  assert.deepEqual(fe.features(hours8).shape, [1, 80, 3000]);
  const it = fe.chunkFeatures(hours8);
  const first = it.next().value, second = it.next().value;
  it.return();
  assert.deepEqual([first.start, first.stride, second.start, second.stride], [0, [480000, 0, 80000], 320000, [480000, 80000, 80000]]);
  assert.throws(() => fe.features(hours8, { padding: 'longest', truncation: false }), (e) => e.code === 'ERR_AUDIO_TOO_LONG'
    && /460800000 samples \(8 h 0 min 0\.0 s\) give 2880000 frames × 80 mel bins = 230400000 values, more than the 134217728/.test(e.message) && /chunkFeatures/.test(e.message));
  assert.throws(() => fe.features({ data: hours8, samplingRate: 8000 }), (e) => e.code === 'ERR_AUDIO_TOO_LONG' && /921600000 samples .* 536870912/.test(e.message));
  const tooMany = new Float32Array(MAX_SAMPLES + 1);
  assert.throws(() => fe.features(tooMany), (e) => e.code === 'ERR_AUDIO_TOO_LONG' && /^audio: 536870913 samples \(9 h 19 min/.test(e.message));
  assert.ok(process.memoryUsage().rss - rss0 < 200e6, `memory grew by ${(process.memoryUsage().rss - rss0) / 1e6} MB`);
});
