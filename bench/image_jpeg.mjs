// How attnwasm/image's JPEG decoding (@jsquash/jpeg's MozJPEG build) compares with PIL 9.4's (Debian's
// libjpeg-turbo) on a fixed set, and how fast it is. The set (fixed seeds): 72 JPEGs written by PIL
// (qualities 5 … 100, 4:4:4 / 4:2:2 / 4:2:0, progressive or not, optimized Huffman tables or not, greyscale,
// sizes 1 … 333 pixels, smooth pictures, noise and hard edges) and 24 written by MozJPEG's encoder (the same
// npm package: trellis quantization, progressive scans, its own quantization tables). Every file is decoded by
// PIL (Image.open(f).convert("RGB")) and by decodeImage + convertToRgb; the max and mean absolute difference
// of the RGB bytes are printed per set, then the decode time of a 1024×768 JPEG. Not a test; needs
// /usr/bin/python3 with PIL:
//   node bench/image_jpeg.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { describeMachine, median } from './lib.mjs';
import { convertToRgb, decodeImage } from '../bindings/image/index.js';

const PY = `
import sys, numpy as np
from PIL import Image
d = sys.argv[1]
rng = np.random.default_rng(39)
def picture(h, w, kind):
    y, x = np.mgrid[0:h, 0:w]
    if kind == 'noise': a = rng.integers(0, 256, (h, w, 3))
    elif kind == 'edges': a = np.stack([((x // 3 + y // 5) % 2) * 255, (x * 7 % 256), ((y // 2) % 2) * 200 + 20], -1)
    else: a = np.stack([128 + 100 * np.sin(x / (5 + c * 3) + c) * np.cos(y / (7 + c)) for c in range(3)], -1) + rng.normal(0, 10, (h, w, 3))
    return np.clip(a, 0, 255).astype(np.uint8)
if sys.argv[2] == 'write':
    i = 0
    for q in (5, 25, 50, 75, 90, 100):
        for sub in (0, 1, 2):
            for kind in ('smooth', 'noise', 'edges', 'grey'):
                h, w = int(rng.integers(1, 200)), int(rng.integers(1, 334))
                im = Image.fromarray(picture(h, w, 'smooth' if kind == 'grey' else kind), 'RGB')
                if kind == 'grey': im = im.convert('L')
                try:
                    im.save(f'{d}/pil_{i:03d}.jpg', quality=q, subsampling=sub, progressive=bool(i % 2), optimize=bool(i % 3 == 0))
                except OSError:  # PIL's buffer for progressive / optimized files is too small for noise at high quality
                    im.save(f'{d}/pil_{i:03d}.jpg', quality=q, subsampling=sub)
                i += 1
    for i in range(24):
        h, w = int(rng.integers(1, 200)), int(rng.integers(1, 334))
        np.ascontiguousarray(picture(h, w, ('smooth', 'noise', 'edges')[i % 3])).tofile(f'{d}/moz_{i:03d}_{w}x{h}.rgb')
    Image.fromarray(picture(768, 1024, 'smooth'), 'RGB').save(f'{d}/big.jpg', quality=90)
else:
    import os
    for f in sorted(os.listdir(d)):
        if f.endswith('.jpg'): np.asarray(Image.open(f'{d}/{f}').convert('RGB')).tofile(f'{d}/{f}.pil')
`;

const dir = mkdtempSync(join(tmpdir(), 'aw-jpeg-bench-'));
try {
  execFileSync('/usr/bin/python3', ['-c', PY, dir, 'write'], { stdio: ['ignore', 'pipe', 'pipe'] }); // libjpeg's messages on the retried saves: not shown
  // MozJPEG-encoded files, from the RGB the script wrote (the encoder of the same npm package)
  const require = createRequire(import.meta.url);
  const { default: encode, init } = await import('@jsquash/jpeg/encode.js');
  const wasm = readFileSync(require.resolve('@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm'));
  const hadImageData = typeof globalThis.ImageData !== 'undefined';
  await init(await WebAssembly.compile(wasm));
  for (const f of readdirSync(dir).filter((x) => x.startsWith('moz_'))) {
    const [, i, w, h] = /moz_(\d+)_(\d+)x(\d+)\.rgb/.exec(f).map(Number);
    const rgb = readFileSync(join(dir, f));
    const rgba = new Uint8ClampedArray(w * h * 4);
    for (let p = 0; p < w * h; p++) { rgba.set(rgb.subarray(3 * p, 3 * p + 3), 4 * p); rgba[4 * p + 3] = 255; }
    const jpg = await encode({ data: rgba, width: w, height: h }, { quality: [30, 60, 85, 95][i % 4], chroma_subsample: i % 3 === 0 ? 1 : 2 });
    writeFileSync(join(dir, `moz_${String(i).padStart(3, '0')}.jpg`), new Uint8Array(jpg));
  }
  if (!hadImageData) delete globalThis.ImageData; // the encoder's glue defines it in Node
  execFileSync('/usr/bin/python3', ['-c', PY, dir, 'read'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const sets = { 'PIL (libjpeg-turbo) encoded': 'pil_', 'MozJPEG encoded': 'moz_' };
  console.log(describeMachine());
  for (const [label, prefix] of Object.entries(sets)) {
    let files = 0, differing = 0, max = 0, sum = 0, count = 0;
    for (const f of readdirSync(dir).filter((x) => x.startsWith(prefix) && x.endsWith('.jpg'))) {
      const ref = readFileSync(join(dir, `${f}.pil`));
      const got = convertToRgb(await decodeImage(readFileSync(join(dir, f)), f)).data;
      if (got.length !== ref.length) throw new Error(`${f}: ${got.length} bytes decoded, PIL ${ref.length}`);
      let m = 0;
      for (let i = 0; i < ref.length; i++) { const d = Math.abs(got[i] - ref[i]); sum += d; if (d > m) m = d; }
      files++; count += ref.length; max = Math.max(max, m); if (m) differing++;
    }
    console.log(`${label}: ${files} files, ${count} RGB values; max |Δ| = ${max}, mean |Δ| = ${(sum / count).toFixed(6)}, ${differing} files with any difference`);
  }
  const big = readFileSync(join(dir, 'big.jpg'));
  const ms = [];
  for (let i = 0; i < 25; i++) {
    const t0 = performance.now();
    convertToRgb(await decodeImage(big));
    if (i >= 5) ms.push(performance.now() - t0);
  }
  console.log(`decode of a 1024×768 JPEG (quality 90, 4:2:0, ${big.length} bytes) to RGB: median ${median(ms).toFixed(2)} ms of 20`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
