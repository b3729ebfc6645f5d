// Transcription as transformers v4.40.2's automatic-speech-recognition pipeline runs Whisper
// (pipelines/automatic_speech_recognition.py), on SpeechRecognizer's generation (speech_generate.js):
//   up to 30 s        one window: the features padded to 30 s, generate, _decode_asr
//   chunkLengthS set  the pipeline's chunks (attnwasm/audio's chunkFeatures: chunk_iter's arithmetic), each
//                     generated alone, their token rows merged over the strides by _decode_asr
//   over 30 s         long-form generation as WhisperForConditionalGeneration.generate runs it
//                     (generation_whisper.py): the whole input's features (padding 'longest'), 30-second windows
//                     from `seek`, each window's tokens cut into segments at its timestamp pairs
//                     (speech/long_form.js), `seek` moved to the last segment's end; the segments' tokens
//                     concatenated, then _decode_asr
// returnTimestamps 'word' (the pipeline's word chunks): each window's token times from its alignment heads
// (speech/alignment.js: teacher forcing against the window's own state, then _extract_token_timestamps), cropped to
// the chunk's frames in chunked mode, through long-form's segments, grouped into words by _decode_asr.
// Each window's decoding state is freed when its generation ends: memory is returned after every window.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkOptions } from './checks.js';
import { toMono } from './audio/audio_input.js';
import { chunkSizes, chunkIter } from './audio/chunks.js';
import { speechGeneration, SPEECH_OPTIONS } from './speech_generate.js';
import { decodeAsr, asrVocab } from './speech/asr_decode.js';
import { whisperVocab, whisperDecode, pyRound2 } from './speech/whisper_text.js';
import { timeOffset, retrieveSegment, segmentTokenTimestamps } from './speech/long_form.js';
import { alignmentSettings } from './speech/alignment.js';
import { LANGUAGES } from './speech/languages.js';
import { turn } from './seq2seq_run.js';

/** transcribe()'s options: generate()'s (but returnTimestamps, which may also be 'word'), the pipeline's own. */
export const TRANSCRIBE_OPTIONS = Object.freeze([...SPEECH_OPTIONS, 'returnLanguage', 'chunkLengthS', 'strideLengthS', 'onProgress']);

function checkTranscribeOptions(options, what) {
  const o = checkOptions(options, TRANSCRIBE_OPTIONS, what);
  if (o.onProgress !== undefined && typeof o.onProgress !== 'function') throw typeError(`onProgress: expected a function, got ${describe(o.onProgress)}`);
  if (o.returnLanguage !== undefined && typeof o.returnLanguage !== 'boolean') throw typeError(`returnLanguage: expected true or false, got ${describe(o.returnLanguage)}`);
  if (o.chunkLengthS !== undefined && !(typeof o.chunkLengthS === 'number' && o.chunkLengthS > 0 && Number.isFinite(o.chunkLengthS))) {
    throw typeError(`chunkLengthS: expected a number of seconds > 0, got ${describe(o.chunkLengthS)}`);
  }
  if (o.strideLengthS !== undefined && o.chunkLengthS === undefined) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'strideLengthS: the strides of chunked transcription need chunkLengthS');
  }
  const { returnLanguage, chunkLengthS, strideLengthS, onProgress, signal, ...generate } = o;
  // 'word' goes on to generate as the pipeline passes it: timestamps in the prompt, no timestamp rule in short form
  // (speech_generate.js); long-form sets it true.
  const words = generate.returnTimestamps === 'word';
  return { returnLanguage: returnLanguage ?? false, chunkLengthS, strideLengthS, onProgress, signal, words, generate: { ...generate, ...(signal ? { signal } : {}) } };
}

/**
 * Samples from what transcribe() and stream() take: samples as the feature extractor takes them, or a file (a path
 * or URL, bytes, a Blob: readAudio's WAV and FLAC, and in a page the formats the browser decodes) read to 16 kHz mono.
 */
async function samplesOf(audio, samplingRate) {
  const file = typeof audio === 'string' || audio instanceof URL || audio instanceof ArrayBuffer || audio instanceof Uint8Array
    || (typeof Blob === 'function' && audio instanceof Blob);
  if (!file) return audio;
  // attnwasm/audio's readAudio, loaded by URL where a file is given, so that a bundle of the main entry does not
  // take in the FLAC decoder's package (a bundled app passes samples: readAudio from 'attnwasm/audio').
  const { readAudio } = await import(/* webpackIgnore: true */ /* @vite-ignore */ new URL('./audio/decode.js', import.meta.url).href);
  return readAudio(audio, { samplingRate });
}

/**
 * One window's generation: the best sequence of source 0 (the decoder prompt included), the plan, and with `times`
 * the sequence's token times (Float32Array).
 */
async function generateWindow(model, features, options, times = null) {
  const g = speechGeneration(model, features, options, { times });
  const r = await g.run();
  return { sequence: Array.from(r.sequences[0]), plan: g.plan, tokenTimestamps: times ? r.tokenTimestamps[0] : null };
}

function progress(o, done, total, seconds) {
  if (o.onProgress) o.onProgress({ done, total, seconds });
}

