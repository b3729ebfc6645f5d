// Image decoding for the digit classifier's CLI (Node): PNG / PGM bytes to
// grey levels, and grey levels to ink. The MNIST-style preprocessing shared
// with the demo page lives in preprocess.js (re-exported here).
import { AttnWasmError, describe, typeError } from '../errors.js';
import { checkBytes, checkArray, checkInteger } from '../checks.js';

export { mnistPreprocess, inkFromRgba, resizeArea } from './preprocess.js';

const bad = (message) => new AttnWasmError('ERR_INVALID_ARGUMENT', `bytes: ${message}`);

/**
 * Decodes an 8-bit PNG (grey, grey+alpha, RGB, RGBA or palette; not
 * interlaced) to { width, height, grey: Float32Array in [0, 1] } where
 * transparent pixels count as white. Node only (uses node:zlib).
 */
export async function decodePng(bytes) {
  bytes = checkBytes(bytes, 'bytes');
  const { inflateSync } = await import('node:zlib');
  const sig = [137, 80, 78, 71, 13, 10, 26, 10];
  if (bytes.length < 8 || sig.some((b, i) => bytes[i] !== b)) throw bad('not a PNG file (bad signature)');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let off = 8, width = 0, height = 0, depth = 0, ctype = 0, interlace = 0, palette = null, trns = null;
  const idat = [];
  while (off + 8 <= bytes.length) {
    const len = dv.getUint32(off);
    const type = String.fromCharCode(...bytes.subarray(off + 4, off + 8));
    if (off + 12 + len > bytes.length) throw bad(`PNG chunk ${type} runs past the end of the file`);
    const data = bytes.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = dv.getUint32(off + 8); height = dv.getUint32(off + 12);
      depth = data[8]; ctype = data[9]; interlace = data[12];
    } else if (type === 'PLTE') palette = data;
    else if (type === 'tRNS') trns = data;
    else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  if (!width || !height || width * height > 1 << 24) throw bad(`PNG size ${width}×${height} is not supported`);
  if (depth !== 8 || interlace !== 0) throw bad(`only 8-bit non-interlaced PNGs are supported (bit depth ${depth}, interlace ${interlace})`);
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[ctype];
  if (!channels) throw bad(`PNG colour type ${ctype} is not supported`);
  let raw;
  try {
    raw = inflateSync(Buffer.concat(idat.map((d) => Buffer.from(d))));
  } catch (e) {
    throw bad(`PNG image data does not inflate: ${e.message}`);
  }
  const stride = width * channels;
  if (raw.length < height * (stride + 1)) throw bad('PNG image data is truncated');
  const px = new Uint8Array(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? px[y * stride + i - channels] : 0;
      const b = y > 0 ? px[(y - 1) * stride + i] : 0;
      const c = i >= channels && y > 0 ? px[(y - 1) * stride + i - channels] : 0;
      let v = line[i];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      else if (f !== 0) throw bad(`bad PNG filter type ${f}`);
      px[y * stride + i] = v & 255;
    }
  }
  const grey = new Float32Array(width * height);
  for (let i = 0; i < width * height; i++) {
    let r, g, b, alpha = 255;
    if (ctype === 0) r = g = b = px[i];
    else if (ctype === 4) { r = g = b = px[2 * i]; alpha = px[2 * i + 1]; }
    else if (ctype === 2) { r = px[3 * i]; g = px[3 * i + 1]; b = px[3 * i + 2]; }
    else if (ctype === 6) { r = px[4 * i]; g = px[4 * i + 1]; b = px[4 * i + 2]; alpha = px[4 * i + 3]; }
    else {
      const k = px[i];
      if (!palette || 3 * k + 2 >= palette.length) throw bad('PNG palette index out of range');
      r = palette[3 * k]; g = palette[3 * k + 1]; b = palette[3 * k + 2];
      if (trns && k < trns.length) alpha = trns[k];
    }
    const lum = (0.299 * r + 0.587 * g + 0.114 * b) / 255;
    grey[i] = (alpha / 255) * lum + (1 - alpha / 255);  // composite over white
  }
  return { width, height, grey };
}

/** Decodes a binary (P5) or ASCII (P2) 8-bit PGM to { width, height, grey }. */
export function decodePgm(bytes) {
  bytes = checkBytes(bytes, 'bytes');
  const text = new TextDecoder('latin1').decode(bytes.subarray(0, Math.min(bytes.length, 512)));
  const m = /^(P[25])\s+(?:#[^\n]*\s+)*(\d+)\s+(?:#[^\n]*\s+)*(\d+)\s+(?:#[^\n]*\s+)*(\d+)\s/.exec(text);
  if (!m) throw bad('not a PGM file (expected a P2 or P5 header)');
  const [, kind, w, h, max] = m;
  const width = Number(w), height = Number(h), maxval = Number(max);
  if (!width || !height || width * height > 1 << 24 || maxval < 1 || maxval > 255) throw bad(`PGM ${width}×${height} maxval ${maxval} is not supported`);
  const grey = new Float32Array(width * height);
  if (kind === 'P5') {
    const start = m[0].length;
    if (bytes.length < start + width * height) throw bad('PGM pixel data is truncated');
    for (let i = 0; i < width * height; i++) grey[i] = bytes[start + i] / maxval;
  } else {
    const nums = new TextDecoder('latin1').decode(bytes).slice(m[0].length).replace(/#[^\n]*/g, '').trim().split(/\s+/).map(Number);
    if (nums.length < width * height) throw bad('PGM pixel data is truncated');
    for (let i = 0; i < width * height; i++) grey[i] = nums[i] / maxval;
  }
  return { width, height, grey };
}

/**
 * Grey levels → ink in [0, 1]: the darker side is ink. An image whose border
 * is mostly dark (MNIST style: white digit on black) is taken as is.
 */
export function greyToInk(image) {
  if (image === null || typeof image !== 'object') throw typeError(`image: expected { width, height, grey }, got ${describe(image)}`);
  const { width, height, grey } = image;
  checkInteger(width, 'image.width', { min: 1, max: 1 << 14 });
  checkInteger(height, 'image.height', { min: 1, max: 1 << 14 });
  checkArray(grey, 'image.grey', [Float32Array], width * height);
  let border = 0, n = 0;
  for (let x = 0; x < width; x++) { border += grey[x] + grey[(height - 1) * width + x]; n += 2; }
  for (let y = 0; y < height; y++) { border += grey[y * width] + grey[y * width + width - 1]; n += 2; }
  const darkBackground = border / n < 0.5;
  return Float32Array.from(grey, (g) => (darkBackground ? g : 1 - g));
}
