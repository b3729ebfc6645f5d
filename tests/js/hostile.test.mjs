// Hostile calls: every public function, constructor and method of the runtime
// (and of the ./helpers entry) called with wrong types, wrong
// ranks, zero/negative/huge sizes, bad masks, out-of-vocabulary ids, bad options
// and disposed objects. The table is generated: each entry point lists its
// parameters by kind, and every parameter is replaced in turn by every hostile
// value of its kind, the other arguments staying valid.
//
// Each case must either throw an Error subclass with a stable `code` and a
// message that names the argument, or (only where marked "may succeed", e.g. a
// zero-size dim) return normally. After every case:
//   - the entry point's valid call still succeeds with bit-identical output,
//   - malloc'd wasm bytes are back to where they were (no leak on error paths).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../bindings/index.js';
import * as images from '../../bindings/helpers/index.js';
import { randomTensor } from './helpers.mjs';

const aw = await init();
const CODES = new Set(['ERR_INVALID_TYPE', 'ERR_OUT_OF_RANGE', 'ERR_INVALID_ARGUMENT', 'ERR_SHAPE', 'ERR_DTYPE',
  'ERR_STATE_DICT', 'ERR_OUT_OF_MEMORY', 'ERR_DISPOSED', 'ERR_NOT_A_NUMBER']);

const f32 = (shape, seed = 1) => randomTensor(shape, seed);
const numel = (shape) => shape.reduce((a, b) => a * b, 1);
const bool = (shape, fill = 0) => ({ data: new Uint8Array(numel(shape)).fill(fill), shape });
const ids = (shape, v = 1) => ({ data: new Int32Array(numel(shape)).fill(v), shape });

const translatorBytes = readFileSync(new URL('../../models/translator/translator.safetensors', import.meta.url));
const vitBytes = readFileSync(new URL('../../models/vit/vit.safetensors', import.meta.url));

// ---------------------------------------------------------------------------
// Hostile values by parameter kind. Each: [label, value, mayPass?]
// ---------------------------------------------------------------------------

/** Replacements for a float tensor argument whose valid shape is `shape`. */
function tensorHostiles(shape, { ranks = null } = {}) {
  const n = numel(shape);
  const out = [
    ['undefined', undefined], ['null', null], ['a number', 3], ['a string', 'x'], ['an array', [1, 2]],
    ['a bare Float32Array', new Float32Array(n)], ['a function', () => 0],
    ['data plain Array', { data: Array.from({ length: n }, () => 0), shape }],
    ['data Float64Array', { data: new Float64Array(n), shape }],
    ['data Int32Array', { data: new Int32Array(n), shape }],
    ['data missing', { shape }],
    ['data ArrayBuffer', { data: new ArrayBuffer(4 * n), shape }],
    ['shape missing', { data: new Float32Array(n) }],
    ['shape a string', { data: new Float32Array(n), shape: String(shape) }],
    ['shape a typed array', { data: new Float32Array(n), shape: Int32Array.from(shape) }],
    ['shape has NaN', { data: new Float32Array(n), shape: [NaN, ...shape.slice(1)] }],
    ['shape has Infinity', { data: new Float32Array(n), shape: [Infinity, ...shape.slice(1)] }],
    ['shape has a fraction', { data: new Float32Array(n), shape: [shape[0] + 0.5, ...shape.slice(1)] }],
    ['shape has a string dim', { data: new Float32Array(n), shape: [String(shape[0]), ...shape.slice(1)] }],
    ['shape has a negative dim', { data: new Float32Array(n), shape: [-shape[0], ...shape.slice(1)] }],
    ['data one element short', { data: new Float32Array(Math.max(0, n - 1)), shape }],
    ['data one element long', { data: new Float32Array(n + 1), shape }],
    ['huge shape (2^60 elements)', { data: new Float32Array(1), shape: [2 ** 20, 2 ** 20, 2 ** 20] }],
    ['shape over the 2^29 element limit', { data: new Float32Array(1), shape: [2 ** 15, 2 ** 15] }],
  ];
  if (ranks) {
    const [lo, hi] = ranks;
    if (shape.length + 1 > hi) out.push(['rank too high', f32([1, ...shape])]);
    if (shape.length - 1 < lo && shape.length >= 1) out.push(['rank too low', f32(shape.slice(1))]);
    if (lo > 0) out.push(['rank 0', { data: new Float32Array(1), shape: [] }]);
  }
  // A zero in each dim in turn: an empty tensor is either computed (empty or
  // well-defined result) or refused with a clear error — never a crash.
  for (let i = 0; i < shape.length; i++) {
    const z = shape.slice(); z[i] = 0;
    out.push([`zero-size dim ${i}`, { data: new Float32Array(0), shape: z }, true]);
  }
  return out;
}

function maskHostiles(shape) {
  const n = numel(shape);
  return [
    ['a number', 1], ['a string', 'causal'], ['an array', [1, 0]], ['a bare Uint8Array', new Uint8Array(n)],
    ['data Int32Array', { data: new Int32Array(n), shape }],
    ['data Float64Array', { data: new Float64Array(n), shape }],
    ['data Int8Array', { data: new Int8Array(n), shape }],
    ['data plain Array', { data: Array.from({ length: n }, () => 0), shape }],
    ['wrong shape (last dim + 1)', bool([...shape.slice(0, -1), shape[shape.length - 1] + 1])],
    ['wrong shape (transposed)', shape.length >= 2 && shape[0] !== shape[1] ? bool([shape[1], shape[0], ...shape.slice(2)]) : bool([...shape, 2])],
    ['rank 1', bool([shape[shape.length - 1] + 3])],
    ['rank 6', bool([1, 1, 1, 1, ...shape.slice(-2)].slice(0, 6).concat([1, 1, 1, 1, 1, 1]).slice(0, 6))],
    ['data short', { data: new Uint8Array(Math.max(0, n - 1)), shape }],
    ['huge shape', { data: new Uint8Array(1), shape: [2 ** 20, 2 ** 20] }],
    ['negative dim', { data: new Uint8Array(n), shape: [-1, ...shape.slice(1)] }],
  ];
}

