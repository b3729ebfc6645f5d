// Whisper's log-mel spectrogram of one padded waveform, step by step as transformers' numpy path
// computes it (audio_utils.spectrogram, then WhisperFeatureExtractor._np_extract_fbank_features,
// transformers v4.40.2), with each step's float width as numpy has it:
//   1. centre padding: n_fft/2 samples reflected at each end (np.pad mode 'reflect'), float32;
//   2. frames of n_fft every hop samples, promoted to float64, times the periodic Hann window
//      (np.hanning(n_fft + 1)[:-1], float64);
//   3. the one-sided DFT in float64 (fft.js), stored as complex64: re and im rounded to float32;
//   4. power |X|² in float64 (np.abs(..., dtype=float64) ** 2);
//   5. mel filter bank (float64 weights, float64 sums), max(1e-10, ·), log10, rounded to float32;
//   6. the last frame dropped; max over all (float32) − 8 as the floor; (x + 4) / 4 in float32.
// Not the torch path (_torch_extract_fbank_features, float32 STFT), which transformers takes when
// torch is installed: docs/speech.md gives the measured difference between the two.

import { RealFFT } from './fft.js';

/**
 * The periodic Hann window of length n as numpy makes it: 0.5 + 0.5·cos(π·k / n) for k = -n, -n+2,
 * … n (np.hanning(n + 1)), without its last point.
 */
export function hannWindow(n) {
  const w = new Float64Array(n);
  for (let i = 0; i < n; i++) w[i] = 0.5 + 0.5 * Math.cos((Math.PI * (2 * i - n)) / n);
  return w;
}

/** Index into a signal of length len extended by reflection (np.pad 'reflect'), for any i. */
function reflectIndex(i, len) {
  if (len === 1) return 0;
  const period = 2 * (len - 1);
  let k = i % period;
  if (k < 0) k += period;
  return k < len ? k : period - k;
}

/**
 * Log-mel frames of `x` before the dynamic-range step: (nMels, nFrames) float32, where nFrames =
 * 1 + floor(len / hop) − 1 (transformers drops the last STFT frame).
 * @param {Float32Array} x (len) the waveform, already padded or trimmed; read only
 * @param {{nFft: number, hopLength: number, bank: import('./mel.js').MelBank, window: Float64Array, fft: RealFFT}} p
 * @param {Float32Array} [out] (nMels, nFrames) written when given, else allocated (owned by the caller)
 * @returns {Float32Array} out
 */
export function logMelFrames(x, { nFft, hopLength, bank, window, fft }, out) {
  const len = x.length, pad = nFft >> 1;
  const nStft = 1 + Math.floor((len + 2 * pad - nFft) / hopLength);
  const nFrames = nStft - 1;
  const nMels = bank.numMelFilters, nBins = bank.numFrequencyBins;
  out ??= new Float32Array(nMels * nFrames);
  const frame = new Float64Array(nFft);
  const spec = new Float64Array(2 * (nFft / 2 + 1));
  const power = new Float64Array(nBins);
  const { start, end, offset, weights } = bank;
  for (let t = 0; t < nFrames; t++) {
    const s0 = t * hopLength - pad;  // first sample of the frame, in unpadded coordinates
    if (s0 >= 0 && s0 + nFft <= len) {
      for (let i = 0; i < nFft; i++) frame[i] = x[s0 + i] * window[i];
    } else {
      for (let i = 0; i < nFft; i++) frame[i] = x[reflectIndex(s0 + i, len)] * window[i];
    }
    fft.forward(frame, spec);
    for (let k = 0; k < nBins; k++) {
      const re = Math.fround(spec[2 * k]), im = Math.fround(spec[2 * k + 1]);  // complex64
      power[k] = re * re + im * im;
    }
    for (let m = 0; m < nMels; m++) {
      let s = 0;
      const o = offset[m] - start[m];
      for (let f = start[m]; f < end[m]; f++) s += weights[o + f] * power[f];
      out[m * nFrames + t] = Math.log10(s > 1e-10 ? s : 1e-10);  // rounded to float32 on store
    }
  }
  return out;
}

/**
 * Whisper's dynamic range and scaling, in place: x = max(x, max(x) − 8), then (x + 4) / 4, in float32
 * as numpy (the floor max − 8 computed in float64 and rounded to float32 by np.maximum).
 * @param {Float32Array} x the log-mel values
 * @returns {Float32Array} x
 */
export function whisperScale(x) {
  let mx = -Infinity;
  for (let i = 0; i < x.length; i++) if (x[i] > mx) mx = x[i];
  const floor = Math.fround(mx - 8.0);
  for (let i = 0; i < x.length; i++) {
    const v = x[i] > floor ? x[i] : floor;
    x[i] = Math.fround(v + 4.0) / 4.0;  // the division by 4 is exact in float32
  }
  return x;
}

/** A reusable plan for one (nFft, hopLength, bank): the window and the FFT. */
export function logMelPlan({ nFft, hopLength, bank }) {
  return { nFft, hopLength, bank, window: hannWindow(nFft), fft: new RealFFT(nFft) };
}
