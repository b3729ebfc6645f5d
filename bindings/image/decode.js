// Image file bytes to a decoded image for attnwasm/image: the format by its signature, PNG (png.js) or JPEG
// (jpeg.js), each decoder loaded on first use, and the EXIF orientation read. Any other format is refused by
// name (GIF, WebP, BMP, TIFF, AVIF / HEIF): in a browser such an image can be drawn on a canvas and passed as
// one (inputs.js). Errors name the argument they are given (`images[3]`), never a decoder's internals only.
import { AttnWasmError } from '../errors.js';
import { exifOrientation, jpegExif } from './exif.js';
import { dependencyUrl } from './deps.js';

const OTHER = [
  ['GIF', (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38],
  ['WebP', (b) => b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50],
  ['BMP', (b) => b[0] === 0x42 && b[1] === 0x4d],
  ['TIFF', (b) => (b[0] === 0x49 && b[1] === 0x49 && b[2] === 42 && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 42)],
  ['AVIF / HEIF', (b) => b[4] === 0x66 && b[5] === 0x74 && b[6] === 0x79 && b[7] === 0x70],
];

const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
let inflater = null;
/** Bytes of inflated data tolerated past what the image needs (PIL ignores them); more is refused (a zlib bomb). */
const SLACK = 65536;
const TOO_MUCH = `the image data inflates to more than the image needs (over ${SLACK} bytes more)`;

/**
 * The zlib inflate for PNG data, loaded once: Node's own zlib (native, about 2.5× faster than fflate here),
 * elsewhere npm fflate (synchronous, unlike the browsers' DecompressionStream). Each stops at `size` + SLACK
 * bytes: a small file cannot make it allocate gigabytes.
 */
async function pngInflate(name) {
  if (inflater) return inflater;
  try {
    if (isNode) {
      const nodeZlib = 'node:zlib'; // in a variable, marked ignored: bundlers must not resolve it for browsers
      const { inflateSync } = await import(/* webpackIgnore: true */ /* @vite-ignore */ nodeZlib);
      inflater = (z, size) => {
        let b;
        try {
          b = inflateSync(z, { maxOutputLength: size + SLACK });
        } catch (e) {
          if (e?.code === 'ERR_BUFFER_TOO_LARGE') throw new Error(TOO_MUCH);
          throw e;
        }
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      };
    } else {
      const at = dependencyUrl('fflate');  // a worker of a page without a bundler (deps.js)
      const { Unzlib } = at ? await import(/* webpackIgnore: true */ /* @vite-ignore */ at) : await import('fflate');
      inflater = (z, size) => {
        const out = new Uint8Array(size + SLACK);
        let n = 0;
        const stream = new Unzlib((chunk) => {
          if (n + chunk.length > out.length) throw new Error(TOO_MUCH);
          out.set(chunk, n);
          n += chunk.length;
        });
        stream.push(z, true);
        return out.subarray(0, n);
      };
    }
  } catch (e) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${name}: the PNG decoder's inflate (npm fflate, a dependency of attnwasm) did not load: ${e?.message ?? e}; `
      + 'in a page without a bundler, map it in the import map: "fflate": "/node_modules/fflate/esm/browser.js"', { cause: e });
  }
  return inflater;
}

/** The start of `bytes` in hex, for messages. */
function head(bytes) {
  return Array.from(bytes.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ');
}

/**
 * Decodes PNG or JPEG file bytes. Returns { format: 'png' | 'jpeg', mode, width, height, data, palette?,
 * orientation }: the image as PIL 9.4 opens it (mode '1', 'L', 'LA', 'I', 'P', 'RGB' or 'RGBA'; `data`
 * interleaved, Uint16Array for 'I'; `palette` the RGB triples of a 'P' image) and its EXIF orientation
 * (1 … 8, 0 when none), not yet applied. The result owns its arrays. Throws an AttnWasmError naming `name`:
 * ERR_INVALID_ARGUMENT for a damaged or unknown file, ERR_UNSUPPORTED for a format or a kind of JPEG not read.
 * @param {Uint8Array} bytes @param {string} [name]
 */
export async function decodeImage(bytes, name = 'bytes') {
  if (!(bytes instanceof Uint8Array)) {
    if (ArrayBuffer.isView(bytes)) bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    else if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    else throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: expected file bytes (Uint8Array or ArrayBuffer)`);
  }
  const { isPng, decodePng, PngError } = await import('./png.js');
  if (isPng(bytes)) {
    const inflate = await pngInflate(name);
    let img;
    try {
      img = decodePng(bytes, inflate);
    } catch (e) {
      if (!(e instanceof PngError)) throw e;
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: PNG: ${e.message}`, { cause: e });
    }
    const { exif, ...rest } = img;
    return { format: 'png', ...rest, orientation: exif ? exifOrientation(exif) : 0 };
  }
  const jpeg = await import('./jpeg.js');
  if (jpeg.isJpeg(bytes)) {
    let img;
    try {
      img = await jpeg.decodeJpeg(bytes);
    } catch (e) {
      if (!(e instanceof jpeg.JpegError)) throw e;
      throw new AttnWasmError(e.unsupported ? 'ERR_UNSUPPORTED' : 'ERR_INVALID_ARGUMENT', `${name}: JPEG: ${e.message}`, { cause: e });
    }
    const exif = jpegExif(bytes);
    return { format: 'jpeg', ...img, orientation: exif ? exifOrientation(exif) : 0 };
  }
  if (bytes.length >= 12) {
    for (const [format, test] of OTHER) {
      if (test(bytes)) {
        throw new AttnWasmError('ERR_UNSUPPORTED', `${name}: a ${format} image is not supported: PNG and JPEG files are decoded (in a browser, `
          + 'draw other formats on a canvas, or pass an HTMLImageElement or ImageBitmap)');
      }
    }
  }
  throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: not a PNG or JPEG file (${bytes.length} bytes${bytes.length ? `, starting ${head(bytes)}` : ''})`);
}
