// A first look at attnwasm from Node: scaled dot-product attention with a
// causal mask, and a MultiheadAttention with a key padding mask, printing the
// shapes, a few numbers and the attention weights.
// Run: node examples/node_example.mjs   (after `npm run build`)
import { init } from '../bindings/index.js';

const aw = await init();
console.log('attnwasm capabilities:', aw.capabilities());

// scaledDotProductAttention: (N, H, L, E) inputs, causal.
const N = 1, H = 2, L = 4, E = 8;
const rnd = (n, seed) => Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 7.1 + i * 1.3));
const q = { data: rnd(N * H * L * E, 1), shape: [N, H, L, E] };
const k = { data: rnd(N * H * L * E, 2), shape: [N, H, L, E] };
const v = { data: rnd(N * H * L * E, 3), shape: [N, H, L, E] };
const sdpa = aw.scaledDotProductAttention(q, k, v, { isCausal: true, needWeights: true });
console.log('\nscaledDotProductAttention, isCausal: output shape', sdpa.output.shape);
console.log('weights of head 0 (row i attends to keys 0..i):');
for (let i = 0; i < L; i++) {
  console.log('  ' + Array.from(sdpa.weights.data.subarray(i * L, i * L + L), (w) => w.toFixed(3)).join('  '));
}

// MultiheadAttention, batch_first, the last key of the second sequence padded.
const mha = new aw.MultiheadAttention(E, H, { batchFirst: true });
const x = { data: rnd(2 * L * E, 4), shape: [2, L, E] };
const keyPaddingMask = { data: Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 1]), shape: [2, L] }; // true = ignore
const { output, weights } = mha.forward(x, x, x, { keyPaddingMask });
console.log('\nMultiheadAttention(8, 2, batchFirst): parameters', mha.parameterShapes());
console.log('output shape', output.shape, 'first row', Array.from(output.data.subarray(0, E), (a) => a.toFixed(4)).join(' '));
console.log('head-averaged weights of sequence 1 (last key padded → column of zeros):');
for (let i = 0; i < L; i++) {
  const o = (L + i) * L;
  console.log('  ' + Array.from(weights.data.subarray(o, o + L), (w) => w.toFixed(3)).join('  '));
}
mha.dispose();
