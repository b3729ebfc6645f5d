// attnwasm/audio's file decoding in Node against ffmpeg (transformers' pipeline reads files with `ffmpeg -ac 1 -ar
// 16000 -f f32le`): WAV PCM u8/s16/s24/s32, float32/64, WAVE_FORMAT_EXTENSIBLE, extra chunks — bit-equal on mono
// 16 kHz files; stereo (ffmpeg sums the channels times 1/√2, the pipeline's arrays are averaged: attnwasm averages)
// and 44.1 kHz (ffmpeg's resampler vs torchaudio's) as documented; FLAC through @wasm-audio-decoders/flac equal to its
// source WAV (lossless). Then corrupt, truncated and unsupported files: ERR_AUDIO_DECODE / ERR_UNSUPPORTED naming the
// argument and what is wrong. Fixtures: tests/data/make_whisper_feature_goldens.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeWav, decodeFlac, decodeAudio, readAudio, sniffFormat, mixToMono } from '../../bindings/audio/index.js';
import { loadGoldens, fixture, fixtureF32, fixturePath, maxAbsDiff } from '../data/whisper_goldens.mjs';

const { doc } = loadGoldens();
const wavs = Object.entries(doc.files).filter(([p]) => p.endsWith('.wav'));

test('golden: mono 16 kHz WAVs of every sample format decode bit-equal to ffmpeg; readAudio gives the same', async () => {
  for (const [path, info] of wavs.filter(([, i]) => i.channels === 1 && i.samplingRate === 16000)) {
    const d = decodeWav(fixture(path));
    assert.equal(d.channels.length, 1);
    assert.equal(d.samplingRate, 16000);
    assert.equal(d.bitsPerSample, info.bits);
    assert.equal(d.sampleFormat, info.format);
    assert.deepEqual(d.channels[0], fixtureF32(info.ffmpeg), path);
    assert.deepEqual(await readAudio(fixturePath(path)), fixtureF32(info.ffmpeg), `${path} through readAudio(URL)`);
  }
  // A path string, and the bytes.
  const p = 'wav/pcm_s24_mono_16k.wav';
  assert.deepEqual(await readAudio(fixturePath(p).pathname), fixtureF32(doc.files[p].ffmpeg));
  assert.deepEqual(await readAudio(fixture(p).buffer), fixtureF32(doc.files[p].ffmpeg));
});

test('golden: stereo WAVs: channels kept apart, averaged by readAudio (ffmpeg\'s -ac 1 is the sum times 1/√2)', async () => {
  for (const [path, info] of wavs.filter(([, i]) => i.channels === 2)) {
    const d = decodeWav(fixture(path));
    assert.equal(d.channels.length, 2);
    const mean = await readAudio(fixture(path));
    assert.deepEqual(mean, mixToMono(d.channels));
    const ffmpeg = fixtureF32(info.ffmpeg);
    for (let i = 0; i < mean.length; i++) {
      const sum = d.channels[0][i] + d.channels[1][i];
      assert.ok(Math.abs(ffmpeg[i] - sum * Math.SQRT1_2) <= 1e-6, `${path}[${i}]: ffmpeg ${ffmpeg[i]} vs (L + R)/√2 ${sum * Math.SQRT1_2}`);
    }
  }
});

test('golden: a 44.1 kHz WAV: resampled with torchaudio\'s filter, not ffmpeg\'s (difference measured, small below 6 kHz)', async (t) => {
  const path = 'wav/pcm_s16_mono_44k.wav';
  const got = await readAudio(fixture(path));
  const ffmpeg = fixtureF32(doc.files[path].ffmpeg);
  assert.equal(got.length, ffmpeg.length);
  const { worst } = maxAbsDiff(got.subarray(64, -64), ffmpeg.subarray(64, -64));
  assert.ok(worst < 0.1, `max |diff| ${worst}`);
  t.diagnostic(`44.1 kHz → 16 kHz, 50 ms of two tones and a chirp to 7.8 kHz: max |ours − ffmpeg| ${worst.toExponential(2)} away from the ends`);
});

