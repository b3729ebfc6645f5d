// PNG decoding for attnwasm/image: a PNG file's bytes to the image PIL 9.4 makes of it (mode and samples as
// PngImagePlugin unpacks them), every colour type and bit depth, plain or Adam7-interlaced. Not a general PNG
// library: no encoding, no colour management (PIL applies none: gAMA, cHRM, sRGB, iCCP are ignored), APNG
// reads its default image only (what PIL opens). The container, the five scanline filters, Adam7 and the
// sample unpacking are here (docs/images.md says why not fast-png or pngjs); the zlib inflate is passed in
// (decode.js: node:zlib in Node, npm fflate in browsers).
//
// What PIL makes of each colour type (bit depth → mode, samples):
//   grey 1 → '1' (0 / 255); grey 2, 4 → 'L' (× 85, × 17); grey 8 → 'L'; grey 16 → 'I' (the 16-bit value)
//   grey+alpha 8 → 'LA'; grey+alpha 16 → 'RGBA' (L, L, L, A); RGB 8/16 → 'RGB'; RGBA 8/16 → 'RGBA'
//   palette 1/2/4/8 → 'P' (indices, with the PLTE bytes); tRNS changes no sample
// 16-bit samples keep their high byte (PIL's ;16B unpackers), except grey's 'I'.
const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];
const ADAM7 = [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]];
/** PIL's Image.MAX_IMAGE_PIXELS × 2: above it PIL raises DecompressionBombError. */
export const MAX_PIXELS = 2 * 89478485;
const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const DEPTHS = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };

