// The discrete Fourier transform of a real frame, in float64, for any length: a mixed-radix Stockham
// FFT (radices 4, 2, 3, 5, and a plain DFT butterfly for any other prime factor) on the half-length
// complex sequence, then the split that turns it into the real input's spectrum. Whisper's n_fft 400
// = 2·4·5·5 (half length 200). Not a general FFT library: a plan per length, reused frame after frame.
//
// Why float64: transformers' numpy path promotes the frames to float64 and runs numpy's pocketfft in
// float64 (audio_utils.spectrogram); both are exact to ~1e-16 relative, so the float32 rounding that
// follows sees the same values except at rounding ties.

const TWO_PI = 2 * Math.PI;

/** Factors of n, largest useful radices first (4 before 2), each prime > 5 as itself. */
function factorize(n) {
  const out = [];
  while (n % 4 === 0) { out.push(4); n /= 4; }
  while (n % 2 === 0) { out.push(2); n /= 2; }
  for (const p of [3, 5]) while (n % p === 0) { out.push(p); n /= p; }
  for (let p = 7; p * p <= n; p += 2) while (n % p === 0) { out.push(p); n /= p; }
  if (n > 1) out.push(n);
  return out;
}

/**
 * A complex FFT plan of length n (Stockham autosort, decimation in frequency, natural order in and
 * out). Stage s has radix p, current length len, m = len / p, stride st (the product of the earlier
 * radices): y[q + st·(p·j + u)] = ω_len^{j·u} · Σ_r x[q + st·(j + r·m)] · ω_p^{r·u}.
 */
class ComplexPlan {
  constructor(n) {
    this.n = n;
    this.stages = [];
    let len = n, st = 1;
    for (const p of factorize(n)) {
      const m = len / p;
      // twiddles ω_len^{j·u} for j < m, 1 <= u < p: (m, p - 1) pairs of (cos, -sin), each from its own angle.
      const tw = new Float64Array(2 * m * (p - 1));
      for (let j = 0; j < m; j++) {
        for (let u = 1; u < p; u++) {
          const a = (TWO_PI * ((j * u) % len)) / len;
          tw[2 * (j * (p - 1) + u - 1)] = Math.cos(a);
          tw[2 * (j * (p - 1) + u - 1) + 1] = -Math.sin(a);
        }
      }
      // ω_p^k for a generic radix's butterfly.
      const wp = new Float64Array(2 * p);
      for (let k = 0; k < p; k++) { wp[2 * k] = Math.cos((TWO_PI * k) / p); wp[2 * k + 1] = -Math.sin((TWO_PI * k) / p); }
      this.stages.push({ p, m, st, tw, wp });
      len = m;
      st *= p;
    }
    this.work = new Float64Array(2 * n);
    this.acc = new Float64Array(2 * Math.max(1, ...this.stages.map((s) => s.p)));
  }

  /** In place on re/im interleaved data (length 2n); returns data. */
  run(data) {
    let x = data, y = this.work;
    for (const s of this.stages) {
      stage(s, x, y, this.acc);
      const t = x; x = y; y = t;
    }
    if (x !== data) data.set(x);
    return data;
  }
}

const S3 = Math.sqrt(3) / 2;
const C5a = Math.cos((2 * Math.PI) / 5), C5b = Math.cos((4 * Math.PI) / 5);
const S5a = Math.sin((2 * Math.PI) / 5), S5b = Math.sin((4 * Math.PI) / 5);

