// EXIF orientation for attnwasm/image: the Orientation tag (0x0112) of a JPEG's first Exif APP1 segment or a
// PNG's eXIf chunk, and PIL 9.4's ImageOps.exif_transpose, which transformers' load_image (and so every
// pipeline) applies before convert("RGB"). Browsers apply the same tag when they decode. Not read, unlike
// PIL: an orientation written only in XMP, or in a PNG text chunk "Raw profile type exif" (docs/images.md).

/**
 * The Orientation value (1 … 8) in TIFF-structured EXIF bytes (starting at "II*\0" / "MM\0*", or at the
 * "Exif\0\0" that precedes them in JPEG), or 0 when absent or unreadable. Only IFD0 is read, as PIL does.
 * @param {Uint8Array} tiff
 */
export function exifOrientation(tiff) {
  let t = tiff;
  if (t.length >= 6 && t[0] === 0x45 && t[1] === 0x78 && t[2] === 0x69 && t[3] === 0x66 && t[4] === 0 && t[5] === 0) t = t.subarray(6);
  if (t.length < 8) return 0;
  const little = t[0] === 0x49 && t[1] === 0x49;
  if (!little && !(t[0] === 0x4d && t[1] === 0x4d)) return 0;
  const dv = new DataView(t.buffer, t.byteOffset, t.byteLength);
  if (dv.getUint16(2, little) !== 42) return 0;
  const ifd = dv.getUint32(4, little);
  if (ifd + 2 > t.length) return 0;
  const count = dv.getUint16(ifd, little);
  for (let i = 0; i < count; i++) {
    const e = ifd + 2 + 12 * i;
    if (e + 12 > t.length) return 0;
    if (dv.getUint16(e, little) !== 0x0112) continue;
    const type = dv.getUint16(e + 2, little);
    const v = type === 3 ? dv.getUint16(e + 8, little) : type === 4 ? dv.getUint32(e + 8, little) : 0;
    return v >= 1 && v <= 8 ? v : 0;
  }
  return 0;
}

/**
 * The first Exif APP1 segment's bytes of a JPEG file ("Exif\0…"), or null. Stops at the first SOS: the
 * segments PIL reads.
 * @param {Uint8Array} bytes
 */
export function jpegExif(bytes) {
  let off = 2;
  while (off + 4 <= bytes.length) {
    if (bytes[off] !== 0xff) return null;
    const marker = bytes[off + 1];
    if (marker === 0xff) { off++; continue; } // fill bytes
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) { off += 2; continue; }
    if (marker === 0xda || marker === 0xd9) return null;
    const len = (bytes[off + 2] << 8) | bytes[off + 3];
    if (len < 2 || off + 2 + len > bytes.length) return null;
    if (marker === 0xe1 && len >= 8 && bytes[off + 4] === 0x45 && bytes[off + 5] === 0x78 && bytes[off + 6] === 0x69
      && bytes[off + 7] === 0x66 && bytes[off + 8] === 0) return bytes.subarray(off + 4, off + 2 + len);
    off += 2 + len;
  }
  return null;
}

/**
 * PIL's exif_transpose on an RGB image { width, height, data }: the orientation's flip / rotation
 * (2 FLIP_LEFT_RIGHT, 3 ROTATE_180, 4 FLIP_TOP_BOTTOM, 5 TRANSPOSE, 6 ROTATE_270, 7 TRANSVERSE, 8 ROTATE_90).
 * Orientation 0, 1 or any other value returns `image` itself; otherwise a new image.
 * @param {{width: number, height: number, data: Uint8Array}} image @param {number} orientation
 */
export function exifTranspose(image, orientation) {
  if (!(orientation >= 2 && orientation <= 8)) return image;
  const { width: w, height: h, data } = image;
  const swap = orientation >= 5;
  const ow = swap ? h : w, oh = swap ? w : h;
  const out = new Uint8Array(data.length);
  // for each output pixel (x, y): the source pixel (sx, sy) = (ax·x + bx·y + cx, ay·x + by·y + cy)
  const [ax, bx, cx, ay, by, cy] = {
    2: [-1, 0, w - 1, 0, 1, 0],
    3: [-1, 0, w - 1, 0, -1, h - 1],
    4: [1, 0, 0, 0, -1, h - 1],
    5: [0, 1, 0, 1, 0, 0],
    6: [0, 1, 0, -1, 0, h - 1],
    7: [0, -1, w - 1, -1, 0, h - 1],
    8: [0, -1, w - 1, 1, 0, 0],
  }[orientation];
  for (let y = 0, o = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++, o += 3) {
      const s = ((ay * x + by * y + cy) * w + (ax * x + bx * y + cx)) * 3;
      out[o] = data[s]; out[o + 1] = data[s + 1]; out[o + 2] = data[s + 2];
    }
  }
  return { width: ow, height: oh, data: out };
}
