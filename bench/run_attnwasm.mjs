// attnwasm runner: the package's public JS API (bindings/index.js), one wasm
// instance, weights from the same safetensors file the peers use.
// Usage: node bench/run_attnwasm.mjs <case> check|time [threads]  (see lib.mjs)
// threads: 1 (default: the single-thread build, engine id "attnwasm") or N > 1
// (the pthreads build with N threads, engine id "attnwasmN").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { init } from '../bindings/index.js';
import { loadCase, runCase, ONNX_DIR } from './lib.mjs';

const job = loadCase();
const { c, io } = job;
const threads = Number(process.argv[4] ?? 1);
const engine = threads > 1 ? `attnwasm${threads}` : 'attnwasm';
const aw = await init({ threads });
if ((aw.capabilities().threads || 1) !== threads) throw new Error(`attnwasm: asked for ${threads} threads, got ${JSON.stringify(aw.capabilities())}`);
const sd = aw.loadSafetensors(readFileSync(join(ONNX_DIR, `${c.name}.safetensors`)));
const t = (name) => ({ data: io[name].data, shape: c.inputs[name] });

let module, forward;
if (c.kind === 'mha') {
  const { E, H } = c.config;
  module = new aw.MultiheadAttention(E, H);
  module.loadStateDict(sd);
  if (c.inputs.x) {
    const x = t('x');
    forward = () => module.forward(x, x, x, { needWeights: false }).output.data;
  } else {
    const q = t('query'), m = t('memory');
    forward = () => module.forward(q, m, m, { needWeights: false }).output.data;
  }
} else if (c.kind === 'encoder') {
  const { E, H, FF } = c.config;
  module = new aw.TransformerEncoderLayer(E, H, { dimFeedforward: FF, activation: 'relu', normFirst: false });
  module.loadStateDict(sd);
  const x = t('x');
  forward = () => module.forward(x).data;
} else if (c.kind === 'matmul') {
  // x · Wᵀ: a bias-free Linear is attnwasm's matrix multiply.
  module = new aw.Linear(c.config.K, c.config.N, { bias: false });
  module.loadStateDict(sd);
  const x = t('x');
  forward = () => module.forward(x).data;
} else {
  throw new Error(`attnwasm: unsupported case kind ${c.kind}`);
}
await runCase(engine, job, forward, { threads });
module.dispose();
