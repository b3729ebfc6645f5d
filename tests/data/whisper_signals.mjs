// The test signals of the Whisper feature goldens, made bit for bit as tests/data/make_whisper_feature_goldens.py
// makes them (its `signal()` is the twin of `signal()` here), so the goldens need not store the audio:
// each golden holds the FNV-1a hash of its input's float32 bytes, and the tests check it before comparing.
//   noise  xorshift32 from `seed`: ((x >>> 8) - 2^23) / 2^23 · 2^ampLog2 (exact float32 values)
//   tone   Σ sin(2π·f·i / rate) / count · amp, quantized to int16 (round half up, clipped) / 32768;
//          amp > 1 clips. The phase is reduced as (f·i mod rate) so both sides take sin of small angles.
//   chirp  a linear sweep from f0 to f1 Hz over the signal, quantized the same way
//   silence zeros
//   mix    tone + noise, each as above, summed in float32

/** @returns {Float32Array} */
export function signal(spec, rate = 16000) {
  const n = spec.samples ?? Math.round(spec.seconds * rate);
  const out = new Float32Array(n);
  if (spec.kind === 'silence') return out;
  if (spec.kind === 'noise') return noise(n, spec.seed, spec.ampLog2);
  if (spec.kind === 'tone' || spec.kind === 'chirp') return quantized(n, rate, spec);
  if (spec.kind === 'mix') {
    const a = signal(spec.parts[0], rate), b = signal(spec.parts[1], rate);
    for (let i = 0; i < n; i++) out[i] = a[i] + b[i];
    return out;
  }
  throw new Error(`unknown signal kind ${spec.kind}`);
}

function noise(n, seed, ampLog2) {
  const out = new Float32Array(n);
  let x = seed >>> 0;
  const scale = 2 ** ampLog2 / 2 ** 23;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[i] = ((x >>> 8) - 2 ** 23) * scale;
  }
  return out;
}

function quantized(n, rate, spec) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let v;
    if (spec.kind === 'tone') {
      v = 0;
      for (const f of spec.freqs) v += Math.sin((2 * Math.PI * ((f * i) % rate)) / rate);
      v /= spec.freqs.length;
    } else {
      const t = i / rate, T = n / rate;
      v = Math.sin(2 * Math.PI * (spec.f0 * t + ((spec.f1 - spec.f0) * t * t) / (2 * T)));
    }
    const q = Math.min(32767, Math.max(-32768, Math.floor(spec.amp * 32767 * v + 0.5)));
    out[i] = q / 32768;
  }
  return out;
}

/** FNV-1a (32 bits) of an array's bytes, as 8 hex digits. */
export function fnv1a(array) {
  const b = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  let h = 0x811c9dc5;
  for (let i = 0; i < b.length; i++) { h ^= b[i]; h = Math.imul(h, 0x01000193) >>> 0; }
  return h.toString(16).padStart(8, '0');
}

const goldenCache = new Map();
/**
 * A golden's signal record { name, spec, samples, fnv1a (hex) } → its samples, made once per name; throws when they
 * are not the goldens' (length or hash).
 */
export function goldenSignal(rec, rate = 16000) {
  if (!goldenCache.has(rec.name)) {
    const s = signal(rec.spec, rate);
    if (rec.samples !== undefined && s.length !== rec.samples) throw new Error(`signal ${rec.name}: ${s.length} samples, the goldens' ${rec.samples}`);
    if (fnv1a(s) !== rec.fnv1a) throw new Error(`signal ${rec.name}: not the goldens' samples (FNV-1a ${fnv1a(s)}, the goldens' ${rec.fnv1a})`);
    goldenCache.set(rec.name, s);
  }
  return goldenCache.get(rec.name);
}