let crcTable = null;
function crc32(bytes, start, end) {
  if (!crcTable) {
    crcTable = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c;
    }
  }
  let c = -1;
  for (let i = start; i < end; i++) c = crcTable[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** True if `bytes` starts with the PNG signature. */
export function isPng(bytes) {
  return bytes.length >= 8 && SIGNATURE.every((b, i) => bytes[i] === b);
}

/** The output mode and its samples per pixel for a colour type and bit depth (table above). */
function modeOf(ctype, depth) {
  if (ctype === 0) return depth === 1 ? ['1', 1] : depth === 16 ? ['I', 1] : ['L', 1];
  if (ctype === 4) return depth === 16 ? ['RGBA', 4] : ['LA', 2];
  return { 2: ['RGB', 3], 3: ['P', 1], 6: ['RGBA', 4] }[ctype];
}

/**
 * Undoes one scanline's filter (PNG spec, 9.2): `line` (the filtered bytes, after its filter-type byte) into
 * `out`, with `prior` the previous unfiltered scanline of the same pass (null for the first). Returns false
 * for an unknown filter type.
 */
function unfilter(type, line, prior, out, bpp) {
  const n = out.length;
  if (type === 0 || (type === 2 && !prior)) out.set(line);
  else if (type === 1) {
    for (let i = 0; i < bpp; i++) out[i] = line[i];
    for (let i = bpp; i < n; i++) out[i] = line[i] + out[i - bpp];
  } else if (type === 2) {
    for (let i = 0; i < n; i++) out[i] = line[i] + prior[i];
  } else if (type === 3) {
    if (!prior) {
      for (let i = 0; i < bpp; i++) out[i] = line[i];
      for (let i = bpp; i < n; i++) out[i] = line[i] + (out[i - bpp] >> 1);
    } else {
      for (let i = 0; i < bpp; i++) out[i] = line[i] + (prior[i] >> 1);
      for (let i = bpp; i < n; i++) out[i] = line[i] + ((out[i - bpp] + prior[i]) >> 1);
    }
  } else if (type === 4) {
    if (!prior) { // Paeth with an all-zero prior row predicts the left byte, as Sub does
      for (let i = 0; i < bpp; i++) out[i] = line[i];
      for (let i = bpp; i < n; i++) out[i] = line[i] + out[i - bpp];
    } else {
      for (let i = 0; i < bpp; i++) out[i] = line[i] + prior[i];
      for (let i = bpp; i < n; i++) { // branch-free: noisy images mispredict the spec's if / else (2× slower)
        const a = out[i - bpp], b = prior[i], c = prior[i - bpp];
        let pa = b - c, pb = a - c, pc = pa + pb; // |p - a|, |p - b|, |p - c| with p = a + b - c, before abs
        pa = (pa ^ (pa >> 31)) - (pa >> 31); pb = (pb ^ (pb >> 31)) - (pb >> 31); pc = (pc ^ (pc >> 31)) - (pc >> 31);
        const notA = ((pb - pa) | (pc - pa)) >> 31, notB = (pc - pb) >> 31; // -1 where a (then b) is not the pick
        out[i] = line[i] + ((a & ~notA) | (((b & ~notB) | (c & notB)) & notA));
      }
    }
  } else return false;
  return true;
}

/**
 * Writes one unfiltered scanline's `n` pixels into the image, pixel i at column x0 + i·dx of row y, as PIL
 * unpacks them (table at the top).
 */
function emitRow(src, img, y, x0, dx, n, ctype, depth) {
  const { data, width, channels } = img;
  let o = (y * width + x0) * channels;
  const step = dx * channels;
  if (depth < 8) {
    const mask = (1 << depth) - 1;
    const scale = ctype === 0 ? 255 / mask : 1; // 255, 85, 17 for grey; palette indices stay
    for (let i = 0, bit = 0; i < n; i++, bit += depth, o += step) {
      data[o] = ((src[bit >> 3] >> (8 - depth - (bit & 7))) & mask) * scale;
    }
  } else if (depth === 8) {
    const c = channels;
    for (let i = 0, s = 0; i < n; i++, s += c, o += step) {
      for (let k = 0; k < c; k++) data[o + k] = src[s + k];
    }
  } else if (ctype === 0) { // grey 16 → 'I'
    for (let i = 0, s = 0; i < n; i++, s += 2, o += step) data[o] = (src[s] << 8) | src[s + 1];
  } else if (ctype === 4) { // grey+alpha 16 → 'RGBA' (L, L, L, A), high bytes
    for (let i = 0, s = 0; i < n; i++, s += 4, o += step) {
      data[o] = data[o + 1] = data[o + 2] = src[s];
      data[o + 3] = src[s + 2];
    }
  } else { // RGB 16, RGBA 16: high bytes
    const c = channels;
    for (let i = 0, s = 0; i < n; i++, s += 2 * c, o += step) {
      for (let k = 0; k < c; k++) data[o + k] = src[s + 2 * k];
    }
  }
}

/** A decode failure: the caller turns it into an AttnWasmError naming the input. */
export class PngError extends Error {}

function readChunks(bytes) {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const head = { idat: [], idatBytes: 0, palette: null, exif: null, ihdr: null };
  let off = 8, seenIdat = false, ended = false;
  while (off + 12 <= bytes.length) {
    const len = dv.getUint32(off);
    const type = String.fromCharCode(bytes[off + 4], bytes[off + 5], bytes[off + 6], bytes[off + 7]);
    if (len > 0x7fffffff || off + 12 + len > bytes.length) throw new PngError(`chunk ${type} runs past the end of the file`);
    const body = bytes.subarray(off + 8, off + 8 + len);
    // PIL checks the CRC of the chunks it reads while opening: those before the image data
    if (!seenIdat && type !== 'IDAT' && crc32(bytes, off + 4, off + 8 + len) !== dv.getUint32(off + 8 + len)) {
      throw new PngError(`bad CRC in chunk ${type}`);
    }
    if (type === 'IHDR') {
      if (len < 13) throw new PngError('IHDR is too short');
      head.ihdr = { width: dv.getUint32(off + 8), height: dv.getUint32(off + 12), depth: body[8], ctype: body[9],
        compression: body[10], filter: body[11], interlace: body[12] };
    } else if (type === 'PLTE') {
      if (len % 3 !== 0 || len > 768) throw new PngError(`PLTE of ${len} bytes (expected a multiple of 3, at most 768)`);
      head.palette = body;
    } else if (type === 'IDAT') {
      seenIdat = true;
      head.idat.push(body);
      head.idatBytes += len;
    } else if (type === 'eXIf') head.exif = body;
    else if (type === 'IEND') { ended = true; break; }
    off += 12 + len;
  }
  if (!head.ihdr) throw new PngError('no IHDR chunk');
  if (!head.idat.length) throw new PngError(ended ? 'no IDAT chunk' : 'the file ends before any image data (truncated)');
  return head;
}

/**
 * Decodes a PNG file. Returns { mode, width, height, data, palette?, exif? }: `data` holds the samples
 * row-major, interleaved (Uint8Array; Uint16Array for mode 'I'), `palette` the PLTE bytes (RGB triples) for
 * mode 'P', `exif` the eXIf chunk's TIFF bytes when the file has one. The result owns fresh arrays (no view
 * of `bytes`). Throws PngError (a message without the input's name) for a file it cannot read.
 * `inflate(zlibBytes, expectedSize)` returns the inflated bytes (at least expectedSize of them for a whole
 * image) or throws.
 * @param {Uint8Array} bytes @param {(z: Uint8Array, size: number) => Uint8Array} inflate
 */
export function decodePng(bytes, inflate) {
  if (!isPng(bytes)) throw new PngError('not a PNG file (bad signature)');
  const { ihdr, idat, idatBytes, palette, exif } = readChunks(bytes);
  const { width, height, depth, ctype, interlace } = ihdr;
  if (!(ctype in CHANNELS) || !DEPTHS[ctype].includes(depth)) throw new PngError(`colour type ${ctype} with bit depth ${depth} is not valid PNG`);
  if (ihdr.compression !== 0 || ihdr.filter !== 0 || interlace > 1) {
    throw new PngError(`unknown compression / filter / interlace method (${ihdr.compression}, ${ihdr.filter}, ${interlace})`);
  }
  if (width < 1 || height < 1 || width > 0x7fffffff || height > 0x7fffffff || width * height > MAX_PIXELS) {
    throw new PngError(`size ${width}×${height} is outside 1 … ${MAX_PIXELS} pixels (PIL's decompression-bomb limit)`);
  }
  if (ctype === 3 && !palette) throw new PngError('a palette image without a PLTE chunk');
  const [mode, channels] = modeOf(ctype, depth);
  const bitsPerPixel = CHANNELS[ctype] * depth;
  const bpp = Math.max(1, bitsPerPixel >> 3);
  const passes = interlace ? ADAM7 : [[0, 0, 1, 1]];
  let rawSize = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const pw = Math.ceil((width - x0) / dx), ph = Math.ceil((height - y0) / dy);
    if (pw > 0 && ph > 0) rawSize += ph * (1 + Math.ceil((pw * bitsPerPixel) / 8));
  }
  let z = idat[0];
  if (idat.length > 1) {
    z = new Uint8Array(idatBytes);
    let o = 0;
    for (const c of idat) { z.set(c, o); o += c.length; }
  }
  let raw;
  try {
    raw = inflate(z, rawSize);
  } catch (e) {
    throw new PngError(`the image data does not inflate (${e?.message ?? e}): the file is damaged or truncated`);
  }
  if (raw.length < rawSize) throw new PngError(`the image data is truncated (${raw.length} of ${rawSize} bytes)`);
  const img = { data: mode === 'I' ? new Uint16Array(width * height) : new Uint8Array(width * height * channels), width, channels };
  const direct = !interlace && depth === 8 && channels === CHANNELS[ctype]; // unfilter straight into the image
  let off = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const pw = Math.ceil((width - x0) / dx), ph = Math.ceil((height - y0) / dy);
    if (pw <= 0 || ph <= 0) continue;
    const rowBytes = Math.ceil((pw * bitsPerPixel) / 8);
    let prior = null, cur = direct ? null : new Uint8Array(rowBytes), spare = direct ? null : new Uint8Array(rowBytes);
    for (let r = 0; r < ph; r++) {
      const type = raw[off];
      const line = raw.subarray(off + 1, off + 1 + rowBytes);
      off += 1 + rowBytes;
      const y = y0 + r * dy;
      if (direct) cur = img.data.subarray(y * rowBytes, (y + 1) * rowBytes);
      if (!unfilter(type, line, prior, cur, bpp)) throw new PngError(`unknown scanline filter type ${type} (row ${y})`);
      if (!direct) emitRow(cur, img, y, x0, dx, pw, ctype, depth);
      if (direct) prior = cur;
      else { prior = cur; cur = spare; spare = prior; }
    }
  }
  const out = { mode, width, height, data: img.data };
  if (mode === 'P') out.palette = palette.slice();
  if (exif) out.exif = exif.slice();
  return out;
}
