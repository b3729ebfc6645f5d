// The chunks of long audio as transformers' chunked ASR pipeline cuts them (transformers v4.40.2,
// pipelines/automatic_speech_recognition.py: `preprocess` with chunk_length_s and stride_length_s,
// then `chunk_iter`). Positions only: no samples are read or copied, so an 8-hour buffer costs nothing
// here. Each chunk says which of its samples belong to the neighbours (its strides), which the
// pipeline uses to merge the overlapping transcriptions.
import { AttnWasmError } from '../errors.js';

/** Python's round(): to the nearest integer, ties to even. */
function roundHalfEven(x) {
  const f = Math.floor(x), d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

function seconds(v, name) {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: expected a finite number of seconds >= 0, got ${v}`);
  }
  return v;
}

/**
 * The chunk sizes in samples, as the pipeline's preprocess computes them: chunk_len =
 * int(round(chunk_length_s · sampling_rate / align_to) · align_to), and the same for each stride
 * (stride_length_s defaults to chunk_length_s / 6, one number meaning both sides).
 * @param {{chunkLengthS: number, strideLengthS?: number | [number, number], samplingRate?: number, alignTo?: number}} o
 * @returns {{chunkLen: number, strideLeft: number, strideRight: number}}
 */
export function chunkSizes({ chunkLengthS, strideLengthS, samplingRate = 16000, alignTo = 1 }) {
  seconds(chunkLengthS, 'chunkLengthS');
  if (chunkLengthS === 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'chunkLengthS: expected a length > 0 (0 means no chunking in the pipeline)');
  let stride = strideLengthS ?? chunkLengthS / 6;
  if (typeof stride === 'number') stride = [stride, stride];
  if (!Array.isArray(stride) || stride.length !== 2) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `strideLengthS: expected a number of seconds or [left, right], got ${JSON.stringify(strideLengthS)}`);
  }
  seconds(stride[0], 'strideLengthS[0]');
  seconds(stride[1], 'strideLengthS[1]');
  if (!Number.isInteger(samplingRate) || samplingRate < 1) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `samplingRate: expected a positive integer, got ${samplingRate}`);
  if (!Number.isInteger(alignTo) || alignTo < 1) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `alignTo: expected a positive integer, got ${alignTo}`);
  const size = (s) => roundHalfEven((s * samplingRate) / alignTo) * alignTo;
  const chunkLen = size(chunkLengthS), strideLeft = size(stride[0]), strideRight = size(stride[1]);
  if (chunkLen < strideLeft + strideRight) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `strideLengthS: the strides (${strideLeft} + ${strideRight} samples) must not exceed the chunk (${chunkLen} samples; the pipeline: "Chunk length must be superior to stride length")`);
  }
  if (chunkLen === strideLeft + strideRight) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `strideLengthS: the strides (${strideLeft} + ${strideRight} samples) fill the whole chunk (${chunkLen} samples), so the chunks would never advance`);
  }
  return { chunkLen, strideLeft, strideRight };
}

/**
 * The pipeline's chunk_iter over an input of `length` samples: each chunk's first sample, its length,
 * its strides [chunk length, left, right] in samples, and whether it is the last. A chunk no longer
 * than its left stride is skipped, as the pipeline skips it.
 * @param {number} length samples
 * @param {{chunkLen: number, strideLeft: number, strideRight: number}} sizes from chunkSizes
 * @returns {Generator<{start: number, length: number, stride: [number, number, number], isLast: boolean}>}
 */
export function* chunkIter(length, { chunkLen, strideLeft, strideRight }) {
  if (!Number.isSafeInteger(length) || length < 0) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `length: expected a number of samples >= 0, got ${length}`);
  const step = chunkLen - strideLeft - strideRight;
  if (!(step > 0)) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `chunkLen - strideLeft - strideRight: expected > 0, got ${step}`);
  for (let start = 0; start < length; start += step) {
    const end = start + chunkLen;
    const n = Math.min(end, length) - start;
    const left = start === 0 ? 0 : strideLeft;
    // All right strides must be full, otherwise this is the last chunk.
    const isLast = strideRight > 0 ? end > length : end >= length;
    const right = isLast ? 0 : strideRight;
    if (n > left) yield { start, length: n, stride: [n, left, right], isLast };
    if (isLast) break;
  }
}
