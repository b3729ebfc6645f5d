// SHA-256 (FIPS 180-4) over bytes given in pieces, for browsers: Web Crypto's digest() takes a whole buffer
// only, and a 1 GB checkpoint is never whole in memory here. Node hashes with node:crypto (hasher.js); this
// is its twin, tested against it (tests/js/hub_sha256.test.mjs) at every length around the 64-byte block.
// Why not a package: attnwasm's main entry must import nothing a module worker cannot resolve without a
// bundler (import maps do not apply in workers), and these 80 lines are the whole need.

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
].map((x) => x | 0));

/** An incremental SHA-256: update(bytes) any number of times, then hex() once. */
export class Sha256 {
  constructor() {
    this.h = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
    this.w = new Int32Array(64);  // Int32: V8 keeps every value a small integer (a Uint32 read above 2^31 is a double)
    this.block = new Uint8Array(64);  // a block's bytes waiting for the rest of it
    this.filled = 0;
    this.length = 0;                   // bytes hashed in all
  }

  /** Compresses the 64-byte blocks of `b` from `at`, as many as there are; returns where it stopped. */
  _blocks(b, at, end) {
    const w = this.w, h = this.h;
    let a0 = h[0], b0 = h[1], c0 = h[2], d0 = h[3], e0 = h[4], f0 = h[5], g0 = h[6], h0 = h[7];
    for (; at + 64 <= end; at += 64) {
      for (let i = 0; i < 16; i++) {
        const j = at + 4 * i;
        w[i] = (b[j] << 24) | (b[j + 1] << 16) | (b[j + 2] << 8) | b[j + 3];
      }
      for (let i = 16; i < 64; i++) {
        const x = w[i - 15], y = w[i - 2];
        const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
        const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
      }
      let A = a0, B = b0, C = c0, D = d0, E = e0, F = f0, G = g0, H = h0;
      for (let i = 0; i < 64; i++) {
        const S1 = ((E >>> 6) | (E << 26)) ^ ((E >>> 11) | (E << 21)) ^ ((E >>> 25) | (E << 7));
        const t1 = (H + S1 + ((E & F) ^ (~E & G)) + K[i] + w[i]) | 0;
        const S0 = ((A >>> 2) | (A << 30)) ^ ((A >>> 13) | (A << 19)) ^ ((A >>> 22) | (A << 10));
        const t2 = (S0 + ((A & B) ^ (A & C) ^ (B & C))) | 0;
        H = G; G = F; F = E; E = (D + t1) | 0; D = C; C = B; B = A; A = (t1 + t2) | 0;
      }
      a0 = (a0 + A) | 0; b0 = (b0 + B) | 0; c0 = (c0 + C) | 0; d0 = (d0 + D) | 0;
      e0 = (e0 + E) | 0; f0 = (f0 + F) | 0; g0 = (g0 + G) | 0; h0 = (h0 + H) | 0;
    }
    h[0] = a0; h[1] = b0; h[2] = c0; h[3] = d0; h[4] = e0; h[5] = f0; h[6] = g0; h[7] = h0;
    return at;
  }

  /** Adds bytes (a Uint8Array; not kept). */
  update(bytes) {
    let at = 0;
    const n = bytes.byteLength;
    this.length += n;
    if (this.filled) {
      const take = Math.min(64 - this.filled, n);
      this.block.set(bytes.subarray(0, take), this.filled);
      this.filled += take;
      at = take;
      if (this.filled < 64) return this;
      this._blocks(this.block, 0, 64);
      this.filled = 0;
    }
    at = this._blocks(bytes, at, n);
    if (at < n) {
      this.block.set(bytes.subarray(at), 0);
      this.filled = n - at;
    }
    return this;
  }

  /** The digest as 64 lowercase hex digits (the hash is finished: no update after it). */
  hex() {
    const bits = this.length * 8;
    const pad = new Uint8Array((this.filled < 56 ? 64 : 128) - this.filled);
    pad[0] = 0x80;
    const v = new DataView(pad.buffer);
    v.setUint32(pad.length - 8, Math.floor(bits / 2 ** 32));
    v.setUint32(pad.length - 4, bits >>> 0);
    this.update(pad);
    return Array.from(this.h, (x) => (x >>> 0).toString(16).padStart(8, '0')).join('');
  }
}
