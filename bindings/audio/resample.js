// Sample-rate conversion: torchaudio's band-limited sinc interpolation with a Hann window
// (torchaudio.functional.resample defaults: lowpass_filter_width 6, rolloff 0.99, method
// "sinc_interpolation" / "sinc_interp_hann"), which transformers' ASR pipeline applies to an array
// given with another sampling_rate. Computed in float64 and rounded to float32 once per output.
// Streaming: a Resampler takes blocks of any size and gives the same samples as one call on the whole.
//
// The rates are reduced by their gcd to orig → new; output n = i·new + k is
//   y[n] = Σ_m K[k][m] · x[i·orig + m − width],  m = 0 … 2·width + orig − 1, x = 0 outside the input,
// with K[k][m] = sinc(π·t)·cos²(π·t / 12)·base/orig at t = (m − width)/orig − k/new, scaled by base =
// min(orig, new)·rolloff and clamped to ±6, and width = ceil(6·orig / base); the output has
// ceil(new·len / orig) samples. Taps where |t| reaches 6 (the window's zeros, ~1e-33) are skipped,
// so coprime rates (44 101 → 16 000) cost ~2·6·orig/base taps per output, not a dense 16 000 × 44 135 kernel.
import { AttnWasmError } from '../errors.js';

/** Largest sampling rate accepted (Hz). */
export const MAX_RATE = 768000;
const LOWPASS_WIDTH = 6, ROLLOFF = 0.99;

function gcd(a, b) { while (b) [a, b] = [b, a % b]; return a; }

/** A sampling rate argument: an integer in [1, MAX_RATE] Hz, else ERR_INVALID_ARGUMENT naming it. */
export function checkRate(v, name) {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_RATE) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: expected an integer sampling rate in [1, ${MAX_RATE}] Hz, got ${v}`);
  }
  return v;
}

/**
 * The polyphase taps, one sparse row per output phase: for phase k, taps[k] holds the weights for
 * m = first[k] … first[k] + taps[k].length − 1 (in the formula above).
 */
function kernel(orig, nw) {
  const base = Math.min(orig, nw) * ROLLOFF;
  const width = Math.ceil((LOWPASS_WIDTH * orig) / base);
  const scale = base / orig, size = 2 * width + orig;
  const half = (LOWPASS_WIDTH * orig) / base;
  const first = new Int32Array(nw), taps = [];
  for (let k = 0; k < nw; k++) {
    const centre = width + (k * orig) / nw;
    const lo = Math.max(0, Math.floor(centre - half) - 1), hi = Math.min(size - 1, Math.ceil(centre + half) + 1);
    const row = [];
    let f = -1;
    for (let m = lo; m <= hi; m++) {
      // torchaudio's order: idx = (m - width) / orig; t = -k / new + idx; t *= base.
      let t = (-k / nw + (m - width) / orig) * base;
      if (!(Math.abs(t) < LOWPASS_WIDTH)) { if (f >= 0) break; continue; }
      if (f < 0) f = m;
      const window = Math.cos((t * Math.PI) / LOWPASS_WIDTH / 2) ** 2;
      t *= Math.PI;
      row.push((t === 0 ? 1.0 : Math.sin(t) / t) * (window * scale));
    }
    first[k] = f < 0 ? lo : f;
    taps.push(Float64Array.from(row));
  }
  return { width, first, taps };
}

/**
 * A streaming resampler from one integer rate to another. Feed blocks with process(); flush() ends
 * the stream and returns the last samples. The outputs of all calls, concatenated, equal
 * resample(whole input). Owns only JS memory.
 */
export class Resampler {
  /** @param {number} fromRate Hz, an integer @param {number} toRate Hz, an integer */
  constructor(fromRate, toRate) {
    checkRate(fromRate, 'fromRate');
    checkRate(toRate, 'toRate');
    const g = gcd(fromRate, toRate);
    this.fromRate = fromRate;
    this.toRate = toRate;
    this.orig = fromRate / g;
    this.nw = toRate / g;
    this.identity = fromRate === toRate;
    if (!this.identity) Object.assign(this, kernel(this.orig, this.nw));
    this.buf = new Float32Array(0);  // inputs from global index bufStart on
    this.bufStart = 0;
    this.consumed = 0;               // inputs seen so far
    this.nextBlock = 0;              // the next output block i (outputs i·new … i·new + new − 1)
    this.produced = 0;
    this.done = false;
  }

  /** Input samples (read, not kept) → the output samples computable so far (owned by the caller). */
  process(block) {
    if (this.done) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'Resampler.process: the stream was flushed; make a new Resampler');
    if (!(block instanceof Float32Array)) throw new TypeError(`block: expected a Float32Array, got ${block?.constructor?.name ?? typeof block}`);
    if (this.identity) { this.consumed += block.length; this.produced += block.length; return block.slice(); }
    this.append(block);
    // Block i needs inputs up to i·orig + width + orig − 1.
    const ready = Math.max(0, Math.floor((this.consumed - this.width - this.orig) / this.orig) + 1);
    return this.emit(ready, Infinity);
  }

  /** Ends the stream: the remaining outputs, with zeros after the last input (owned by the caller). */
  flush() {
    if (this.done) return new Float32Array(0);
    this.done = true;
    if (this.identity) return new Float32Array(0);
    const total = Math.ceil((this.nw * this.consumed) / this.orig);
    return this.emit(Math.ceil(total / this.nw), total);
  }

  append(block) {
    // Keep what future outputs read: inputs from nextBlock·orig − width on.
    const keepFrom = Math.max(this.bufStart, this.nextBlock * this.orig - this.width);
    const kept = this.buf.subarray(keepFrom - this.bufStart);
    const buf = new Float32Array(kept.length + block.length);
    buf.set(kept);
    buf.set(block, kept.length);
    this.buf = buf;
    this.bufStart = keepFrom;
    this.consumed += block.length;
  }

  /** Outputs of blocks nextBlock … upTo − 1, at most `limit` in all (counting from the stream's start). */
  emit(upTo, limit) {
    const n = Math.max(0, Math.min((upTo - this.nextBlock) * this.nw, limit - this.produced));
    const out = new Float32Array(n);
    const { buf, bufStart, consumed, orig, nw, width, first, taps } = this;
    for (let j = 0; j < n; j++) {
      const i = this.nextBlock + Math.floor(j / nw), k = j % nw;
      const row = taps[k];
      const x0 = i * orig + first[k] - width;  // global index of the first tap's input
      let s = 0;
      if (x0 >= 0 && x0 + row.length <= consumed) {
        const b = x0 - bufStart;
        for (let r = 0; r < row.length; r++) s += row[r] * buf[b + r];
      } else {
        for (let r = 0; r < row.length; r++) {
          const g = x0 + r;
          if (g >= 0 && g < consumed) s += row[r] * buf[g - bufStart];
        }
      }
      out[j] = s;
    }
    this.nextBlock = Math.min(upTo, this.nextBlock + Math.ceil(n / nw));
    this.produced += n;
    return out;
  }
}

/**
 * Resamples a whole signal (one channel) from fromRate to toRate; the same rate gives a copy.
 * @param {Float32Array} x
 * @returns {Float32Array} ceil(toRate·len / fromRate) samples (after reduction by the gcd), owned by the caller
 */
export function resample(x, fromRate, toRate) {
  const r = new Resampler(fromRate, toRate);
  const a = r.process(x), b = r.flush();
  if (b.length === 0) return a;
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
