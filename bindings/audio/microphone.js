// A live MediaStream (a microphone from getUserMedia, or any audio stream) → chunks of mono samples at
// 16 kHz, in browsers. The stream plays into an AudioContext at the device's rate; an AudioWorklet
// (its source inlined as a Blob URL, so no file has to be served) copies each 128-sample render
// quantum, averaged over the channels, to the main thread; resample.js's Resampler turns them into
// 16 kHz, the same resampler as for files. Not here: voice activity detection, echo cancellation
// (ask getUserMedia for it).
import { AttnWasmError, describe } from '../errors.js';
import { Resampler } from './resample.js';

const WORKLET = `
class AttnwasmTap extends AudioWorkletProcessor {
  process(inputs) {
    const chans = inputs[0];
    if (chans && chans.length) {
      const n = chans[0].length, out = new Float32Array(n);
      for (let t = 0; t < n; t++) { let s = chans[0][t]; for (let c = 1; c < chans.length; c++) s += chans[c][t]; out[t] = s / chans.length; }
      this.port.postMessage(out, [out.buffer]);
    }
    return true;
  }
}
registerProcessor('attnwasm-tap', AttnwasmTap);`;

/**
 * Chunks of a live audio stream, as an async iterator: each a Float32Array of chunkLengthS seconds at
 * samplingRate (the last one may be shorter). Ends when every audio track of the stream has ended or
 * `signal` aborts; the AudioContext is then closed (the stream's tracks are the caller's to stop).
 * @param {MediaStream} stream
 * @param {{chunkLengthS?: number, samplingRate?: number, signal?: AbortSignal, audioContext?: AudioContext}} [o]
 *   chunkLengthS default 1; samplingRate 16000; audioContext: one to use (not closed at the end)
 * @returns {AsyncGenerator<Float32Array>}
 */
export async function* microphoneChunks(stream, { chunkLengthS = 1, samplingRate = 16000, signal, audioContext } = {}) {
  if (typeof globalThis.AudioWorkletNode !== 'function') throw new AttnWasmError('ERR_UNSUPPORTED', 'microphoneChunks: needs a browser with AudioWorklet');
  if (typeof MediaStream === 'undefined' || !(stream instanceof MediaStream)) throw new TypeError(`stream: expected a MediaStream, got ${describe(stream)}`);
  if (stream.getAudioTracks().length === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'stream: expected a MediaStream with an audio track, got none');
  if (typeof chunkLengthS !== 'number' || !(chunkLengthS > 0 && chunkLengthS <= 60)) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `chunkLengthS: expected seconds in (0, 60], got ${chunkLengthS}`);
  }
  const chunk = Math.round(chunkLengthS * samplingRate);
  const ctx = audioContext ?? new AudioContext();
  const url = URL.createObjectURL(new Blob([WORKLET], { type: 'text/javascript' }));
  const queue = [];
  let wake = null, ended = false;
  const poke = () => { if (wake) { wake(); wake = null; } };
  const onEnd = () => { ended = true; poke(); };
  let source, node;
  try {
    await ctx.audioWorklet.addModule(url);
    source = ctx.createMediaStreamSource(stream);
    node = new AudioWorkletNode(ctx, 'attnwasm-tap', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
    node.port.onmessage = (e) => { queue.push(e.data); poke(); };
    source.connect(node);
    node.connect(ctx.destination);  // silent (the processor writes no output); keeps the graph pulled
    for (const t of stream.getAudioTracks()) t.addEventListener('ended', () => { if (stream.getAudioTracks().every((x) => x.readyState === 'ended')) onEnd(); });
    signal?.addEventListener('abort', onEnd, { once: true });
    if (signal?.aborted) ended = true;
    if (ctx.state === 'suspended') await ctx.resume();
    const resampler = new Resampler(ctx.sampleRate, samplingRate);
    let pending = new Float32Array(0);
    const take = (block) => {
      const merged = new Float32Array(pending.length + block.length);
      merged.set(pending);
      merged.set(block, pending.length);
      pending = merged;
    };
    while (!ended) {
      if (!queue.length) await new Promise((r) => { wake = r; });
      while (queue.length) take(resampler.process(queue.shift()));
      while (pending.length >= chunk) {
        yield pending.slice(0, chunk);
        pending = pending.slice(chunk);
      }
    }
    while (queue.length) take(resampler.process(queue.shift()));
    take(resampler.flush());
    while (pending.length >= chunk) { yield pending.slice(0, chunk); pending = pending.slice(chunk); }
    if (pending.length) yield pending;
  } finally {
    signal?.removeEventListener('abort', onEnd);
    source?.disconnect();
    node?.disconnect();
    if (node) node.port.onmessage = null;
    URL.revokeObjectURL(url);
    if (!audioContext) await ctx.close().catch(() => {});
  }
}
