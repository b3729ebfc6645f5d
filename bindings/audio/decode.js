// Audio files → samples. WAV (wav.js) and FLAC (flac.js) are decoded by attnwasm's own code in Node
// and in browsers alike, so both give the same samples; any other format goes to the browser's
// decoder (AudioContext.decodeAudioData), and in Node is refused naming the format found. readAudio
// adds the rest: a path or URL (Node reads files; browsers fetch), the channel mean and the resampling
// to 16 kHz (audio_input.js).
import { AttnWasmError, describe } from '../errors.js';
import { isWav, decodeWav } from './wav.js';
import { isFlac, decodeFlac } from './flac.js';
import { toMono } from './audio_input.js';

/** The container a file's first bytes announce, for messages: 'WAV', 'FLAC', 'MP3', … or null. */
export function sniffFormat(b) {
  const s = (at, text) => b.length >= at + text.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0));
  if (isWav(b)) return 'WAV';
  if (isFlac(b)) return 'FLAC';
  if (s(0, 'ID3') || (b.length >= 2 && b[0] === 0xff && (b[1] & 0xe0) === 0xe0 && (b[1] & 0x06) !== 0)) return 'MP3';
  if (s(0, 'OggS')) return 'Ogg';
  if (s(4, 'ftyp')) return 'MP4/M4A';
  if (b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return 'WebM/Matroska';
  if (s(0, 'FORM') && (s(8, 'AIFF') || s(8, 'AIFC'))) return 'AIFF';
  if (s(0, 'RIFF')) return 'RIFF (not WAVE)';
  return null;
}

function bytesOf(input, name) {
  if (input instanceof Uint8Array) return input;
  if (input instanceof ArrayBuffer) return new Uint8Array(input);
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new TypeError(`${name}: expected the file's bytes (a Uint8Array or ArrayBuffer), got ${describe(input)}`);
}

/**
 * Decodes with the browser's own decoder: AudioContext.decodeAudioData on an OfflineAudioContext at
 * `samplingRate`, so the browser resamples (Chromium: its sinc resampler, not resample.js). A file at
 * that rate is not resampled: a 16 kHz WAV gives the same samples as decodeWav. Browsers only.
 * @returns {Promise<{channels: Float32Array[], samplingRate: number}>} new arrays owned by the caller
 */
export async function decodeWithAudioContext(input, { samplingRate = 16000, name = 'audio' } = {}) {
  const bytes = bytesOf(input, name);
  const Ctx = globalThis.OfflineAudioContext;
  if (typeof Ctx !== 'function') throw new AttnWasmError('ERR_UNSUPPORTED', `${name}: decodeWithAudioContext needs a browser (OfflineAudioContext); in Node use decodeAudio (WAV, FLAC)`);
  const ctx = new Ctx(1, 1, samplingRate);
  let buffer;
  try {
    // decodeAudioData detaches the ArrayBuffer it is given: hand it a copy.
    buffer = await ctx.decodeAudioData(bytes.slice().buffer);
  } catch (e) {
    throw new AttnWasmError('ERR_AUDIO_DECODE', `${name}: the browser could not decode it${sniffFormat(bytes) ? ` (${sniffFormat(bytes)})` : ''}: ${e?.message ?? e}`, { cause: e });
  }
  if (buffer.length === 0) throw new AttnWasmError('ERR_AUDIO_DECODE', `${name}: the browser decoded no samples`);
  return { channels: Array.from({ length: buffer.numberOfChannels }, (_, c) => buffer.getChannelData(c).slice()), samplingRate: buffer.sampleRate };
}

/**
 * Decodes an audio file's bytes: WAV and FLAC everywhere, anything else the browser decodes (there at
 * `samplingRate`). Channels are kept apart, at the file's rate (WAV, FLAC).
 * @param {Uint8Array | ArrayBuffer} input
 * @param {{samplingRate?: number, name?: string}} [o]
 * @returns {Promise<{channels: Float32Array[], samplingRate: number}>} new arrays owned by the caller
 */
export async function decodeAudio(input, { samplingRate = 16000, name = 'audio' } = {}) {
  const bytes = bytesOf(input, name);
  if (bytes.length === 0) throw new AttnWasmError('ERR_AUDIO_DECODE', `${name}: the file is empty (0 bytes)`);
  const format = sniffFormat(bytes);
  // Anything RIFF-like goes to the WAV reader, which says precisely what is wrong with it.
  if (format === 'WAV' || /^(RIFF|RIFX|RF64)$/.test(String.fromCharCode(...bytes.subarray(0, 4)))) return decodeWav(bytes, { name });
  if (format === 'FLAC') return decodeFlac(bytes, { name });
  if (typeof globalThis.OfflineAudioContext === 'function') return decodeWithAudioContext(bytes, { samplingRate, name });
  throw new AttnWasmError(format ? 'ERR_UNSUPPORTED' : 'ERR_AUDIO_DECODE',
    format ? `${name}: ${format} is not decoded in Node; attnwasm decodes WAV and FLAC there (convert it, e.g. ffmpeg -i in.${format === 'MP3' ? 'mp3' : 'x'} out.flac), browsers decode more`
      : `${name}: not an audio file attnwasm recognises (the first bytes are neither WAV nor FLAC, nor another known container)`);
}

// Held in a variable so that bundlers do not resolve a Node built-in for the browser (as sources.js does).
const NODE_FS = 'node:fs/promises';

async function readSource(source, name) {
  const isUrl = source instanceof URL;
  const text = isUrl ? source.href : source;
  const node = typeof process === 'object' && process.versions?.node;
  if (node && (!isUrl || source.protocol === 'file:') && !/^https?:/.test(text)) {
    const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS);
    try {
      return new Uint8Array(await readFile(source));
    } catch (e) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: cannot read ${text}: ${e.code ?? e.message}`, { cause: e });
    }
  }
  const res = await fetch(source);
  if (!res.ok) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: fetching ${text} gave HTTP ${res.status}`, { status: res.status, url: text });
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * Audio from anywhere → one channel of float32 samples at `samplingRate` (16 kHz): a file path or URL,
 * a file's bytes, a Blob/File (browser), or samples as toMono takes them (Float32Array at that
 * rate, { data, samplingRate }, { channels, samplingRate }, AudioBuffer). Checked: non-empty, finite.
 * @returns {Promise<Float32Array>} owned by the caller (the input itself when it needed nothing)
 */
export async function readAudio(source, { samplingRate = 16000, name = 'audio' } = {}) {
  if (typeof source === 'string' || source instanceof URL) source = await readSource(source, name);
  else if (typeof Blob === 'function' && source instanceof Blob) source = new Uint8Array(await source.arrayBuffer());
  if (source instanceof ArrayBuffer) source = new Uint8Array(source);
  if (source instanceof Uint8Array) {
    const decoded = await decodeAudio(source, { samplingRate, name });
    if (decoded.channels[0].length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: expected at least one sample, got a file that holds none (${sniffFormat(source) ?? 'audio'}, 0 samples)`);
    return toMono(decoded, { samplingRate, name });
  }
  return toMono(source, { samplingRate, name });
}
