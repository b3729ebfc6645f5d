// Benchmark of attnwasm/image (issue 39's target: preprocessing alone ≤ 10 ms): a 1024×768 RGB PNG to
// CLIP's 224×224 pixel_values (openai/clip-vit-base-patch32's preprocessor_config.json: shortest edge 224,
// bicubic, center crop 224, rescale, normalize), with decoding included and excluded; the decode alone; the
// first call of a fresh process (module loads and JIT warm-up); the resampling's JS twins instead of its
// WebAssembly SIMD kernels; and, when Debian's python3 runs transformers
// here (tools/hf_env), the same work by PIL + transformers' CLIPImageProcessor, whose pixel_values must equal
// ours. Medians of RUNS timed calls after WARMUP untimed ones. Not a test; Node 20:
//   node bench/image_preprocess.mjs [--runs 30] [--json]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { zlibSync } from 'fflate';
import { describeMachine, median, quantile } from './lib.mjs';
import { loadImage, preprocessImages } from '../bindings/image/index.js';
import { setResampleBackend } from '../bindings/image/resize.js';

const args = process.argv.slice(2);
const RUNS = Number(args[args.indexOf('--runs') + 1] || 30) || 30;
const WARMUP = 10;
const W = 1024, H = 768;
const CLIP = { crop_size: 224, do_center_crop: true, do_normalize: true, do_resize: true, feature_extractor_type: 'CLIPFeatureExtractor',
  image_mean: [0.48145466, 0.4578275, 0.40821073], image_std: [0.26862954, 0.26130258, 0.27577711], resample: 3, size: 224 };
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A photo-like W×H RGB picture: smooth waves plus xorshift noise (deterministic). */
function picture() {
  const px = new Uint8Array(W * H * 3);
  let s = 39;
  for (let y = 0, o = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      for (let c = 0; c < 3; c++, o++) {
        s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
        const v = 128 + 90 * Math.sin(x / (37 + 11 * c)) * Math.cos(y / (23 + 7 * c)) + ((s >>> 0) % 25) - 12;
        px[o] = v < 0 ? 0 : v > 255 ? 255 : v;
      }
    }
  }
  return px;
}

