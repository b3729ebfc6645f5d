// attnwasm/audio's real FFT (bindings/audio/fft.js) against its scalar twin, the plain DFT in float64, at awkward
// lengths: each hand-written radix (2, 3, 4, 5) alone and mixed, prime factors without a butterfly (7, 11, 13, 499),
// Whisper's 400, powers of two. Tolerance |fft − dft| ≤ 1e-12 · n · max|x|: both are float64; the plain DFT's own
// rounding grows with n. The Hann window against numpy's formula.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RealFFT } from '../../bindings/audio/fft.js';
import { hannWindow } from '../../bindings/audio/log_mel.js';

/** The one-sided DFT, term by term, angles reduced exactly (k·t mod n) before cos/sin. */
function dft(x) {
  const n = x.length, out = new Float64Array(n + 2);
  for (let k = 0; k <= n / 2; k++) {
    let re = 0, im = 0;
    for (let t = 0; t < n; t++) {
      const a = (2 * Math.PI * ((k * t) % n)) / n;
      re += x[t] * Math.cos(a);
      im -= x[t] * Math.sin(a);
    }
    out[2 * k] = re; out[2 * k + 1] = im;
  }
  return out;
}

test('RealFFT equals the plain DFT at awkward lengths', () => {
  let seed = 12345;
  const rand = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed / 2 ** 32 - 0.5; };
  for (const n of [2, 4, 6, 8, 10, 12, 14, 16, 18, 22, 26, 30, 40, 50, 98, 128, 200, 242, 400, 512, 998, 1024, 1386]) {
    const fft = new RealFFT(n);
    for (const scale of [1, 1e6, 1e-6]) {
      const x = Float64Array.from({ length: n }, () => rand() * scale);
      const want = dft(x), got = fft.forward(x, new Float64Array(n + 2));
      const tol = 1e-12 * n * scale;
      for (let i = 0; i < n + 2; i++) {
        if (!(Math.abs(got[i] - want[i]) <= tol)) assert.fail(`n = ${n}, scale ${scale}: ${i % 2 ? 'im' : 're'}[${i >> 1}] = ${got[i]}, DFT ${want[i]}`);
      }
      assert.equal(got[1], 0, `n = ${n}: im[0] is 0`);
    }
    // The plan is reused: a second frame through the same plan gives the same as a fresh plan.
    const x = Float64Array.from({ length: n }, rand);
    assert.deepEqual(fft.forward(x, new Float64Array(n + 2)), new RealFFT(n).forward(x, new Float64Array(n + 2)));
  }
  for (const bad of [0, 1, 3, 401, 2.5]) assert.throws(() => new RealFFT(bad), RangeError);
});

test('hannWindow is numpy\'s periodic Hann: np.hanning(n + 1)[:-1]', () => {
  for (const n of [2, 8, 400, 512]) {
    const w = hannWindow(n);
    assert.equal(w.length, n);
    assert.equal(w[0], 0);
    for (let i = 0; i < n; i++) assert.ok(Math.abs(w[i] - (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n))) < 1e-15, `n = ${n}, ${i}`);
  }
});
