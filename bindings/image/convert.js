// PIL 9.4's Image.convert("RGB") for the modes decoding gives (attnwasm/image): the step that
// transformers' convert_to_rgb and load_image take. Only to RGB; no dithering, no matrix, no palette
// quantization. The rules (libImaging/Convert.c):
//   '1', 'L'   grey replicated (mode '1' holds 0 / 255)
//   'LA'       grey replicated, alpha dropped (not composited on any background)
//   'I', 'I;16' clipped to 0 … 255 (a 16-bit grey PNG is 'I': values above 255 become white, as in PIL)
//   'P'        the palette's RGB; an index past the palette's end reads as grey (i, i, i), PIL's initial ramp
//   'RGBA'     alpha dropped
import { AttnWasmError } from '../errors.js';

/** Bytes per pixel of each mode convertToRgb reads. */
export const MODE_CHANNELS = { 1: 1, L: 1, LA: 2, I: 1, 'I;16': 1, P: 1, RGB: 3, RGBA: 4 };

/**
 * An image in PIL's mode `mode` as mode 'RGB': { width, height, data: Uint8Array of width·height·3 bytes,
 * row-major RGB }. An 'RGB' image is returned as it is (same data); any other gets fresh data.
 * @param {{mode: string, width: number, height: number, data: Uint8Array | Uint16Array, palette?: Uint8Array}} image
 */
export function convertToRgb(image) {
  const { mode, width, height, data } = image;
  const n = width * height;
  if (!(mode in MODE_CHANNELS)) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `image.mode: expected one of ${Object.keys(MODE_CHANNELS).join(', ')}, got ${JSON.stringify(mode)}`);
  }
  if (data.length !== n * MODE_CHANNELS[mode]) {
    throw new AttnWasmError('ERR_SHAPE', `image.data: expected ${n * MODE_CHANNELS[mode]} samples for a ${width}×${height} ${mode} image, got ${data.length}`);
  }
  if (mode === 'RGB') return { width, height, data };
  const out = new Uint8Array(n * 3);
  if (mode === 'RGBA' || mode === 'LA' || mode === 'L' || mode === '1') {
    const c = MODE_CHANNELS[mode];
    if (c === 4) {
      for (let i = 0, s = 0, o = 0; i < n; i++, s += 4, o += 3) {
        out[o] = data[s]; out[o + 1] = data[s + 1]; out[o + 2] = data[s + 2];
      }
    } else {
      for (let i = 0, s = 0, o = 0; i < n; i++, s += c, o += 3) out[o] = out[o + 1] = out[o + 2] = data[s];
    }
  } else if (mode === 'I' || mode === 'I;16') {
    for (let i = 0, o = 0; i < n; i++, o += 3) {
      const v = data[i];
      out[o] = out[o + 1] = out[o + 2] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  } else { // 'P'
    const lut = new Uint8Array(768);
    for (let i = 0; i < 256; i++) lut[3 * i] = lut[3 * i + 1] = lut[3 * i + 2] = i;
    if (image.palette) lut.set(image.palette.subarray(0, 768));
    for (let i = 0, o = 0; i < n; i++, o += 3) {
      const p = 3 * data[i];
      out[o] = lut[p]; out[o + 1] = lut[p + 1]; out[o + 2] = lut[p + 2];
    }
  }
  return { width, height, data: out };
}
