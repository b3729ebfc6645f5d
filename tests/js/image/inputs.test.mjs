// attnwasm/image's inputs in Node (a path, file: URLs, bytes of every kind, a Blob, raw RGBA / RGB pixels, an
// http URL from a local server) giving the same pixels, and its errors: each names the input's index (and
// has `index`), refuses formats and configs by name, and leaves the module working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import { decodeImage, imageProcessor, loadImage, preprocessImages } from '../../../bindings/image/index.js';
import { AttnWasmError } from '../../../bindings/errors.js';

const DIR = new URL('../../data/goldens/images/', import.meta.url);
const E = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));
const file = (name) => new URL(`fixtures/${E.fixtures[name].file}`, DIR);
const bytes = (name) => new Uint8Array(readFileSync(file(name)));
const CLIP = E.configs.clip_small;

/** A PNG file of the given chunks [type, body], with correct CRCs. */
function pngFile(chunks) {
  const table = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c; });
  const parts = [Buffer.from([137, 80, 78, 71, 13, 10, 26, 10])];
  for (const [type, body] of chunks) {
    const b = Buffer.alloc(12 + body.length);
    b.writeUInt32BE(body.length, 0); b.write(type, 4, 'latin1'); Buffer.from(body).copy(b, 8);
    let c = -1;
    for (let i = 4; i < 8 + body.length; i++) c = table[(c ^ b[i]) & 0xff] ^ (c >>> 8);
    b.writeUInt32BE((c ^ -1) >>> 0, 8 + body.length);
    parts.push(b);
  }
  return new Uint8Array(Buffer.concat(parts));
}

async function rejects(promise, { code, name, message, index }) {
  const e = await promise.then(() => null, (err) => err);
  assert.ok(e, 'expected a rejection');
  if (name) assert.equal(e.name, name, e.message);
  if (code) assert.equal(e.code, code, e.message);
  if (message) assert.match(e.message, message);
  if (index !== undefined) assert.equal(e.index, index, e.message);
  return e;
}

test('every kind of Node input gives the same pixel_values as the path', async () => {
  const want = await preprocessImages(fileURLToPath(file('rgba8')), CLIP);
  const b = bytes('rgba8');
  const padded = new Uint8Array(b.length + 7);
  padded.set(b, 5);
  const rgba = await decodeImage(b);
  const rgb = await loadImage(b);
  const inputs = {
    'file: URL': file('rgba8'),
    'file: URL string': file('rgba8').href,
    Buffer: readFileSync(file('rgba8')),
    ArrayBuffer: b.slice().buffer,
    'Uint8Array view at an offset': padded.subarray(5, 5 + b.length),
    Blob: new Blob([b]),
    'raw RGBA': { data: rgba.data, width: rgba.width, height: rgba.height },
    'raw RGBA as Uint8ClampedArray': { data: new Uint8ClampedArray(rgba.data), width: rgba.width, height: rgba.height },
    'raw RGB': { data: rgb.data, width: rgb.width, height: rgb.height },
  };
  for (const [kind, input] of Object.entries(inputs)) {
    const got = await preprocessImages([input], CLIP);
    assert.deepEqual(got.shape, want.shape, kind);
    assert.deepEqual(got.data, want.data, kind);
  }
  // JPEG bytes as a view into a larger buffer (the decoder is handed the view, not its buffer), junk after EOI
  const j = bytes('j420_q90');
  const big = new Uint8Array(j.length + 50).fill(7);
  big.set(j, 31);
  const jWant = await preprocessImages(file('j420_q90'), CLIP);
  assert.deepEqual((await preprocessImages(big.subarray(31, 31 + j.length), CLIP)).data, jWant.data);
  assert.deepEqual((await preprocessImages(big.subarray(31), CLIP)).data, jWant.data);
});

