// attnwasm/audio's chunk arithmetic against transformers v4.40.2's ASR pipeline (preprocess with chunk_length_s and
// stride_length_s, then chunk_iter), run by tests/data/make_whisper_feature_goldens.py on the same lengths: every
// chunk's first sample, length, stride and is_last, and the pipeline's refusals; then an 8-hour input (positions only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chunkSizes, chunkIter } from '../../bindings/audio/index.js';
import { loadGoldens } from '../data/whisper_goldens.mjs';

const { doc } = loadGoldens();

test('golden: chunk_iter\'s chunks and strides for every length and stride the script tried', (t) => {
  let chunks = 0, refusals = 0;
  for (const c of doc.chunks) {
    const label = `length ${c.length}, chunk_length_s ${c.chunkLengthS}, stride_length_s ${JSON.stringify(c.strideLengthS)}`;
    const args = { chunkLengthS: c.chunkLengthS, strideLengthS: c.strideLengthS ?? undefined };
    if (c.error) {
      assert.throws(() => [...chunkIter(c.length, chunkSizes(args))], (e) => e.code === 'ERR_INVALID_ARGUMENT' && /strideLengthS/.test(e.message), `${label}: the pipeline refuses (${c.error})`);
      refusals++;
      continue;
    }
    const got = [...chunkIter(c.length, chunkSizes(args))].map((x) => [x.start, x.length, x.stride, x.isLast]);
    assert.deepEqual(got, c.chunks, label);
    chunks += got.length;
  }
  t.diagnostic(`${doc.chunks.length} cases, ${chunks} chunks, ${refusals} refusals, as the pipeline`);
});

test('chunk sizes: Python\'s round (half to even), alignment, and bad arguments named', () => {
  assert.deepEqual(chunkSizes({ chunkLengthS: 30 }), { chunkLen: 480000, strideLeft: 80000, strideRight: 80000 });
  assert.deepEqual(chunkSizes({ chunkLengthS: 30, strideLengthS: 1.5 / 16000 }), { chunkLen: 480000, strideLeft: 2, strideRight: 2 });
  assert.deepEqual(chunkSizes({ chunkLengthS: 30, strideLengthS: 2.5 / 16000 }), { chunkLen: 480000, strideLeft: 2, strideRight: 2 });
  assert.deepEqual(chunkSizes({ chunkLengthS: 1, strideLengthS: [0.1, 0.2], alignTo: 320 }), { chunkLen: 16000, strideLeft: 1600, strideRight: 3200 });
  for (const [args, re] of [[{ chunkLengthS: 0 }, /chunkLengthS: expected a length > 0/], [{ chunkLengthS: -1 }, /chunkLengthS/], [{ chunkLengthS: NaN }, /chunkLengthS/],
    [{ chunkLengthS: 30, strideLengthS: [1] }, /strideLengthS: expected/], [{ chunkLengthS: 30, strideLengthS: [1, -1] }, /strideLengthS\[1\]/],
    [{ chunkLengthS: 10, strideLengthS: 6 }, /must not exceed the chunk/], [{ chunkLengthS: 10, strideLengthS: 5 }, /never advance/]]) {
    assert.throws(() => chunkSizes(args), (e) => e.code === 'ERR_INVALID_ARGUMENT' && re.test(e.message), JSON.stringify(args));
  }
  assert.throws(() => [...chunkIter(-1, chunkSizes({ chunkLengthS: 30 }))], (e) => e.code === 'ERR_INVALID_ARGUMENT' && /^length/.test(e.message));
  assert.deepEqual([...chunkIter(0, chunkSizes({ chunkLengthS: 30 }))], []);
});

test('an 8-hour input: 1440 chunks, positions only (no samples read)', () => {
  const n = 8 * 3600 * 16000;
  const all = [...chunkIter(n, chunkSizes({ chunkLengthS: 30, strideLengthS: 5 }))];
  assert.equal(all.length, 1440);  // starts 0, 320 000, …: the last at 460 480 000 holds the end
  assert.deepEqual(all.at(-1), { start: 460480000, length: 320000, stride: [320000, 80000, 0], isLast: true });
  assert.ok(all.slice(1, -1).every((c, i) => c.start === (i + 1) * 320000 && c.length === 480000 && c.stride[1] === 80000 && c.stride[2] === 80000));
});