/** The whole transcription: { text, chunks? } as the pipeline returns it (chunks with timestamps or languages). */
export async function transcribeAudio(model, audio, options) {
  const o = checkTranscribeOptions(options, 'transcribe');
  const fe = model.featureExtractor;
  const vocab = asrVocab(model._tokenizerOf('transcribe'), whisperVocab(model.tokenizer).timestampBegin);
  const asr = { returnTimestamps: o.words ? 'word' : o.generate.returnTimestamps ?? false, returnLanguage: o.returnLanguage, timePrecision: fe.config.chunkLength / model.maxSourcePositions };
  const settings = o.words ? alignmentSettings(model, "returnTimestamps: 'word'") : null;
  // The pipeline's num_frames: a chunk's samples // hop_length (the states past its half are not looked at); none
  // for a window of up to 30 s or long-form.
  const times = (numFrames) => (settings ? { settings, numFrames } : null);
  const sr = fe.samplingRate;
  audio = await samplesOf(audio, sr);
  if (o.chunkLengthS !== undefined) {
    const x = toMono(audio, { samplingRate: sr, name: 'audio', finite: false });
    const outputs = [];
    const total = [...chunkIter(x.length, chunkSizes({ chunkLengthS: o.chunkLengthS, strideLengthS: o.strideLengthS, samplingRate: sr }))].length;
    let done = 0;
    for (const chunk of fe.chunkFeatures(x, { chunkLengthS: o.chunkLengthS, strideLengthS: o.strideLengthS })) {
      if (done > 0) await turn(o.signal);
      const { sequence, tokenTimestamps } = await generateWindow(model, chunk, o.generate, times(Math.floor(chunk.stride[0] / fe.config.hopLength)));
      outputs.push({ tokens: sequence, stride: chunk.stride.map((v) => v / sr), ...(settings ? { tokenTimestamps } : {}) });
      done++;
      progress(o, done, total, (chunk.start + chunk.stride[0]) / sr);
    }
    return decodeAsr(vocab, outputs, asr);
  }
  const x = toMono(audio, { samplingRate: sr, name: 'audio', finite: false });
  if (x.length <= fe.config.nSamples) {
    const { sequence, tokenTimestamps } = await generateWindow(model, fe.features(x), o.generate, times(null));
    progress(o, 1, 1, x.length / sr);
    return decodeAsr(vocab, [{ tokens: sequence, ...(settings ? { tokenTimestamps } : {}) }], asr);
  }
  const tokens = [], tokenTimes = [];
  for await (const w of longForm(model, x, o, settings)) {
    for (const s of w.segments) {
      tokens.push(...s.tokens);
      if (settings) tokenTimes.push(...s.tokenTimestamps);
    }
  }
  return decodeAsr(vocab, [{ tokens, ...(settings ? { tokenTimestamps: tokenTimes } : {}) }], asr);
}

/**
 * Long-form generation's windows (generation_whisper.py, batch of one, temperature fallback and conditioning on
 * previous text off — its defaults): yields { seek, segments: [{ start, end, tokens }] } per window, times in seconds.
 * With `settings` (alignment.js's), each segment also has tokenTimestamps: its tokens' times (Float32Array, the
 * window's time offset added), as generate gives them with return_token_timestamps.
 */
export async function* longForm(model, samples, o, settings = null) {
  const fe = model.featureExtractor;
  let all;
  try {
    all = fe.features(samples, { padding: 'longest', truncation: false });
  } catch (e) {
    if (e.code !== 'ERR_AUDIO_TOO_LONG') throw e;
    // Long-form generation reads the whole input's features (their dynamic range is the whole input's).
    throw new AttnWasmError('ERR_AUDIO_TOO_LONG', `${e.message.replace(/; use chunkFeatures.*$/, '')}: long-form transcription needs them all at once; pass chunkLengthS (e.g. 30) to transcribe in the pipeline's chunks, one at a time`);
  }
  const M = model.numMelBins, F = all.shape[2], W = model.frames;
  const { timestampBegin, eos } = whisperVocab(model._tokenizerOf('transcribe'));
  const pad = model.config.pad_token_id ?? model.generationConfig?.pad_token_id ?? eos;
  // Long-form generation predicts timestamps whatever returnTimestamps says (the pipeline passes a false one to
  // generate as None, which long-form turns true); returnTimestamps only shapes the pipeline's output.
  const gen = { ...o.generate, returnTimestamps: true };
  let seek = 0, window = 0, lang = gen.language;
  const total = Math.ceil(F / W);
  while (seek < F) {
    if (window > 0) await turn(o.signal);
    const n = Math.min(F - seek, W);
    const data = new Float32Array(M * W);
    for (let m = 0; m < M; m++) data.set(all.data.subarray(m * F + seek, m * F + seek + n), m * W);
    const g = speechGeneration(model, { data, shape: [1, M, W] }, { ...gen, ...(lang !== undefined ? { language: lang } : {}) },
      { times: settings ? { settings, numFrames: null } : null });
    // transformers detects the language once, on the first window, and keeps its init tokens.
    if (lang === undefined && g.plan.language !== null) lang = model.tokenizer.idToToken(g.plan.language);
    const r = await g.run();
    let seq = Array.from(r.sequences[0]).slice(g.plan.prompt.length);
    let tt = settings ? r.tokenTimestamps[0].subarray(g.plan.prompt.length) : null;  // cut as the tokens are
    if (seek + W < F && seq.length > 0 && seq[seq.length - 1] === eos) seq = seq.slice(0, -1);
    if (seq.length > 0 && seq[seq.length - 1] === pad) {
      const count = seq.filter((t) => t === pad).length;
      seq = seq.slice(0, seq.length - count);
    }
    const offset = timeOffset(seek);
    const { segments, segmentOffset } = retrieveSegment(seq, { timestampBegin, timeOffset: offset, seekNumFrames: n });
    if (settings) {
      tt = tt.subarray(0, seq.length);
      segmentTokenTimestamps(segments, tt, offset).forEach((t, k) => { segments[k].tokenTimestamps = t; });
    }
    seek += segmentOffset;
    window++;
    progress(o, window, total, Math.min(seek, F) * fe.config.hopLength / fe.samplingRate);
    yield { seek, segments, plan: g.plan };
  }
}