test('an http URL is fetched; an HTTP error names the index and the status', async () => {
  const png = bytes('rgb8');
  const server = createServer((req, res) => {
    if (req.url === '/a.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(png);
    else res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}/`;
  try {
    const got = await preprocessImages(`${base}a.png`, CLIP);
    assert.deepEqual(got.data, (await preprocessImages(png, CLIP)).data);
    const e = await rejects(preprocessImages([png, new URL(`${base}missing.png`)], CLIP), { code: 'ERR_INVALID_ARGUMENT', message: /^images\[1\]: .*HTTP 404/, index: 1 });
    assert.equal(e.status, 404);
  } finally {
    server.close();
  }
});

test('damaged and unknown files: ERR_INVALID_ARGUMENT naming the index; formats not read: ERR_UNSUPPORTED', async () => {
  const good = bytes('rgb8');
  const badCrc = good.slice(); badCrc[29] ^= 1; // IHDR's CRC
  const ihdr = new Uint8Array(13); ihdr[3] = 2; ihdr[7] = 1; ihdr[8] = 8; // 2×1 grey, 8-bit
  const badFilter = pngFile([['IHDR', ihdr], ['IDAT', deflateSync(Buffer.from([7, 1, 2]))], ['IEND', new Uint8Array(0)]]);
  const cases = [
    [good.subarray(0, good.length - 40), 'ERR_INVALID_ARGUMENT', /PNG: .*(truncated|inflate|end)/],
    [badCrc, 'ERR_INVALID_ARGUMENT', /PNG: bad CRC in chunk IHDR/],
    [badFilter, 'ERR_INVALID_ARGUMENT', /PNG: unknown scanline filter type 7/],
    [bytes('j420_q90').subarray(0, 300), 'ERR_INVALID_ARGUMENT', /JPEG: libjpeg: /],
    [new Uint8Array([1, 2, 3, 4, 5]), 'ERR_INVALID_ARGUMENT', /not a PNG or JPEG file \(5 bytes, starting 01 02 03 04 05\)/],
    [new Uint8Array(0), 'ERR_INVALID_ARGUMENT', /not a PNG or JPEG file \(0 bytes\)/],
  ];
  for (const r of E.refusals) {
    cases.push([new Uint8Array(readFileSync(new URL(`refused/${r.file}`, DIR))), 'ERR_UNSUPPORTED',
      r.file === 'cmyk.jpg' ? /JPEG: a JPEG of 4 components \(CMYK/ : /a (GIF|BMP|TIFF|WebP) image is not supported: PNG and JPEG files are decoded/]);
  }
  assert.ok(E.refusals.length >= 4);
  for (const [input, code, message] of cases) {
    await rejects(preprocessImages([good, good, input], CLIP), { name: 'AttnWasmError', code, message: new RegExp(`^images\\[2\\]: ${message.source}`), index: 2 });
  }
  // the JPEG decoder starts afresh after libjpeg's error exit, and PNG decoding is unaffected
  const again = await preprocessImages([bytes('j420_q90'), good], CLIP);
  assert.deepEqual(again.shape, [2, 3, 8, 8]);
});

test('a missing file, a wrong kind of input, bad raw pixels', async () => {
  await rejects(preprocessImages('/no/such/image.png', CLIP), { code: 'ERR_INVALID_ARGUMENT', message: /^images\[0\]: cannot read "\/no\/such\/image.png": ENOENT/, index: 0 });
  await rejects(preprocessImages([bytes('rgb8'), 42], CLIP), { name: 'TypeError', code: 'ERR_INVALID_TYPE', message: /^images\[1\]: expected an image .* got number/, index: 1 });
  await rejects(preprocessImages([null], CLIP), { name: 'TypeError', message: /^images\[0\]: expected an image/ });
  await rejects(preprocessImages({ data: new Uint8Array(10), width: 2, height: 2 }, CLIP), { code: 'ERR_SHAPE', message: /^images\[0\]\.data: expected 16 \(RGBA\) or 12 \(RGB\) bytes for 2×2, got 10/ });
  await rejects(preprocessImages({ data: new Float32Array(16), width: 2, height: 2 }, CLIP), { name: 'TypeError', message: /^images\[0\]\.data: expected a Uint8Array/ });
  await rejects(preprocessImages({ data: new Uint8Array(16), width: 0, height: 2 }, CLIP), { code: 'ERR_INVALID_ARGUMENT', message: /^images\[0\]\.width: expected an integer ≥ 1, got 0/ });
  await rejects(preprocessImages([], CLIP), { code: 'ERR_INVALID_ARGUMENT', message: /^images: expected at least one image/ });
});

test('images that end at different sizes: ERR_SHAPE naming the index (no resize; transformers\' odd-padding crop)', async () => {
  const [a, b] = [E.fixtures.rgb8, E.fixtures.g8];
  assert.notDeepEqual([a.height, a.width], [b.height, b.width]);
  await rejects(preprocessImages([bytes('rgb8'), bytes('g8')], E.configs.vit_raw),
    { code: 'ERR_SHAPE', message: new RegExp(`^images\\[1\\]: processed to ${b.height}×${b.width}, but images\\[0\\] to ${a.height}×${a.width}`), index: 1 });
  // crop 17×12 without resize: transformers' center_crop gives 16×12 from 8×8 (9 rows of padding: one row lost)
  // and 17×11 from 11×5 (7 columns of padding): different sizes
  await rejects(preprocessImages([bytes('rgb8'), bytes('g8')], E.configs.bit_noresize_pad), { code: 'ERR_SHAPE', index: 1 });
});

test('EXIF orientation is applied by default, and skipped with exifOrientation: false', async () => {
  const turned = await preprocessImages(file('j_exif6'), E.configs.vit_raw);
  const asStored = await preprocessImages(file('j_exif6'), E.configs.vit_raw, { exifOrientation: false });
  assert.deepEqual(turned.shape, [1, 3, 22, 14]);
  assert.deepEqual(asStored.shape, [1, 3, 14, 22]);
});

test('configs transformers refuses, or that cannot give an image, are refused naming the field', async () => {
  const png = bytes('rgb8');
  const refused = [
    [{ image_processor_type: 'ConvNextImageProcessor' }, 'ERR_UNSUPPORTED', /preprocessorConfig\.image_processor_type: "ConvNextImageProcessor" is not supported; supported: ViTImageProcessor/],
    [{ feature_extractor_type: 'BeitFeatureExtractor' }, 'ERR_UNSUPPORTED', /preprocessorConfig\.feature_extractor_type: "BeitFeatureExtractor" is not supported/],
    [{ size: 224 }, 'ERR_INVALID_ARGUMENT', /image_processor_type: missing/],
    [{ image_processor_type: 'ViTImageProcessor', size: { shortest_edge: 224 } }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.size: ViTImageProcessor resizes to \{height, width\}/],
    [{ image_processor_type: 'SiglipImageProcessor', size: 224 }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.size: SiglipImageProcessor resizes to \{height, width\}, got \{shortest_edge\}/],
    [{ image_processor_type: 'CLIPImageProcessor', size: { height: 224 } }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.size: expected the keys/],
    [{ image_processor_type: 'CLIPImageProcessor', size: { shortest_edge: 0 } }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.size\.shortest_edge: expected an integer in \[1, 65535\], got 0/],
    [{ image_processor_type: 'CLIPImageProcessor', crop_size: { shortest_edge: 4 } }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.crop_size: expected height and width/],
    [{ image_processor_type: 'ViTImageProcessor', resample: 7 }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.resample: expected a PIL filter number 0 … 5, got 7/],
    [{ image_processor_type: 'ViTImageProcessor', resample: null }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.resample: null/],
    [{ image_processor_type: 'ViTImageProcessor', image_std: [0.5, 0, 0.5] }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.image_std: expected non-zero values/],
    [{ image_processor_type: 'ViTImageProcessor', image_mean: [0.5, 0.5] }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.image_mean: expected a number or 3 numbers/],
    [{ image_processor_type: 'ViTImageProcessor', do_resize: 'yes' }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.do_resize: expected true or false/],
    [{ image_processor_type: 'ViTImageProcessor', rescale_factor: '1/255' }, 'ERR_INVALID_ARGUMENT', /preprocessorConfig\.rescale_factor: expected a finite number/],
  ];
  for (const [config, code, message] of refused) {
    await rejects(preprocessImages(png, config), { code, message });
  }
  await rejects(preprocessImages(png, null), { name: 'TypeError', message: /^preprocessorConfig: expected preprocessor_config\.json/ });
  await rejects(preprocessImages(png, '{"size": '), { code: 'ERR_INVALID_ARGUMENT', message: /^preprocessorConfig: not valid JSON/ });
  assert.deepEqual((await preprocessImages(png, JSON.stringify(CLIP))).data, (await preprocessImages(png, CLIP)).data);
  await rejects(preprocessImages(png, {}, { modelType: 'swin' }), { code: 'ERR_UNSUPPORTED', message: /model_type "swin" has no image processor here/ });
  // the model type chooses the class when the config names none (AutoImageProcessor's fallback)
  assert.equal(imageProcessor({ size: { shortest_edge: 256 } }, { modelType: 'dinov2' }).type, 'BitImageProcessor');
  assert.equal(imageProcessor({ feature_extractor_type: 'DeiTFeatureExtractor', size: 256 }).size.height, 256);
  // keys the class does not read change nothing (transformers ignores them too)
  const a = await preprocessImages(png, E.configs.deit_small);
  const { crop_pct: _, ...withoutCropPct } = E.configs.deit_small;
  assert.deepEqual((await preprocessImages(png, withoutCropPct)).data, a.data);
});

test('hostile bytes: 400 mutated or cut fixtures decode or fail with an AttnWasmError, never anything else', async () => {
  const { readdirSync } = await import('node:fs');
  const files = readdirSync(new URL('fixtures/', DIR)).sort().map((f) => new Uint8Array(readFileSync(new URL(`fixtures/${f}`, DIR))));
  let s = 39;
  const rnd = (n) => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s % n; };
  let failed = 0;
  for (let it = 0; it < 400; it++) {
    const src = files[rnd(files.length)];
    const b = src.slice(0, rnd(4) === 0 ? rnd(src.length + 1) : src.length);
    for (let k = 1 + rnd(6); k > 0 && b.length; k--) b[rnd(b.length)] = rnd(4) === 0 ? 255 : rnd(256);
    try {
      await preprocessImages([b], CLIP);
    } catch (e) {
      assert.ok(e instanceof AttnWasmError, `mutation ${it}: ${e?.name}: ${e?.message}`);
      assert.equal(e.index, 0);
      failed++;
    }
  }
  assert.ok(failed > 200, `${failed} of 400 refused`);
  assert.deepEqual((await preprocessImages([bytes('j420_q90'), bytes('rgb8')], CLIP)).shape, [2, 3, 8, 8]);
});
