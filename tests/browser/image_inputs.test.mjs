// attnwasm/image in headless Chromium, without a bundler (an import map names fflate and @jsquash/jpeg): every
// fixture (PNG of every colour type and depth, JPEG) given as a Blob, a URL and an ArrayBuffer must give the
// pixels Node gives; given as ImageData, HTMLImageElement, ImageBitmap, canvas and OffscreenCanvas (the
// browser's own decoding, read back from a canvas) they must give them too for the fixtures that are opaque
// 8-bit sRGB PNGs. For the others (alpha, 16-bit, tRNS, JPEG) the differences are reported, not asserted:
// docs/images.md states them. Every fixture's CLIP pixel_values (resize by the SIMD kernels, crop, normalize)
// are Node's, bit for bit. Errors in the page name the input's index.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ROOT } from '../tarball.mjs';
import { launchChromium, pageResult } from './chromium.mjs';
import { startStatic } from './static_server.mjs';
import { preprocessImages } from '../../bindings/image/index.js';

const DIR = new URL('../data/goldens/images/', import.meta.url);
const E = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));
const RAW = E.configs.vit_raw; // no resize, no rescale, no normalize: pixel_values are the RGB bytes, (3, H, W)
const CLIP = E.configs.clip_small; // resize (the SIMD passes in the page), crop, rescale, normalize
const FIXTURES = Object.values(E.fixtures).map((f) => ({ name: f.name, file: f.file, canvas: f.canvasExact }));

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>image inputs</title>
<script type="importmap">
{ "imports": { "fflate": "/node_modules/fflate/esm/browser.js", "@jsquash/jpeg/": "/node_modules/@jsquash/jpeg/" } }
</script></head>
<body><script type="module">
  import { preprocessImages } from '/bindings/image/index.js';
  const RAW = ${JSON.stringify(RAW)};
  const CLIP = ${JSON.stringify(CLIP)};
  const f32 = (pv) => { const u = new Uint8Array(pv.data.buffer); let s = ''; for (const x of u) s += String.fromCharCode(x); return btoa(s); };
  const FIXTURES = ${JSON.stringify(FIXTURES)};
  const b64 = (pv) => { const u = Uint8Array.from(pv.data); let s = ''; for (const x of u) s += String.fromCharCode(x); return btoa(s); };
  const run = async (input) => { try { const pv = await preprocessImages([input], RAW); return { shape: pv.shape, pixels: b64(pv) }; } catch (e) { return { error: e.message, code: e.code }; } };
  const out = {};
  for (const f of FIXTURES) {
    const url = '/tests/data/goldens/images/fixtures/' + f.file;
    const buf = await (await fetch(url)).arrayBuffer();
    const blob = new Blob([buf], { type: f.file.endsWith('.png') ? 'image/png' : 'image/jpeg' });
    const r = { blob: await run(blob), url: await run(url), arrayBuffer: await run(buf) };
    const clip = await preprocessImages(blob, CLIP);
    const img = new Image();
    img.src = url;
    await img.decode();
    const bitmap = await createImageBitmap(blob);
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const offscreen = new OffscreenCanvas(bitmap.width, bitmap.height);
    offscreen.getContext('2d').drawImage(bitmap, 0, 0);
    Object.assign(r, { image: await run(img), bitmap: await run(bitmap), canvas: await run(canvas), offscreen: await run(offscreen),
      imageData: await run(ctx.getImageData(0, 0, canvas.width, canvas.height)) });
    out[f.name] = { kinds: r, clip: { shape: clip.shape, data: f32(clip) } };
  }
  const png = new Uint8Array(await (await fetch('/tests/data/goldens/images/fixtures/rgb8.png')).arrayBuffer());
  const gif = new Uint8Array(await (await fetch('/tests/data/goldens/images/refused/image.gif')).arrayBuffer());
  const errors = [];
  for (const bad of [new Blob([png.subarray(0, 60)]), new Blob([gif]), '/tests/data/goldens/images/fixtures/missing.png', new Image(), 7]) {
    try { await preprocessImages([png, bad], RAW); errors.push(null); } catch (e) { errors.push({ name: e.name, code: e.code, index: e.index, message: e.message }); }
  }
  window.result = { out, errors, imageDataGlobal: typeof ImageData };
