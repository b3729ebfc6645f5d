// The demo models load straight from safetensors bytes into their parameters
// (bindings/runtime.js _withFile, src/io/load_params.h): a file whose tensors
// do not fit the model is refused with loadStateDict's codes and messages,
// nothing leaks, and the instance keeps working; stacks copy their layer
// natively (TransformerEncoder / TransformerDecoder).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../bindings/index.js';

const ROOT = new URL('../../', import.meta.url);
const aw = await init({ threads: 1 });
const translatorBytes = new Uint8Array(readFileSync(new URL('models/translator/translator.safetensors', ROOT)));
const vitBytes = new Uint8Array(readFileSync(new URL('models/vit/vit.safetensors', ROOT)));

/** Parses a safetensors file into { header, data } (header: the JSON object). */
function parse(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  return { header, data: bytes.subarray(8 + n) };
}
/** Rebuilds a file from { name: { dtype, shape, bytes } } and metadata. */
function build(tensors, metadata) {
  const header = { __metadata__: metadata };
  let off = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [off, off + t.bytes.byteLength] };
    off += t.bytes.byteLength;
  }
  const h = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + h.byteLength + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.byteLength), true);
  out.set(h, 8);
  let p = 8 + h.byteLength;
  for (const t of Object.values(tensors)) { out.set(t.bytes, p); p += t.bytes.byteLength; }
  return out;
}
/** The file's tensors as { name: { dtype, shape, bytes } } and its metadata. */
function tensorsOf(bytes) {
  const { header, data } = parse(bytes);
  const out = {};
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    out[name] = { dtype: e.dtype, shape: e.shape, bytes: data.slice(e.data_offsets[0], e.data_offsets[1]) };
  }
  return { tensors: out, metadata: header.__metadata__ };
}

async function rejects(load, code, pattern) {
  const base = aw.memory().inUseBytes;
  await assert.rejects(load, (e) => {
    assert.equal(e.code, code, e.message);
    assert.match(e.message, pattern);
    return true;
  });
  assert.equal(aw.memory().inUseBytes, base, 'a refused model file leaves no native memory behind');
}

test('a translator file with an extra, a missing or a mis-shaped tensor is refused by name', async () => {
  const { tensors, metadata } = tensorsOf(translatorBytes);
  const extra = build({ ...tensors, bogus: { dtype: 'F32', shape: [1], bytes: new Uint8Array(4) } }, metadata);
  await rejects(aw.loadTranslator(extra), 'ERR_STATE_DICT', /loading state_dict for Translator: unexpected key\(s\): "bogus"/);
  const name = Object.keys(tensors).find((k) => k.endsWith('linear1.weight'));
  const { [name]: gone, ...rest } = tensors;
  await rejects(aw.loadTranslator(build(rest, metadata)), 'ERR_STATE_DICT', new RegExp(`missing key\\(s\\): "${name.replace(/\./g, '\\.')}"`));
  const t = tensors[name];
  const reshaped = { ...tensors, [name]: { ...t, shape: [t.shape[1], t.shape[0]] } };
  await rejects(aw.loadTranslator(build(reshaped, metadata)), 'ERR_STATE_DICT', new RegExp(`size mismatch for ${name.replace(/\./g, '\\.')}`));
  // An integer tensor where a float one belongs: a dtype error naming it.
  const n = t.shape[0] * t.shape[1];
  const ints = { ...tensors, [name]: { dtype: 'I32', shape: t.shape, bytes: new Uint8Array(4 * n) } };
  await rejects(aw.loadTranslator(build(ints, metadata)), 'ERR_DTYPE', new RegExp(`${name.replace(/\./g, '\\.')}: expected a float tensor`));
  // The instance keeps working: the real file loads and translates.
  const tr = await aw.loadTranslator(translatorBytes);
  assert.equal(tr.translate('forty-two', { to: 'fr' }).text, 'quarante-deux');
  tr.dispose();
});

test('a classifier file with a tensor no part takes is refused, its parts freed', async () => {
  const { tensors, metadata } = tensorsOf(vitBytes);
  const extra = build({ ...tensors, 'decoder.bogus': { dtype: 'F32', shape: [2], bytes: new Uint8Array(8) } }, metadata);
  await rejects(aw.loadClassifier(extra), 'ERR_STATE_DICT', /unexpected key\(s\) for a classifier: "decoder\.bogus"/);
  const name = Object.keys(tensors).find((k) => k.startsWith('encoder.layers.1.'));
  const { [name]: gone, ...rest } = tensors;
  await rejects(aw.loadClassifier(build(rest, metadata)), 'ERR_STATE_DICT', /missing key\(s\)/);
  const clf = await aw.loadClassifier(vitBytes);
  assert.equal(clf.classify(new Float32Array(784)).probabilities.length, 10);
  clf.dispose();
});

test('F16 and F32 copies of one model load to the same parameters', async () => {
  // The shipped translator is F16; widen every tensor to F32 in JS and compare outputs bit for bit.
  const { tensors, metadata } = tensorsOf(translatorBytes);
  const f32 = {};
  for (const [name, t] of Object.entries(tensors)) {
    if (t.dtype !== 'F16') { f32[name] = t; continue; }
    const h = new Uint16Array(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength / 2);
    const out = new Float32Array(h.length);
    for (let i = 0; i < h.length; i++) {
      const s = h[i] >> 15 ? -1 : 1, e = (h[i] >> 10) & 31, m = h[i] & 1023;
      out[i] = e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity) : s * (1 + m / 1024) * 2 ** (e - 15);
    }
    f32[name] = { dtype: 'F32', shape: t.shape, bytes: new Uint8Array(out.buffer) };
  }
  assert.ok(Object.values(tensors).some((t) => t.dtype === 'F16'), 'the shipped translator stores F16');
  const a = await aw.loadTranslator(translatorBytes), b = await aw.loadTranslator(build(f32, metadata));
  for (const p of ['seven hundred eleven', 'a thousand', 'ninety-nine thousand nine hundred ninety-nine']) {
    const x = a.translate(p, { to: 'de' }), y = b.translate(p, { to: 'de' });
    assert.equal(x.text, y.text);
    assert.deepEqual(x.logits ?? null, y.logits ?? null);
  }
  a.dispose();
  b.dispose();
});

test('a TransformerEncoder copies its layer natively: every layer equal, the layer itself unchanged', () => {
  const layer = new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 });
  const norm = new aw.LayerNorm(8);
  const sd = layer.stateDict();
  const enc = new aw.TransformerEncoder(layer, 3, { norm });
  const esd = enc.stateDict();
  for (let i = 0; i < 3; i++) for (const [k, v] of Object.entries(sd)) assert.deepEqual(esd[`layers.${i}.${k}`].data, v.data, `layers.${i}.${k}`);
  assert.deepEqual(esd['norm.weight'].data, norm.stateDict().weight.data);
  // Copies, not shared: changing the stack leaves the layer as it was.
  enc.loadStateDict(Object.fromEntries(Object.entries(esd).map(([k, v]) => [k, { data: new Float32Array(v.data.length).fill(0.5), shape: v.shape }])));
  assert.deepEqual(layer.stateDict()['linear1.weight'].data, sd['linear1.weight'].data);
  const dec = new aw.TransformerDecoder(new aw.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 }), 2);
  assert.equal(Object.keys(dec.stateDict()).filter((k) => k.startsWith('layers.1.')).length, Object.keys(dec.stateDict()).length / 2);
  for (const m of [layer, norm, enc, dec]) m.dispose();
});
