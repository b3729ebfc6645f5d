// 'attnwasm/audio': audio for speech models in pure JS (no wasm, no init()): Whisper's log-mel
// features exactly as transformers' numpy feature extractor gives them, audio files and streams to
// 16 kHz mono samples, and the chunked pipeline's chunk arithmetic. docs/speech.md describes them.
//   feature_extractor.js  WhisperFeatureExtractor (features, chunkFeatures)
//   feature_config.js     preprocessor_config.json          log_mel.js  the STFT → log-mel arithmetic
//   fft.js  real FFT (float64, mixed radix)                 mel.js      mel scales and filter banks
//   audio_input.js  samples in: checks, channel mean         resample.js torchaudio's sinc resampler
//   wav.js, flac.js, decode.js  files → samples              microphone.js  MediaStream → 16 kHz chunks
//   chunks.js  chunk_length_s / stride_length_s → chunks
export { WhisperFeatureExtractor, MAX_FEATURE_VALUES } from './feature_extractor.js';
export { readAudio, decodeAudio, decodeWithAudioContext, sniffFormat } from './decode.js';
export { decodeWav } from './wav.js';
export { decodeFlac } from './flac.js';
export { toMono, mixToMono, MAX_SAMPLES } from './audio_input.js';
export { Resampler, resample } from './resample.js';
export { chunkSizes, chunkIter } from './chunks.js';
export { melFilterBank, hertzToMel, melToHertz } from './mel.js';
export { microphoneChunks } from './microphone.js';
