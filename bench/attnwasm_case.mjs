// One benchmark case as attnwasm runs it (used by run_attnwasm.mjs and
// vs_ort.mjs): the module torch exported, its weights loaded, and the call a
// user makes per inference, returning the output's data.
/**
 * @param aw the runtime from init()
 * @param c a case of bench/onnx/cases.json
 * @param io the case's inputs (readSafetensors of <case>.io.safetensors)
 * @param stateDict the weights (aw.loadSafetensors of <case>.safetensors)
 * @returns {{ module, forward: () => Float32Array }}
 */
export function attnwasmCase(aw, c, io, stateDict) {
  const t = (name) => ({ data: io[name].data, shape: c.inputs[name] });
  let module, forward;
  if (c.kind === 'mha') {
    const { E, H } = c.config;
    module = new aw.MultiheadAttention(E, H);
    // Self-attention (x) or cross-attention to a memory (query, memory), need_weights=False as exported.
    const q = t(c.inputs.x ? 'x' : 'query'), kv = t(c.inputs.x ? 'x' : 'memory');
    forward = () => module.forward(q, kv, kv, { needWeights: false }).output.data;
  } else if (c.kind === 'encoder') {
    const { E, H, FF } = c.config;
    module = new aw.TransformerEncoderLayer(E, H, { dimFeedforward: FF, activation: 'relu', normFirst: false });
    const x = t('x');
    forward = () => module.forward(x).data;
  } else if (c.kind === 'matmul') {
    // x · Wᵀ: a bias-free Linear is attnwasm's matrix multiply.
    module = new aw.Linear(c.config.K, c.config.N, { bias: false });
    const x = t('x');
    forward = () => module.forward(x).data;
  } else {
    throw new Error(`attnwasm: unsupported case kind ${c.kind}`);
  }
  module.loadStateDict(stateDict);
  return { module, forward };
}