test('golden: FLAC (16-bit mono, 24-bit stereo) decodes to its source WAV\'s samples exactly', async () => {
  for (const [path, info] of Object.entries(doc.files).filter(([p]) => p.endsWith('.flac'))) {
    const got = await decodeFlac(fixture(path));
    const want = decodeWav(fixture(info.source));
    assert.equal(got.samplingRate, want.samplingRate);
    assert.equal(got.bitsPerSample, want.bitsPerSample);
    assert.equal(got.channels.length, want.channels.length);
    got.channels.forEach((c, i) => assert.deepEqual(c, want.channels[i], `${path} channel ${i}`));
    assert.deepEqual((await decodeAudio(fixture(path))).channels, got.channels, 'decodeAudio sniffs FLAC');
  }
});

/** A WAV file's bytes: 16-bit mono unless told, with the header fields overridable to make it wrong. */
function wav({ channels = 1, rate = 16000, bits = 16, format = 1, frames = 100, blockAlign, dataSize, fmtSize = 16, order = ['fmt ', 'data'], riff = 'RIFF', wave = 'WAVE' } = {}) {
  const block = blockAlign ?? (channels * bits) / 8;
  const data = new Uint8Array(frames * ((channels * bits) / 8)).map((_, i) => (i * 37) & 0xff);
  const fmt = new DataView(new ArrayBuffer(Math.max(16, fmtSize)));
  fmt.setUint16(0, format, true); fmt.setUint16(2, channels, true); fmt.setUint32(4, rate, true);
  fmt.setUint32(8, rate * block, true); fmt.setUint16(12, block, true); fmt.setUint16(14, bits, true);
  const chunk = (id, body, size = body.length) => { const h = new DataView(new ArrayBuffer(8)); [...id].forEach((c, i) => h.setUint8(i, c.charCodeAt(0))); h.setUint32(4, size, true); return [new Uint8Array(h.buffer), body]; };
  const parts = order.flatMap((id) => (id === 'fmt ' ? chunk('fmt ', new Uint8Array(fmt.buffer, 0, fmtSize)) : chunk('data', data, dataSize ?? data.length)));
  const body = [new TextEncoder().encode(wave), ...parts];
  const len = body.reduce((n, p) => n + p.length, 0);
  const head = new DataView(new ArrayBuffer(8));
  [...riff].forEach((c, i) => head.setUint8(i, c.charCodeAt(0)));
  head.setUint32(4, len, true);
  const out = new Uint8Array(8 + len);
  out.set(new Uint8Array(head.buffer));
  let o = 8;
  for (const p of body) { out.set(p, o); o += p.length; }
  return out;
}