</script></body></html>`;

test('browser inputs give the pixels of the Node path (Blob, URL, ArrayBuffer: all fixtures; canvas-read kinds: opaque 8-bit PNGs)', async (t) => {
  const server = await startStatic({ root: ROOT.replace(/\/$/, ''), allow: ['bindings', 'node_modules', 'tests'], routes: { '/image.html': { type: 'text/html; charset=utf-8', body: PAGE } } });
  const browser = await launchChromium();
  try {
    const { result, problems } = await pageResult(browser.context, `${server.url}image.html`, { timeout: 90_000 });
    assert.deepEqual(problems.filter((p) => !p.includes('missing.png') && !p.includes('404')), []);
    let exact = 0;
    const notes = [];
    for (const f of FIXTURES) {
      const want = await preprocessImages([new URL(`fixtures/${f.file}`, DIR)], RAW);
      const wantBytes = Uint8Array.from(want.data);
      const got = result.out[f.name].kinds;
      const clip = await preprocessImages([new URL(`fixtures/${f.file}`, DIR)], CLIP);
      const page = result.out[f.name].clip;
      assert.deepEqual(page.shape, clip.shape, `${f.name}: CLIP shape`);
      assert.equal(page.data, Buffer.from(clip.data.buffer).toString('base64'), `${f.name}: CLIP pixel_values in the page differ from Node's`);
      for (const [kind, r] of Object.entries(got)) {
        const canvasKind = !['blob', 'url', 'arrayBuffer'].includes(kind);
        assert.ok(!r.error, `${f.name} as ${kind}: ${r.error}`);
        const bytes = Uint8Array.from(atob(r.pixels), (c) => c.charCodeAt(0));
        const same = JSON.stringify(r.shape) === JSON.stringify(want.shape) && bytes.every((v, i) => v === wantBytes[i]);
        if (!canvasKind || f.canvas) {
          assert.ok(same, `${f.name} as ${kind}: pixels differ from Node's`);
          exact++;
        } else if (!same && kind === 'image') {
          let max = 0, n = 0;
          if (JSON.stringify(r.shape) === JSON.stringify(want.shape)) bytes.forEach((v, i) => { const d = Math.abs(v - wantBytes[i]); if (d) { n++; max = Math.max(max, d); } });
          notes.push(`${f.name}: ${n} of ${bytes.length} values differ (max ${max})`);
        }
      }
    }
    t.diagnostic(`${exact} (fixture, input kind) pairs equal to Node's pixels`);
    t.diagnostic(`the browser's own decoding (HTMLImageElement) where PIL's differs: ${notes.join('; ')}`);
    assert.equal(exact, FIXTURES.length * 3 + FIXTURES.filter((f) => f.canvas).length * 5, 'every pair compared');
    assert.ok(FIXTURES.filter((f) => f.canvas).length >= 20);
    const [truncated, gif, missing, emptyImg, number] = result.errors;
    assert.deepEqual([truncated.code, truncated.index], ['ERR_INVALID_ARGUMENT', 1]);
    assert.match(truncated.message, /^images\[1\]: PNG: /);
    assert.deepEqual([gif.code, gif.index], ['ERR_UNSUPPORTED', 1]);
    assert.match(gif.message, /^images\[1\]: a GIF image is not supported/);
    assert.deepEqual([missing.code, missing.index], ['ERR_INVALID_ARGUMENT', 1]);
    assert.match(missing.message, /^images\[1\]: fetching .*missing\.png gave HTTP 404/);
    assert.deepEqual([emptyImg.code, emptyImg.index], ['ERR_INVALID_ARGUMENT', 1]);
    assert.match(emptyImg.message, /^images\[1\]: the <img> \(no src\) did not decode/);
    assert.deepEqual([number.name, number.index], ['TypeError', 1]);
    assert.equal(result.imageDataGlobal, 'function');
  } finally {
    await browser.close();
    await server.close();
  }
});
