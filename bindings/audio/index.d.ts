// Type declarations of 'attnwasm/audio' (bindings/audio/index.js): Whisper's log-mel features as transformers' numpy
// feature extractor gives them, audio files and live streams to 16 kHz mono samples, and the chunked ASR pipeline's
// chunk arithmetic. Pure JS: no wasm, no init(). docs/speech.md describes the arithmetic and the formats.

/**
 * Error codes this entry throws besides the package's own (TypeError ERR_INVALID_TYPE for a wrong JS type):
 * ERR_INVALID_ARGUMENT (empty audio, NaN/±Infinity samples, a bad option or config value), ERR_SHAPE (channels of
 * different lengths), ERR_UNSUPPORTED (a valid file or config of a kind not read), ERR_AUDIO_DECODE (a file that is
 * not a whole, consistent audio file: corrupt, truncated, unknown), ERR_AUDIO_TOO_LONG (more samples or feature values
 * than one buffer may hold; the message names the sizes).
 */
export type AudioErrorCode = 'ERR_INVALID_ARGUMENT' | 'ERR_SHAPE' | 'ERR_UNSUPPORTED' | 'ERR_AUDIO_DECODE' | 'ERR_AUDIO_TOO_LONG';

/** Decoded audio: one Float32Array per channel, all of one length, at samplingRate (Hz). */
export interface DecodedAudio {
  channels: Float32Array[];
  samplingRate: number;
  /** WAV and FLAC: the file's bits per sample. */
  bitsPerSample?: number;
  /** WAV and FLAC: integer PCM or IEEE float. */
  sampleFormat?: 'pcm' | 'float';
}

/** An object with the Web Audio API AudioBuffer's reading methods. */
export interface AudioBufferLike {
  readonly numberOfChannels: number;
  readonly sampleRate: number;
  getChannelData(channel: number): Float32Array;
}

/**
 * Samples as the feature extractor and toMono take them: a Float32Array (mono, already at the target rate), one or
 * more channels with their rate, or an AudioBuffer. Channels are averaged; another rate is resampled.
 */
export type AudioInput =
  | Float32Array
  | { data: Float32Array | Float32Array[]; samplingRate: number }
  | { channels: Float32Array[]; samplingRate: number }
  | AudioBufferLike;

/** Anything readAudio takes: a file path or URL, a file's bytes, a Blob, or samples. */
export type AudioSource = string | URL | Uint8Array | ArrayBuffer | Blob | AudioInput;

/** preprocessor_config.json: its text, bytes or parsed object (snake_case keys as the hub writes them). */
export type PreprocessorConfig = string | Uint8Array | ArrayBuffer | {
  feature_size?: number;
  sampling_rate?: number;
  hop_length?: number;
  chunk_length?: number;
  n_fft?: number;
  n_samples?: number;
  nb_max_frames?: number;
  padding_value?: number;
  padding_side?: 'right';
  return_attention_mask?: boolean;
  feature_extractor_type?: string;
  mel_filters?: number[][];
  [key: string]: unknown;
};

/** A features result: (1, nMels, frames) row-major; frames = 3000 for 30 s. Owned by the caller. */
export interface WhisperFeatures {
  data: Float32Array;
  shape: [1, number, number];
  /** With returnAttentionMask: 1 for frames of audio, 0 for padding, (1, ceil(samples / hop_length)). */
  attentionMask?: { data: Int32Array; shape: [1, number] };
}

/** One chunk of chunkFeatures: its features, first sample, stride [chunk length, left, right] (samples), and whether it is the last. */
export interface WhisperChunkFeatures extends WhisperFeatures {
  start: number;
  stride: [number, number, number];
  isLast: boolean;
}

export interface FeaturesOptions {
  /** 'max_length' (default): pad to chunk_length seconds; 'longest': no padding (the pipeline's long-form path). */
  padding?: 'max_length' | 'longest';
  /** Trim to chunk_length seconds. Default true. */
  truncation?: boolean;
  /** Return attentionMask. Default: the config's return_attention_mask (false for Whisper). */
  returnAttentionMask?: boolean;
}

export interface ChunkOptions {
  /** Chunk length in seconds. Default: the config's chunk_length (30). */
  chunkLengthS?: number;
  /** Seconds of each chunk shared with its neighbours: one number for both sides, or [left, right]. Default chunkLengthS / 6. */
  strideLengthS?: number | [number, number];
}

/** The frozen reading of preprocessor_config.json. */
export interface WhisperFeatureConfig {
  readonly featureSize: number;
  readonly samplingRate: number;
  readonly hopLength: number;
  readonly chunkLength: number;
  readonly nFft: number;
  readonly paddingValue: number;
  readonly returnAttentionMask: boolean;
  readonly nSamples: number;
  readonly nbMaxFrames: number;
  readonly melSource: 'computed' | 'config';
  readonly bank: MelBank;
}

