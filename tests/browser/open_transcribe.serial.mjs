// The open page (web/open/) with a Whisper speech recognizer (issue 41), in headless Chromium against
// tools/serve.mjs: the small random Whisper folder of tests/data/goldens/whisper/tiny (made by transformers), copied
// to a temporary folder and picked as a person picks a folder. WAV files are made here from
// tests/data/whisper_signals.mjs's signals (16-bit PCM) and given as a person gives them: picked, and dropped; a FLAC
// fixture of the audio goldens is picked (decoded in the worker by the FLAC decoder tools/serve.mjs serves). The
// page's segments (text and times) and options are compared with Node's model.stream() (transcribe() without
// timestamps) on the same folder and the samples decodeWav reads from the same bytes — not with fixed outputs, so the
// folder may be made again with other weights. 3 s and 40 s (two windows, several segments) transcribe; a language
// and task chosen, and timestamps off, run as Node's; Stop ends a long run and the card runs again after; a file
// that is no audio shows a readable error; a recording from Chromium's fake microphone (a beep) transcribes. No
// console error, no 404, and no main-thread task over LONG_TASK_FAIL_MS from the load on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../tools/serve.mjs';
import { init } from '../../bindings/index.js';
import { decodeWav, readAudio } from '../../bindings/audio/index.js';
import { signal } from '../data/whisper_signals.mjs';
import { launchChromium, watchedPage, LONG_TASK_FAIL_MS } from './chromium.mjs';
import { ARTIFACTS } from './demo_pages.mjs';

const WHISPER = fileURLToPath(new URL('../data/goldens/whisper/tiny/', import.meta.url));
/** A FLAC fixture of the audio goldens (16-bit mono, 16 kHz): decoded in the page's worker by @wasm-audio-decoders/flac. */
const FLAC = fileURLToPath(new URL('../data/goldens/whisper_features/flac/flac_s16_mono_16k.flac', import.meta.url));
// The folder comes to main with the Whisper family's tests; without it there is nothing to open.
const skip = existsSync(join(WHISPER, 'model.safetensors')) ? false : 'no tests/data/goldens/whisper/tiny (the Whisper family\'s golden folder)';
let tmp, dir, server, browser, aw, ref;
const wav = {};

/** A chirp over noise, `seconds` long, as 16-bit PCM WAV bytes at 16 kHz. */
function wavBytes(seconds) {
  const x = signal({ kind: 'mix', seconds, parts: [{ kind: 'chirp', seconds, f0: 200, f1: 3000, amp: 0.5 }, { kind: 'noise', seed: 7, ampLog2: -6, seconds }] });
  const b = Buffer.alloc(44 + 2 * x.length);
  b.write('RIFF', 0); b.writeUInt32LE(36 + 2 * x.length, 4); b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16); b.writeUInt16LE(1, 20); b.writeUInt16LE(1, 22); b.writeUInt32LE(16000, 24); b.writeUInt32LE(32000, 28);
  b.writeUInt16LE(2, 32); b.writeUInt16LE(16, 34); b.write('data', 36); b.writeUInt32LE(2 * x.length, 40);
  for (let i = 0; i < x.length; i++) b.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(x[i] * 32768))), 44 + 2 * i);
  return b;
}

