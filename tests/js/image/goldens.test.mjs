// attnwasm/image against PIL 9.4 + transformers v4.40.2 (tests/data/make_image_goldens.py): every fixture
// decodes to load_image's RGB bytes and PIL's mode; every case's pixel_values equal transformers' within
// 1e-6 (float32 rounding; they are in fact bitwise equal), with the hub's own configs at 224 compared by the
// SHA-256 of their float32 bytes; the pieces (resize, centerCrop, pixelTable) compose to the same values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  centerCrop, convertToRgb, decodeImage, exifTranspose, imageProcessor, loadImage, pixelTable, preprocessImages,
  processImage, resize, resizedSize, writePixelValues,
} from '../../../bindings/image/index.js';

const DIR = new URL('../../data/goldens/images/', import.meta.url);
const E = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));
const DECODED = readFileSync(new URL('decoded.bin', DIR));
const PV = (() => { const b = readFileSync(new URL('pixel_values.bin', DIR)); return new Float32Array(b.buffer, b.byteOffset, b.length / 4); })();
const file = (name) => new URL(`fixtures/${E.fixtures[name].file}`, DIR);
const bytes = (name) => new Uint8Array(readFileSync(file(name)));

/** The first element where |got - want| > tol, as a message, or null. */
function firstMismatch(got, want, tol) {
  if (got.length !== want.length) return `length ${got.length}, expected ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= tol)) return `element ${i}: ${got[i]}, expected ${want[i]} (tolerance ${tol})`;
  }
  return null;
}

test('every fixture decodes to PIL\'s mode and to load_image\'s RGB bytes (PNG of every colour type and depth, JPEG, EXIF)', async () => {
  const names = Object.keys(E.fixtures);
  assert.ok(names.length >= 60);
  for (const name of names) {
    const f = E.fixtures[name];
    const img = await decodeImage(bytes(name), name);
    assert.equal(img.mode, f.pilMode, `${name}: mode`);
    const rgb = exifTranspose(convertToRgb(img), img.orientation);
    assert.deepEqual([rgb.width, rgb.height], [f.width, f.height], `${name}: size`);
    const want = DECODED.subarray(f.offset, f.offset + f.width * f.height * 3);
    const bad = firstMismatch(rgb.data, want, 0);
    assert.equal(bad, null, `${name}: ${bad}`);
  }
});

test('pixel_values of every case equal transformers\' (≤ 1e-6), batches included', async () => {
  let n = 0, worst = 0;
  for (const c of E.cases.filter((x) => x.offset !== undefined)) {
    const got = await preprocessImages(c.fixtures.map((f) => bytes(f)), E.configs[c.config]);
    const what = `${c.fixtures.join('+')} with ${c.config}`;
    assert.deepEqual(got.shape, c.shape, `${what}: shape`);
    const want = PV.subarray(c.offset, c.offset + got.data.length);
    const bad = firstMismatch(got.data, want, E.tolerance);
    assert.equal(bad, null, `${what}: ${bad}`);
    for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got.data[i] - want[i]));
    n++;
  }
  assert.ok(n >= 290, `${n} cases`);
  assert.equal(worst, 0, 'bitwise equal');
});

test('the hub\'s own configs (CLIP, ViT, DeiT, DINOv2, SigLIP at 224) give transformers\' bytes (SHA-256)', async () => {
  const hub = E.cases.filter((x) => x.sha256);
  assert.ok(hub.length >= 18);
  for (const c of hub) {
    const got = await preprocessImages(c.fixtures.map((f) => file(f)), E.configs[c.config]);
    const what = `${c.fixtures.join('+')} with ${c.config}`;
    assert.deepEqual(got.shape, c.shape, `${what}: shape`);
    const samples = Float32Array.from(c.samples.index, (i) => got.data[i]);
    const bad = firstMismatch(samples, c.samples.value, E.tolerance);
    assert.equal(bad, null, `${what}: sampled ${bad}`);
    const hash = createHash('sha256').update(new Uint8Array(got.data.buffer, got.data.byteOffset, got.data.byteLength)).digest('hex');
    assert.equal(hash, c.sha256, `${what}: the float32 bytes differ from transformers' (the samples agree)`);
  }
});

test('the pieces compose to preprocessImages: resize the whole image, centerCrop, pixelTable', async () => {
  const configs = ['clip_small', 'deit_small', 'clip_pad', 'bit_noresize_pad', 'vit_lanczos_up', 'vit_nearest_down', 'hub_clip_b32'];
  for (const name of ['rgb8_64x48', 'p4_i', 'j422_q75', 'rgb8_200x10']) {
    const rgb = await loadImage(file(name));
    for (const config of configs) {
      const p = imageProcessor(E.configs[config]);
      let img = rgb;
      if (p.doResize) {
        const [h, w] = resizedSize(p, rgb.height, rgb.width);
        img = resize(rgb, { width: w, height: h }, p.resample);
      }
      if (p.doCenterCrop) img = centerCrop(img, p.cropSize);
      const piece = processImage(rgb, p);
      assert.deepEqual([piece.width, piece.height], [img.width, img.height], `${name} ${config}: size`);
      assert.equal(firstMismatch(piece.data, img.data, 0), null, `${name} ${config}: the cropped window differs from resize + crop`);
      const out = new Float32Array(3 * img.width * img.height);
      writePixelValues(img, pixelTable(p), out, 0);
      const want = await preprocessImages(file(name), E.configs[config]);
      assert.equal(firstMismatch(out, want.data, 0), null, `${name} ${config}: pixel values`);
    }
  }
});

test('resize by name and by number, and the grey (1-channel) path, agree with the RGB path', async () => {
  const rgb = await loadImage(file('g8'));
  const grey = { width: rgb.width, height: rgb.height, data: rgb.data.filter((_, i) => i % 3 === 0) };
  for (const [byName, byNumber] of [['nearest', 0], ['lanczos', 1], ['bilinear', 2], ['bicubic', 3], ['box', 4], ['hamming', 5]]) {
    for (const size of [{ width: 5, height: 4 }, { width: 31, height: 17 }, { width: 13, height: 23 }]) {
      const a = resize(rgb, size, byName), b = resize(rgb, size, byNumber), g = resize(grey, size, byNumber);
      assert.deepEqual(a, b);
      assert.equal(firstMismatch(g.data, a.data.filter((_, i) => i % 3 === 0), 0), null, `${byName} ${size.width}×${size.height}`);
    }
  }
});
