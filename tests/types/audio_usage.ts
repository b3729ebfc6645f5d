// Touches the whole public API of 'attnwasm/audio' (bindings/audio/index.d.ts), resolved through the package's
// "exports" by name; tests/js/audio_typings.test.mjs compiles it with tsc --strict. Never run.
import {
  WhisperFeatureExtractor, readAudio, decodeAudio, decodeWithAudioContext, sniffFormat, decodeWav, decodeFlac, toMono, mixToMono,
  Resampler, resample, chunkSizes, chunkIter, melFilterBank, hertzToMel, melToHertz, microphoneChunks, MAX_SAMPLES, MAX_FEATURE_VALUES,
} from 'attnwasm/audio';
import type { AudioInput, AudioSource, DecodedAudio, WhisperFeatures, WhisperChunkFeatures, FeaturesOptions, ChunkOptions, PreprocessorConfig, AudioErrorCode, MelBank } from 'attnwasm/audio';

export async function usage(bytes: Uint8Array, stream: MediaStream): Promise<number> {
  const config: PreprocessorConfig = { feature_size: 128, sampling_rate: 16000, return_attention_mask: false };
  const fe = new WhisperFeatureExtractor(config, { melFilters: 'computed' });
  const defaults = new WhisperFeatureExtractor();
  const samples: Float32Array = await readAudio(bytes, { samplingRate: fe.samplingRate });
  const fromPath: Float32Array = await readAudio('speech.wav');
  const options: FeaturesOptions = { padding: 'longest', truncation: false, returnAttentionMask: true };
  const f: WhisperFeatures = fe.features(samples, options);
  const [one, mels, frames] = f.shape;
  const mask: Int32Array | undefined = f.attentionMask?.data;
  const chunkOptions: ChunkOptions = { chunkLengthS: 30, strideLengthS: [5, 5] };
  for (const c of fe.chunkFeatures({ data: samples, samplingRate: 16000 }, chunkOptions)) {
    const chunk: WhisperChunkFeatures = c;
    const [len, left, right] = chunk.stride;
    if (chunk.isLast) return len + left + right + chunk.start;
  }
  const decoded: DecodedAudio = await decodeAudio(bytes);
  const wav: DecodedAudio = decodeWav(new ArrayBuffer(8));
  const flac: DecodedAudio = await decodeFlac(bytes);
  const browser: DecodedAudio = await decodeWithAudioContext(bytes, { samplingRate: 16000 });
  const format: string | null = sniffFormat(bytes);
  const input: AudioInput = { channels: decoded.channels, samplingRate: decoded.samplingRate };
  const source: AudioSource = new URL('file:///speech.flac');
  const mono: Float32Array = toMono(input, { samplingRate: 16000 });
  const mean: Float32Array = mixToMono(wav.channels);
  const r = new Resampler(44100, 16000);
  const out: Float32Array = r.process(mono);
  const tail: Float32Array = r.flush();
  const y: Float32Array = resample(mono, 48000, 16000);
  const sizes = chunkSizes({ chunkLengthS: 30, strideLengthS: 5 });
  for (const c of chunkIter(samples.length, sizes)) if (c.isLast) break;
  const bank: MelBank = melFilterBank({ numFrequencyBins: 201, numMelFilters: 80, minFrequency: 0, maxFrequency: 8000, samplingRate: 16000, norm: 'slaney', melScale: 'slaney' });
  const dense: Float64Array = bank.toDense();
  const hz: number = melToHertz(hertzToMel(1000, 'htk'), 'htk');
  const code: AudioErrorCode = 'ERR_AUDIO_DECODE';
  const controller = new AbortController();
  for await (const piece of microphoneChunks(stream, { chunkLengthS: 1, signal: controller.signal })) {
    if (piece.length) controller.abort();
  }
  void [defaults.nMels, fromPath, one, mels, frames, mask, flac, browser, format, source, out, tail, y, dense, hz, code, mean, fe.config.nSamples];
  return MAX_SAMPLES + MAX_FEATURE_VALUES;
}
