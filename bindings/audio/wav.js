// WAV (RIFF/WAVE) decoding in pure JS: integer PCM of 8 (unsigned), 16, 24 and 32 bits, IEEE float
// of 32 and 64 bits, WAVE_FORMAT_EXTENSIBLE of those, any number of channels (kept apart). Samples
// are scaled as ffmpeg scales them (what transformers' pipeline reads a file with): u8 (v − 128) / 128,
// s16 v / 2^15, s24 v / 2^23, s32 v / 2^31, float as stored (float64 rounded to float32): bit-exact
// with `ffmpeg -f f32le` on mono files. A file that is not a whole, consistent WAV is refused with
// ERR_AUDIO_DECODE naming what is wrong; no guessing past a damaged header.
import { AttnWasmError } from '../errors.js';
import { MAX_SAMPLES } from './audio_input.js';

const PCM = 1, FLOAT = 3, EXTENSIBLE = 0xfffe;

const corrupt = (name, what) => new AttnWasmError('ERR_AUDIO_DECODE', `${name}: not a valid WAV file: ${what}`);

function tag(bytes, at) {
  return String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
}

/** True when the bytes start like a RIFF/WAVE file. */
export function isWav(bytes) {
  return bytes.length >= 12 && tag(bytes, 0) === 'RIFF' && tag(bytes, 8) === 'WAVE';
}

function readFmt(view, at, size, name) {
  if (size < 16) throw corrupt(name, `its 'fmt ' chunk has ${size} bytes, expected at least 16`);
  let format = view.getUint16(at, true);
  const channels = view.getUint16(at + 2, true);
  const samplingRate = view.getUint32(at + 4, true);
  const blockAlign = view.getUint16(at + 12, true);
  const bits = view.getUint16(at + 14, true);
  if (format === EXTENSIBLE) {
    if (size < 40) throw corrupt(name, `its WAVE_FORMAT_EXTENSIBLE 'fmt ' chunk has ${size} bytes, expected 40`);
    format = view.getUint16(at + 24, true);  // the sub-format GUID's first two bytes
  }
  if (channels < 1) throw corrupt(name, 'it declares 0 channels');
  if (samplingRate < 1) throw corrupt(name, 'it declares a sampling rate of 0 Hz');
  const kinds = { [PCM]: [8, 16, 24, 32], [FLOAT]: [32, 64] };
  if (!kinds[format]) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${name}: WAV sample format ${format} (0x${format.toString(16)}) is not read; expected integer PCM (1) or IEEE float (3)`);
  }
  if (!kinds[format].includes(bits)) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${name}: ${format === PCM ? 'PCM' : 'float'} WAV of ${bits} bits per sample is not read; expected ${kinds[format].join(', ')}`);
  }
  if (blockAlign !== (channels * bits) / 8) throw corrupt(name, `block align ${blockAlign} ≠ ${channels} channels × ${bits / 8} bytes`);
  return { format, channels, samplingRate, bits, blockAlign };
}

/**
 * Decodes a WAV file.
 * @param {Uint8Array | ArrayBuffer} input the whole file
 * @param {{name?: string}} [o] the argument's name for messages
 * @returns {{channels: Float32Array[], samplingRate: number, bitsPerSample: number, sampleFormat: 'pcm' | 'float'}}
 *   new arrays owned by the caller
 */
export function decodeWav(input, { name = 'audio' } = {}) {
  const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : input;
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${name}: expected the file's bytes (a Uint8Array or ArrayBuffer)`);
  if (bytes.length < 12) throw corrupt(name, `${bytes.length} bytes is shorter than a RIFF header (12)`);
  if (tag(bytes, 0) === 'RF64' || tag(bytes, 0) === 'RIFX') throw new AttnWasmError('ERR_UNSUPPORTED', `${name}: ${tag(bytes, 0)} WAV files are not read; expected RIFF (little-endian, under 4 GB)`);
  if (!isWav(bytes)) throw corrupt(name, "it does not start with 'RIFF' … 'WAVE'");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let fmt = null, data = null;
  for (let at = 12; at + 8 <= bytes.length;) {
    const id = tag(bytes, at), size = view.getUint32(at + 4, true), body = at + 8;
    if (id === 'fmt ') {
      if (body + size > bytes.length) throw corrupt(name, `its 'fmt ' chunk declares ${size} bytes, ${bytes.length - body} remain`);
      fmt = readFmt(view, body, size, name);
    } else if (id === 'data') {
      if (!fmt) throw corrupt(name, "its 'data' chunk comes before any 'fmt ' chunk");
      const remain = bytes.length - body;
      // 0xFFFFFFFF: a stream writer that never went back to fill in the size; the data runs to the end.
      const n = size === 0xffffffff ? remain - (remain % fmt.blockAlign) : size;
      if (n > remain) throw corrupt(name, `its 'data' chunk declares ${size} bytes but only ${remain} follow (a truncated file)`);
      if (n % fmt.blockAlign !== 0) throw corrupt(name, `its 'data' chunk has ${n} bytes, not a whole number of ${fmt.blockAlign}-byte frames`);
      data = { at: body, size: n };
      break;
    }
    at = body + size + (size & 1);  // chunks are padded to an even size
  }
  if (!fmt) throw corrupt(name, "it has no 'fmt ' chunk");
  if (!data) throw corrupt(name, "it has no 'data' chunk");
  const frames = data.size / fmt.blockAlign;
  if (frames > MAX_SAMPLES) {
    throw new AttnWasmError('ERR_AUDIO_TOO_LONG', `${name}: ${frames} samples per channel (${(frames / fmt.samplingRate / 3600).toFixed(2)} h) is more than the ${MAX_SAMPLES} (2^29) one buffer may hold; cut the file into pieces`);
  }
  return { channels: samples(view, data.at, frames, fmt), samplingRate: fmt.samplingRate, bitsPerSample: fmt.bits, sampleFormat: fmt.format === PCM ? 'pcm' : 'float' };
}

/** De-interleaves and scales the frames into one Float32Array per channel. */
function samples(view, at, frames, { format, channels, bits, blockAlign }) {
  const out = Array.from({ length: channels }, () => new Float32Array(frames));
  const bytesPer = bits / 8;
  for (let c = 0; c < channels; c++) {
    const ch = out[c];
    let p = at + c * bytesPer;
    if (format === FLOAT && bits === 32) for (let t = 0; t < frames; t++, p += blockAlign) ch[t] = view.getFloat32(p, true);
    else if (format === FLOAT) for (let t = 0; t < frames; t++, p += blockAlign) ch[t] = view.getFloat64(p, true);
    else if (bits === 8) for (let t = 0; t < frames; t++, p += blockAlign) ch[t] = (view.getUint8(p) - 128) / 128;
    else if (bits === 16) for (let t = 0; t < frames; t++, p += blockAlign) ch[t] = view.getInt16(p, true) / 32768;
    else if (bits === 24) {
      for (let t = 0; t < frames; t++, p += blockAlign) {
        const v = view.getUint8(p) | (view.getUint8(p + 1) << 8) | (view.getInt8(p + 2) << 16);
        ch[t] = v / 8388608;
      }
    } else for (let t = 0; t < frames; t++, p += blockAlign) ch[t] = view.getInt32(p, true) / 2147483648;
  }
  return out;
}
