// The model-free arithmetic of Whisper's sequential long-form generation in transformers v4.40.2
// (models/whisper/generation_whisper.py): each window's time offset (seek * time_precision / input_stride, a float32
// tensor in generate) and _retrieve_segment (a generated row with timestamps → segments and how far to seek).
// Not here: the loop that runs the model, temperature fallback, conditioning on previous tokens.

const fround = Math.fround;

/**
 * generate's time_offset = seek * time_precision / input_stride: a long tensor times a Python float gives float32
 * (both rounded to float32, the product rounded), then divided by the stride in float32.
 * @param {number} seek the window's first mel frame @param {number} [timePrecision] 0.02
 * @param {number} [inputStride] conv1.stride * conv2.stride = 2 @returns {number} a float32 value
 */
export function timeOffset(seek, timePrecision = 0.02, inputStride = 2) {
  return fround(fround(fround(seek) * fround(timePrecision)) / fround(inputStride));
}

/**
 * _retrieve_segment: the row's segments, split after each pair of consecutive timestamp tokens (and at the end when
 * the row ends text, timestamp); start / end = offset + position * time_precision in float32 as torch adds them.
 * Seek: the whole window (seekNumFrames) when the row ends with a single timestamp or has no pair; else back to
 * the last pair's timestamp (position * inputStride frames), dropping the unfinished segment after it.
 * @param {ArrayLike<number>} sequence the generated ids of one window (init tokens and prompt removed, as
 *   generate_with_fallback leaves them; eos kept)
 * @param {{timestampBegin: number, timeOffset: number, seekNumFrames: number, timePrecision?: number,
 *   inputStride?: number}} o
 * @returns {{segments: {start: number, end: number, tokens: number[]}[], segmentOffset: number}} new
 */
export function retrieveSegment(sequence, o) {
  const seq = Array.from(sequence), tb = o.timestampBegin;
  const tp = o.timePrecision ?? 0.02, stride = o.inputStride ?? 2;
  const off = fround(o.timeOffset);
  const at = (pos) => fround(off + fround(pos * tp));      // float32 tensor + Python float (pos * tp a double)
  const isTs = seq.map((t) => t >= tb);
  const n = seq.length;
  const singleEnding = n >= 2 ? !isTs[n - 2] && isTs[n - 1] : false;
  const slices = [];
  for (let i = 0; i + 1 < n; i++) if (isTs[i] && isTs[i + 1]) slices.push(i + 1);
  if (slices.length > 0) {
    if (singleEnding) slices.push(n);
    const segments = [];
    let last = 0;
    for (const cur of slices) {
      const tokens = seq.slice(last, cur);
      segments.push({ start: at(tokens[0] - tb), end: at(tokens[tokens.length - 1] - tb), tokens });
      last = cur;
    }
    const segmentOffset = singleEnding ? o.seekNumFrames : (seq[last - 1] - tb) * stride;
    return { segments, segmentOffset };
  }
  const stamps = seq.filter((t) => t >= tb);
  let lastPos = o.seekNumFrames;
  if (stamps.length > 0 && stamps[stamps.length - 1] !== tb) lastPos = stamps[stamps.length - 1] - tb;
  return { segments: [{ start: off, end: at(lastPos), tokens: seq }], segmentOffset: o.seekNumFrames };
}

/**
 * The token times of retrieveSegment's segments (consecutive slices of the window's row, from its start), each time
 * plus the window's offset in float32, as generate adds them (token_timestamps[a:b] + time_offset).
 * @param {{tokens: number[]}[]} segments @param {Float32Array} times the row's token times @param {number} offset
 * @returns {Float32Array[]} new, one per segment
 */
export function segmentTokenTimestamps(segments, times, offset) {
  let at = 0;
  return segments.map((s) => {
    const t = Float32Array.from(times.subarray(at, at + s.tokens.length), (v) => v + offset);
    at += s.tokens.length;
    return t;
  });
}