function intHostiles({ min = 1, optional = false } = {}) {
  const out = [
    ['null', null], ['a string', '3'], ['a fraction', 2.5], ['NaN', NaN], ['Infinity', Infinity],
    ['-Infinity', -Infinity], ['negative', -1], ['2^31', 2 ** 31], ['2^53', 2 ** 53], ['1e300', 1e300],
    ['a boolean', true], ['an object', {}], ['a BigInt', 3n], ['an array', [3]],
  ];
  if (!optional) out.push(['undefined', undefined]);
  if (min >= 1) out.push(['zero', 0]);
  return out;
}

const boolHostiles = () => [['a number', 1], ['a string', 'true'], ['null', null], ['an object', {}]];
const probHostiles = () => [['negative', -0.1], ['above 1', 1.5], ['NaN', NaN], ['a string', '0.1'], ['Infinity', Infinity], ['null', null]];
const numberHostiles = () => [['a string', '1'], ['an object', {}], ['a boolean', false], ['a BigInt', 1n]];
const enumHostiles = () => [['unknown value', 'bogus'], ['a number', 3], ['null', null], ['wrong case', 'RELU']];
const optionsHostiles = () => [
  ['a number', 42], ['a string', 'x'], ['an array', []], ['null', null], ['unknown key', { bogus: 1 }],
  ['snake_case key', { batch_first: true }],
];

function moduleHostiles(disposedFactory, otherModule) {
  return [
    ['undefined', undefined], ['null', null], ['a plain object', {}], ['a number', 1],
    ['another layer type', otherModule], ['a disposed layer', disposedFactory()],
  ];
}

function bytesHostiles(real = translatorBytes) {
  const headerLen = Number(new DataView(real.buffer, real.byteOffset).getBigUint64(0, true));
  const cut = (n) => real.subarray(0, n);
  const withLen = (len) => { const b = Uint8Array.from(real.subarray(0, 64)); new DataView(b.buffer).setBigUint64(0, BigInt(len), true); return b; };
  const headerEdit = (from, to) => {
    const header = new TextDecoder().decode(real.subarray(8, 8 + headerLen)).replace(from, to);
    const hb = new TextEncoder().encode(header);
    const b = new Uint8Array(8 + hb.length + (real.length - 8 - headerLen));
    new DataView(b.buffer).setBigUint64(0, BigInt(hb.length), true);
    b.set(hb, 8); b.set(real.subarray(8 + headerLen), 8 + hb.length);
    return b;
  };
  return [
    ['undefined', undefined], ['null', null], ['a string', 'model.safetensors'], ['a number', 7], ['an array', [1, 2, 3]],
    ['Float32Array', new Float32Array(4)], ['empty bytes', new Uint8Array(0)], ['7 bytes', new Uint8Array(7)],
    ['header length 2^63', withLen(2 ** 63)], ['header length past the end', withLen(real.length)],
    ['header length 0', withLen(0)], ['truncated in the header', cut(8 + (headerLen >> 1))],
    ['truncated in the data', cut(real.length - 100)], ['random bytes', Uint8Array.from({ length: 4096 }, (_, i) => (i * 2654435761) >>> 24)],
    ['header not JSON', headerEdit('{', '[')], ['unknown dtype', headerEdit('"F16"', '"F8"')],
    ['offsets reversed', headerEdit('"data_offsets":[0,', '"data_offsets":[99999999,')],
  ];
}

/** Model files whose "attnwasm.config" metadata is broken (checked by the native validator). */
function configHostiles(real) {
  const headerLen = Number(new DataView(real.buffer, real.byteOffset).getBigUint64(0, true));
  const edit = (from, to) => {
    const header = new TextDecoder().decode(real.subarray(8, 8 + headerLen));
    assert.ok(header.includes(from), `fixture: ${from} not in the header`);
    const hb = new TextEncoder().encode(header.replace(from, to));
    const b = new Uint8Array(8 + hb.length + (real.length - 8 - headerLen));
    new DataView(b.buffer).setBigUint64(0, BigInt(hb.length), true);
    b.set(hb, 8); b.set(real.subarray(8 + headerLen), 8 + hb.length);
    return b;
  };
  return [
    ['config: dModel negative', edit('\\"dModel\\": ', '\\"dModel\\": -')],
    ['config: nhead a string', edit('\\"nhead\\": 4', '\\"nhead\\": \\"4\\"')],
    ['config: not JSON', edit('attnwasm.config":"{', 'attnwasm.config":"[{')],
    ['config: no model key', edit('\\"model\\"', '\\"modle\\"')],
    ['config: missing', edit('attnwasm.config', 'attnwasm.configX')],
  ];
}

// ---------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------

/**
 * An entry point: `args()` builds valid arguments; `call(args)` runs it (may
 * return a Promise); `params` names each positional argument and its hostile
 * values; `options` (index of the options argument) lists option keys.
 */
