// The mel scale and the triangular mel filter bank, computed as transformers' audio_utils computes
// them (hertz_to_mel, mel_to_hertz, mel_filter_bank; transformers v4.40.2), in float64 and in the
// same order of operations: numpy's linspace (i·step + start, the last point set to the end), the
// filters' slopes, the Slaney area normalisation. WhisperFeatureExtractor uses the Slaney scale and
// norm from 0 to 8000 Hz (fixed, whatever the sampling rate). Kept sparse: each filter is the range
// of frequency bins where it is non-zero. Pure functions, no state.

const SCALES = ['slaney', 'htk', 'kaldi'];

/** Hertz → mels on the 'slaney' (default here, as Whisper), 'htk' or 'kaldi' scale. */
export function hertzToMel(freq, scale = 'slaney') {
  if (scale === 'htk') return 2595.0 * Math.log10(1.0 + freq / 700.0);
  if (scale === 'kaldi') return 1127.0 * Math.log(1.0 + freq / 700.0);
  // Slaney: linear below 1 kHz (3 mels per 200 Hz), logarithmic above.
  const logstep = 27.0 / Math.log(6.4);
  return freq >= 1000.0 ? 15.0 + Math.log(freq / 1000.0) * logstep : (3.0 * freq) / 200.0;
}

/** Mels → hertz, the inverse of hertzToMel on the same scale. */
export function melToHertz(mels, scale = 'slaney') {
  if (scale === 'htk') return 700.0 * (10 ** (mels / 2595.0) - 1.0);
  if (scale === 'kaldi') return 700.0 * (Math.exp(mels / 1127.0) - 1.0);
  const logstep = Math.log(6.4) / 27.0;
  return mels >= 15.0 ? 1000.0 * Math.exp(logstep * (mels - 15.0)) : (200.0 * mels) / 3.0;
}

/** numpy.linspace(start, stop, num) with endpoint: i·step + start, the last point exactly stop. */
function linspace(start, stop, num) {
  const out = new Float64Array(num);
  const step = (stop - start) / (num - 1);
  for (let i = 0; i < num; i++) out[i] = i * step + start;
  if (num > 1) out[num - 1] = stop;
  return out;
}

/**
 * A triangular mel filter bank, transformers' mel_filter_bank (triangularize_in_mel_space false).
 * @param {{numFrequencyBins: number, numMelFilters: number, minFrequency: number, maxFrequency: number,
 *   samplingRate: number, norm?: 'slaney' | null, melScale?: 'slaney' | 'htk' | 'kaldi'}} o
 * @returns {MelBank} owned by the caller
 */
export function melFilterBank({ numFrequencyBins, numMelFilters, minFrequency, maxFrequency, samplingRate, norm = null, melScale = 'htk' }) {
  if (!SCALES.includes(melScale)) throw new RangeError(`melScale: expected one of ${SCALES.join(', ')}, got ${melScale}`);
  if (norm !== null && norm !== 'slaney') throw new RangeError(`norm: expected null or 'slaney', got ${norm}`);
  const melFreqs = linspace(hertzToMel(minFrequency, melScale), hertzToMel(maxFrequency, melScale), numMelFilters + 2);
  const filterFreqs = melFreqs.map((m) => melToHertz(m, melScale));
  // np.linspace(0, sampling_rate // 2, num_frequency_bins): the integer half of the rate.
  const fftFreqs = linspace(0, Math.floor(samplingRate / 2), numFrequencyBins);
  const weights = new Float64Array(numFrequencyBins * numMelFilters);  // (bins, mels), as transformers returns it
  for (let m = 0; m < numMelFilters; m++) {
    const diffLo = filterFreqs[m + 1] - filterFreqs[m], diffHi = filterFreqs[m + 2] - filterFreqs[m + 1];
    const enorm = norm === 'slaney' ? 2.0 / (filterFreqs[m + 2] - filterFreqs[m]) : 1;
    for (let f = 0; f < numFrequencyBins; f++) {
      // slopes = filter_freqs - fft_freqs; down = -slopes[m] / diff[m]; up = slopes[m+2] / diff[m+1]
      const down = -(filterFreqs[m] - fftFreqs[f]) / diffLo;
      const up = (filterFreqs[m + 2] - fftFreqs[f]) / diffHi;
      let w = Math.max(0, Math.min(down, up));
      if (norm === 'slaney') w *= enorm;
      weights[f * numMelFilters + m] = w;
    }
  }
  return MelBank.fromDense(weights, numFrequencyBins, numMelFilters);
}

/**
 * A mel filter bank kept as one non-zero range of frequency bins per filter (a triangle, or any
 * matrix: the range then spans from the first to the last non-zero weight).
 */
export class MelBank {
  /**
   * @param {Float64Array} dense (numFrequencyBins, numMelFilters), transformers' layout; copied
   * @param {number} numFrequencyBins
   * @param {number} numMelFilters
   */
  static fromDense(dense, numFrequencyBins, numMelFilters) {
    const bank = new MelBank();
    bank.numFrequencyBins = numFrequencyBins;
    bank.numMelFilters = numMelFilters;
    bank.start = new Int32Array(numMelFilters);
    bank.end = new Int32Array(numMelFilters);
    const parts = [];
    let total = 0;
    for (let m = 0; m < numMelFilters; m++) {
      let lo = 0, hi = numFrequencyBins;
      while (lo < hi && dense[lo * numMelFilters + m] === 0) lo++;
      while (hi > lo && dense[(hi - 1) * numMelFilters + m] === 0) hi--;
      bank.start[m] = lo; bank.end[m] = hi;
      parts.push(total); total += hi - lo;
    }
    bank.offset = Int32Array.from(parts);
    bank.weights = new Float64Array(total);
    for (let m = 0; m < numMelFilters; m++) {
      for (let f = bank.start[m]; f < bank.end[m]; f++) bank.weights[bank.offset[m] + f - bank.start[m]] = dense[f * numMelFilters + m];
    }
    return bank;
  }

  /** The bank as a dense (numFrequencyBins, numMelFilters) Float64Array, owned by the caller. */
  toDense() {
    const out = new Float64Array(this.numFrequencyBins * this.numMelFilters);
    for (let m = 0; m < this.numMelFilters; m++) {
      for (let f = this.start[m]; f < this.end[m]; f++) out[f * this.numMelFilters + m] = this.weights[this.offset[m] + f - this.start[m]];
    }
    return out;
  }

  /** Indices of filters whose weights are all zero (transformers warns about them). */
  emptyFilters() {
    const out = [];
    for (let m = 0; m < this.numMelFilters; m++) if (this.end[m] <= this.start[m]) out.push(m);
    return out;
  }
}
