// TensorFlow.js runner: @tensorflow/tfjs-core + tfjs-backend-wasm (XNNPACK inside),
// single-threaded in Node. tfjs has no MultiheadAttention or Transformer layer, so
// both are composed here from public ops the way a tfjs user would write them:
// fused.matMul (matmul + bias [+ relu]), reshape, transpose, matMul, softmax,
// add, moments, rsqrt. Weights come from the same safetensors file (torch keys).
// Usage: node bench/run_tfjs.mjs <case> check|time  (see lib.mjs)
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-wasm';
import { loadCase, runCase, median } from './lib.mjs';

const job = loadCase();
const { c, io, weights: w } = job;
await tf.setBackend('wasm');
await tf.ready();

// Linear weights are transposed once at load, torch's (out, in) → (in, out).
// Two reasons, both seen in tfjs-backend-wasm 4.22: matMul with transposeB = true is
// ~9× slower (512³: ~140 ms against ~16 ms), and fused.matMul with transposeB = true
// adds the bias along the wrong axis (bias[row] instead of bias[col], 3×2 example).
const W = (name) => tf.tensor(w[name].data, w[name].shape);
const WT = (name, from = 0, to = w[name].shape[0]) => {
  const [, k] = w[name].shape;
  return tf.tidy(() => tf.transpose(tf.tensor(w[name].data.slice(from * k, to * k), [to - from, k])));
};
const bias = (name, from = 0, to = w[name].shape[0]) => tf.tensor(w[name].data.slice(from, to), [to - from]);

/** y (M, N) = x (M, K) · wt (K, N) + b, optionally relu. */
const linear = (x, wt, b, activation = 'linear') => tf.fused.matMul({ a: x, b: wt, bias: b, activation });

/** torch.nn.MultiheadAttention weights, split into q, k, v (prefix: '' or 'self_attn.'). */
function mhaWeights(prefix, E, H) {
  const hd = E / H, s = 1 / Math.sqrt(hd);
  // torch scales q by 1/sqrt(hd) after the projection: folded into Wq and bq once here.
  const win = `${prefix}in_proj_weight`, bin = `${prefix}in_proj_bias`;
  return {
    E, H, hd,
    wq: tf.mul(WT(win, 0, E), s), bq: tf.mul(bias(bin, 0, E), s),
    wk: WT(win, E, 2 * E), bk: bias(bin, E, 2 * E),
    wv: WT(win, 2 * E, 3 * E), bv: bias(bin, 2 * E, 3 * E),
    wo: WT(`${prefix}out_proj.weight`), bo: bias(`${prefix}out_proj.bias`),
  };
}

// The attention core has two formulations (see mha()); time mode picks the faster
// one per case (0.5 s of each after warm-up), check mode checks both.
let attention = 'batched';

/** query (L·B, E) rows in (L, B) order, memory (S·B, E) → (L·B, E). Heads as torch splits them. */
function mha(p, query, memory, L, S, B) {
  const { H, hd, E } = p;
  // (n·B, E) → (n, B·H, hd) → permuted: (B·H, n, hd) for q and v, (B·H, hd, S) for k.
  // k is transposed here rather than with matMul's transposeB, which takes a much
  // slower path in tfjs-backend-wasm 4.22 (512³: ~140 ms against ~16 ms).
  const heads = (t, n, perm) => tf.transpose(tf.reshape(t, [n, B * H, hd]), perm);
  const q = heads(linear(query, p.wq, p.bq), L, [1, 0, 2]);
  const kt = heads(linear(memory, p.wk, p.bk), S, [1, 2, 0]);
  const v = heads(linear(memory, p.wv, p.bv), S, [1, 0, 2]);
  let ctx; // (B·H, L, hd)
  if (attention === 'batched') {
    ctx = tf.matMul(tf.softmax(tf.matMul(q, kt)), v);
  } else {
    // One 2-D matMul per (batch, head): tfjs-backend-wasm's batched matMul (batch > 1)
    // is much slower than its 2-D one (8×256×32×256: ~28 ms against 8 × ~1 ms).
    const ks = tf.unstack(kt), vs = tf.unstack(v);
    ctx = tf.stack(tf.unstack(q).map((qi, i) => tf.matMul(tf.softmax(tf.matMul(qi, ks[i])), vs[i])));
  }
  const o = tf.reshape(tf.transpose(ctx, [1, 0, 2]), [L * B, E]); // (L·B, E)
  return linear(o, p.wo, p.bo);
}

/** torch.nn.LayerNorm over the last dim (biased variance, eps inside the sqrt). */
function layerNorm(x, g, b, eps = 1e-5) {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, eps))), g), b);
}

let run;
if (c.kind === 'mha') {
  const { B, L, S, E, H } = c.config;
  const p = mhaWeights('', E, H);
  if (c.inputs.x) {
    run = () => { const x = tf.tensor(io.x.data, [L * B, E]); return mha(p, x, x, L, S, B); };
  } else {
    run = () => mha(p, tf.tensor(io.query.data, [L * B, E]), tf.tensor(io.memory.data, [S * B, E]), L, S, B);
  }
} else if (c.kind === 'encoder') {
  const { B, L, E, H } = c.config;
  const p = mhaWeights('self_attn.', E, H);
  const [w1, w2] = ['linear1.weight', 'linear2.weight'].map((k) => WT(k));
  const [b1, b2] = ['linear1.bias', 'linear2.bias'].map((k) => bias(k));
  const [g1, n1, g2, n2] = ['norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias'].map(W);
  run = () => {
    const x = tf.tensor(io.x.data, [L * B, E]);
    const h = layerNorm(tf.add(x, mha(p, x, x, L, L, B)), g1, n1); // post-norm
    return layerNorm(tf.add(h, linear(linear(h, w1, b1, 'relu'), w2, b2)), g2, n2);
  };
} else if (c.kind === 'matmul') {
  // x · Wᵀ: W transposed once at load, like the Linear weights above (transposeB is slow).
  const wt = WT('weight');
  run = () => tf.matMul(tf.tensor(io.x.data, c.inputs.x), wt);
} else {
  throw new Error(`tfjs: unsupported case kind ${c.kind}`);
}

const forward = () => {
  const y = tf.tidy(run);
  const data = y.dataSync();
  y.dispose();
  return data;
};

if (c.kind !== 'matmul') {
  const ms = {};
  for (const variant of ['batched', 'perHead']) {
    attention = variant;
    if (job.mode === 'check') {
      ms[variant] = forward();
      continue;
    }
    const t = [];
    for (let t0 = performance.now(); performance.now() - t0 < 500 || t.length < 3;) {
      const t1 = performance.now();
      forward();
      t.push(performance.now() - t1);
    }
    ms[variant] = median(t);
  }
  if (job.mode === 'check') {
    let d = 0;
    for (let i = 0; i < ms.batched.length; i++) d = Math.max(d, Math.abs(ms.batched[i] - ms.perHead[i]));
    if (!(d <= 1e-5)) throw new Error(`tfjs ${c.name}: batched and per-head attention disagree by ${d}`);
  } else {
    attention = ms.batched <= ms.perHead ? 'batched' : 'perHead';
  }
}
await runCase('tfjs', job, forward, { threads: 1, version: tf.version_core, backend: tf.getBackend(), attention: c.kind === 'matmul' ? null : attention });
