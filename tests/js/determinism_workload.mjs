// A fixed workload whose outputs are hashed to check determinism: the same
// inputs must give bit-identical outputs across calls, processes, and Node vs
// Chromium. Self-contained (no imports, no closures) so the browser test can
// ship its source into a page: workload(aw, translatorBytes, vitBytes) → hex
// SHA-256 of every output's bytes, in order, plus a per-output list.
export async function workload(aw, translatorBytes, vitBytes) {
  let s = 12345;
  const rand = (n) => {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; out[i] = (s / 2 ** 32) * 2 - 1; }
    return out;
  };
  const t = (shape) => ({ data: rand(shape.reduce((a, b) => a * b, 1)), shape });
  const outputs = [];
  const push = (name, x) => outputs.push([name, x.data ?? x]);

  // SDPA at awkward sizes, masks, causal, GQA, weights.
  for (const [B, H, L, S, E] of [[1, 1, 1, 1, 1], [2, 3, 7, 13, 5], [1, 4, 33, 65, 16], [3, 2, 17, 17, 24]]) {
    const q = t([B, H, L, E]), k = t([B, H, S, E]), v = t([B, H, S, E + 3]);
    const r = aw.scaledDotProductAttention(q, k, v, { needWeights: true });
    push(`sdpa ${B}x${H}x${L}x${S}x${E}`, r.output); push('sdpa weights', r.weights);
    const c = aw.scaledDotProductAttention(q, k, v, { isCausal: true });
    push('sdpa causal', c.output);
  }
  const gq = aw.scaledDotProductAttention(t([2, 6, 9, 8]), t([2, 2, 11, 8]), t([2, 2, 11, 8]), { enableGqa: true });
  push('sdpa gqa', gq.output);

  // MultiheadAttention with seeded weights (loaded, not the random init).
  const mha = new aw.MultiheadAttention(48, 6, { batchFirst: true });
  mha.loadStateDict(Object.fromEntries(Object.entries(mha.parameterShapes()).map(([k, sh]) => [k, t(sh)])));
  const x = t([3, 21, 48]), mem = t([3, 37, 48]);
  const kpm = { data: Uint8Array.from({ length: 3 * 37 }, (_, i) => (i % 37 > 30 ? 1 : 0)), shape: [3, 37] };
  const r = mha.forward(x, mem, mem, { keyPaddingMask: kpm, needWeights: true, averageAttnWeights: false });
  push('mha', r.output); push('mha weights', r.weights);
  mha.dispose();

  // Encoder layer (gelu, pre-norm) and a Transformer.
  const enc = new aw.TransformerEncoderLayer(32, 4, { dimFeedforward: 80, activation: 'gelu', normFirst: true, batchFirst: true });
  enc.loadStateDict(Object.fromEntries(Object.entries(enc.parameterShapes()).map(([k, sh]) => [k, t(sh)])));
  push('encoder layer', enc.forward(t([2, 19, 32])));
  enc.dispose();
  const tf = new aw.Transformer({ dModel: 16, nhead: 2, numEncoderLayers: 2, numDecoderLayers: 2, dimFeedforward: 24, batchFirst: true });
  tf.loadStateDict(Object.fromEntries(Object.entries(tf.parameterShapes()).map(([k, sh]) => [k, t(sh)])));
  push('transformer', tf.forward(t([2, 11, 16]), t([2, 7, 16]), { tgtMask: aw.generateSquareSubsequentMask(7) }));
  tf.dispose();

  // The demo models.
  const translator = await aw.loadTranslator(translatorBytes);
  push('translator logits', translator.scoreFull('nine hundred eighty-seven thousand six hundred fifty-four', [2, 5, 6, 7]));
  const tr = translator.translate('three hundred seventy-one', { to: 'de', beamSize: 3 });
  push('translator beam cross-attention', tr.crossAttention.data);
  translator.dispose();
  const classifier = await aw.loadClassifier(vitBytes);
  const cl = classifier.classify(rand(784).map((v) => Math.abs(v)));
  push('classifier probabilities', cl.probabilities); push('classifier attention', cl.attention.data);
  classifier.dispose();

  const bytes = [];
  for (const [, d] of outputs) bytes.push(new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
  const total = new Uint8Array(bytes.reduce((a, b) => a + b.length, 0));
  let off = 0;
  for (const b of bytes) { total.set(b, off); off += b.length; }
  const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
  const parts = [];
  for (const [name, d] of outputs) parts.push([name, hex(await crypto.subtle.digest('SHA-256', new Uint8Array(d.buffer, d.byteOffset, d.byteLength).slice())).slice(0, 16)]);
  return { digest: hex(await crypto.subtle.digest('SHA-256', total)), outputs: parts, bytes: total.length };
}