test('corrupt, truncated and unsupported files: a clear error naming the argument, and nothing read past the damage', async () => {
  const bad = async (bytes, code, re, name) => {
    await assert.rejects(readAudio(bytes, name ? { name } : undefined), (e) => { assert.equal(e.code, code, e.message); assert.match(e.message, re); return true; });
  };
  const good = wav();
  assert.equal(decodeWav(good).channels[0].length, 100);
  await bad(good.subarray(0, good.length - 10), 'ERR_AUDIO_DECODE', /^audio: not a valid WAV file: its 'data' chunk declares 200 bytes but only 190 follow \(a truncated file\)/);
  await bad(good.subarray(0, 30), 'ERR_AUDIO_DECODE', /its 'fmt ' chunk declares 16 bytes, 10 remain/);
  await bad(good.subarray(0, 8), 'ERR_AUDIO_DECODE', /^audio: not a valid WAV file: 8 bytes is shorter than a RIFF header \(12\)/);
  await bad(wav({ order: ['data', 'fmt '] }), 'ERR_AUDIO_DECODE', /'data' chunk comes before any 'fmt '/);
  await bad(wav({ order: ['fmt '] }), 'ERR_AUDIO_DECODE', /no 'data' chunk/);
  await bad(wav({ order: ['data'] }), 'ERR_AUDIO_DECODE', /'data' chunk comes before any 'fmt '/);
  await bad(wav({ blockAlign: 3 }), 'ERR_AUDIO_DECODE', /block align 3 ≠ 1 channels × 2 bytes/);
  await bad(wav({ channels: 0 }), 'ERR_AUDIO_DECODE', /0 channels/);
  await bad(wav({ rate: 0 }), 'ERR_AUDIO_DECODE', /sampling rate of 0 Hz/);
  await bad(wav({ fmtSize: 14 }), 'ERR_AUDIO_DECODE', /'fmt ' chunk has 14 bytes/);
  await bad(wav({ dataSize: 199 }), 'ERR_AUDIO_DECODE', /199 bytes, not a whole number of 2-byte frames/);
  await bad(wav({ frames: 0 }), 'ERR_INVALID_ARGUMENT', /^recording: expected at least one sample, got a file that holds none \(WAV, 0 samples\)/, 'recording');
  await bad(wav({ bits: 12, blockAlign: 2 }), 'ERR_UNSUPPORTED', /PCM WAV of 12 bits per sample is not read; expected 8, 16, 24, 32/);
  await bad(wav({ format: 2 }), 'ERR_UNSUPPORTED', /WAV sample format 2 \(0x2\) is not read/);
  await bad(wav({ riff: 'RIFX' }), 'ERR_UNSUPPORTED', /RIFX WAV files are not read/);
  await bad(wav({ wave: 'AVI ' }), 'ERR_AUDIO_DECODE', /it does not start with 'RIFF' … 'WAVE'/);
  // Float samples that are not finite: decoded, then refused by name.
  const nan = wav({ format: 3, bits: 32, frames: 4 });
  new DataView(nan.buffer).setFloat32(nan.length - 8, NaN, true);
  await bad(nan, 'ERR_INVALID_ARGUMENT', /^audio\.channels\[0\]|^audio\.data|sample 2 .*NaN/);
  // Not WAV or FLAC in Node: the format named.
  await bad(new Uint8Array([0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0]), 'ERR_UNSUPPORTED', /MP3 is not decoded in Node; attnwasm decodes WAV and FLAC there/);
  await bad(new TextEncoder().encode('OggS and more'), 'ERR_UNSUPPORTED', /Ogg is not decoded in Node/);
  await bad(new TextEncoder().encode('hello, world'), 'ERR_AUDIO_DECODE', /not an audio file attnwasm recognises/);
  await bad(new Uint8Array(0), 'ERR_AUDIO_DECODE', /the file is empty \(0 bytes\)/);
  await assert.rejects(readAudio(new URL('file:///nonexistent/x.wav')), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /cannot read .*ENOENT/.test(e.message));
  await assert.rejects(readAudio(42), (e) => e instanceof TypeError && /audio: expected/.test(e.message));
  // FLAC: damaged frames (the decoder drops them silently: the STREAMINFO count catches it), a cut file, a bad header.
  const flac = fixture('flac/flac_s16_mono_16k.flac');
  const damaged = flac.slice();
  for (let i = damaged.length - 300; i < damaged.length - 250; i++) damaged[i] ^= 0x5a;
  await bad(damaged, 'ERR_AUDIO_DECODE', /^audio: not a valid FLAC file: it declares 800 samples per channel, 512 could be decoded \(damaged or missing frames\)/);
  await bad(flac.subarray(0, flac.length - 300), 'ERR_AUDIO_DECODE', /not a valid FLAC file/);
  await bad(flac.subarray(0, 30), 'ERR_AUDIO_DECODE', /shorter than its STREAMINFO block/);
  const noInfo = flac.slice(); noInfo[4] = 0x84;
  await bad(noInfo, 'ERR_AUDIO_DECODE', /first metadata block is of type 4/);
  assert.equal(sniffFormat(flac), 'FLAC');
  // Still working after all that.
  assert.equal((await readAudio(good)).length, 100);
});