const entries = [];
function entry(name, { args, call, params, options = null, optionKeys = {}, cleanup = (r) => disposeResult(r) }) {
  entries.push({ name, args, call, params, options, optionKeys, cleanup });
}

function disposeResult(r) {
  if (r && typeof r.dispose === 'function') r.dispose();
}

// Long-lived modules the method entries are called on.
const E = 8, H = 2;
const mha = new aw.MultiheadAttention(E, H, { batchFirst: true });
const linear = new aw.Linear(6, 4);
const ln = new aw.LayerNorm(6);
const emb = new aw.Embedding(10, 4, { paddingIdx: 0 });
const relu = new aw.ReLU();
const gelu = new aw.GELU();
const dropout = new aw.Dropout(0.1);
const encLayer = new aw.TransformerEncoderLayer(E, H, { dimFeedforward: 16, batchFirst: true });
const decLayer = new aw.TransformerDecoderLayer(E, H, { dimFeedforward: 16, batchFirst: true });
const encoder = new aw.TransformerEncoder(encLayer, 2, { norm: new aw.LayerNorm(E) });
const decoder = new aw.TransformerDecoder(decLayer, 2);
const transformer = new aw.Transformer({ dModel: E, nhead: H, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 16, batchFirst: true });
const sinus = new aw.SinusoidalPositionalEncoding(E, { maxLen: 32, batchFirst: true });
const learned = new aw.LearnedPositionalEmbedding(32, E, { batchFirst: true });
const patch = new aw.PatchEmbedding(1, E, 4, { classToken: true });
const rms = new aw.RMSNorm(6);
const silu = new aw.SiLU();
const rope = new aw.RotaryPositionalEmbeddings(8, { maxSeqLen: 16 });
const translator = await aw.loadTranslator(translatorBytes);
const classifier = await aw.loadClassifier(vitBytes);
const disposedLinear = () => { const l = new aw.Linear(2, 2); l.dispose(); return l; };
const disposedEnc = () => { const l = new aw.TransformerEncoderLayer(E, H, { dimFeedforward: 16 }); l.dispose(); return l; };
const disposedDec = () => { const l = new aw.TransformerDecoderLayer(E, H, { dimFeedforward: 16 }); l.dispose(); return l; };

const maskOpt = (shape) => ({ kind: 'mask', shape });

// Functions of the runtime.
entry('scaledDotProductAttention', {
  args: () => [f32([2, 3, 5, 8], 1), f32([2, 3, 7, 8], 2), f32([2, 3, 7, 4], 3), {}],
  call: (a) => aw.scaledDotProductAttention(...a).output,
  params: [
    ['query', tensorHostiles([2, 3, 5, 8], { ranks: [2, 8] })],
    ['key', tensorHostiles([2, 3, 7, 8], { ranks: [2, 8] })],
    ['value', tensorHostiles([2, 3, 7, 4], { ranks: [2, 8] })],
  ],
  options: 3,
  optionKeys: { attnMask: maskOpt([5, 7]), dropoutP: 'prob0', isCausal: 'bool', scale: 'number', enableGqa: 'bool', needWeights: 'bool' },
});
entry('generateSquareSubsequentMask', {
  args: () => [5], call: (a) => aw.generateSquareSubsequentMask(...a),
  params: [['sz', intHostiles({ min: 0 }).concat([['2^20 (a 2^40 mask)', 2 ** 20]])]],
});
entry('relu', { args: () => [f32([3, 4])], call: (a) => aw.relu(...a), params: [['input', tensorHostiles([3, 4])]] });
entry('gelu', {
  args: () => [f32([3, 4]), {}], call: (a) => aw.gelu(...a), params: [['input', tensorHostiles([3, 4])]],
  options: 1, optionKeys: { approximate: 'enum' },
});
entry('silu', { args: () => [f32([3, 4])], call: (a) => aw.silu(...a), params: [['input', tensorHostiles([3, 4])]] });
for (const name of ['causalLowerRight', 'causalUpperLeft']) {
  entry(name, {
    args: () => [5, 7], call: (a) => aw[name](...a),
    params: [['L', intHostiles({ min: 0 }).concat([['2^29 + 1', 2 ** 29 + 1]])], ['S', intHostiles({ min: 0 })]],
  });
}
entry('loadSafetensors', {
  args: () => [translatorBytes, {}], call: (a) => Object.keys(aw.loadSafetensors(...a)).length,
  params: [['bytes', bytesHostiles()]], options: 1, optionKeys: { metadata: 'bool' },
});
entry('loadTranslator', {
  args: () => [translatorBytes, {}], call: async (a) => { const t = await aw.loadTranslator(...a); const n = t.languages.length; t.dispose(); return n; },
  params: [['source', [...bytesHostiles().filter(([l]) => l !== 'a string'), ['a path that does not exist', '/nonexistent/model.safetensors'],
    ['a ViT file', vitBytes], ['an object', {}], ...configHostiles(translatorBytes)]]],
  options: 1, optionKeys: { onProgress: 'function' },
});
entry('loadClassifier', {
  args: () => [vitBytes, {}], call: async (a) => { const c = await aw.loadClassifier(...a); const n = c.labels.length; c.dispose(); return n; },
  params: [['source', [...bytesHostiles().filter(([l]) => l !== 'a string'), ['a path that does not exist', '/nonexistent/model.safetensors'],
    ['a translator file', translatorBytes], ['an object', {}], ...configHostiles(vitBytes)]]],
  options: 1, optionKeys: { onProgress: 'function' },
});

