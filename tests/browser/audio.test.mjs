// attnwasm/audio in headless Chromium, without a bundler (an import map for the FLAC decoder's packages):
//   - AudioContext.decodeAudioData of the 16 kHz WAV fixtures gives the Node path's samples (decodeWav): the same
//     floats for 24- and 32-bit PCM and float32; for 8- and 16-bit PCM the same integers, which Chromium scales
//     asymmetrically (int · float32(1 / (2^(b−1) − 1)) for int ≥ 0, int / 2^(b−1) below; ffmpeg: / 2^(b−1) always),
//     so readAudio decodes WAV with its own code in browsers too; float64 WAV Chromium does not decode;
//   - readAudio of WAV and FLAC in the page gives Node's samples; a 44.1 kHz WAV decoded by the browser at 16 kHz
//     (Chromium's resampler) is compared with readAudio's (torchaudio's filter) and the difference reported;
//   - WhisperFeatureExtractor in the page gives Node's features bit for bit;
//   - microphoneChunks turns a live MediaStream (a 440 Hz oscillator through MediaStreamAudioDestinationNode, and
//     getUserMedia's fake device) into 16 kHz chunks of the asked length, the tone at 440 Hz.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT } from '../tarball.mjs';
import { launchChromium } from './chromium.mjs';
import { startStatic } from './static_server.mjs';
import { decodeWav, readAudio, WhisperFeatureExtractor } from '../../bindings/audio/index.js';
import { loadGoldens, fixture } from '../data/whisper_goldens.mjs';
import { signal, fnv1a } from '../data/whisper_signals.mjs';

const { doc } = loadGoldens();
const DIR = '/tests/data/goldens/whisper_features/';
const wavs = Object.keys(doc.files).filter((p) => p.endsWith('.wav'));
const flacs = Object.keys(doc.files).filter((p) => p.endsWith('.flac'));
const toneSpec = doc.features.find((c) => c.name === 'tone_0.1s_80').signal;

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm/audio</title>
<script type="importmap">
{ "imports": {
  "@wasm-audio-decoders/flac": "/node_modules/@wasm-audio-decoders/flac/index.js",
  "@wasm-audio-decoders/common": "/node_modules/@wasm-audio-decoders/common/index.js",
  "codec-parser": "/node_modules/codec-parser/index.js",
  "simple-yenc": "/node_modules/simple-yenc/dist/esm.js",
  "@eshaz/web-worker": "data:text/javascript,export default globalThis.Worker;"
} }
</script></head>
<body><button id="start">start</button><script type="module">
  import { decodeWav, decodeWithAudioContext, readAudio, WhisperFeatureExtractor, microphoneChunks } from '/bindings/audio/index.js';
  import { signal, fnv1a } from '/tests/data/whisper_signals.mjs';
  const DIR = ${JSON.stringify(DIR)};
  const bytes = async (p) => new Uint8Array(await (await fetch(DIR + p)).arrayBuffer());
  const out = { decodeAudioData: {}, readAudio: {}, errors: [] };
  for (const p of ${JSON.stringify(wavs)}) {
    const b = await bytes(p);
    out.readAudio[p] = fnv1a(await readAudio(b));
    const ours = decodeWav(b);
    if (ours.samplingRate !== 16000) continue;
    try {
      const theirs = await decodeWithAudioContext(b, { samplingRate: 16000 });
      out.decodeAudioData[p] = { channels: theirs.channels.map((c) => Array.from(c)) };
    } catch (e) { out.decodeAudioData[p] = { error: e.code + ': ' + e.message }; }
  }
  for (const p of ${JSON.stringify(flacs)}) out.readAudio[p] = fnv1a(await readAudio(await bytes(p)));
  const b44 = await bytes('wav/pcm_s16_mono_44k.wav');
  const chromium = (await decodeWithAudioContext(b44, { samplingRate: 16000 })).channels[0], ours = await readAudio(b44);
  let worst = 0;
  for (let t = 64; t < Math.min(chromium.length, ours.length) - 64; t++) worst = Math.max(worst, Math.abs(chromium[t] - ours[t]));
  out.resample44k = { chromium: chromium.length, ours: ours.length, worst };
  try { await decodeWithAudioContext(new TextEncoder().encode('not audio at all')); } catch (e) { out.errors.push(e.code); }
  const feats = new WhisperFeatureExtractor().features(signal(${JSON.stringify(toneSpec)}));
  out.features = fnv1a(feats.data);
  window.decoded = out;
  // Live streams need the page to have been clicked (autoplay policy).
  document.getElementById('start').onclick = async () => {
    const live = async (stream) => {
      const chunks = [];
      for await (const c of microphoneChunks(stream, { chunkLengthS: 0.25 })) { chunks.push(c); if (chunks.length === 4) break; }
      stream.getTracks().forEach((t) => t.stop());
      // Goertzel power at a few frequencies over the last chunk: the tone must be at 440 Hz.
      const x = chunks[3], power = (f) => { let s1 = 0, s2 = 0; const k = 2 * Math.cos(2 * Math.PI * f / 16000);
        for (const v of x) { const s = v + k * s1 - s2; s2 = s1; s1 = s; } return s1 * s1 + s2 * s2 - k * s1 * s2; };
      const freqs = [220, 440, 880, 1000, 3000];
      return { lengths: chunks.map((c) => c.length), loudest: freqs.reduce((a, f) => (power(f) > power(a) ? f : a)), rms: Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length) };
    };
    const ctx = new AudioContext();
    const osc = new OscillatorNode(ctx, { frequency: 440 }), gain = new GainNode(ctx, { gain: 0.5 });
    const dest = new MediaStreamAudioDestinationNode(ctx);
    osc.connect(gain).connect(dest);
    osc.start();
    const oscillator = await live(dest.stream);
    osc.stop(); await ctx.close();
    let fake;
    try { fake = await live(await navigator.mediaDevices.getUserMedia({ audio: true })); } catch (e) { fake = { error: String(e) }; }
    window.live = { oscillator, fake, sampleRate: new AudioContext().sampleRate };
  };
