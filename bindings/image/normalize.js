// Rescale then normalize, in the dtypes transformers v4.40.2 uses, for attnwasm/image, and the (3, H, W)
// layout of pixel_values. After resize and crop every value is a uint8, so each step is a function of
// (channel, byte): a 3 × 256 table computed once per processor holds the exact float32 results.
//   rescale     uint8 · rescale_factor in float64 (numpy: uint8 array × Python float), then .astype(float32)
//   normalize   (x - mean) / std in float32, with mean and std cast to float32 (np.array(mean, dtype=float32));
//               a uint8 image (no rescale) is cast to float32 first
//   neither     the uint8 values as they are (transformers then returns a uint8 array)
// In JS each float32 operation is a double operation rounded by Math.fround: exact for - and /, because a
// double holds every float32 product / quotient to more than 2·24 + 2 bits (no double-rounding error).

/**
 * The pixel table of a processor (imageProcessor's description): Float32Array(3 · 256), entry c·256 + v the
 * pixel_values value of byte v in channel c (R, G, B).
 * @param {{doRescale: boolean, rescaleFactor: number | null, doNormalize: boolean, imageMean: number[] | null,
 *   imageStd: number[] | null}} p
 */
export function pixelTable(p) {
  const lut = new Float32Array(3 * 256);
  for (let c = 0; c < 3; c++) {
    const mean = p.doNormalize ? Math.fround(p.imageMean[c]) : 0, std = p.doNormalize ? Math.fround(p.imageStd[c]) : 1;
    for (let v = 0; v < 256; v++) {
      let x = p.doRescale ? Math.fround(v * p.rescaleFactor) : v;
      if (p.doNormalize) x = Math.fround(Math.fround(x - mean) / std);
      lut[c * 256 + v] = x;
    }
  }
  return lut;
}

/**
 * Writes an RGB image { width, height, data } (3 bytes per pixel) into `out` at element `offset` as
 * (3, height, width) planes through the table `lut` (pixelTable).
 * @param {{width: number, height: number, data: Uint8Array}} image
 * @param {Float32Array} lut @param {Float32Array} out @param {number} offset
 */
export function writePixelValues(image, lut, out, offset) {
  const { data } = image;
  const n = image.width * image.height;
  const g = offset + n, b = offset + 2 * n;
  for (let i = 0, s = 0; i < n; i++, s += 3) {
    out[offset + i] = lut[data[s]];
    out[g + i] = lut[256 + data[s + 1]];
    out[b + i] = lut[512 + data[s + 2]];
  }
}
