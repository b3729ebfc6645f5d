// Compiled by tests/js/typings.test.mjs with `tsc --noEmit --strict`: uses the
// whole public API so a typing that drifts from the implementation fails.
import { init, AttnWasmError } from 'attnwasm';
import type { AttnWasm, Tensor, MaskTensor, StateDict, ErrorCode, Capabilities } from 'attnwasm';

async function main(): Promise<void> {
  const aw: AttnWasm = await init();
  const q: Tensor = { data: new Float32Array(2 * 5 * 8), shape: [2, 5, 8] };
  const mask: MaskTensor = { data: new Uint8Array(5 * 5), shape: [5, 5] };
  const r = aw.scaledDotProductAttention(q, q, q, { attnMask: mask, scale: null, enableGqa: false, needWeights: true });
  const w: Tensor | null = r.weights;
  console.log(r.output.shape, w?.shape);
  aw.scaledDotProductAttention(q, q, q, { isCausal: true, dropoutP: 0 });

  const mha = new aw.MultiheadAttention(8, 2, { batchFirst: true, bias: true, addBiasKv: false, addZeroAttn: false, kdim: null, vdim: 8, dropout: 0 });
  const shapes: Record<string, number[]> = mha.parameterShapes();
  const sd: StateDict = mha.stateDict();
  mha.loadStateDict(sd);
  mha.loadStateDict(new Map(Object.entries(mha.stateDict())));
  const causal: Tensor = aw.generateSquareSubsequentMask(5);
  const out = mha.forward(q, q, q, { attnMask: causal, isCausal: true, keyPaddingMask: null, needWeights: false, averageAttnWeights: true });
  const n: number = out.output.data.length + mha.headDim + mha.embedDim + mha.numHeads + mha.kdim + mha.vdim;
  console.log(shapes, n, mha.batchFirst, mha.bias, mha.addBiasKv, mha.addZeroAttn, mha.dropout);
  mha.dispose();
  mha[Symbol.dispose]();

  const caps: Capabilities = aw.capabilities();
  const mem: { heapBytes: number; inUseBytes: number } = aw.memory();
  console.log(caps.simd, caps.threads, caps.threadsReason, caps.crossOriginIsolated, caps.environment, mem.heapBytes);
  try {
    aw.scaledDotProductAttention(q, q, q, { dropoutP: 0.5 });
  } catch (e) {
    if (e instanceof AttnWasmError) {
      const code: ErrorCode = e.code;
      console.log(code, e.message);
    }
  }
  await init({ wasmUrl: new URL('https://cdn.example/attnwasm_core.wasm') });
  await init({ wasmBinary: new Uint8Array(0) });
}
void main;