/** Whisper's feature extractor, exact to transformers' numpy WhisperFeatureExtractor (v4.40.2). Holds only JS memory. */
export class WhisperFeatureExtractor {
  /**
   * @param config preprocessor_config.json; omitted: Whisper's defaults (80 mel bins, 16 kHz, 30 s)
   * @param options melFilters 'computed' (default, as transformers: Slaney filters, a stored mel_filters ignored) or 'config'
   */
  constructor(config?: PreprocessorConfig, options?: { melFilters?: 'computed' | 'config' });
  readonly config: WhisperFeatureConfig;
  /** Mel bins (feature_size). */
  readonly nMels: number;
  /** The rate features are computed at (Hz). */
  readonly samplingRate: number;
  /** Log-mel features of one piece of audio. */
  features(audio: AudioInput, options?: FeaturesOptions): WhisperFeatures;
  /** The chunked pipeline's features, one chunk at a time (chunk_iter's chunks, each padded to chunk_length). */
  chunkFeatures(audio: AudioInput, options?: ChunkOptions): Generator<WhisperChunkFeatures, void, undefined>;
}

/** Most values one features() call returns (2^27). */
export const MAX_FEATURE_VALUES: number;
/** Most samples one channel may have (2^29). */
export const MAX_SAMPLES: number;

/** Audio from anywhere → mono float32 samples at samplingRate (default 16000); decodes, averages channels, resamples. */
export function readAudio(source: AudioSource, options?: { samplingRate?: number; name?: string }): Promise<Float32Array>;
/** A file's bytes → channels: WAV and FLAC everywhere, other formats through the browser's decoder (at samplingRate). */
export function decodeAudio(input: Uint8Array | ArrayBuffer, options?: { samplingRate?: number; name?: string }): Promise<DecodedAudio>;
/** Browsers: AudioContext.decodeAudioData at samplingRate (the browser resamples). */
export function decodeWithAudioContext(input: Uint8Array | ArrayBuffer, options?: { samplingRate?: number; name?: string }): Promise<DecodedAudio>;
/** The container a file's first bytes announce ('WAV', 'FLAC', 'MP3', 'Ogg', 'MP4/M4A', 'WebM/Matroska', 'AIFF', 'RIFF (not WAVE)') or null. */
export function sniffFormat(bytes: Uint8Array): string | null;
/** WAV: PCM 8/16/24/32 bits, float 32/64, extensible; samples scaled as ffmpeg scales them. */
export function decodeWav(input: Uint8Array | ArrayBuffer, options?: { name?: string }): DecodedAudio;
/** FLAC (8, 16, 24, 32 bits) through @wasm-audio-decoders/flac; integers / 2^(bits − 1) as ffmpeg gives them. */
export function decodeFlac(input: Uint8Array, options?: { name?: string }): Promise<DecodedAudio>;
/** Any AudioInput → one checked channel at samplingRate (default 16000). */
export function toMono(audio: AudioInput, options?: { samplingRate?: number; name?: string; finite?: boolean }): Float32Array;
/** The mean of the channels, in float32 as numpy's mean over axis 0. */
export function mixToMono(channels: Float32Array[], name?: string): Float32Array;

/** Streaming sample-rate conversion (torchaudio's sinc interpolation, Hann window, width 6, rolloff 0.99; float64). */
export class Resampler {
  constructor(fromRate: number, toRate: number);
  readonly fromRate: number;
  readonly toRate: number;
  /** Input block → the output samples computable so far (a new array). */
  process(block: Float32Array): Float32Array;
  /** Ends the stream: the remaining samples. */
  flush(): Float32Array;
}
/** One-shot resampling: ceil(toRate · length / fromRate) samples (rates reduced by their gcd). */
export function resample(x: Float32Array, fromRate: number, toRate: number): Float32Array;

/** The pipeline's chunk sizes in samples from seconds (Python's round, half to even). */
export function chunkSizes(options: { chunkLengthS: number; strideLengthS?: number | [number, number]; samplingRate?: number; alignTo?: number }):
  { chunkLen: number; strideLeft: number; strideRight: number };
/** The pipeline's chunk_iter over `length` samples: positions only. */
export function chunkIter(length: number, sizes: { chunkLen: number; strideLeft: number; strideRight: number }):
  Generator<{ start: number; length: number; stride: [number, number, number]; isLast: boolean }, void, undefined>;

/** A mel filter bank, one non-zero range of frequency bins per filter. */
export interface MelBank {
  readonly numFrequencyBins: number;
  readonly numMelFilters: number;
  /** (numFrequencyBins, numMelFilters) float64, transformers' layout; a new array. */
  toDense(): Float64Array;
  /** Filters whose weights are all zero. */
  emptyFilters(): number[];
}
/** transformers' mel_filter_bank (triangularize_in_mel_space false). */
export function melFilterBank(options: { numFrequencyBins: number; numMelFilters: number; minFrequency: number; maxFrequency: number;
  samplingRate: number; norm?: 'slaney' | null; melScale?: 'slaney' | 'htk' | 'kaldi' }): MelBank;
export function hertzToMel(freq: number, scale?: 'slaney' | 'htk' | 'kaldi'): number;
export function melToHertz(mels: number, scale?: 'slaney' | 'htk' | 'kaldi'): number;

/**
 * Browsers: a live MediaStream (e.g. getUserMedia({ audio: true })) → chunks of chunkLengthS seconds (default 1) of mono
 * samples at samplingRate (default 16000), resampled with Resampler. Ends when the stream's audio tracks end or signal
 * aborts; the AudioContext it made is then closed.
 */
export function microphoneChunks(stream: MediaStream, options?: { chunkLengthS?: number; samplingRate?: number; signal?: AbortSignal; audioContext?: AudioContext }):
  AsyncGenerator<Float32Array, void, undefined>;