</script></body></html>`;

test('attnwasm/audio in Chromium: decodeAudioData of WAV = the Node path; readAudio, features, microphone chunks', async (t) => {
  const server = await startStatic({ root: ROOT.replace(/\/$/, ''), allow: ['bindings', 'node_modules', 'tests'], routes: { '/audio.html': { type: 'text/html; charset=utf-8', body: PAGE } } });
  const browser = await launchChromium({ args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'] });
  try {
    await browser.context.grantPermissions(['microphone'], { origin: server.url });
    const page = await browser.context.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
    await page.goto(`${server.url}audio.html`);
    await page.waitForFunction(() => window.decoded !== undefined, null, { timeout: 60_000 });
    const r = await page.evaluate(() => window.decoded);
    // decodeAudioData: every 16 kHz WAV Chromium decodes gives decodeWav's samples (8/16 bits: its scaling of the same integers).
    const same = [], asymmetric = [];
    for (const p of wavs) {
      const ours = decodeWav(fixture(p));
      if (ours.samplingRate !== 16000) continue;
      const c = r.decodeAudioData[p];
      if (c.error) { t.diagnostic(`${p}: Chromium does not decode it (${c.error})`); continue; }
      assert.equal(c.channels.length, ours.channels.length, p);
      const s = 2 ** (ours.bitsPerSample - 1), small = ours.sampleFormat === 'pcm' && ours.bitsPerSample <= 16;
      let worst = 0;
      c.channels.forEach((ch, i) => {
        assert.equal(ch.length, ours.channels[i].length, p);
        ch.forEach((v, k) => {
          const o = ours.channels[i][k], int = Math.round(o * s);
          const want = small ? Math.fround(int >= 0 ? Math.fround(int) * Math.fround(1 / (s - 1)) : o) : o;
          if (v !== want) assert.fail(`${p}: channel ${i}, sample ${k}: decodeAudioData ${v}, expected ${want} (decodeWav ${o})`);
          worst = Math.max(worst, Math.abs(v - o));
        });
      });
      (small ? asymmetric : same).push(`${p.slice(4, -4)}${small ? ` (max |diff| ${worst.toExponential(2)})` : ''}`);
    }
    t.diagnostic(`decodeAudioData = decodeWav exactly: ${same.join(', ')}; the same integers, scaled asymmetrically: ${asymmetric.join(', ')}`);
    assert.equal(same.length + asymmetric.length, wavs.length - 2, 'every 16 kHz WAV but float64 decodes');
    // readAudio in the page = readAudio in Node, for every WAV and FLAC.
    for (const p of [...wavs, ...flacs]) assert.equal(r.readAudio[p], fnv1a(await readAudio(fixture(p))), p);
    assert.equal(r.resample44k.chromium, r.resample44k.ours);
    t.diagnostic(`44.1 kHz WAV: Chromium's decodeAudioData resampling vs readAudio's: max |diff| ${r.resample44k.worst.toExponential(2)} away from the ends`);
    assert.deepEqual(r.errors, ['ERR_AUDIO_DECODE']);
    assert.equal(r.features, fnv1a(new WhisperFeatureExtractor().features(signal(toneSpec)).data), 'features in Chromium = features in Node');
    // Live streams.
    await page.click('#start');
    await page.waitForFunction(() => window.live !== undefined, null, { timeout: 30_000 });
    const live = await page.evaluate(() => window.live);
    t.diagnostic(`AudioContext at ${live.sampleRate} Hz; oscillator: ${JSON.stringify(live.oscillator)}; fake microphone: ${JSON.stringify(live.fake)}`);
    assert.deepEqual(live.oscillator.lengths, [4000, 4000, 4000, 4000]);
    assert.equal(live.oscillator.loudest, 440);
    assert.ok(live.oscillator.rms > 0.3 && live.oscillator.rms < 0.4, `rms ${live.oscillator.rms} (a 0.5 sine: 0.354)`);
    assert.deepEqual(live.fake.lengths, [4000, 4000, 4000, 4000], JSON.stringify(live.fake));
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    await browser.close();
    await server.close();
  }
});
