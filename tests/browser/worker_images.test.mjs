// Images through 'attnwasm/worker' in headless Chromium (issue 39: "everything works through attnwasm/worker; images
// cross as transferables"): a CLIP golden folder (tests/data/goldens/clip/clip_model) loaded by the worker from its
// URL; an <img>, a canvas, an OffscreenCanvas, an ImageBitmap, ImageData and a Blob of one opaque 8-bit PNG embedded
// there. The elements cannot be posted as they are: the page sends an ImageBitmap of each (transferred, so the
// page's copy is gone after the call, and the user's own ImageBitmap is cloned, not taken). Every kind gives the
// embedding the same runtime gives in the page for that image; a broken <img> is an error, not a hang. The Blob is
// decoded in the worker by the PNG decoder's fflate, found through the page's import map (a module worker has none:
// the page resolves it and tells the worker, bindings/image/deps.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ROOT } from '../tarball.mjs';
import { launchChromium, pageResult } from './chromium.mjs';
import { startStatic } from './static_server.mjs';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>images through the worker</title>
<script type="importmap">
{ "imports": { "attnwasm": "/bindings/index.js", "attnwasm/worker": "/bindings/worker.js",
  "fflate": "/node_modules/fflate/esm/browser.js", "@jsquash/jpeg/": "/node_modules/@jsquash/jpeg/" } }
</script></head>
<body><script type="module">
  import { createWorker } from 'attnwasm/worker';
  import { init } from 'attnwasm';
  const folder = new URL('/tests/data/goldens/clip/clip_model/', location.href).href;
  const png = '/tests/data/goldens/images/fixtures/rgb8_64x48.png';
  const out = {};
  try {
    const rt = await createWorker({ threads: 1 });
    const m = await rt.loadModel(folder);
    const img = new Image();
    img.src = png;
    await img.decode();
    const canvas = Object.assign(document.createElement('canvas'), { width: img.naturalWidth, height: img.naturalHeight });
    canvas.getContext('2d').drawImage(img, 0, 0);
    const offscreen = new OffscreenCanvas(img.naturalWidth, img.naturalHeight);
    offscreen.getContext('2d').drawImage(img, 0, 0);
    const bitmap = await createImageBitmap(img);
    const imageData = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const blob = await (await fetch(png)).blob();
    const kinds = { img, canvas, offscreen, bitmap, imageData, blob };
    const worker = {};
    for (const [k, v] of Object.entries(kinds)) worker[k] = Array.from((await m.embedImages([v], { normalize: false })).data);
    out.worker = worker;
    out.bitmapKept = bitmap.width;  // the user's ImageBitmap was cloned, not transferred (a transferred one has width 0)
    const aw = await init({ threads: 1 });
    const local = await aw.loadModel(folder);
    out.page = Array.from((await local.embedImages([img], { normalize: false })).data);
    const broken = new Image();
    try { await m.embedImages([broken]); out.broken = null; } catch (e) { out.broken = { code: e.code, message: e.message }; }
    out.after = Array.from((await m.embedImages([blob], { normalize: false })).data);
    await rt.close();
  } catch (e) {
    out.error = String(e && e.stack || e);
  }
  window.result = out;
</script></body></html>`;

test('an <img>, canvas, OffscreenCanvas, ImageBitmap, ImageData and Blob embed through the worker as in the page', async () => {
  const server = await startStatic({ root: ROOT.replace(/\/$/, ''), allow: ['bindings', 'node_modules', 'tests', 'dist'], routes: { '/w.html': { type: 'text/html; charset=utf-8', body: PAGE } } });
  const browser = await launchChromium();
  try {
    const { result, problems } = await pageResult(browser.context, `${server.url}w.html`, { timeout: 90_000 });
    assert.equal(result.error, undefined, result.error);
    // A folder by URL: the loader asks for the side files it may use (tokenizer.json, …: the server says 404) and
    // ends a body it has read enough of (ERR_ABORTED); nothing else.
    assert.deepEqual(problems.filter((p) => !/status of 404|^HTTP 404: |net::ERR_ABORTED$/.test(p)), []);
    for (const [kind, v] of Object.entries(result.worker)) {
      assert.equal(v.length, 24, kind);
      assert.deepEqual(v, result.page, `${kind} through the worker differs from the page's <img>`);
    }
    assert.equal(result.bitmapKept, 64);
    assert.equal(result.broken.code, 'ERR_INVALID_ARGUMENT');
    assert.match(result.broken.message, /image element could not be read for the worker|did not decode/);
    assert.deepEqual(result.after, result.page, 'the worker keeps working after the refusal');
  } finally {
    await browser.close();
    await server.close();
  }
});