// Constructors. A successful construction is disposed again.
const ctor = (name, Cls, args, params, optionsIndex = null, optionKeys = {}) => entry(`new ${name}`, {
  args, call: (a) => new Cls(...a), params, options: optionsIndex, optionKeys,
});
ctor('MultiheadAttention', aw.MultiheadAttention, () => [8, 2, {}],
  [['embedDim', intHostiles().concat([['too big to allocate', 2 ** 20]])], ['numHeads', intHostiles().concat([['not dividing embedDim', 3]])]],
  2, { dropout: 'prob', bias: 'bool', addBiasKv: 'bool', addZeroAttn: 'bool', kdim: 'intOrNull', vdim: 'intOrNull', batchFirst: 'bool' });
ctor('Linear', aw.Linear, () => [6, 4, {}],
  [['inFeatures', intHostiles().concat([['too big to allocate', 2 ** 30]])], ['outFeatures', intHostiles()]], 2, { bias: 'bool' });
ctor('LayerNorm', aw.LayerNorm, () => [6, {}],
  [['normalizedShape', intHostiles().filter(([l]) => l !== 'an array').concat([['a 2-element shape', [2, 3]], ['an empty shape', []], ['[0]', [0]]])]], 1,
  { eps: 'nonNegNumber', elementwiseAffine: 'bool', bias: 'bool' });
ctor('RMSNorm', aw.RMSNorm, () => [6, {}],
  [['normalizedShape', intHostiles().filter(([l]) => l !== 'an array').concat([['an empty shape', []], ['[0]', [0]],
    ['[2, -1]', [2, -1]], ['[2, 2.5]', [2, 2.5]], ['[2, null]', [2, null]], ['a 2^40-element shape', [2 ** 20, 2 ** 20]], ['a 2-element shape', [2, 3], true]])]], 1,
  { eps: 'nonNegNumberOrNull', elementwiseAffine: 'bool' });
ctor('RotaryPositionalEmbeddings', aw.RotaryPositionalEmbeddings, () => [8, {}],
  [['dim', intHostiles().concat([['odd', 7]])]], 1, { maxSeqLen: 'int', base: 'positiveNumber', interleaved: 'bool' });
ctor('Embedding', aw.Embedding, () => [10, 4, {}],
  [['numEmbeddings', intHostiles()], ['embeddingDim', intHostiles()]], 2, { paddingIdx: 'paddingIdx' });
ctor('GELU', aw.GELU, () => [{}], [], 0, { approximate: 'enum' });
ctor('Dropout', aw.Dropout, () => [0.1], [['p', probHostiles().filter(([l]) => l !== 'null')]]);
const layerOptionKeys = { dimFeedforward: 'int', dropout: 'prob', activation: 'enum', layerNormEps: 'nonNegNumber', batchFirst: 'bool', normFirst: 'bool', bias: 'bool' };
ctor('TransformerEncoderLayer', aw.TransformerEncoderLayer, () => [8, 2, {}],
  [['dModel', intHostiles()], ['nhead', intHostiles().concat([['not dividing dModel', 3]])]], 2, layerOptionKeys);
ctor('TransformerDecoderLayer', aw.TransformerDecoderLayer, () => [8, 2, {}],
  [['dModel', intHostiles()], ['nhead', intHostiles().concat([['not dividing dModel', 3]])]], 2, layerOptionKeys);
ctor('TransformerEncoder', aw.TransformerEncoder, () => [encLayer, 2, {}],
  [['encoderLayer', moduleHostiles(disposedEnc, linear).concat([['a decoder layer', decLayer]])],
    ['numLayers', intHostiles({ min: 0 }).concat([['1e6 layers', 1e6]])]], 2, { norm: 'moduleOrNull' });
ctor('TransformerDecoder', aw.TransformerDecoder, () => [decLayer, 2, {}],
  [['decoderLayer', moduleHostiles(disposedDec, linear).concat([['an encoder layer', encLayer]])],
    ['numLayers', intHostiles({ min: 0 })]], 2, { norm: 'moduleOrNull' });
ctor('Transformer', aw.Transformer, () => [{ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 16 }], [], 0,
  { dModel: 'int', nhead: 'int', numEncoderLayers: 'int0', numDecoderLayers: 'int0', ...layerOptionKeys });
ctor('SinusoidalPositionalEncoding', aw.SinusoidalPositionalEncoding, () => [8, {}],
  [['dModel', intHostiles()]], 1, { maxLen: 'int', batchFirst: 'bool' });
ctor('LearnedPositionalEmbedding', aw.LearnedPositionalEmbedding, () => [32, 8, {}],
  [['maxLen', intHostiles()], ['dModel', intHostiles()]], 2, { batchFirst: 'bool' });
ctor('PatchEmbedding', aw.PatchEmbedding, () => [1, 8, 4, {}],
  [['inChannels', intHostiles()], ['embedDim', intHostiles()], ['patchSize', intHostiles()]], 3, { bias: 'bool', classToken: 'bool' });