function stage({ p, m, st, tw, wp }, x, y, acc) {
  const pm = p - 1;
  for (let j = 0; j < m; j++) {
    for (let q = 0; q < st; q++) {
      const i0 = 2 * (q + st * j), step = 2 * st * m, o0 = 2 * (q + st * p * j), ostep = 2 * st;
      if (p === 2) {
        const ar = x[i0], ai = x[i0 + 1], br = x[i0 + step], bi = x[i0 + step + 1];
        y[o0] = ar + br; y[o0 + 1] = ai + bi;
        acc[2] = ar - br; acc[3] = ai - bi;
      } else if (p === 4) {
        const ar = x[i0], ai = x[i0 + 1], br = x[i0 + step], bi = x[i0 + step + 1];
        const cr = x[i0 + 2 * step], ci = x[i0 + 2 * step + 1], dr = x[i0 + 3 * step], di = x[i0 + 3 * step + 1];
        const t0r = ar + cr, t0i = ai + ci, t1r = ar - cr, t1i = ai - ci;
        const t2r = br + dr, t2i = bi + di, t3r = br - dr, t3i = bi - di;
        y[o0] = t0r + t2r; y[o0 + 1] = t0i + t2i;
        acc[2] = t1r + t3i; acc[3] = t1i - t3r;  // u = 1: a - i·b - c + i·d
        acc[4] = t0r - t2r; acc[5] = t0i - t2i;  // u = 2
        acc[6] = t1r - t3i; acc[7] = t1i + t3r;  // u = 3: a + i·b - c - i·d
      } else if (p === 3) {
        const ar = x[i0], ai = x[i0 + 1], br = x[i0 + step], bi = x[i0 + step + 1];
        const cr = x[i0 + 2 * step], ci = x[i0 + 2 * step + 1];
        const sr = br + cr, si = bi + ci, dr = br - cr, di = bi - ci;
        y[o0] = ar + sr; y[o0 + 1] = ai + si;
        const mr = ar - 0.5 * sr, mi = ai - 0.5 * si;
        acc[2] = mr + S3 * di; acc[3] = mi - S3 * dr;
        acc[4] = mr - S3 * di; acc[5] = mi + S3 * dr;
      } else if (p === 5) {
        const ar = x[i0], ai = x[i0 + 1];
        const br = x[i0 + step], bi = x[i0 + step + 1], er = x[i0 + 4 * step], ei = x[i0 + 4 * step + 1];
        const cr = x[i0 + 2 * step], ci = x[i0 + 2 * step + 1], dr = x[i0 + 3 * step], di = x[i0 + 3 * step + 1];
        const s1r = br + er, s1i = bi + ei, d1r = br - er, d1i = bi - ei;
        const s2r = cr + dr, s2i = ci + di, d2r = cr - dr, d2i = ci - di;
        y[o0] = ar + s1r + s2r; y[o0 + 1] = ai + s1i + s2i;
        const m1r = ar + C5a * s1r + C5b * s2r, m1i = ai + C5a * s1i + C5b * s2i;
        const m2r = ar + C5b * s1r + C5a * s2r, m2i = ai + C5b * s1i + C5a * s2i;
        const n1r = S5a * d1r + S5b * d2r, n1i = S5a * d1i + S5b * d2i;  // multiplied by -i below
        const n2r = S5b * d1r - S5a * d2r, n2i = S5b * d1i - S5a * d2i;
        acc[2] = m1r + n1i; acc[3] = m1i - n1r;
        acc[8] = m1r - n1i; acc[9] = m1i + n1r;
        acc[4] = m2r + n2i; acc[5] = m2i - n2r;
        acc[6] = m2r - n2i; acc[7] = m2i + n2r;
      } else {
        // A prime radix without a hand-written butterfly: the plain p-point DFT.
        for (let u = 0; u < p; u++) {
          let sr = 0, si = 0;
          for (let r = 0; r < p; r++) {
            const k = (r * u) % p, xr = x[i0 + r * step], xi = x[i0 + r * step + 1];
            sr += xr * wp[2 * k] - xi * wp[2 * k + 1];
            si += xr * wp[2 * k + 1] + xi * wp[2 * k];
          }
          if (u === 0) { y[o0] = sr; y[o0 + 1] = si; } else { acc[2 * u] = sr; acc[2 * u + 1] = si; }
        }
      }
      const t = 2 * j * pm;
      for (let u = 1; u < p; u++) {
        const wr = tw[t + 2 * (u - 1)], wi = tw[t + 2 * (u - 1) + 1], vr = acc[2 * u], vi = acc[2 * u + 1];
        y[o0 + u * ostep] = vr * wr - vi * wi;
        y[o0 + u * ostep + 1] = vr * wi + vi * wr;
      }
    }
  }
}

/**
 * The one-sided DFT of real frames of length n (n even, >= 2): X[k] = Σ_t x[t]·e^{-2πi·k·t/n} for
 * k = 0 … n/2. The caller owns the plan; `forward` reuses its buffers, so one plan serves one thread.
 */
export class RealFFT {
  /** @param {number} n frame length, an even integer >= 2 */
  constructor(n) {
    if (!Number.isInteger(n) || n < 2 || n % 2 !== 0) throw new RangeError(`n: expected an even integer >= 2, got ${n}`);
    this.n = n;
    const h = n / 2;
    this.half = new ComplexPlan(h);
    this.z = new Float64Array(2 * h);
    // ω_n^k = e^{-2πik/n}, k = 0 … n/2
    this.w = new Float64Array(2 * (h + 1));
    for (let k = 0; k <= h; k++) { this.w[2 * k] = Math.cos((TWO_PI * k) / n); this.w[2 * k + 1] = -Math.sin((TWO_PI * k) / n); }
  }

  /**
   * @param {Float64Array} x (n) the real frame (read only)
   * @param {Float64Array} out (n/2 + 1, 2) re/im interleaved; written
   */
  forward(x, out) {
    const h = this.n / 2, z = this.z, w = this.w;
    for (let t = 0; t < h; t++) { z[2 * t] = x[2 * t]; z[2 * t + 1] = x[2 * t + 1]; }
    this.half.run(z);
    // Z = FFT(even + i·odd); E[k] = (Z[k] + conj Z[h-k]) / 2, O[k] = (Z[k] - conj Z[h-k]) / 2i,
    // X[k] = E[k] + ω_n^k·O[k].
    for (let k = 0; k <= h; k++) {
      const a = k % h, b = (h - k) % h;
      const zr = z[2 * a], zi = z[2 * a + 1], cr = z[2 * b], ci = -z[2 * b + 1];
      const er = 0.5 * (zr + cr), ei = 0.5 * (zi + ci);
      const dr = zr - cr, di = zi - ci;           // 2i·O = d  →  O = (di - i·dr) / 2
      const or = 0.5 * di, oi = -0.5 * dr;
      out[2 * k] = er + w[2 * k] * or - w[2 * k + 1] * oi;
      out[2 * k + 1] = ei + w[2 * k] * oi + w[2 * k + 1] * or;
    }
    return out;
  }
}
