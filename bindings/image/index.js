// attnwasm/image: Hugging Face's image processors (transformers v4.40.2 with PIL 9.4) reproduced in plain JS,
// from a preprocessor_config.json to pixel_values, equal to Python's to float32 rounding. No wasm runtime and
// no init(): PNG decoding uses node:zlib in Node and npm fflate in browsers, JPEG decoding npm @jsquash/jpeg
// (each loaded on first use); resizing runs a 762-byte WebAssembly SIMD module embedded here (JS without SIMD).
// The steps, each also exported: loadImage (decode, EXIF orientation, RGB) → resize (PIL's arithmetic) →
// centerCrop → rescale and normalize (normalize.js) → (N, 3, H, W). docs/images.md has the arithmetic.
import { AttnWasmError, typeError } from '../errors.js';
import { boxInside, centerCropBox, cropBox } from './crop.js';
import { loadImage } from './inputs.js';
import { pixelTable, writePixelValues } from './normalize.js';
import { imageProcessor, resizedSize } from './processors.js';
import { resizeWindow } from './resize.js';

export { loadImage } from './inputs.js';
export { decodeImage } from './decode.js';
export { convertToRgb } from './convert.js';
export { exifOrientation, exifTranspose } from './exif.js';
export { resize, RESAMPLE } from './resize.js';
export { centerCrop, centerCropBox } from './crop.js';
export { pixelTable, writePixelValues } from './normalize.js';
export { imageProcessor, resizedSize, IMAGE_PROCESSORS, PROCESSOR_OF_MODEL_TYPE } from './processors.js';

/**
 * The processor's resize and center crop of one RGB image { width, height, data }: the uint8 image that
 * rescale and normalize then read. When the crop lies inside the resized image only its pixels are computed
 * (the same bytes as resizing all and cropping). Returns a new image (or `image` itself when the processor
 * neither resizes nor crops).
 * @param {{width: number, height: number, data: Uint8Array}} image
 * @param {ReturnType<typeof imageProcessor>} processor
 */
export function processImage(image, processor) {
  let { width, height } = image;
  if (processor.doResize) [height, width] = resizedSize(processor, image.height, image.width);
  const box = processor.doCenterCrop
    ? centerCropBox(height, width, processor.cropSize.height, processor.cropSize.width)
    : { height, width, top: 0, left: 0 };
  const inside = boxInside(box, height, width);
  if (!processor.doResize) return processor.doCenterCrop ? cropBox(image, box) : image;
  if (inside) return resizeWindow(image, width, height, processor.resample, box.left, box.left + box.width, box.top, box.top + box.height);
  return cropBox(resizeWindow(image, width, height, processor.resample), box);
}

/**
 * pixel_values of `images` as transformers' image processor named by `preprocessorConfig` (the parsed
 * preprocessor_config.json, or its text) computes them for images opened with load_image: { data: Float32Array,
 * shape: [n, 3, H, W] }, data owned by the caller. `images`: one image or an array (see loadImage for the
 * kinds). options.exifOrientation (default true): apply EXIF orientation as load_image does;
 * options.modelType: config.json's model_type, to choose the class when the config names none.
 * Errors: TypeError for an argument of the wrong kind; AttnWasmError naming `images[i]` for an image that
 * cannot be read (ERR_INVALID_ARGUMENT) or of a format not read (ERR_UNSUPPORTED), naming the config's field
 * for a config transformers would refuse; ERR_SHAPE when the images end at different sizes (a processor
 * without resize, or transformers' odd-padding crop), as transformers cannot stack them either.
 * @param {unknown | unknown[]} images @param {object} preprocessorConfig
 * @param {{exifOrientation?: boolean, modelType?: string}} [options]
 */
export async function preprocessImages(images, preprocessorConfig, options = {}) {
  if (options === null || typeof options !== 'object') throw typeError('options: expected an object');
  const processor = imageProcessor(preprocessorConfig, { modelType: options.modelType });
  const list = Array.isArray(images) ? images : [images];
  if (list.length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'images: expected at least one image, got an empty array');
  const lut = pixelTable(processor);
  const done = [];
  for (let i = 0; i < list.length; i++) {
    const name = `images[${i}]`;
    let out;
    try {
      out = processImage(await loadImage(list[i], { name, exifOrientation: options.exifOrientation }), processor);
    } catch (e) {
      if (e && typeof e === 'object' && !('index' in e)) e.index = i;
      throw e;
    }
    if (done.length && (out.width !== done[0].width || out.height !== done[0].height)) {
      const e = new AttnWasmError('ERR_SHAPE', `${name}: processed to ${out.height}×${out.width}, but images[0] to ${done[0].height}×${done[0].width}: `
        + 'pixel_values of one batch must share a size (transformers cannot stack them either)');
      e.index = i;
      throw e;
    }
    done.push(out);
  }
  const { width, height } = done[0];
  const plane = 3 * width * height;
  const data = new Float32Array(done.length * plane);
  done.forEach((img, i) => writePixelValues(img, lut, data, i * plane));
  return { data, shape: [done.length, 3, height, width] };
}
