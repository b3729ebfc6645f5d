// FLAC decoding through @wasm-audio-decoders/flac (libFLAC compiled to wasm, inlined in its JS; no
// native binary), imported only when a FLAC file is decoded. FLAC is lossless: the samples here are
// the encoder's integers over 2^(bits − 1), exactly what ffmpeg gives. The library divides by
// 2^(bits − 1) − 1 instead (in float32, correctly rounded, so the integer is recovered exactly by
// rounding for 8, 16 and 24 bits; at 32 bits its float32 divisor is 2^31 already), and leaves other
// depths undefined, so those are refused. It also decodes past damaged frames silently (it drops
// them): the sample count is checked against the STREAMINFO block's total.
import { AttnWasmError } from '../errors.js';
import { MAX_SAMPLES } from './audio_input.js';

/** True when the bytes start like a native FLAC stream ('fLaC'). */
export function isFlac(bytes) {
  return bytes.length >= 4 && bytes[0] === 0x66 && bytes[1] === 0x4c && bytes[2] === 0x61 && bytes[3] === 0x43;
}

const corrupt = (name, what) => new AttnWasmError('ERR_AUDIO_DECODE', `${name}: not a valid FLAC file: ${what}`);

/** STREAMINFO (the first metadata block): sampling rate, channels, bits, total samples (0: unknown). */
export function flacStreamInfo(bytes, name = 'audio') {
  if (!isFlac(bytes)) throw corrupt(name, "it does not start with 'fLaC'");
  if (bytes.length < 42) throw corrupt(name, `${bytes.length} bytes is shorter than its STREAMINFO block (42)`);
  const type = bytes[4] & 0x7f, size = (bytes[5] << 16) | (bytes[6] << 8) | bytes[7];
  if (type !== 0 || size !== 34) throw corrupt(name, `its first metadata block is of type ${type} and ${size} bytes, expected STREAMINFO (type 0, 34 bytes)`);
  const b = bytes.subarray(8);
  const samplingRate = (b[10] << 12) | (b[11] << 4) | (b[12] >> 4);
  const channels = ((b[12] >> 1) & 7) + 1;
  const bits = (((b[12] & 1) << 4) | (b[13] >> 4)) + 1;
  const totalSamples = (b[13] & 0x0f) * 2 ** 32 + ((b[14] << 24) >>> 0) + ((b[15] << 16) | (b[16] << 8) | b[17]);
  if (samplingRate === 0) throw corrupt(name, 'its STREAMINFO declares a sampling rate of 0 Hz');
  return { samplingRate, channels, bits, totalSamples };
}

/**
 * Decodes a FLAC file (async: the decoder's wasm compiles on first use).
 * @param {Uint8Array} bytes the whole file
 * @returns {Promise<{channels: Float32Array[], samplingRate: number, bitsPerSample: number, sampleFormat: 'pcm'}>}
 *   new arrays owned by the caller
 */
export async function decodeFlac(bytes, { name = 'audio' } = {}) {
  const info = flacStreamInfo(bytes, name);
  if (![8, 16, 24, 32].includes(info.bits)) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${name}: FLAC of ${info.bits} bits per sample is not read; expected 8, 16, 24 or 32`);
  }
  if (info.totalSamples > MAX_SAMPLES) {
    throw new AttnWasmError('ERR_AUDIO_TOO_LONG', `${name}: ${info.totalSamples} samples per channel (${(info.totalSamples / info.samplingRate / 3600).toFixed(2)} h) is more than the ${MAX_SAMPLES} (2^29) one buffer may hold; cut the file into pieces`);
  }
  const { FLACDecoder } = await import('@wasm-audio-decoders/flac');
  const decoder = new FLACDecoder();
  try {
    await decoder.ready;
    const r = await decoder.decodeFile(bytes);
    if (r.errors.length) throw corrupt(name, `${r.errors.length} damaged frame(s), the first: ${r.errors[0].message}`);
    if (r.samplesDecoded === 0) throw corrupt(name, 'no audio frame could be decoded');
    if (info.totalSamples !== 0 && r.samplesDecoded !== info.totalSamples) {
      throw corrupt(name, `it declares ${info.totalSamples} samples per channel, ${r.samplesDecoded} could be decoded (damaged or missing frames)`);
    }
    if (r.channelData.length !== info.channels || r.sampleRate !== info.samplingRate) {
      throw corrupt(name, `its frames (${r.channelData.length} channels, ${r.sampleRate} Hz) disagree with its STREAMINFO (${info.channels} channels, ${info.samplingRate} Hz)`);
    }
    // Copies (the decoder's arrays may be views of its wasm memory), rescaled to integer / 2^(bits − 1).
    const channels = r.channelData.map((c) => c.slice(0, r.samplesDecoded));
    if (info.bits < 32) {
      const d = 2 ** (info.bits - 1) - 1, s = 2 ** (info.bits - 1);
      for (const c of channels) for (let i = 0; i < c.length; i++) c[i] = Math.round(c[i] * d) / s;
    }
    return { channels, samplingRate: r.sampleRate, bitsPerSample: info.bits, sampleFormat: 'pcm' };
  } finally {
    decoder.free();
  }
}