before(async () => {
  if (skip) return;
  tmp = mkdtempSync(join(tmpdir(), 'attnwasm-open-transcribe-'));
  dir = join(tmp, 'whisper-tiny');
  cpSync(WHISPER, dir, { recursive: true });
  for (const s of [3, 40, 600]) {
    wav[s] = join(tmp, `chirp_${s}s.wav`);
    writeFileSync(wav[s], wavBytes(s));
  }
  wav.bad = join(tmp, 'notes.wav');
  writeFileSync(wav.bad, 'these are notes, not audio\n'.repeat(20));
  aw = await init({ threads: 1 });
  ref = await aw.loadModel(dir);
  server = await startServer({ port: 0 });
  // Chromium's fake microphone (a beep), granted without asking.
  browser = await launchChromium({ viewport: { width: 1280, height: 1300 }, extraArgs: ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'] });
}, { timeout: 60_000 });
after(async () => {
  await browser?.close();
  await server?.close();
  ref?.dispose();
  await aw?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** The samples the worker reads from a WAV file (decodeWav of its bytes), or a FLAC file (readAudio). */
const samplesOf = async (path) => (path.endsWith('.flac') ? readAudio(readFileSync(path)) : decodeWav(readFileSync(path)).channels[0]);

/** Node's answer for the page's run: stream()'s segments (or transcribe()'s text without timestamps), same options. */
async function nodeRun(path, run) {
  if (run.mode === 'transcribe') return { text: (await ref.transcribe(await samplesOf(path), run.options)).text };
  const segments = [];
  for await (const s of ref.stream(await samplesOf(path), run.options)) segments.push(s);
  return { segments, text: segments.map((s) => s.text).join('') };
}

/** The open page with the folder picked and loaded. */
async function opened() {
  const { page, problems } = await watchedPage(browser.context);
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} ${new URL(r.url()).pathname}`); });
  await page.goto(`${server.url}web/open/`);
  await page.waitForFunction(() => document.body.dataset.ready === 'true', null, { timeout: 30_000 });
  await page.setInputFiles('#pick-folder', dir);
  await page.waitForSelector('#fit-card:not(.hidden)');
  await page.click('#load');
  await page.waitForFunction(() => document.body.dataset.loaded === 'true', null, { timeout: 30_000 });
  return { page, problems };
}

const seqOf = (page) => page.evaluate(() => window.openDemo.state.transcribe?.seq ?? -1);

/** Waits for the run after `seq` to start (wait: false) or to end; resolves to it. */
async function ran(page, seq, { wait = true } = {}) {
  await page.waitForFunction(({ q, w }) => {
    const r = window.openDemo.state.transcribe;
    return r && r.seq > q && (!w || !r.running);
  }, { q: seq, w: wait }, { timeout: 60_000 });
  return page.evaluate(() => window.openDemo.state.transcribe);
}

/** A file picked (each new audio is transcribed at once). */
async function pick(page, path, o) {
  const seq = await seqOf(page);
  await page.setInputFiles('#speech-file', path);
  return ran(page, seq, o);
}

/** A file dropped on the drop zone, as a person drags it there. */
async function drop(page, path, name) {
  const seq = await seqOf(page);
  const dt = await page.evaluateHandle(({ b64, n }) => {
    const t = new DataTransfer();
    t.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], n, { type: 'audio/wav' }));
    return t;
  }, { b64: readFileSync(path).toString('base64'), n: name });
  await page.dispatchEvent('#speech-drop', 'drop', { dataTransfer: dt });
  return ran(page, seq);
}

/** Transcribe pressed with the options set. */
async function press(page) {
  const seq = await seqOf(page);
  await page.click('#transcribe');
  return ran(page, seq);
}

const shownRows = (page) => page.$$eval('#segments tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
const longTasks = (page, from) => page.evaluate((t) => window.longTasks.filter((e) => e.start >= t), from);
const showLong = (long) => (long.length ? long.map((e) => `${Math.round(e.ms)} ms at ${Math.round(e.start)}`).join(', ') : 'none');

test('open page: a Whisper folder transcribes WAV files picked and dropped as Node\'s stream() does; a language, a task, no timestamps; a file that is no audio', { skip }, async (t) => {
  const { page, problems } = await opened();
  assert.equal(await page.evaluate(() => window.openDemo.state.kind), 'SpeechRecognizer');
  assert.equal(await page.textContent('#model-title'), 'A whisper speech recognizer');
  const facts = (await page.textContent('#facts')).replace(/\s+/g, ' ');
  assert.match(facts, /layers2 encoder \+ 2 decoder, width 16/);
  assert.match(facts, /languages99, detected or chosen/);
  assert.equal(await page.isVisible('#transcribe-card'), true);
  assert.equal(await page.isVisible('#translate-card'), false);
  // The languages: Auto-detect, then generation_config.json's lang_to_id, named.
  const codes = await page.$$eval('#speech-lang option', (o) => o.map((x) => x.value));
  assert.equal(codes[0], '');
  assert.deepEqual(codes.slice(1).sort(), Object.keys(ref.generationConfig.lang_to_id).map((k) => k.slice(2, -2)).sort());
  assert.equal(await page.$eval('#speech-lang option[value="fr"]', (o) => o.textContent), 'French (fr)');
  assert.equal(await page.isVisible('#speech-task'), true);
  assert.equal(await page.isDisabled('#transcribe'), true, 'no audio yet');

  const t0 = await page.evaluate(() => performance.now());
  // 3 s picked: auto-detected language, segments streamed, as Node's stream() with the same options.
  const a = await pick(page, wav[3]);
  assert.equal(a.stopReason, 'done', a.error ?? '');
  assert.equal(a.mode, 'stream');
  assert.deepEqual(a.options, { task: 'transcribe', returnLanguage: true });
  const want = await nodeRun(wav[3], a);
  assert.deepEqual(a.segments, want.segments, '3 s: Node\'s segments');
  assert.ok(want.segments.length >= 1);
  assert.equal(a.language, want.segments.at(-1).language);
  assert.deepEqual(await shownRows(page), want.segments.map((s) => [`[${s.timestamp[0].toFixed(2)} – ${s.timestamp[1].toFixed(2)}]`, s.text]));
  assert.equal(Math.abs(a.seconds - 3) < 0.01, true, `${a.seconds} s`);
  assert.match(await page.textContent('#transcribe-stats [data-stat="language"] b'), /\(detected\)$/);
  assert.match(await page.textContent('#transcribe-stats [data-stat="rtf"] b'), /^\d+\.\d{3}$/);
  assert.equal(await page.textContent('#transcribe-stats [data-stat="end"]'), 'done');
  t.diagnostic(`3 s: ${want.segments.length} segment(s), ${a.language}, ${a.ms.toFixed(0)} ms`);

  // 40 s dropped: two windows, several segments, as Node's.
  const b = await drop(page, wav[40], 'chirp_40s.wav');
  assert.equal(b.stopReason, 'done', b.error ?? '');
  assert.equal(b.source, 'chirp_40s.wav');
  const want40 = await nodeRun(wav[40], b);
  assert.ok(want40.segments.length >= 2, `${want40.segments.length} segments`);
  assert.deepEqual(b.segments, want40.segments, '40 s: Node\'s segments');
  assert.ok(b.firstMs < b.ms, 'the first segment came before the end');
  assert.equal(await page.textContent('#transcribe-stats [data-stat="segments"] b'), String(want40.segments.length));
  t.diagnostic(`40 s: ${want40.segments.length} segments, the first after ${b.firstMs.toFixed(0)} ms, all after ${b.ms.toFixed(0)} ms`);

  // A FLAC file: decoded in the worker too.
  const f = await pick(page, FLAC);
  assert.equal(f.stopReason, 'done', f.error ?? '');
  assert.deepEqual(f.segments, (await nodeRun(FLAC, f)).segments, 'FLAC: Node\'s segments');
  assert.match(await page.textContent('#speech-source'), /^flac_s16_mono_16k\.flac · FLAC · \d+\.\d s$/);

  // A language and the task chosen, then timestamps off (transcribe(): one text; over 30 s the pipeline's chunks).
  await page.selectOption('#speech-lang', 'fr');
  await page.selectOption('#speech-task', 'translate');
  await pick(page, wav[3]);
  const c = await press(page);
  assert.deepEqual(c.options, { language: 'fr', task: 'translate' });
  assert.deepEqual(c.segments, (await nodeRun(wav[3], c)).segments);
  assert.equal(c.language, 'fr');
  // Per word (the folder names alignment_heads): each window's words as rows, as Node's stream() gives them.
  assert.equal(await page.isVisible('#speech-words-field'), true);
  await page.selectOption('#speech-task', 'transcribe');
  await page.check('#speech-words');
  const w = await pick(page, wav[40]);
  assert.deepEqual(w.options, { language: 'fr', task: 'transcribe', returnTimestamps: 'word' });
  const wantWords = (await nodeRun(wav[40], w)).segments;
  assert.ok(wantWords.length >= 1, `${wantWords.length} words`);
  assert.deepEqual(w.segments, wantWords, '40 s: Node\'s words');
  assert.deepEqual(await shownRows(page), wantWords.map((s) => [`[${s.timestamp[0].toFixed(2)} – ${s.timestamp[1].toFixed(2)}]`, s.text]));
  t.diagnostic(`40 s per word: ${wantWords.length} words in ${w.ms.toFixed(0)} ms`);
  await page.uncheck('#speech-words');
  await page.selectOption('#speech-task', 'translate');
  await pick(page, wav[3]);
  await page.uncheck('#speech-timestamps');
  const d = await press(page);
  assert.equal(d.mode, 'transcribe');
  assert.deepEqual(d.options, { language: 'fr', task: 'translate' });
  assert.equal(d.text, (await nodeRun(wav[3], d)).text);
  assert.deepEqual(await shownRows(page), [['', d.text]]);
  const e = await drop(page, wav[40], 'chirp_40s.wav');
  assert.deepEqual(e.options, { language: 'fr', task: 'translate', chunkLengthS: 30 });
  assert.equal(e.text, (await nodeRun(wav[40], e)).text);
  await page.check('#speech-timestamps');
  await page.selectOption('#speech-lang', '');
  await page.selectOption('#speech-task', 'transcribe');

  // A file that is no audio: the browser's decoder refuses it, said in words; the card runs again after.
  await page.setInputFiles('#speech-file', wav.bad);
  await page.waitForSelector('#transcribe-error:not(.hidden)');
  assert.match(await page.textContent('#transcribe-error'), /^notes\.wav: the browser could not decode it/);
  assert.equal(await page.isDisabled('#transcribe'), true);
  const again = await pick(page, wav[3]);
  assert.deepEqual(again.segments, want.segments);
  assert.equal(await page.isVisible('#transcribe-error'), false);

  await page.screenshot({ path: join(ARTIFACTS, 'open_transcribe.png'), fullPage: true });
  const long = await longTasks(page, t0);
  t.diagnostic(`main-thread tasks over 50 ms: ${showLong(long)}`);
  assert.deepEqual(long.filter((x) => x.ms > LONG_TASK_FAIL_MS), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('open page: Stop ends a long transcription; the card runs again after; a recording from the microphone transcribes', { skip }, async (t) => {
  const { page, problems } = await opened();
  try {
    const t0 = await page.evaluate(() => performance.now());
    // 10 minutes: stopped once its first segments have come.
    await pick(page, wav[600], { wait: false });
    await page.waitForFunction(() => window.openDemo.state.transcribe?.segments.length >= 1, null, { timeout: 60_000 });
    assert.equal(await page.isDisabled('#transcribe'), true, 'Transcribe waits while one runs');
    const clicked = await page.evaluate(() => performance.now());
    await page.click('#transcribe-stop');
    await page.waitForFunction(() => document.getElementById('transcribe-stats').dataset.state === 'stopped', null, { timeout: 10_000 });
    const stoppedAt = await page.evaluate(() => performance.now());
    const s = await page.evaluate(() => window.openDemo.state.transcribe);
    assert.equal(s.stopReason, 'aborted');
    assert.equal(s.error, null);
    assert.ok(s.segments.at(-1).timestamp[1] < 590, `stopped at ${s.segments.at(-1).timestamp[1]} s`);
    assert.equal(await page.textContent('#transcribe-stats [data-stat="end"]'), 'stopped');
    assert.equal(await page.isVisible('#transcribe-error'), false);
    t.diagnostic(`10 min stopped after ${s.segments.length} segments (to ${s.segments.at(-1).timestamp[1]} s), seen ${(stoppedAt - clicked).toFixed(0)} ms after Stop`);

    // The card runs on.
    const again = await pick(page, wav[3]);
    assert.equal(again.stopReason, 'done');
    assert.deepEqual(again.segments, (await nodeRun(wav[3], again)).segments);

    // The microphone (Chromium's fake device: a beep), about 2 s, then its transcription.
    await page.click('#record');
    await page.waitForFunction(() => document.getElementById('record').textContent === 'Stop recording');
    await page.waitForFunction(() => /recording… (2\.\d|[3-9])/.test(document.getElementById('record-note').textContent), null, { timeout: 10_000 });
    const seq = await seqOf(page);
    await page.click('#record');
    const r = await ran(page, seq);
    assert.equal(r.stopReason, 'done', r.error ?? '');
    assert.equal(r.source, 'recording');
    assert.ok(r.seconds >= 2 && r.seconds < 6, `${r.seconds} s recorded`);
    assert.equal(await page.textContent('#record'), 'Record');
    assert.equal(await page.isVisible('#speech-player'), true);
    t.diagnostic(`recording: ${r.seconds.toFixed(2)} s, ${r.segments.length} segment(s) in ${r.ms.toFixed(0)} ms`);

    const long = await longTasks(page, t0);
    t.diagnostic(`main-thread tasks over 50 ms: ${showLong(long)}`);
    assert.deepEqual(long.filter((x) => x.ms > LONG_TASK_FAIL_MS), []);
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});
