// A checkpoint file over 2 GiB loaded from a Node path (bindings/sources.js reads it 8 MiB at a time: Node's
// readFile refuses files over 2 GiB), converted to q4 while it streams in, so the wasm heap stays far below
// the file's size. The file (written here to os.tmpdir() with streaming writes, deleted afterwards): a
// Llama model with hidden 1024, vocab 300 000 and an untied head — two F32 tables of 1.23 GB each, 2.47 GB in
// all, so the head's rows lie past byte 2^31 of the file — and one small layer; values from a seeded
// generator per row. Checked: fileBytes and progress (monotonic, ending at the file's size); the peak of
// bytes in use (weights + the staging block, 4 MiB, + a little) and the heap size (far below the file); and
// the rows: the logits of chosen ids at chosen columns (rows at the start, the end, and across 2^31 of the
// file) equal, bit for bit, those of a small model holding only those rows of both tables, loaded as q4
// too (q4 quantizes each row on its own, in groups of 32). Takes 10–26 s here (2 cores shared; writing
// the file is most of it, and varies with the disk); needs ~2.5 GB free in the temporary folder.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { open, rm, mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init } from '../../bindings/index.js';
import { lmConfig, safetensors, sameBits } from './lm_checkpoint.mjs';

const V = 300_000, E = 1024;
const config = { ...lmConfig({ hidden: E, inter: 64, vocab: V, layers: 1, heads: 8, kvHeads: 2 }), max_position_embeddings: 64 };
const KD = (E / 8) * 2;

/** The tensors in file order: [name, rows, cols, seed] (norms: seed null, all 1 + a small ramp). */
const TENSORS = [
  ['model.embed_tokens.weight', V, E, 1],
  ['model.layers.0.input_layernorm.weight', 1, E, null],
  ['model.layers.0.self_attn.q_proj.weight', E, E, 2],
  ['model.layers.0.self_attn.k_proj.weight', KD, E, 3],
  ['model.layers.0.self_attn.v_proj.weight', KD, E, 4],
  ['model.layers.0.self_attn.o_proj.weight', E, E, 5],
  ['model.layers.0.post_attention_layernorm.weight', 1, E, null],
  ['model.layers.0.mlp.gate_proj.weight', 64, E, 6],
  ['model.layers.0.mlp.up_proj.weight', 64, E, 7],
  ['model.layers.0.mlp.down_proj.weight', E, 64, 8],
  ['model.norm.weight', 1, E, null],
  ['lm_head.weight', V, E, 9],
];

/** Row r of a tensor into out (cols floats): xorshift32 seeded by (tensor, row), uniform in ±scale. */
function fillRow(out, seed, r, scale) {
  if (seed === null) {
    for (let i = 0; i < out.length; i++) out[i] = 1 + ((i % 17) - 8) / 64;
    return;
  }
  let s = (Math.imul(seed, 0x9e3779b1) ^ Math.imul(r + 1, 0x85ebca6b)) >>> 0 || 1;
  const k = (2 * scale) / 2 ** 32;
  for (let i = 0; i < out.length; i++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    out[i] = (s >>> 0) * k - scale;
  }
}
const scaleOf = (name, cols) => (name.includes('embed') ? 1 : 1 / Math.sqrt(cols));

/** The safetensors header of TENSORS as bytes (8-byte length + JSON padded to 8). */
function header() {
  const h = { __metadata__: { format: 'pt' } };
  let off = 0;
  for (const [name, rows, cols] of TENSORS) {
    const n = rows * cols * 4;
    h[name] = { dtype: 'F32', shape: rows === 1 ? [cols] : [rows, cols], data_offsets: [off, off + n] };
    off += n;
  }
  let text = JSON.stringify(h);
  text += ' '.repeat((8 - (text.length % 8)) % 8);
  const t = new TextEncoder().encode(text);
  const out = new Uint8Array(8 + t.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(t.length), true);
  out.set(t, 8);
  return { bytes: out, offsets: h, size: 8 + t.length + off };
}

/** Writes the checkpoint to `path` in 16 MiB writes; returns its header facts. */
async function writeCheckpoint(path) {
  const head = header();
  const fh = await open(path, 'w');
  try {
    await fh.write(head.bytes);
    const buf = new Float32Array(4 << 20);  // 16 MiB
    for (const [name, rows, cols, seed] of TENSORS) {
      const scale = scaleOf(name, cols);
      const perBuf = Math.floor(buf.length / cols);
      for (let r = 0; r < rows; r += perBuf) {
        const n = Math.min(perBuf, rows - r);
        for (let i = 0; i < n; i++) fillRow(buf.subarray(i * cols, (i + 1) * cols), seed, r + i, scale);
        await fh.write(new Uint8Array(buf.buffer, 0, n * cols * 4));
      }
    }
  } finally {
    await fh.close();
  }
  return head;
}