/**
 * The language of a window's decoder prompt as the pipeline names a chunk's (return_language: 'english'), or null
 * (an English-only model's prompt has no language token).
 */
function promptLanguage(model, plan) {
  for (const id of plan.init) {
    const name = LANGUAGES.get((model.tokenizer.idToToken(id) ?? '').slice(2, -2));
    if (name) return name;
  }
  return null;
}

/**
 * Segments as they are decoded: each window's { timestamp: [start, end], text } (long-form's segments; one window
 * for up to 30 s), times in seconds rounded to 0.01 as the pipeline rounds its chunks', the text decoded with
 * special tokens skipped; with returnLanguage, each also has its window's language (the pipeline's chunks' name:
 * 'english', or null).
 */
export async function* streamSegments(model, audio, options) {
  const o = checkTranscribeOptions(options, 'stream');
  if (o.chunkLengthS !== undefined) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'chunkLengthS: stream() decodes windows in order (long-form); the chunked pipeline merges its chunks at the end: use transcribe() for it');
  }
  const v = whisperVocab(model._tokenizerOf('stream'));
  const fe = model.featureExtractor;
  const x = toMono(await samplesOf(audio, fe.samplingRate), { samplingRate: fe.samplingRate, name: 'audio', finite: false });
  if (o.words) {
    yield* streamWords(model, x, o, v);
    return;
  }
  const text = (tokens) => whisperDecode(v, tokens.filter((t) => t < v.timestampBegin), { skipSpecialTokens: true });
  const gen = { ...o.generate, returnTimestamps: true };
  const segment = (s, plan) => ({
    timestamp: [pyRound2(s.start), pyRound2(s.end)], text: text(s.tokens), ...(o.returnLanguage ? { language: promptLanguage(model, plan) } : {}),
  });
  if (x.length <= fe.config.nSamples) {  // one window, as transcribe() runs it: the audio padded to 30 s
    const { sequence, plan } = await generateWindow(model, fe.features(x), gen);
    const seq = sequence.slice(plan.prompt.length).filter((t) => t !== v.eos);
    progress(o, 1, 1, x.length / fe.samplingRate);
    for (const s of retrieveSegment(seq, { timestampBegin: v.timestampBegin, timeOffset: 0, seekNumFrames: model.frames }).segments) yield segment(s, plan);
    return;
  }
  for await (const w of longForm(model, x, { ...o, generate: gen })) {
    for (const s of w.segments) yield segment(s, w.plan);
  }
}

/**
 * stream() with returnTimestamps 'word': each window's words as transcribe() gives them ({ text, timestamp }, with
 * returnLanguage its window's language), yielded when the window is decoded; one window up to 30 s, long-form over.
 * Words do not cross windows (a window ends at a timestamp), so the words streamed are transcribe()'s chunks.
 */
async function* streamWords(model, x, o, v) {
  const fe = model.featureExtractor;
  const settings = alignmentSettings(model, "returnTimestamps: 'word'");
  const vocab = asrVocab(model.tokenizer, v.timestampBegin);
  const asr = { returnTimestamps: 'word', returnLanguage: o.returnLanguage, timePrecision: fe.config.chunkLength / model.maxSourcePositions };
  if (x.length <= fe.config.nSamples) {
    const { sequence, tokenTimestamps } = await generateWindow(model, fe.features(x), o.generate, { settings, numFrames: null });
    progress(o, 1, 1, x.length / fe.samplingRate);
    yield* decodeAsr(vocab, [{ tokens: sequence, tokenTimestamps }], asr).chunks;
    return;
  }
  for await (const w of longForm(model, x, o, settings)) {
    const tokens = w.segments.flatMap((s) => s.tokens), tokenTimestamps = w.segments.flatMap((s) => Array.from(s.tokenTimestamps));
    yield* decodeAsr(vocab, [{ tokens, tokenTimestamps }], asr).chunks;
  }
}