// Methods.
entry('MultiheadAttention.forward', {
  args: () => [f32([2, 5, 8], 1), f32([2, 7, 8], 2), f32([2, 7, 8], 3), {}],
  call: (a) => mha.forward(...a).output,
  params: [['query', tensorHostiles([2, 5, 8], { ranks: [2, 3] })], ['key', tensorHostiles([2, 7, 8], { ranks: [2, 3] })],
    ['value', tensorHostiles([2, 7, 8], { ranks: [2, 3] })]],
  options: 3,
  optionKeys: { keyPaddingMask: maskOpt([2, 7]), needWeights: 'bool', attnMask: maskOpt([5, 7]), averageAttnWeights: 'bool', isCausal: 'bool' },
});
entry('Linear.forward', { args: () => [f32([3, 6])], call: (a) => linear.forward(...a), params: [['input', tensorHostiles([3, 6], { ranks: [1, 8] })]] });
entry('LayerNorm.forward', { args: () => [f32([3, 6])], call: (a) => ln.forward(...a), params: [['input', tensorHostiles([3, 6], { ranks: [1, 8] })]] });
entry('Embedding.forward', {
  args: () => [ids([2, 3], 4)], call: (a) => emb.forward(...a),
  params: [['input', [
    ['Float32Array ids', { data: new Float32Array(6), shape: [2, 3] }], ['Uint8Array ids', { data: new Uint8Array(6), shape: [2, 3] }],
    ['id -1', ids([2, 3], -1)], ['id = numEmbeddings', ids([2, 3], 10)], ['id 2^31-1', ids([2, 3], 2 ** 31 - 1)],
    ['id -2^31', ids([2, 3], -(2 ** 31))], ['null', null], ['shape mismatch', { data: new Int32Array(5), shape: [2, 3] }],
    ['zero-size', ids([0, 3]), true],
  ]]],
});
entry('ReLU.forward', { args: () => [f32([3, 4])], call: (a) => relu.forward(...a), params: [['input', tensorHostiles([3, 4])]] });
entry('GELU.forward', { args: () => [f32([3, 4])], call: (a) => gelu.forward(...a), params: [['input', tensorHostiles([3, 4])]] });
entry('RMSNorm.forward', { args: () => [f32([3, 6])], call: (a) => rms.forward(...a), params: [['input', tensorHostiles([3, 6], { ranks: [1, 8] })]] });
entry('SiLU.forward', { args: () => [f32([3, 4])], call: (a) => silu.forward(...a), params: [['input', tensorHostiles([3, 4])]] });
entry('RotaryPositionalEmbeddings.forward', {
  args: () => [f32([2, 5, 3, 8]), { inputPos: ids([2, 5], 3) }], call: (a) => rope.forward(...a),
  params: [['input', tensorHostiles([2, 5, 3, 8], { ranks: [4, 4] }).concat([['longer than maxSeqLen (no inputPos: S = 17)', f32([1, 17, 1, 8])]])]],
  options: 1, optionKeys: { inputPos: 'positions' },
});
entry('Dropout.forward', { args: () => [f32([3, 4])], call: (a) => dropout.forward(...a), params: [['input', tensorHostiles([3, 4])]] });
// The decoder layer and stack, and the encoder stack's two forwards, take the same arguments.
const decoderSpec = {
  args: () => [f32([2, 4, 8]), f32([2, 5, 8], 2), {}],
  params: [['tgt', tensorHostiles([2, 4, 8], { ranks: [2, 3] })], ['memory', tensorHostiles([2, 5, 8], { ranks: [2, 3] })]], options: 2,
  optionKeys: { tgtMask: maskOpt([4, 4]), memoryMask: maskOpt([4, 5]), tgtKeyPaddingMask: maskOpt([2, 4]), memoryKeyPaddingMask: maskOpt([2, 5]), tgtIsCausal: 'bool', memoryIsCausal: 'bool' },
};
const encoderSpec = {
  args: () => [f32([2, 5, 8]), {}],
  params: [['src', tensorHostiles([2, 5, 8], { ranks: [2, 3] })]], options: 1,
  optionKeys: { mask: maskOpt([5, 5]), srcKeyPaddingMask: maskOpt([2, 5]), isCausal: 'bool' },
};
entry('TransformerEncoderLayer.forward', {
  args: () => [f32([2, 5, 8]), {}], call: (a) => encLayer.forward(...a),
  params: [['src', tensorHostiles([2, 5, 8], { ranks: [2, 3] })]], options: 1,
  optionKeys: { srcMask: maskOpt([5, 5]), srcKeyPaddingMask: maskOpt([2, 5]), isCausal: 'bool' },
});
entry('TransformerDecoderLayer.forward', {
  call: (a) => decLayer.forward(...a),
  ...decoderSpec,
});
entry('TransformerEncoder.forward', {
  call: (a) => encoder.forward(...a),
  ...encoderSpec,
});
entry('TransformerEncoder.forwardWithAttention', {
  call: (a) => encoder.forwardWithAttention(...a).output,
  ...encoderSpec,
});
entry('TransformerDecoder.forward', {
  call: (a) => decoder.forward(...a),
  ...decoderSpec,
});
entry('Transformer.forward', {
  args: () => [f32([2, 5, 8]), f32([2, 4, 8], 2), {}], call: (a) => transformer.forward(...a),
  params: [['src', tensorHostiles([2, 5, 8], { ranks: [2, 3] })], ['tgt', tensorHostiles([2, 4, 8], { ranks: [2, 3] })]], options: 2,
  optionKeys: { srcMask: maskOpt([5, 5]), tgtMask: maskOpt([4, 4]), memoryMask: maskOpt([4, 5]), srcKeyPaddingMask: maskOpt([2, 5]),
    tgtKeyPaddingMask: maskOpt([2, 4]), memoryKeyPaddingMask: maskOpt([2, 5]), srcIsCausal: 'bool', tgtIsCausal: 'bool', memoryIsCausal: 'bool' },
});
entry('SinusoidalPositionalEncoding.forward', {
  args: () => [f32([2, 5, 8])], call: (a) => sinus.forward(...a),
  params: [['input', tensorHostiles([2, 5, 8], { ranks: [2, 3] }).concat([['longer than maxLen', f32([2, 33, 8])]])]],
});
entry('LearnedPositionalEmbedding.forward', {
  args: () => [f32([2, 5, 8])], call: (a) => learned.forward(...a),
  params: [['input', tensorHostiles([2, 5, 8], { ranks: [2, 3] }).concat([['longer than maxLen', f32([2, 33, 8])]])]],
});
entry('PatchEmbedding.forward', {
  args: () => [f32([2, 1, 8, 8])], call: (a) => patch.forward(...a),
  params: [['images', tensorHostiles([2, 1, 8, 8], { ranks: [3, 4] }).concat([['size not a multiple of the patch (floored, as torch)', f32([2, 1, 9, 8]), true], ['channels', f32([2, 3, 8, 8])]])]],
});
for (const [name, m] of [['MultiheadAttention', mha], ['Linear', linear], ['TransformerEncoderLayer', encLayer], ['Transformer', transformer]]) {
  const good = m.stateDict();
  const first = Object.keys(good)[0];
  entry(`${name}.loadStateDict`, {
    args: () => [good], call: (a) => m.loadStateDict(...a),
    params: [['stateDict', [
      ['undefined', undefined], ['null', null], ['a number', 1], ['an array', [good[first]]], ['a string', 'weights'],
      ['empty', {}], ['a missing key', Object.fromEntries(Object.entries(good).slice(1))],
      ['an extra key', { ...good, 'bogus.weight': f32([1]) }],
      ['a mis-shaped entry', { ...good, [first]: f32([1, 1]) }],
      ['an entry with Float64Array data', { ...good, [first]: { data: new Float64Array(numel(good[first].shape)), shape: good[first].shape } }],
      ['an entry that is null', { ...good, [first]: null }],
      ['an entry with a huge shape', { ...good, [first]: { data: new Float32Array(1), shape: [2 ** 20, 2 ** 20] } }],
      ['a Map with a number key', new Map([[1, good[first]]])],
    ]]],
  });
}

