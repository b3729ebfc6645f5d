// sentence-transformers' Dense module (models/Dense.py): after the pooling, y = activation(linear(x)), read from
// the module's folder as Dense.load reads it — config.json { in_features, out_features, bias,
// activation_function } and model.safetensors (linear.weight (out, in), linear.bias (out)). LaBSE, the distiluse
// models and EmbeddingGemma end with one or two. Small matrices (hundreds by hundreds, once per sentence): run here
// in JS, each output a float64 sum rounded to float32, as torch's float32 Linear within its rounding. Also here:
// F.normalize for a Normalize that comes after a Dense (the native one runs only right after the pooling).
import { AttnWasmError, describe } from './errors.js';

/** The activations Dense may name (Dense's default: Tanh), by their import path. */
const ACTIVATIONS = Object.freeze({
  'torch.nn.modules.activation.Tanh': (x) => Math.tanh(x),
  'torch.nn.modules.linear.Identity': (x) => x,
  'torch.nn.modules.activation.Sigmoid': (x) => 1 / (1 + Math.exp(-x)),
  'torch.nn.modules.activation.ReLU': (x) => Math.max(x, 0),
});

const invalid = (file, message) => new AttnWasmError('ERR_INVALID_ARGUMENT', `${file}: ${message}`);
const unsupported = (file, message) => new AttnWasmError('ERR_UNSUPPORTED', `${file}: ${message}`);
const show = (v) => (typeof v === 'string' ? `'${v}'` : JSON.stringify(v) ?? describe(v));

/**
 * A Dense module of folder `path` ('2_Dense'), taking vectors of `inFeatures`: { inFeatures, outFeatures,
 * weight (out × in, row-major), bias (or null), activation (its import path) }. `read(name)` gives a file's text,
 * `readBytes(name)` its bytes (each undefined when absent), `loadSafetensors(bytes)` the runtime's reader.
 */
export async function readDense(path, inFeatures, { read, readBytes, loadSafetensors }) {
  const dir = path.replace(/\/+$/, '');
  const file = `${dir}/config.json`;
  const text = await read(file);
  if (text === undefined) throw invalid('source', `${file}, the Dense module's config named by modules.json, is not in the folder`);
  let c;
  try {
    c = JSON.parse(text);
  } catch (e) {
    throw invalid(file, `not valid JSON (${e.message})`);
  }
  if (c === null || typeof c !== 'object' || Array.isArray(c)) throw invalid(file, `expected an object, got ${describe(c)}`);
  for (const k of Object.keys(c)) {
    if (!['in_features', 'out_features', 'bias', 'activation_function', 'init_weight', 'init_bias'].includes(k)) throw unsupported(file, `${k}: not a key of sentence-transformers' Dense`);
  }
  if (c.in_features !== inFeatures) throw invalid(file, `in_features: expected the vectors' size before it (${inFeatures}), got ${show(c.in_features)}`);
  if (!Number.isInteger(c.out_features) || c.out_features < 1 || c.out_features > 65536) throw invalid(file, `out_features: expected an integer in [1, 65536], got ${show(c.out_features)}`);
  const hasBias = c.bias ?? true;
  if (typeof hasBias !== 'boolean') throw invalid(file, `bias: expected a boolean, got ${show(c.bias)}`);
  const activation = c.activation_function ?? 'torch.nn.modules.activation.Tanh';
  if (!Object.hasOwn(ACTIVATIONS, activation)) throw unsupported(file, `activation_function: expected one of ${Object.keys(ACTIVATIONS).map((a) => `'${a}'`).join(', ')}, got ${show(activation)}`);
  const bytes = await readBytes(`${dir}/model.safetensors`);
  if (bytes === undefined) {
    const pickle = await readBytes(`${dir}/pytorch_model.bin`);
    throw (pickle === undefined ? invalid('source', `${dir}/model.safetensors, the Dense module's weights, is not in the folder`)
      : unsupported(`${dir}/pytorch_model.bin`, 'a pickle is not read (it can run code); save the module with model.safetensors'));
  }
  let tensors;
  try {
    tensors = loadSafetensors(bytes);
  } catch (e) {
    e.message = `${dir}/model.safetensors: ${e.message}`;
    throw e;
  }
  const want = { 'linear.weight': [c.out_features, inFeatures], ...(hasBias ? { 'linear.bias': [c.out_features] } : {}) };
  for (const name of Object.keys(tensors)) if (!(name in want)) throw invalid(`${dir}/model.safetensors`, `unexpected tensor '${name}' (expected ${Object.keys(want).join(', ')})`);
  for (const [name, shape] of Object.entries(want)) {
    const t = tensors[name];
    if (!t) throw invalid(`${dir}/model.safetensors`, `missing tensor '${name}'`);
    if (!(t.data instanceof Float32Array) || t.shape.join() !== shape.join()) throw invalid(`${dir}/model.safetensors`, `${name}: expected a float tensor of shape [${shape}], got ${t.data?.constructor?.name} [${t.shape}]`);
  }
  return { inFeatures, outFeatures: c.out_features, weight: tensors['linear.weight'].data, bias: hasBias ? tensors['linear.bias'].data : null, activation };
}

/** Dense modules in turn on n vectors (n × in, row-major) → (n × the last's out), float32 at each step. */
export function applyDense(layers, data, n) {
  let x = data;
  for (const l of layers) {
    const f = ACTIVATIONS[l.activation];
    const y = new Float32Array(n * l.outFeatures);
    for (let i = 0; i < n; i++) {
      const xi = x.subarray(i * l.inFeatures, (i + 1) * l.inFeatures);
      for (let o = 0; o < l.outFeatures; o++) {
        const w = l.weight.subarray(o * l.inFeatures, (o + 1) * l.inFeatures);
        let s = 0;
        for (let k = 0; k < l.inFeatures; k++) s += xi[k] * w[k];
        y[i * l.outFeatures + o] = f(Math.fround(Math.fround(s) + (l.bias ? l.bias[o] : 0)));
      }
    }
    x = y;
  }
  return x;
}

/** F.normalize(p=2) of each of n rows of d, in place: x / max(‖x‖₂, 1e-12). */
export function normalizeRows(data, n, d) {
  for (let i = 0; i < n; i++) {
    const row = data.subarray(i * d, (i + 1) * d);
    let ss = 0;
    for (const v of row) ss += v * v;
    const norm = Math.max(Math.fround(Math.sqrt(ss)), 1e-12);
    for (let k = 0; k < d; k++) row[k] /= norm;
  }
  return data;
}
