// The SIMD twin of resample.js's two passes (resample_simd.wat, 762 bytes of WebAssembly SIMD128, instantiated
// synchronously on first use): the same bytes as the JS passes, 3–5× faster. Where WebAssembly SIMD is missing
// the JS passes run (resize.js picks). One instance per realm; its memory grows to fit the image and is kept
// for the next call up to KEEP_BYTES; after a larger image the instance is dropped (a new one costs well under
// a millisecond), so a page that resized one 12-megapixel photo does not hold 40 MB for good.
import { RESAMPLE_SIMD_WASM } from './resample_simd_wasm.js';

let instance; // undefined: not tried; null: unavailable
let memory = null;
const KEEP_BYTES = 16 << 20;

function kernels() {
  if (instance === undefined) {
    try {
      const bytes = Uint8Array.from(atob(RESAMPLE_SIMD_WASM), (c) => c.charCodeAt(0));
      instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
      memory = instance.exports.memory;
    } catch {
      instance = null;
    }
  }
  return instance;
}

/** True where the WebAssembly SIMD kernels run. */
export function simdAvailable() {
  return kernels() !== null;
}

/** A bump allocator over the instance's memory, 16-byte aligned, growing the memory to fit. */
function layout(sizes) {
  const at = [];
  let end = 0;
  for (const s of sizes) {
    at.push(end);
    end += Math.ceil((s + 16) / 16) * 16; // 16 bytes of slack after each region (the kernels' over-reads)
  }
  const need = Math.ceil(end / 65536) - memory.buffer.byteLength / 65536;
  if (need > 0) memory.grow(need);
  return at;
}

/**
 * resample.js's passes for a window, with the SIMD kernels: rows r0 … r1 - 1 of `src` (inW pixels of C channels
 * per row) → horizontal pass for output columns x0 … x1 - 1 (when `h`; C must be 3) → vertical pass for output
 * rows y0 … y1 - 1 (when `v`). Returns { data, rowW }: (y1 - y0) rows of rowW·C bytes (rowW = x1 - x0 after a
 * horizontal pass, inW without one), a fresh array.
 */
export function resampleSimd(src, inW, C, h, v, x0, x1, y0, y1, r0, r1) {
  const k = kernels();
  const nrows = r1 - r0, srcRow = inW * C;
  const rowW = h ? x1 - x0 : inW, rowLen = rowW * C;
  const outRows = y1 - y0;
  const [pSrc, pHk, pHb, pMid, pVk, pVb, pDst] = layout([
    nrows * srcRow, h ? h.kk.byteLength : 0, h ? h.bounds.byteLength : 0, h ? nrows * rowLen : 0,
    v ? v.kk.byteLength : 0, v ? v.bounds.byteLength : 0, v ? outRows * rowLen : 0]);
  const heap = new Uint8Array(memory.buffer);
  heap.set(src.subarray(r0 * srcRow, r1 * srcRow), pSrc);
  let rows = pSrc;
  if (h) {
    heap.set(new Uint8Array(h.kk.buffer, h.kk.byteOffset, h.kk.byteLength), pHk);
    heap.set(new Uint8Array(h.bounds.buffer, h.bounds.byteOffset, h.bounds.byteLength), pHb);
    k.exports.h3(pSrc, srcRow, nrows, pHk + x0 * h.ksize * 4, h.ksize, pHb + x0 * 8, x1 - x0, pMid, rowLen);
    rows = pMid;
  }
  if (!v) return release({ data: heap.slice(rows + (y0 - r0) * rowLen, rows + (y1 - r0) * rowLen), rowW });
  heap.set(new Uint8Array(v.kk.buffer, v.kk.byteOffset, v.kk.byteLength), pVk);
  heap.set(new Uint8Array(v.bounds.buffer, v.bounds.byteOffset, v.bounds.byteLength), pVb);
  k.exports.v(rows, rowLen, pVk + y0 * v.ksize * 4, v.ksize, pVb + y0 * 8, outRows, pDst, r0);
  return release({ data: heap.slice(pDst, pDst + outRows * rowLen), rowW });
}

/** Drops the instance when its memory outgrew KEEP_BYTES (the next call makes a fresh one). */
function release(result) {
  if (memory.buffer.byteLength > KEEP_BYTES) {
    instance = undefined;
    memory = null;
  }
  return result;
}