// Models.
entry('Translator.translate', {
  args: () => ['twenty-one', { to: 'fr' }], call: (a) => translator.translate(...a).text,
  params: [['text', [['undefined', undefined], ['null', null], ['a number', 21], ['an empty string', ''], ['only spaces', '   '],
    ['an unknown word', 'twenty banana'], ['a very long text', 'one '.repeat(10000)], ['an array', ['one']]]]],
  options: 1, optionKeys: { to: 'lang', beamSize: 'int', lengthPenalty: 'number', maxLength: 'int' },
});
entry('Translator.tokenize', {
  args: () => ['forty-two'], call: (a) => translator.tokenize(...a),
  params: [['text', [['null', null], ['a number', 1], ['an empty string', ''], ['an unknown word', 'eleventy']]]],
});
entry('Translator.detokenize', {
  args: () => [[4, 5], 'fr'], call: (a) => translator.detokenize(...a),
  params: [['ids', [['null', null], ['a string', '4'], ['an id out of range', [4, 9999]], ['a negative id', [-1]], ['a fraction', [4.5]], ['NaN', [NaN]]]],
    ['lang', [['null', null], ['unknown', 'xx'], ['a number', 1]]]],
});
entry('Translator.scoreFull', {
  args: () => ['twenty-one', [2, 5]], call: (a) => translator.scoreFull(...a),
  params: [['text', [['null', null], ['an unknown word', 'banana']]],
    ['targetIds', [['null', null], ['a string', 'x'], ['an empty array', []], ['an id out of range', [2, 9999]], ['a negative id', [-5]], ['a fraction', [2.5]],
      ['too long', Array.from({ length: 1000 }, () => 5)]]]],
});
const digit = new Float32Array(28 * 28);
entry('Classifier.classify', {
  args: () => [digit], call: (a) => classifier.classify(...a).probabilities,
  params: [['image', [['undefined', undefined], ['null', null], ['a number', 1], ['a string', 'x'],
    ['Float32Array of the wrong length', new Float32Array(100)], ['Float64Array', new Float64Array(784)],
    ['an image object with no data', { width: 28, height: 28 }], ['an image object, data too short', { data: new Uint8ClampedArray(10), width: 28, height: 28 }],
    ['an image object with negative width', { data: new Uint8ClampedArray(4 * 784), width: -28, height: -28 }],
    ['an image object with a huge size', { data: new Uint8ClampedArray(4), width: 2 ** 20, height: 2 ** 20 }],
    ['an image object with fractional width', { data: new Uint8ClampedArray(4 * 784), width: 27.5, height: 28 }]]]],
});

