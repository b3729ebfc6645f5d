// transformers v4.40.2's center_crop (image_transforms.py) for attnwasm/image: the crop window, and zero
// padding when the crop is larger than the image. Its arithmetic is kept exactly, including a quirk: when a
// side is padded by an odd number of pixels, the result is one pixel SHORTER than the crop on that side
// (crop 8 of 5 gives 7: top = (5 - 8) // 2 = -2 is shifted by the padding (8 - 5) // 2 = 1 to -1, and the
// slice max(0, -1) : min(8, -1 + 8) keeps 7 rows). docs/images.md has the table.
import { rangeError } from '../errors.js';

/**
 * Where a center crop of cropH × cropW takes its pixels in a height × width image: { height, width, top,
 * left }: output pixel (y, x) is image pixel (y + top, x + left), or 0 when that lies outside the image.
 * `height`, `width` are the output's size (the crop's, or one less on a side padded by an odd amount).
 */
export function centerCropBox(height, width, cropH, cropW) {
  let top = Math.floor((height - cropH) / 2), left = Math.floor((width - cropW) / 2);
  let bottom = top + cropH, right = left + cropW;
  if (top >= 0 && bottom <= height && left >= 0 && right <= width) return { height: cropH, width: cropW, top, left };
  const newH = Math.max(cropH, height), newW = Math.max(cropW, width);
  const padTop = Math.floor((newH - height) / 2), padLeft = Math.floor((newW - width) / 2);
  top += padTop; bottom += padTop; left += padLeft; right += padLeft;
  const r0 = Math.max(0, top), r1 = Math.min(newH, bottom), c0 = Math.max(0, left), c1 = Math.min(newW, right);
  return { height: r1 - r0, width: c1 - c0, top: r0 - padTop, left: c0 - padLeft };
}

/** True when the box takes every pixel from inside the image (no padding). */
export function boxInside(box, height, width) {
  return box.top >= 0 && box.left >= 0 && box.top + box.height <= height && box.left + box.width <= width;
}

/**
 * The pixels of `box` (centerCropBox) of an interleaved 8-bit image { width, height, data }, zeros outside
 * it. Returns a new image.
 */
export function cropBox(image, box) {
  const { width: w, height: h, data } = image;
  const C = data.length / (w * h);
  const out = new Uint8Array(box.height * box.width * C);
  const x0 = Math.max(0, box.left), x1 = Math.min(w, box.left + box.width);
  for (let y = 0; y < box.height; y++) {
    const sy = y + box.top;
    if (sy < 0 || sy >= h || x1 <= x0) continue;
    out.set(data.subarray((sy * w + x0) * C, (sy * w + x1) * C), (y * box.width + x0 - box.left) * C);
  }
  return { width: box.width, height: box.height, data: out };
}

/**
 * transformers' center_crop(image, (height, width)) on an interleaved 8-bit image { width, height, data }
 * (RGB, or any number of channels): the centered window, padded with zeros where the crop is larger than the
 * image (see the quirk above). Returns a new image; the caller owns it.
 * @param {{width: number, height: number, data: Uint8Array}} image
 * @param {{height: number, width: number}} size
 */
export function centerCrop(image, size) {
  const { height, width } = size ?? {};
  for (const [k, x] of [['height', height], ['width', width]]) {
    if (!Number.isInteger(x) || x < 1) throw rangeError(`size.${k}: expected an integer ≥ 1, got ${x}`);
  }
  return cropBox(image, centerCropBox(image.height, image.width, height, width));
}