/** A PNG file of the picture: every scanline Paeth-filtered (the dearest filter to undo), zlib level 6. */
function encodePng(px) {
  const row = W * 3, raw = new Uint8Array(H * (row + 1));
  for (let y = 0; y < H; y++) {
    raw[y * (row + 1)] = 4;
    for (let i = 0; i < row; i++) {
      const a = i >= 3 ? px[y * row + i - 3] : 0, b = y ? px[(y - 1) * row + i] : 0, c = i >= 3 && y ? px[(y - 1) * row + i - 3] : 0;
      const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
      raw[y * (row + 1) + 1 + i] = px[y * row + i] - (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
    }
  }
  const crcTable = Array.from({ length: 256 }, (_, n) => { let c = n; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; return c >>> 0; });
  const chunk = (type, body) => {
    const b = new Uint8Array(12 + body.length), dv = new DataView(b.buffer);
    dv.setUint32(0, body.length);
    b.set([...type].map((ch) => ch.charCodeAt(0)), 4);
    b.set(body, 8);
    let c = 0xffffffff;
    for (let i = 4; i < 8 + body.length; i++) c = crcTable[(c ^ b[i]) & 0xff] ^ (c >>> 8);
    dv.setUint32(8 + body.length, (c ^ 0xffffffff) >>> 0);
    return b;
  };
  const ihdr = new Uint8Array(13), dv = new DataView(ihdr.buffer);
  dv.setUint32(0, W); dv.setUint32(4, H); ihdr.set([8, 2, 0, 0, 0], 8);
  const parts = [new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', zlibSync(raw, { level: 6 })), chunk('IEND', new Uint8Array())];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((o, p) => { out.set(p, o); return o + p.length; }, 0);
  return out;
}

async function time(fn) {
  for (let i = 0; i < WARMUP; i++) await fn();
  const ms = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  return { median: median(ms), p10: quantile(ms, 0.1), p90: quantile(ms, 0.9), min: Math.min(...ms) };
}

/** PIL + transformers on the same PNG: their median and their pixel_values (null when Python cannot run it). */
function pythonPeer(dir) {
  const script = `
import sys, json, time, statistics
sys.path.insert(0, ${JSON.stringify(join(ROOT, 'tools'))}); import hf_env; hf_env.setup()
import numpy as np
from PIL import Image
from transformers import CLIPImageProcessor
from transformers.image_utils import load_image
cfg = json.loads(${JSON.stringify(JSON.stringify(CLIP))}); cfg.pop('feature_extractor_type')
p = CLIPImageProcessor(**cfg)
path, runs = sys.argv[1], int(sys.argv[2])
def both(): return p(load_image(path), return_tensors='np')['pixel_values']
img = load_image(path)
def alone(): return p(img, return_tensors='np')['pixel_values']
out = {}
for name, f in (('decode', lambda: load_image(path)), ('both', both), ('alone', alone)):
    for _ in range(3): f()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter(); f(); ts.append((time.perf_counter() - t0) * 1000)
    out[name] = statistics.median(ts)
both().astype('<f4').tofile(path + '.f32')
print(json.dumps(out))
`;
  try {
    const res = JSON.parse(execFileSync('/usr/bin/python3', ['-c', script, join(dir, 'p.png'), String(RUNS)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const b = readFileSync(join(dir, 'p.png.f32'));
    return { ...res, pixels: new Float32Array(b.buffer, b.byteOffset, b.length / 4) };
  } catch {
    return null;
  }
}

const png = encodePng(picture());
const dir = mkdtempSync(join(tmpdir(), 'aw-image-bench-'));
try {
  writeFileSync(join(dir, 'p.png'), png);
  const t0 = performance.now();
  const first = await preprocessImages(png, CLIP);
  const firstMs = performance.now() - t0;
  const rgb = await loadImage(png);
  const raw = { data: rgb.data, width: rgb.width, height: rgb.height };
  const both = await time(() => preprocessImages(png, CLIP));
  const alone = await time(() => preprocessImages(raw, CLIP));
  setResampleBackend('js');
  const aloneJs = await time(() => preprocessImages(raw, CLIP));
  setResampleBackend('auto');
  const decode = await time(() => loadImage(png));
  const py = pythonPeer(dir);
  let maxDiff = null;
  if (py) {
    maxDiff = 0;
    for (let i = 0; i < first.data.length; i++) maxDiff = Math.max(maxDiff, Math.abs(first.data[i] - py.pixels[i]));
  }
  const result = {
    machine: describeMachine(), node: process.version, png: { width: W, height: H, bytes: png.length }, runs: RUNS, shape: first.shape,
    firstCallMs: firstMs, decodeAndPreprocess: both, preprocessAlone: alone, preprocessAloneJsPasses: aloneJs, decodeAlone: decode,
    python: py && { decodeAndPreprocess: py.both, preprocessAlone: py.alone, decodeAlone: py.decode, maxAbsDiff: maxDiff },
  };
  if (args.includes('--json')) console.log(JSON.stringify(result, null, 1));
  else {
    const f = (t) => `${t.median.toFixed(2)} ms (min ${t.min.toFixed(2)}, p10 ${t.p10.toFixed(2)}, p90 ${t.p90.toFixed(2)})`;
    console.log(`${result.machine}; Node ${result.node}`);
    console.log(`${W}×${H} RGB PNG (${png.length} bytes) → CLIP pixel_values ${JSON.stringify(first.shape)}, median of ${RUNS} runs:`);
    console.log(`  preprocessing alone (resize, crop, normalize): ${f(alone)}   target ≤ 10 ms`);
    console.log(`  the same with the JS passes (no SIMD):         ${f(aloneJs)}`);
    console.log(`  decode + preprocessing:                        ${f(both)}`);
    console.log(`  decode alone (PNG → RGB):                      ${f(decode)}`);
    console.log(`  first call in this process (decode included):  ${firstMs.toFixed(1)} ms`);
    if (py) {
      console.log(`  PIL 9.4 + transformers CLIPImageProcessor: alone ${py.alone.toFixed(2)} ms, with decode ${py.both.toFixed(2)} ms, decode ${py.decode.toFixed(2)} ms`);
      console.log(`  ratio (Python / attnwasm): alone ${(py.alone / alone.median).toFixed(2)}×, with decode ${(py.both / both.median).toFixed(2)}×; max |Δ pixel_values| = ${maxDiff}`);
    } else console.log('  (PIL + transformers not run: /usr/bin/python3 with tools/hf_env unavailable)');
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