/** The small model: only rows `pick` of the embedding and the head (vocab pick.length), the layer as is. */
function smallCheckpoint(pick) {
  const tensors = TENSORS.map(([name, rows, cols, seed]) => {
    const big = rows === V;
    const out = new Float32Array((big ? pick.length : rows) * cols);
    const rs = big ? pick : Array.from({ length: rows }, (_, i) => i);
    rs.forEach((r, i) => fillRow(out.subarray(i * cols, (i + 1) * cols), seed, r, scaleOf(name, cols)));
    return { name, shape: rows === 1 ? [cols] : [big ? pick.length : rows, cols], values: out };
  });
  return safetensors(tensors);
}

let dir = null;
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('a 2.47 GB checkpoint from a Node path, converted to q4 as it streams: the heap stays far below the file, the rows are the file\'s', async () => {
  const t0 = performance.now();
  dir = await mkdtemp(join(tmpdir(), 'attnwasm-large-'));
  const path = join(dir, 'model.safetensors');
  const head = await writeCheckpoint(path);
  const size = (await stat(path)).size;
  assert.equal(size, head.size);
  assert.ok(size > 2 ** 31 + 2 ** 28, `the file is over 2 GiB: ${size}`);
  const headBegin = head.bytes.byteLength + head.offsets['lm_head.weight'].data_offsets[0];
  assert.ok(headBegin < 2 ** 31 && headBegin + V * E * 4 > 2 ** 31, 'the head\'s rows cross byte 2^31 of the file');
  const tWritten = performance.now();

  const aw = await init({ threads: 1 });
  try {
    aw.resetPeakMemory();
    const before = aw.memory();
    let last = null, events = 0, jsBuffers = 0;
    const lm = await aw.loadModel(path, {
      config, dtype: 'q4', onProgress: (p) => {
        assert.ok(!last || p.loaded >= last.loaded, 'progress only grows');
        assert.equal(p.total, size);
        last = p;
        events++;
        jsBuffers = Math.max(jsBuffers, process.memoryUsage().arrayBuffers);  // JS's own: the wasm memory is not counted
      },
    });
    const tLoaded = performance.now();
    try {
      const mem = aw.memory();
      assert.equal(lm.fileBytes, size);
      assert.equal(last.loaded, size);
      assert.ok(events >= size / (4 << 20) - 1, `a progress event per 4 MiB chunk: ${events}`);
      assert.deepEqual(Object.keys(lm.weightTypes).sort(), ['f32', 'q4'], JSON.stringify(lm.weightTypes));
      assert.ok(lm.weightBytes < size / 6, `q4 weights: ${lm.weightBytes} bytes`);
      // Streamed: at most the weights, the staging block and a little at once; the heap far below the file.
      const peak = mem.peakInUseBytes - before.inUseBytes;
      assert.ok(peak <= lm.weightBytes + (4 << 20) + (8 << 20), `peak in use during the load: ${peak} bytes for ${lm.weightBytes} of weights`);
      assert.ok(mem.heapBytes < size / 4, `heap ${mem.heapBytes} bytes for a ${size}-byte file`);
      // Nor is the file whole on the JS side: the ArrayBuffers of the process (the chunks read; ~85 MB seen).
      assert.ok(jsBuffers < 2 ** 29, `ArrayBuffers of the process during the load: up to ${jsBuffers} bytes`);

      // Ids: the first and last rows, and head rows just below and above byte 2^31 of the file.
      const across = Math.floor((2 ** 31 - headBegin) / (E * 4));
      const pick = [0, 1, 77_777, across - 1, across, across + 1, V - 2, V - 1];
      const ids = { data: Int32Array.from(pick), shape: [1, pick.length] };
      const big = lm.forward(ids).logits;
      assert.deepEqual(big.shape, [1, pick.length, V]);
      const small = await aw.loadModel(smallCheckpoint(pick), { config: { ...config, vocab_size: pick.length }, dtype: 'q4' });
      const ref = small.forward({ data: Int32Array.from(pick.keys()), shape: [1, pick.length] }).logits.data;
      small.dispose();
      const got = new Float32Array(pick.length * pick.length);
      for (let t = 0; t < pick.length; t++) for (let j = 0; j < pick.length; j++) got[t * pick.length + j] = big.data[t * V + pick[j]];
      assert.equal(sameBits(got, ref), null, 'the chosen rows\' logits equal those of the model holding only those rows');
      const tChecked = performance.now();
      console.log(`# write ${((tWritten - t0) / 1000).toFixed(1)} s, load ${((tLoaded - tWritten) / 1000).toFixed(1)} s, check ${((tChecked - tLoaded) / 1000).toFixed(1)} s; `
        + `file ${(size / 1e9).toFixed(2)} GB, weights ${(lm.weightBytes / 1e6).toFixed(0)} MB, peak in use ${(peak / 1e6).toFixed(0)} MB, heap ${(mem.heapBytes / 1e6).toFixed(0)} MB, ArrayBuffers ${(jsBuffers / 1e6).toFixed(0)} MB`);
    } finally {
      lm.dispose();
    }
  } finally {
    await aw.close();
    await rm(dir, { recursive: true, force: true });
    dir = null;
  }
});