// ./helpers: images and preprocess (pure JS helpers of the demo and CLI).
const pgm = new TextEncoder().encode('P2\n2 2\n255\n0 255 255 0\n');
entry('images.decodePgm', {
  args: () => [pgm], call: (a) => images.decodePgm(...a).grey,
  params: [['bytes', [['null', null], ['a string', 'P2'], ['empty', new Uint8Array(0)], ['not a PGM', new Uint8Array([1, 2, 3])],
    ['huge size', new TextEncoder().encode('P5\n100000 100000\n255\n')], ['truncated', new TextEncoder().encode('P2\n2 2\n255\n0 1\n')],
    ['maxval 0', new TextEncoder().encode('P2\n1 1\n0\n0\n')]]]],
});
const png = readFileSync(new URL('../../docs/digits.png', import.meta.url));
entry('images.decodePng', {
  args: () => [png.subarray()], call: async (a) => (await images.decodePng(...a)).width,
  params: [['bytes', [['null', null], ['a string', 'x'], ['empty', new Uint8Array(0)], ['not a PNG', new Uint8Array(64)],
    ['truncated', png.subarray(0, 200)], ['signature only', png.subarray(0, 8)]]]],
});
entry('images.greyToInk', {
  args: () => [{ width: 2, height: 2, grey: new Float32Array([0, 1, 1, 0]) }], call: (a) => images.greyToInk(...a),
  params: [['image', [['null', null], ['a number', 1], ['grey too short', { width: 2, height: 2, grey: new Float32Array(3) }],
    ['grey a Uint8Array', { width: 2, height: 2, grey: new Uint8Array(4) }],
    ['negative width', { width: -2, height: 2, grey: new Float32Array(4) }], ['no grey', { width: 2, height: 2 }]]]],
});
entry('images.inkFromRgba', {
  args: () => [new Uint8ClampedArray(4 * 6), 3, 2], call: (a) => images.inkFromRgba(...a),
  params: [['rgba', [['null', null], ['too short', new Uint8ClampedArray(5)], ['a string', 'x']]],
    ['w', intHostiles()], ['h', intHostiles()]],
});
entry('images.resizeArea', {
  args: () => [new Float32Array(12), 4, 3, 2, 2], call: (a) => images.resizeArea(...a),
  params: [['img', [['null', null], ['too short', new Float32Array(5)], ['a string', 'x']]],
    ['w', intHostiles()], ['h', intHostiles()], ['ow', intHostiles().concat([['huge', 2 ** 20]])], ['oh', intHostiles().concat([['huge', 2 ** 20]])]],
});
entry('images.mnistPreprocess', {
  args: () => [new Float32Array(100).fill(0.5), 10, 10, {}], call: (a) => images.mnistPreprocess(...a),
  params: [['ink', [['null', null], ['too short', new Float32Array(5)], ['a number', 1]]], ['w', intHostiles()], ['h', intHostiles()]],
  options: 3, optionKeys: { size: 'int', box: 'int', threshold: 'number' },
});

// ---------------------------------------------------------------------------
// Option-value hostiles by key kind
// ---------------------------------------------------------------------------
function optionValueHostiles(kind) {
  if (typeof kind === 'object' && kind.kind === 'mask') return maskHostiles(kind.shape);
  switch (kind) {
    case 'bool': return boolHostiles();
    case 'prob': return probHostiles();
    case 'prob0': return [['nonzero (no dropout at inference)', 0.1], ...probHostiles()];
    case 'number': return numberHostiles();
    // eps = 0 is valid in torch (and here); negative or non-finite is refused.
    case 'nonNegNumber': return [['negative', -1], ['NaN', NaN], ['Infinity', Infinity], ['a string', '1e-5'], ['null', null]];
    // RMSNorm's eps: null is torch's None (float32's epsilon).
    case 'nonNegNumberOrNull': return [['negative', -1], ['NaN', NaN], ['Infinity', Infinity], ['a string', '1e-5'], ['a boolean', true]];
    case 'positiveNumber': return [['zero', 0], ['negative', -1], ['NaN', NaN], ['Infinity', Infinity], ['beyond float32', 1e39],
      ['a string', '10000'], ['null', null]];
    // RoPE positions of a (2, 5, ·, ·) input, maxSeqLen 16.
    case 'positions': return [['Float32Array positions', f32([2, 5])], ['a number', 3], ['an array', [0, 1, 2, 3, 4]],
      ['wrong shape (B·S,)', ids([10])], ['transposed (S, B)', ids([5, 2])], ['= maxSeqLen', ids([2, 5], 16)], ['negative', ids([5], -1)],
      ['2^31 - 1', ids([5], 2 ** 31 - 1)], ['-2^31', ids([5], -(2 ** 31))], ['data short', { data: new Int32Array(4), shape: [5] }],
      ['huge shape', { data: new Int32Array(1), shape: [2 ** 20, 2 ** 20] }]];
    // Negative indices count from the end, as torch's padding_idx.
    case 'paddingIdx': return [['a string', '0'], ['a fraction', 0.5], ['NaN', NaN], ['= numEmbeddings', 10], ['< -numEmbeddings', -11], ['a boolean', true]];
    case 'int': return intHostiles({ optional: true });
    case 'int0': return intHostiles({ optional: true, min: 0 });
    case 'intOrNull': return intHostiles({ optional: true }).filter(([l]) => l !== 'null');
    case 'enum': return enumHostiles();
    case 'lang': return [['unknown language', 'xx'], ['a number', 1], ['null', null], ['the source language', 'en']];
    case 'function': return [['a string', 'log'], ['a number', 1], ['an object', {}]];
    case 'moduleOrNull': return [['a plain object', {}], ['a number', 1], ['another layer type', linear], ['a disposed LayerNorm', (() => { const l = new aw.LayerNorm(E); l.dispose(); return l; })()], ['a LayerNorm of the wrong size', new aw.LayerNorm(E + 1)]];
    default: throw new Error(`no hostiles for option kind ${kind}`);
  }
}

