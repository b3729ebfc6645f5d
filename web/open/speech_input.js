// The audio given to the transcribe card (transcribe.js): a file picked or dropped, or a recording from the
// microphone. WAV and FLAC go to the worker as they are (the File), decoded there by attnwasm's own decoders (none of
// it on the main thread); another format (MP3, Ogg, M4A, WebM) is decoded here by the browser (decodeWithAudioContext at 16 kHz:
// the decoding itself runs off the main thread), its channels sent as they come (the worker mixes them). A recording
// is microphoneChunks' 16 kHz chunks, joined when it stops. The <audio> element plays what was given; its object
// URL is owned here and revoked when other audio comes.
import { decodeWithAudioContext, microphoneChunks, sniffFormat } from 'attnwasm/audio';
import { $, show } from './dom.js';

/** Samples a second: Whisper's feature extractor's rate, the rate recordings and decoded files are given at. */
export const RATE = 16000;

/**
 * The audio on show: `input` { name, audio (what stream() and transcribe() take: a WAV or FLAC File, { channels,
 * samplingRate } or a Float32Array), format, seconds (null when not known) } once some is given; `rec` ({
 * controller, stream, finished }) while recording; `url` the player's object URL.
 */
export const speech = { input: null, rec: null, url: null };

/** The player's source: `blob`'s object URL (the last one revoked), and its duration once read (null: not known). */
function play(blob) {
  if (speech.url) URL.revokeObjectURL(speech.url);
  speech.url = URL.createObjectURL(blob);
  const player = $('speech-player');
  const seconds = new Promise((resolve) => {
    const done = () => {
      player.removeEventListener('loadedmetadata', done);
      player.removeEventListener('error', done);
      resolve(Number.isFinite(player.duration) ? player.duration : null);
    };
    player.addEventListener('loadedmetadata', done);
    player.addEventListener('error', done);
  });
  player.src = speech.url;
  show(player);
  return seconds;
}

/**
 * A file's audio as the worker takes it: WAV, FLAC as the File itself (a Blob crosses to the worker without a copy;
 * the worker reads its bytes and decodes them); anything else decoded by the browser (throws when it cannot).
 */
async function fromFile(file) {
  const format = sniffFormat(new Uint8Array(await file.slice(0, 16).arrayBuffer()));
  if (format === 'WAV' || format === 'FLAC') return { name: file.name, audio: file, format, seconds: await play(file) };
  const bytes = new Uint8Array(await file.arrayBuffer());
  const decoded = await decodeWithAudioContext(bytes, { samplingRate: RATE, name: file.name });
  play(file);
  return { name: file.name, audio: decoded, format: format ?? file.type ?? 'unknown', seconds: decoded.channels[0].length / decoded.samplingRate };
}

/** 16-bit PCM WAV bytes of mono samples (the recording, for the player). */
function wavBlob(x) {
  const b = new DataView(new ArrayBuffer(44 + 2 * x.length));
  const text = (at, s) => [...s].forEach((c, i) => b.setUint8(at + i, c.charCodeAt(0)));
  text(0, 'RIFF'); b.setUint32(4, 36 + 2 * x.length, true); text(8, 'WAVEfmt ');
  b.setUint32(16, 16, true); b.setUint16(20, 1, true); b.setUint16(22, 1, true);
  b.setUint32(24, RATE, true); b.setUint32(28, 2 * RATE, true); b.setUint16(32, 2, true); b.setUint16(34, 16, true);
  text(36, 'data'); b.setUint32(40, 2 * x.length, true);
  for (let i = 0; i < x.length; i++) b.setInt16(44 + 2 * i, Math.max(-32768, Math.min(32767, Math.round(x[i] * 32768))), true);
  return new Blob([b.buffer], { type: 'audio/wav' });
}

/** Starts recording from the microphone; resolves once it records (throws when the browser refuses it). */
async function startRecording(onTick) {
  if (!navigator.mediaDevices?.getUserMedia) throw new Error('this browser gives no microphone here (it needs a secure context: https or localhost)');
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1 } });
  const controller = new AbortController();
  const chunks = [];
  let n = 0;
  const finished = (async () => {
    try {
      for await (const c of microphoneChunks(stream, { chunkLengthS: 0.25, signal: controller.signal })) {
        chunks.push(c);
        n += c.length;
        onTick(n / RATE);
      }
    } finally {
      for (const t of stream.getTracks()) t.stop();
    }
    const x = new Float32Array(n);
    let at = 0;
    for (const c of chunks) { x.set(c, at); at += c.length; }
    return x;
  })();
  speech.rec = { controller, stream, finished };
}

/** Stops the recording; resolves to its audio input (null when it holds no sample). */
async function stopRecording() {
  const rec = speech.rec;
  speech.rec = null;
  rec.controller.abort();
  const x = await rec.finished;
  if (!x.length) return null;
  play(wavBlob(x));
  return { name: 'recording', audio: x, format: 'microphone', seconds: x.length / RATE };
}

/**
 * Wires the drop zone, the file input and Record: `onInput(input)` with the audio given (speech.input set), or
 * `onError(message)` when it cannot be read; `onRecording(on)` as a recording starts and stops.
 */
export function mountSpeechInput({ onInput, onError, onRecording }) {
  const zone = $('speech-drop');
  const take = async (file) => {
    try {
      speech.input = await fromFile(file);
    } catch (e) {
      show($('speech-player'), false);
      onError(e.message);
      return;
    }
    onInput(speech.input);
  };
  $('speech-file').addEventListener('change', (e) => {
    const file = e.target.files[0];
    e.target.value = '';  // the same file picked again is a change again
    if (file) take(file);
  });
  zone.addEventListener('dragover', (e) => {
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    const file = e.dataTransfer.files[0];
    if (file) take(file);
  });
  $('record').addEventListener('click', async () => {
    const button = $('record');
    if (speech.rec) {
      button.disabled = true;
      const input = await stopRecording();
      button.disabled = false;
      button.textContent = 'Record';
      onRecording(false);
      if (input) {
        speech.input = input;
        onInput(input);
      } else onError('The recording holds no sound: nothing came from the microphone.');
      return;
    }
    try {
      button.disabled = true;
      await startRecording((s) => { $('record-note').textContent = `recording… ${s.toFixed(1)} s`; });
    } catch (e) {
      onError(`The microphone cannot be used: ${e.message}`);
      return;
    } finally {
      button.disabled = false;
    }
    button.textContent = 'Stop recording';
    $('record-note').textContent = 'recording…';
    onRecording(true);
  });
}
