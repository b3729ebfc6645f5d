// The image inputs attnwasm/image accepts, each turned into an 8-bit RGB image as transformers' load_image
// gives it (decode, EXIF orientation, convert("RGB")). Not here: resizing and everything after.
//   Node and browsers: PNG / JPEG bytes (Uint8Array, Buffer, ArrayBuffer), a Blob or File, a URL (fetched;
//     file: URLs read from disk in Node), raw pixels { data: Uint8Array | Uint8ClampedArray (RGBA or RGB),
//     width, height }, which includes an ImageData
//   Node: a string is a file path (http:, https: and data: strings are fetched)
//   browsers: a string is a URL; ImageBitmap, HTMLImageElement, HTMLCanvasElement, OffscreenCanvas,
//     HTMLVideoElement and VideoFrame are drawn on a canvas and read back (the browser's decoding: exact for
//     opaque 8-bit sRGB images; docs/images.md says where it differs from PIL's)
// Files and URLs are decoded here (decode.js), the same way in Node and in a browser.
import { AttnWasmError, typeError, describe } from '../errors.js';
import { convertToRgb } from './convert.js';
import { decodeImage } from './decode.js';
import { exifTranspose } from './exif.js';

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
const has = (name) => typeof globalThis[name] === 'function';

async function fetchBytes(url, name) {
  let res;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: fetching ${url} failed: ${e?.message ?? e}`, { url: String(url), cause: e });
  }
  if (!res.ok) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: fetching ${url} gave HTTP ${res.status}`, { url: String(url), status: res.status });
  return new Uint8Array(await res.arrayBuffer());
}

async function readFileBytes(pathOrUrl, name) {
  const fsp = 'node:fs/promises'; // in a variable, marked ignored: bundlers must not resolve it for browsers
  const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ fsp);
  try {
    const b = await readFile(pathOrUrl);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } catch (e) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: cannot read ${JSON.stringify(String(pathOrUrl))}: ${e?.code ?? e?.message ?? e}`, { cause: e });
  }
}

/** Raw pixels { data, width, height } (ImageData included) as a decoded image of mode RGBA or RGB. */
function rawPixels(input, name) {
  const { data, width, height } = input;
  if (!(data instanceof Uint8Array || data instanceof Uint8ClampedArray)) {
    throw typeError(`${name}.data: expected a Uint8Array or Uint8ClampedArray of RGBA or RGB bytes, got ${describe(data)}`);
  }
  for (const [k, v] of [['width', width], ['height', height]]) {
    if (!Number.isInteger(v) || v < 1) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}.${k}: expected an integer ≥ 1, got ${JSON.stringify(v)}`);
  }
  const n = width * height;
  const mode = data.length === 4 * n ? 'RGBA' : data.length === 3 * n ? 'RGB' : null;
  if (!mode) {
    throw new AttnWasmError('ERR_SHAPE', `${name}.data: expected ${4 * n} (RGBA) or ${3 * n} (RGB) bytes for ${width}×${height}, got ${data.length}`);
  }
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data.buffer, data.byteOffset, data.length);
  return { mode, width, height, data: bytes };
}

const DRAWABLES = ['ImageBitmap', 'HTMLImageElement', 'HTMLCanvasElement', 'OffscreenCanvas', 'HTMLVideoElement', 'VideoFrame'];

function drawableKind(input) {
  return DRAWABLES.find((k) => has(k) && input instanceof globalThis[k]) ?? null;
}

/** A browser image source drawn on a 2D canvas at its natural size and read back as RGBA. */
async function drawnPixels(src, kind, name) {
  if (kind === 'HTMLImageElement' && !(src.complete && src.naturalWidth > 0)) {
    try {
      await src.decode();
    } catch (e) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: the <img> (${src.currentSrc || src.src || 'no src'}) did not decode: ${e?.message ?? e}`, { cause: e });
    }
  }
  const [width, height] = kind === 'HTMLImageElement' ? [src.naturalWidth, src.naturalHeight]
    : kind === 'HTMLVideoElement' ? [src.videoWidth, src.videoHeight]
      : kind === 'VideoFrame' ? [src.displayWidth, src.displayHeight] : [src.width, src.height];
  if (!(width > 0 && height > 0)) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: the ${kind} has no pixels (${width}×${height})`);
  const canvas = has('OffscreenCanvas') ? new OffscreenCanvas(width, height)
    : Object.assign(document.createElement('canvas'), { width, height });
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(src, 0, 0, width, height);
  let pixels;
  try {
    pixels = ctx.getImageData(0, 0, width, height);
  } catch (e) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: the ${kind}'s pixels cannot be read (${e?.name ?? e}: a cross-origin image without CORS taints the canvas); `
      + 'serve it with CORS and set crossOrigin = "anonymous", or pass its bytes or URL', { cause: e });
  }
  return { mode: 'RGBA', width, height, data: new Uint8Array(pixels.data.buffer, pixels.data.byteOffset, pixels.data.length) };
}

/** The input as a decoded image (decode.js's shape) before orientation and RGB conversion. */
async function decoded(input, name) {
  if (typeof input === 'string') {
    if (isNode && !/^(https?|data|blob):/i.test(input)) {
      if (/^file:/i.test(input)) return decodeImage(await readFileBytes(new URL(input), name), name);
      return decodeImage(await readFileBytes(input, name), name);
    }
    const base = typeof document !== 'undefined' ? document.baseURI : globalThis.location?.href;
    return decodeImage(await fetchBytes(base ? new URL(input, base) : input, name), name);
  }
  if (input instanceof URL) {
    if (input.protocol === 'file:' && isNode) return decodeImage(await readFileBytes(input, name), name);
    return decodeImage(await fetchBytes(input, name), name);
  }
  if (input instanceof ArrayBuffer || (ArrayBuffer.isView(input) && !(input instanceof DataView))) {
    const bytes = input instanceof ArrayBuffer ? new Uint8Array(input) : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    return decodeImage(bytes, name);
  }
  if (has('Blob') && input instanceof Blob) return decodeImage(new Uint8Array(await input.arrayBuffer()), name);
  const kind = input && typeof input === 'object' ? drawableKind(input) : null;
  if (kind) return drawnPixels(input, kind, name);
  if (input && typeof input === 'object' && 'data' in input && 'width' in input && 'height' in input) return rawPixels(input, name);
  throw typeError(`${name}: expected an image (a path or URL, PNG or JPEG bytes, a Blob, { data, width, height } or ImageData, `
    + `or in a browser an ImageBitmap, <img>, canvas or OffscreenCanvas), got ${describe(input)}`);
}

/**
 * Loads one image as transformers' load_image does: decoded (PNG or JPEG, as PIL 9.4 decodes them), turned
 * by its EXIF orientation (PIL's exif_transpose; `exifOrientation: false` skips it), converted to RGB (PIL's
 * convert("RGB")). Returns { width, height, data: Uint8Array of width·height·3 RGB bytes }, owned by the
 * caller (it may share the bytes of a raw RGB input). Errors name `name` (default 'image').
 * @param {unknown} input @param {{exifOrientation?: boolean, name?: string}} [options]
 */
export async function loadImage(input, options = {}) {
  const name = options.name ?? 'image';
  const img = await decoded(input, name);
  const rgb = convertToRgb(img);
  return options.exifOrientation === false ? rgb : exifTranspose(rgb, img.orientation ?? 0);
}