// ---------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------
const cases = [];
for (const e of entries) {
  e.params.forEach(([pname, hostiles], i) => {
    for (const [label, value, mayPass] of hostiles) {
      cases.push({ entry: e, label: `${pname}: ${label}`, names: [pname], mayPass: !!mayPass, make: () => { const a = e.args(); a[i] = value; return a; } });
    }
  });
  if (e.options !== null) {
    for (const [label, value] of optionsHostiles()) {
      cases.push({ entry: e, label: `options: ${label}`, names: ['options', 'bogus', 'batch_first'], mayPass: false, make: () => { const a = e.args(); a[e.options] = value; return a; } });
    }
    for (const [key, kind] of Object.entries(e.optionKeys)) {
      for (const [label, value, mayPass] of optionValueHostiles(kind)) {
        cases.push({
          entry: e, label: `${key}: ${label}`, names: [key], mayPass: !!mayPass,
          make: () => { const a = e.args(); a[e.options] = { ...(a[e.options] ?? {}), [key]: value }; return a; },
        });
      }
    }
  }
}

const run = async (e, a) => e.call(a);

const snapshot = (r) => (r && r.data ? { data: Array.from(r.data), shape: r.shape } : JSON.parse(JSON.stringify(r ?? null, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v))));

const references = new Map();
for (const e of entries) {
  const r = await run(e, e.args());
  references.set(e, snapshot(r));
  e.cleanup(r);
}

let failures = 0;
const stats = { cases: 0, threw: 0, passed: 0 };
test(`hostile table: ${cases.length} cases over ${entries.length} entry points`, async (t) => {
  for (const c of cases) {
    const e = c.entry;
    const base = aw.memory().inUseBytes;
    stats.cases++;
    let result, error;
    try {
      result = await run(e, c.make());
    } catch (err) {
      error = err;
    }
    try {
      if (error) {
        stats.threw++;
        assert.ok(error instanceof Error, `threw a non-Error: ${String(error)}`);
        assert.ok(CODES.has(error.code), `code ${error.code} is not a stable code (message: ${error.message})`);
        assert.ok(c.names.some((n) => error.message.includes(n)), `message does not name ${c.names.join('/')}: ${error.message}`);
      } else {
        stats.passed++;
        assert.ok(c.mayPass, 'expected an error, the call succeeded');
        e.cleanup(result);
      }
      // The module keeps working: same result, and nothing leaked.
      const again = await run(e, e.args());
      assert.deepEqual(snapshot(again), references.get(e), 'the valid call gives a different result afterwards');
      e.cleanup(again);
      assert.equal(aw.memory().inUseBytes, base, `malloc'd bytes changed from ${base} to ${aw.memory().inUseBytes}`);
    } catch (err) {
      failures++;
      await t.test(`${e.name} / ${c.label}`, () => { throw err; });
    }
  }
  assert.equal(failures, 0, `${failures} of ${cases.length} hostile cases failed (see subtests)`);
});

test('disposed objects: every method throws ERR_DISPOSED, dispose twice is harmless', () => {
  const makers = {
    MultiheadAttention: () => new aw.MultiheadAttention(8, 2),
    Linear: () => new aw.Linear(3, 2), LayerNorm: () => new aw.LayerNorm(3), Embedding: () => new aw.Embedding(5, 3),
    TransformerEncoderLayer: () => new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 8 }),
    TransformerDecoderLayer: () => new aw.TransformerDecoderLayer(8, 2, { dimFeedforward: 8 }),
    TransformerEncoder: () => new aw.TransformerEncoder(new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 8 }), 1),
    TransformerDecoder: () => new aw.TransformerDecoder(new aw.TransformerDecoderLayer(8, 2, { dimFeedforward: 8 }), 1),
    Transformer: () => new aw.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 8 }),
    SinusoidalPositionalEncoding: () => new aw.SinusoidalPositionalEncoding(8),
    LearnedPositionalEmbedding: () => new aw.LearnedPositionalEmbedding(8, 8),
    PatchEmbedding: () => new aw.PatchEmbedding(1, 8, 4),
    RMSNorm: () => new aw.RMSNorm(8), RotaryPositionalEmbeddings: () => new aw.RotaryPositionalEmbeddings(8),
  };
  const x = f32([2, 3, 8]);
  let n = 0;
  for (const [name, make] of Object.entries(makers)) {
    const m = make();
    const sd = m.stateDict();
    m.dispose();
    const calls = {
      forward: () => (name === 'MultiheadAttention' ? m.forward(x, x, x)
        : ['TransformerDecoderLayer', 'TransformerDecoder', 'Transformer'].includes(name) ? m.forward(x, x) : m.forward(x)),
      loadStateDict: () => m.loadStateDict(sd), stateDict: () => m.stateDict(), parameterShapes: () => m.parameterShapes(),
    };
    for (const [method, call] of Object.entries(calls)) {
      assert.throws(call, (err) => err.code === 'ERR_DISPOSED' && err.message.includes(name) && err.message.includes('dispose'), `${name}.${method}`);
      n++;
    }
    m.dispose();
    m[Symbol.dispose]();
  }
  assert.ok(n >= 48);
});

test('disposed models: translate / classify throw ERR_DISPOSED', async () => {
  const t = await aw.loadTranslator(translatorBytes);
  t.dispose();
  assert.throws(() => t.translate('one', { to: 'fr' }), (err) => err.code === 'ERR_DISPOSED');
  const c = await aw.loadClassifier(vitBytes);
  c.dispose();
  assert.throws(() => c.classify(digit), (err) => err.code === 'ERR_DISPOSED');
  t.dispose(); c.dispose();
});

test('hostile table summary', () => {
  // Printed for the record (node --test shows diagnostics).
  console.log(`# hostile: ${stats.cases} cases, ${stats.threw} threw a coded error, ${stats.passed} succeeded (zero-size inputs)`);
  assert.ok(stats.cases >= 500, `only ${stats.cases} cases`);
});
