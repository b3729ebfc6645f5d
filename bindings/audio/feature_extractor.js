// WhisperFeatureExtractor: audio → Whisper's log-mel input features, as transformers'
// WhisperFeatureExtractor.__call__ with its numpy path gives them (transformers v4.40.2): pad or
// trim to chunk_length seconds (padding 'max_length', truncation), or keep the whole input
// (padding 'longest', truncation false: the pipeline's path for sequential long-form generation),
// then the log-mel arithmetic of log_mel.js and the attention mask on request. chunkFeatures gives
// the pipeline's chunked path: each chunk_iter chunk's features with its strides. Pure JS, no wasm.
import { AttnWasmError } from '../errors.js';
import { checkOptions } from '../checks.js';
import { readFeatureConfig } from './feature_config.js';
import { logMelPlan, logMelFrames, whisperScale } from './log_mel.js';
import { toMono, hms, checkFiniteRange } from './audio_input.js';
import { chunkSizes, chunkIter } from './chunks.js';

/** Most values one features() result may hold (2^27 float32 = 512 MiB: 4.6 h at 80 mel bins). */
export const MAX_FEATURE_VALUES = 2 ** 27;

export class WhisperFeatureExtractor {
  /**
   * @param {string | Uint8Array | ArrayBuffer | object} [config] preprocessor_config.json: its text,
   *   bytes or parsed object; omitted: Whisper's defaults (80 mel bins, 16 kHz, 30 s).
   * @param {{melFilters?: 'computed' | 'config'}} [options] 'computed' (default, as transformers:
   *   Slaney filters, any stored `mel_filters` ignored) or 'config' (the stored `mel_filters`)
   */
  constructor(config = {}, options = {}) {
    checkOptions(options, ['melFilters'], 'WhisperFeatureExtractor');
    this.config = readFeatureConfig(config, options);
    this.plan = logMelPlan({ nFft: this.config.nFft, hopLength: this.config.hopLength, bank: this.config.bank });
  }

  /** Mel bins (feature_size). */
  get nMels() { return this.config.featureSize; }

  /** Sampling rate (Hz) the features are computed at; other audio is resampled to it. */
  get samplingRate() { return this.config.samplingRate; }

  /**
   * The log-mel features of one piece of audio.
   * @param {Float32Array | {data: Float32Array | Float32Array[], samplingRate: number} | {channels: Float32Array[], samplingRate: number} | AudioBuffer} audio
   *   a Float32Array is taken to be mono at samplingRate; anything else is mixed to mono and resampled
   * @param {{padding?: 'max_length' | 'longest', truncation?: boolean, returnAttentionMask?: boolean}} [options]
   *   defaults: 'max_length', true (pad or trim to chunk_length seconds), the config's return_attention_mask
   * @returns {{data: Float32Array, shape: [1, number, number], attentionMask?: {data: Int32Array, shape: [1, number]}}}
   *   shape [1, nMels, frames] (frames = 3000 for 30 s), row-major; new arrays owned by the caller
   */
  features(audio, options = {}) {
    const { padding = 'max_length', truncation = true, returnAttentionMask = this.config.returnAttentionMask } =
      checkOptions(options, ['padding', 'truncation', 'returnAttentionMask'], 'features');
    if (padding !== 'max_length' && padding !== 'longest') throw new AttnWasmError('ERR_INVALID_ARGUMENT', `padding: expected 'max_length' or 'longest', got ${JSON.stringify(padding)}`);
    if (typeof truncation !== 'boolean') throw new TypeError(`truncation: expected a boolean, got ${typeof truncation}`);
    if (typeof returnAttentionMask !== 'boolean') throw new TypeError(`returnAttentionMask: expected a boolean, got ${typeof returnAttentionMask}`);
    // A Float32Array is scanned for NaN / ±Infinity only where it is read (the first 30 s when trimming).
    const x = toMono(audio, { samplingRate: this.config.samplingRate, name: 'audio', finite: false });
    return this.fromSamples(x, { padding, truncation, returnAttentionMask }, 0);
  }

  /**
   * features() on samples at the right rate; checks the samples it reads for NaN / ±Infinity, naming
   * their index as offset + i (x is then a piece of the caller's audio starting at `offset`).
   */
  fromSamples(x, { padding = 'max_length', truncation = true, returnAttentionMask = false } = {}, offset = 0) {
    const { nSamples, hopLength, paddingValue, featureSize, samplingRate } = this.config;
    const kept = truncation ? Math.min(x.length, nSamples) : x.length;
    const total = padding === 'max_length' ? Math.max(kept, nSamples) : kept;
    const frames = Math.floor(total / hopLength);
    if (frames * featureSize > MAX_FEATURE_VALUES) {
      throw new AttnWasmError('ERR_AUDIO_TOO_LONG', `audio: ${total} samples (${hms(total / samplingRate)}) give ${frames} frames × ${featureSize} mel bins = ${frames * featureSize} values, more than the ${MAX_FEATURE_VALUES} (2^27) one call returns; use chunkFeatures (the pipeline's chunk_length_s path) or cut the audio`);
    }
    if (frames === 0) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `audio: ${total} samples give no frame (at least hop_length = ${hopLength} samples are needed with padding 'longest')`);
    }
    checkFiniteRange(x, 0, kept, 'audio', samplingRate, offset);
    let padded = x.subarray(0, kept);
    if (total > kept) {
      padded = new Float32Array(total);
      padded.set(x.subarray(0, kept));
      if (paddingValue !== 0) padded.fill(paddingValue, kept);
    }
    const data = whisperScale(logMelFrames(padded, this.plan));
    const out = { data, shape: [1, featureSize, frames] };
    if (returnAttentionMask) {
      // The sample mask (1 for the kept samples, 0 for the padding) taken every hop_length samples.
      const n = Math.ceil(total / hopLength);
      const mask = new Int32Array(n);
      mask.fill(1, 0, Math.ceil(kept / hopLength));
      out.attentionMask = { data: mask, shape: [1, n] };
    }
    return out;
  }

  /**
   * The chunked pipeline's features (chunk_length_s, stride_length_s): one result per chunk_iter
   * chunk, each padded to chunk_length seconds, computed when the iteration reaches it (one chunk's
   * memory at a time).
   * @param {Parameters<WhisperFeatureExtractor['features']>[0]} audio
   * @param {{chunkLengthS?: number, strideLengthS?: number | [number, number]}} [options] defaults 30 s and chunkLengthS / 6
   * @returns {Generator<{data: Float32Array, shape: [1, number, number], start: number, stride: [number, number, number], isLast: boolean}>}
   *   start and stride in samples at samplingRate, as the pipeline's `stride` (chunk length, left, right)
   */
  *chunkFeatures(audio, options = {}) {
    const { chunkLengthS = this.config.chunkLength, strideLengthS } = checkOptions(options, ['chunkLengthS', 'strideLengthS'], 'chunkFeatures');
    const sizes = chunkSizes({ chunkLengthS, strideLengthS, samplingRate: this.config.samplingRate });
    // Each chunk is scanned for NaN / ±Infinity when it is reached: an 8-hour buffer is not read ahead.
    const x = toMono(audio, { samplingRate: this.config.samplingRate, name: 'audio', finite: false });
    for (const c of chunkIter(x.length, sizes)) {
      const f = this.fromSamples(x.subarray(c.start, c.start + c.length), {}, c.start);
      yield { ...f, start: c.start, stride: c.stride, isLast: c.isLast };
    }
  }
}
