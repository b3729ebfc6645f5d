// Audio as the feature extractor takes it: one channel of finite float32 samples at its sampling
// rate. Accepts a Float32Array (taken to be at that rate already), { data, samplingRate } with data
// one Float32Array or one per channel, { channels, samplingRate } (what the decoders return), or a
// Web Audio AudioBuffer; averages the channels (as transformers' ASR pipeline takes the mean of a
// multi-channel array) and resamples (resample.js). Every refusal names the argument. The size
// limits of the audio code live here.
import { AttnWasmError, describe } from '../errors.js';
import { checkRate, resample } from './resample.js';

/** Most samples one channel may have (2^29: 9.3 hours at 16 kHz, 2 GiB as float32). */
export const MAX_SAMPLES = 2 ** 29;

const tooLong = (name, n, rate) => new AttnWasmError('ERR_AUDIO_TOO_LONG',
  `${name}: ${n} samples${rate ? ` (${hms(n / rate)} at ${rate} Hz)` : ''} is more than the ${MAX_SAMPLES} samples (2^29) one buffer may hold; cut it into pieces (e.g. decode or record it in parts)`);

/** Seconds as '8 h 0 min 0.0 s', '75.0 s'. */
export function hms(s) {
  if (s < 60) return `${s.toFixed(1)} s`;
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  return `${h ? `${h} h ` : ''}${m} min ${(s % 60).toFixed(1)} s`;
}

/**
 * One channel's samples, checked: a Float32Array of 1 … MAX_SAMPLES samples, finite unless
 * `finite` is false (then the caller checks the part it reads, with checkFiniteRange).
 * @returns {Float32Array} x itself (not copied)
 */
export function checkSamples(x, name, rate = 0, finite = true) {
  if (!(x instanceof Float32Array)) throw new TypeError(`${name}: expected a Float32Array of samples, got ${describe(x)}`);
  if (x.length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: expected at least one sample, got an empty Float32Array`);
  if (x.length > MAX_SAMPLES) throw tooLong(name, x.length, rate);
  if (finite) checkFiniteRange(x, 0, x.length, name, rate);
  return x;
}

/**
 * Throws ERR_INVALID_ARGUMENT naming the first NaN or ±Infinity among x[start … end), as sample
 * base + i of `name` (x may be a piece of it that starts at sample `base`).
 */
export function checkFiniteRange(x, start, end, name, rate = 0, base = 0) {
  for (let i = start; i < end; i++) {
    const v = x[i];
    if (v - v !== 0) {  // NaN or ±Infinity
      const at = rate ? ` (at ${((base + i) / rate).toFixed(3)} s)` : '';
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: sample ${base + i}${at} is ${v}; expected finite samples`);
    }
  }
}

/**
 * The mean of the channels, in float32 as numpy's mean over axis 0 of a float32 array: a running
 * float32 sum in channel order, then one float32 division.
 * @param {Float32Array[]} channels (C) arrays of one length
 * @returns {Float32Array} the first channel itself when C = 1, else a new array owned by the caller
 */
export function mixToMono(channels, name = 'channels') {
  if (!Array.isArray(channels) || channels.length === 0) throw new TypeError(`${name}: expected an array of one Float32Array per channel, got ${describe(channels)}`);
  channels.forEach((c, i) => { if (!(c instanceof Float32Array)) throw new TypeError(`${name}[${i}]: expected a Float32Array, got ${describe(c)}`); });
  const n = channels[0].length;
  channels.forEach((c, i) => {
    if (c.length !== n) throw new AttnWasmError('ERR_SHAPE', `${name}[${i}]: expected ${n} samples like ${name}[0], got ${c.length}`);
  });
  if (channels.length === 1) return channels[0];
  const out = new Float32Array(n);
  const acc = new Float32Array(1);
  for (let t = 0; t < n; t++) {
    acc[0] = channels[0][t];
    for (let c = 1; c < channels.length; c++) acc[0] += channels[c][t];
    out[t] = acc[0] / channels.length;
  }
  return out;
}

function isAudioBuffer(a) {
  return a !== null && typeof a === 'object' && typeof a.getChannelData === 'function' && typeof a.numberOfChannels === 'number' && typeof a.sampleRate === 'number';
}

/**
 * Any accepted audio → one channel at `samplingRate`, checked (non-empty, finite, not too long).
 * @param {Float32Array | {data: Float32Array | Float32Array[], samplingRate: number} | {channels: Float32Array[], samplingRate: number} | AudioBuffer} audio
 * @param {{samplingRate?: number, name?: string, finite?: boolean}} [o] finite: false leaves the scan for
 *   NaN and ±Infinity of a Float32Array input to the caller (who then reads only part of it)
 * @returns {Float32Array} the input itself when it is already one channel at that rate, else a new array
 */
export function toMono(audio, { samplingRate = 16000, name = 'audio', finite = true } = {}) {
  if (audio instanceof Float32Array) return checkSamples(audio, name, samplingRate, finite);
  let channels, rate, field;
  if (isAudioBuffer(audio)) {
    rate = audio.sampleRate;
    channels = Array.from({ length: audio.numberOfChannels }, (_, c) => audio.getChannelData(c));
    field = `${name} (AudioBuffer)`;
  } else if (audio !== null && typeof audio === 'object' && !ArrayBuffer.isView(audio) && !Array.isArray(audio)) {
    const has = (k) => Object.prototype.hasOwnProperty.call(audio, k);
    if (has('data') === has('channels')) {
      throw new TypeError(`${name}: expected { data, samplingRate } or { channels, samplingRate }, got an object with keys ${JSON.stringify(Object.keys(audio))}`);
    }
    field = has('data') ? `${name}.data` : `${name}.channels`;
    const d = has('data') ? audio.data : audio.channels;
    channels = d instanceof Float32Array && has('data') ? [d] : d;
    if (!has('samplingRate')) throw new TypeError(`${name}.samplingRate: expected the sampling rate in Hz, got nothing (the field is missing)`);
    rate = audio.samplingRate;
  } else {
    throw new TypeError(`${name}: expected a Float32Array (mono, ${samplingRate} Hz), { data, samplingRate }, { channels, samplingRate } or an AudioBuffer, got ${describe(audio)}`);
  }
  checkRate(rate, `${name}.samplingRate`);
  if (!Array.isArray(channels)) throw new TypeError(`${field}: expected a Float32Array or an array of one Float32Array per channel, got ${describe(channels)}`);
  if (channels.length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${field}: expected at least one channel, got none`);
  const label = (i) => (channels.length === 1 && field.endsWith('.data') ? field : `${field}[${i}]`);
  // Sizes first, so that a buffer refused for its size is never read.
  channels.forEach((c, i) => checkSamples(c, label(i), rate, false));
  const outLength = Math.ceil((samplingRate * channels[0].length) / rate);
  if (rate !== samplingRate && outLength > MAX_SAMPLES) throw tooLong(`${name} resampled to ${samplingRate} Hz`, outLength, samplingRate);
  const mono = mixToMono(channels, field);
  if (rate === samplingRate && channels.length === 1 && !finite) return mono;
  channels.forEach((c, i) => checkFiniteRange(c, 0, c.length, label(i), rate));
  return rate === samplingRate ? mono : resample(mono, rate, samplingRate);
}
