// A plain-JavaScript MultiheadAttention forward (self-attention, (L, N, E)
// layout, no masks, need_weights false): the floor every engine is compared
// against. Straight loops over Float32Arrays, matmuls in i-k-j order.

// y (M, N) = x (M, K) · W (N, K)^T + b
function linear(x, M, K, W, b, N, y) {
  for (let i = 0; i < M; i++) {
    for (let n = 0; n < N; n++) {
      let s = b ? b[n] : 0;
      const xo = i * K, wo = n * K;
      for (let k = 0; k < K; k++) s += x[xo + k] * W[wo + k];
      y[i * N + n] = s;
    }
  }
}

/** sd: { in_proj_weight, in_proj_bias, 'out_proj.weight', 'out_proj.bias' } as Float32Arrays. */
export function plainMha(x, L, N, E, H, sd) {
  const hd = E / H, rows = L * N;
  const win = sd.in_proj_weight, bin = sd.in_proj_bias;
  const q = new Float32Array(rows * E), k = new Float32Array(rows * E), v = new Float32Array(rows * E);
  linear(x, rows, E, win.subarray(0, E * E), bin.subarray(0, E), E, q);
  linear(x, rows, E, win.subarray(E * E, 2 * E * E), bin.subarray(E, 2 * E), E, k);
  linear(x, rows, E, win.subarray(2 * E * E), bin.subarray(2 * E), E, v);
  const attn = new Float32Array(rows * E);
  const p = new Float32Array(L);
  const scale = 1 / Math.sqrt(hd);
  for (let n = 0; n < N; n++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < L; i++) {
        const qo = (i * N + n) * E + h * hd;
        let max = -Infinity;
        for (let j = 0; j < L; j++) {
          const ko = (j * N + n) * E + h * hd;
          let s = 0;
          for (let d = 0; d < hd; d++) s += q[qo + d] * k[ko + d];
          p[j] = s * scale;
          if (p[j] > max) max = p[j];
        }
        let sum = 0;
        for (let j = 0; j < L; j++) { p[j] = Math.exp(p[j] - max); sum += p[j]; }
        const ao = (i * N + n) * E + h * hd;
        for (let j = 0; j < L; j++) {
          const w = p[j] / sum, vo = (j * N + n) * E + h * hd;
          for (let d = 0; d < hd; d++) attn[ao + d] += w * v[vo + d];
        }
      }
    }
  }
  const out = new Float32Array(rows * E);
  linear(attn, rows, E, sd['out_proj.weight'], sd['out_proj.bias'], E, out);
  return out;
}
