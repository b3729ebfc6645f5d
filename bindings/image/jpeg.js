// JPEG decoding for attnwasm/image through @jsquash/jpeg's decoder: MozJPEG, a fork of libjpeg-turbo, built
// to WebAssembly. PIL 9.4 decodes with libjpeg-turbo's defaults (islow IDCT, fancy upsampling), and so does
// this build: the pixels are PIL's (measured on the fixtures: max difference 0, docs/images.md). Not here:
// CMYK / YCCK JPEGs and 12-bit precision (refused as ERR_UNSUPPORTED), EXIF orientation (exif.js).
//
// The decoder module is loaded on the first JPEG. In Node its .wasm is read from node_modules; in a browser
// the module fetches it next to itself (an import map or a bundler maps '@jsquash/jpeg/'). Its glue defines
// globalThis.ImageData in Node when missing; here a stand-in exists only while the glue starts and while a
// decode runs, so no global is left behind. A failed decode discards the module (libjpeg's error exit leaves
// its allocations behind) and the next JPEG starts a fresh one.

import { dependencyUrl } from './deps.js';

const WASM = '@jsquash/jpeg/codec/dec/mozjpeg_dec.wasm';
const MAX_PIXELS = 2 * 89478485; // PIL's Image.MAX_IMAGE_PIXELS × 2, as png.js
const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

/** A decode failure; `unsupported` marks a valid file of a kind not read. The caller names the input. */
export class JpegError extends Error {
  constructor(message, unsupported = false) { super(message); this.unsupported = unsupported; }
}

/** True if `bytes` starts with a JPEG SOI marker followed by another marker. */
export function isJpeg(bytes) {
  return bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff;
}

/** The frame header (SOF): { precision, width, height, components }, or null when none is found before SOS. */
export function jpegFrame(bytes) {
  let off = 2;
  while (off + 4 <= bytes.length) {
    if (bytes[off] !== 0xff) return null;
    const m = bytes[off + 1];
    if (m === 0xff) { off++; continue; }
    if (m === 0xd8 || (m >= 0xd0 && m <= 0xd7) || m === 0x01) { off += 2; continue; }
    if (m === 0xda || m === 0xd9) return null;
    const len = (bytes[off + 2] << 8) | bytes[off + 3];
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) {
      if (off + 10 > bytes.length) return null;
      return { precision: bytes[off + 4], height: (bytes[off + 5] << 8) | bytes[off + 6],
        width: (bytes[off + 7] << 8) | bytes[off + 8], components: bytes[off + 9] };
    }
    off += 2 + len;
  }
  return null;
}

class PlainImageData {
  constructor(data, width, height) { this.data = data; this.width = width; this.height = height; }
}

/** Runs fn with globalThis.ImageData defined (a stand-in when there is none), and removes the stand-in. */
function withImageData(fn) {
  if (typeof globalThis.ImageData !== 'undefined') return fn();
  globalThis.ImageData = PlainImageData;
  try {
    return fn();
  } finally {
    if (globalThis.ImageData === PlainImageData) delete globalThis.ImageData;
  }
}

let wasmBytes = null; // Node: the .wasm, read once
let modulePromise = null;
const messages = [];

async function loadModule() {
  let factory;
  try {
    const at = dependencyUrl('jsquashJpeg');  // a worker of a page without a bundler (deps.js)
    factory = (at ? await import(/* webpackIgnore: true */ /* @vite-ignore */ at) : await import('@jsquash/jpeg/codec/dec/mozjpeg_dec.js')).default;
  } catch (e) {
    throw new JpegError(`the JPEG decoder (npm @jsquash/jpeg, a dependency of attnwasm) did not load: ${e?.message ?? e}; `
      + 'in a page without a bundler, map it in the import map: "@jsquash/jpeg/": "/node_modules/@jsquash/jpeg/"', true);
  }
  const options = { noInitialRun: true, print: () => {}, printErr: (m) => messages.push(String(m)) };
  if (isNode) {
    if (!wasmBytes) {
      // specifiers in variables, marked ignored: bundlers must not resolve Node built-ins for a browser build
      const fsp = 'node:fs/promises', nodeModule = 'node:module';
      const [{ readFile }, { createRequire }] = await Promise.all([
        import(/* webpackIgnore: true */ /* @vite-ignore */ fsp), import(/* webpackIgnore: true */ /* @vite-ignore */ nodeModule)]);
      wasmBytes = new Uint8Array(await readFile(createRequire(import.meta.url).resolve(WASM)));
    }
    options.wasmBinary = wasmBytes;
  }
  return withImageData(() => factory(options));
}

/**
 * Decodes baseline or progressive 8-bit JPEG bytes (greyscale or YCbCr / RGB). Returns { mode: 'L' | 'RGB',
 * width, height, data: Uint8Array } with fresh data, as PIL's JpegImagePlugin gives it (no orientation
 * applied). Throws JpegError.
 * @param {Uint8Array} bytes
 */
export async function decodeJpeg(bytes) {
  const frame = jpegFrame(bytes);
  if (!frame) throw new JpegError('no frame header (SOF) before the image data: not a readable JPEG');
  if (frame.precision !== 8) throw new JpegError(`${frame.precision}-bit JPEG is not supported (8-bit only)`, true);
  if (frame.width * frame.height > MAX_PIXELS || frame.width === 0 || frame.height === 0) {
    throw new JpegError(`size ${frame.width}×${frame.height} is outside 1 … ${MAX_PIXELS} pixels (PIL's decompression-bomb limit)`);
  }
  if (frame.components !== 1 && frame.components !== 3) {
    throw new JpegError(`a JPEG of ${frame.components} components (CMYK / YCCK) is not supported: greyscale and RGB only`, true);
  }
  modulePromise ??= loadModule();
  let module;
  try {
    module = await modulePromise;
  } catch (e) {
    modulePromise = null;
    throw e instanceof JpegError ? e : new JpegError(`the JPEG decoder did not start: ${e?.message ?? e}`, true);
  }
  messages.length = 0;
  let result;
  try {
    result = withImageData(() => module.decode(bytes, false));
  } catch (e) {
    modulePromise = null; // libjpeg exited mid-decode: start a fresh module for the next JPEG
    throw new JpegError(`libjpeg: ${messages.filter(Boolean).join('; ') || e?.message || e}`);
  }
  if (!result || !result.data) {
    modulePromise = null;
    throw new JpegError(`libjpeg: ${messages.join('; ') || 'decoding failed'}`);
  }
  const { width, height } = result;
  const rgba = result.data;
  const n = width * height;
  if (frame.components === 1) {
    const data = new Uint8Array(n);
    for (let i = 0; i < n; i++) data[i] = rgba[4 * i];
    return { mode: 'L', width, height, data };
  }
  const data = new Uint8Array(n * 3);
  for (let i = 0, s = 0, o = 0; i < n; i++, s += 4, o += 3) {
    data[o] = rgba[s]; data[o + 1] = rgba[s + 1]; data[o + 2] = rgba[s + 2];
  }
  return { mode: 'RGB', width, height, data };
}
