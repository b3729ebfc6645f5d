// The WebAssembly SIMD passes (bindings/image/resample_simd.wat) against their JS twins (resample.js), byte for
// byte, at awkward sizes (1 pixel, 1 row, widths around the 16-byte chunk, windows, extreme values that make
// bicubic and lanczos overshoot and clip), every filter, 3 channels and 1; the golden cases through the JS
// passes; and the embedded module in step with the .wat (when wabt's wat2wasm is installed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { preprocessImages } from '../../../bindings/image/index.js';
import { resizeWindow, setResampleBackend } from '../../../bindings/image/resize.js';
import { simdAvailable } from '../../../bindings/image/resample_simd.js';

const DIR = new URL('../../data/goldens/images/', import.meta.url);

function image(w, h, C, seed, extreme) {
  const data = new Uint8Array(w * h * C);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < data.length; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    data[i] = extreme ? ((s >>> 7) & 1) * 255 : s & 0xff;
  }
  return { width: w, height: h, data };
}

function both(img, ow, oh, f, win) {
  const before = setResampleBackend('js');
  try {
    const js = resizeWindow(img, ow, oh, f, ...win);
    setResampleBackend('simd');
    const simd = resizeWindow(img, ow, oh, f, ...win);
    return [js, simd];
  } finally {
    setResampleBackend(before);
  }
}

test('WebAssembly SIMD is available in Node 20 (the default path)', () => {
  assert.equal(simdAvailable(), true);
});

test('SIMD passes = JS passes, byte for byte, at awkward sizes, windows, every filter, 3 and 1 channels', () => {
  const sizes = [[1, 1], [1, 7], [7, 1], [2, 3], [5, 6], [6, 5], [17, 5], [33, 9], [64, 48], [200, 10]];
  const outs = [[1, 1], [2, 5], [3, 3], [5, 16], [16, 5], [17, 17], [31, 6], [97, 40]];
  let n = 0;
  for (const C of [3, 1]) {
    for (const [w, h] of sizes) {
      for (const extreme of [false, true]) {
        const img = image(w, h, C, w * 131 + h * 7 + C, extreme);
        for (const [ow, oh] of [...outs, [w, h + 3], [2 * w + 1, h]]) { // one side unchanged: one pass only
          for (const f of [1, 2, 3, 4, 5]) {
            const wins = [[0, ow, 0, oh]];
            if (ow > 2 && oh > 2) wins.push([1, ow - 1, 1, oh - 1], [ow >> 1, ow, 0, 1]);
            for (const win of wins) {
              const [js, simd] = both(img, ow, oh, f, win);
              assert.deepEqual(simd, js, `${w}×${h}×${C}${extreme ? ' (0/255)' : ''} → ${ow}×${oh}, filter ${f}, window ${win}`);
              n++;
            }
          }
        }
      }
    }
  }
  assert.ok(n > 2000, `${n} comparisons`);
});

test('the golden cases through the JS passes give transformers\' pixel_values too', async () => {
  const E = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));
  const b = readFileSync(new URL('pixel_values.bin', DIR));
  const PV = new Float32Array(b.buffer, b.byteOffset, b.length / 4);
  const before = setResampleBackend('js');
  try {
    for (const c of E.cases.filter((x) => x.offset !== undefined && (x.config.startsWith('vit_') || x.config === 'clip_small'))) {
      const got = await preprocessImages(c.fixtures.map((f) => new URL(`fixtures/${E.fixtures[f].file}`, DIR)), E.configs[c.config]);
      const want = PV.subarray(c.offset, c.offset + got.data.length);
      assert.ok(got.data.every((v, i) => Math.abs(v - want[i]) <= E.tolerance), `${c.fixtures} ${c.config} (JS passes)`);
    }
  } finally {
    setResampleBackend(before);
  }
});

test('bindings/image/resample_simd_wasm.js is resample_simd.wat assembled (tools/make_image_simd.mjs --check)', (t) => {
  if (spawnSync('wat2wasm', ['--version']).status !== 0) {
    t.skip('wabt\'s wat2wasm is not installed (tools/setup.sh installs it)');
    return;
  }
  execFileSync(process.execPath, [fileURLToPath(new URL('../../../tools/make_image_simd.mjs', import.meta.url)), '--check']);
});
