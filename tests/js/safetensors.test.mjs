// aw.loadSafetensors from JS: conversions, metadata, and every corrupt-file
// case of the format giving a specific ERR_INVALID_ARGUMENT naming the
// problem (and the tensor), with the module working afterwards. (The C++
// reader has its own exhaustive tests in tests/io/safetensors_test.cpp.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../bindings/index.js';

const aw = await init();
const enc = new TextEncoder();

/** Builds a safetensors file from a header object and a data buffer. */
function file(header, data = new Uint8Array(0), { rawHeader } = {}) {
  const h = rawHeader ?? enc.encode(JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

const f32 = (...v) => new Uint8Array(Float32Array.from(v).buffer);
const u16 = (...v) => new Uint8Array(Uint16Array.from(v).buffer);
const valid = () => file({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, __metadata__: { k: 'v' } }, f32(1.5, -2));

test('reads F32, F16, BF16, BOOL and I64 with metadata', () => {
  const data = new Uint8Array([...f32(1.5, -2), ...u16(0x3c00, 0xc000, 0x7c00, 0x0001), ...u16(0x3f80, 0xc040), 1, 0, ...new Uint8Array(new BigInt64Array([7n, -3n]).buffer)]);
  const bytes = file({
    a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] },
    h: { dtype: 'F16', shape: [2, 2], data_offsets: [8, 16] },
    b: { dtype: 'BF16', shape: [2], data_offsets: [16, 20] },
    m: { dtype: 'BOOL', shape: [2], data_offsets: [20, 22] },
    i: { dtype: 'I64', shape: [2], data_offsets: [22, 38] },
    __metadata__: { 'attnwasm.config': '{"x":1}' },
  }, data);
  const { tensors, metadata } = aw.loadSafetensors(bytes, { metadata: true });
  assert.deepEqual(Array.from(tensors.a.data), [1.5, -2]);
  assert.deepEqual(Array.from(tensors.h.data), [1, -2, Infinity, 2 ** -24]);
  assert.deepEqual(tensors.h.shape, [2, 2]);
  assert.deepEqual(Array.from(tensors.b.data), [1, -3]);
  assert.ok(tensors.m.data instanceof Uint8Array);
  assert.deepEqual(Array.from(tensors.m.data), [1, 0]);
  assert.ok(tensors.i.data instanceof Int32Array);
  assert.deepEqual(Array.from(tensors.i.data), [7, -3]);
  assert.equal(metadata['attnwasm.config'], '{"x":1}');
  assert.deepEqual(Object.keys(aw.loadSafetensors(bytes)), ['a', 'h', 'b', 'm', 'i']);
});

const bad = [
  ['shorter than 8 bytes', () => new Uint8Array(5), /safetensors: file is 5 bytes/],
  ['header length beyond the file', () => { const b = valid(); new DataView(b.buffer).setBigUint64(0, 10000n, true); return b; }, /header length 10000 runs past the end of the file/],
  ['malformed JSON', () => file(null, new Uint8Array(0), { rawHeader: enc.encode('{"a": {"dtype": "F32",') }), /header is not valid JSON/],
  ['non-UTF-8 header', () => file(null, new Uint8Array(0), { rawHeader: Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) }), /safetensors: header is not valid JSON: .*UTF-8/],
  ['unknown dtype', () => file({ w: { dtype: 'F8_E4M3', shape: [1], data_offsets: [0, 1] } }, new Uint8Array(1)), /tensor 'w': unknown dtype 'F8_E4M3' \(known: /],
  ['offsets beyond the data', () => file({ w: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, f32(1)), /tensor 'w': data_offsets \[0, 8\) run past the end of the data buffer/],
  ['size disagrees with shape', () => file({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, f32(1, 2)), /tensor 'w': data_offsets \[0, 8\) hold 8 bytes/],
  ['overlapping tensors', () => file({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }, f32(1, 2)), /tensors 'a' at \[0, 8\) and 'b' at \[4, 8\) overlap/],
  ['hole in the data', () => file({ a: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }, f32(1, 2)), /bytes \[0, 4\) .*not/],
  ['duplicate names', () => file(null, f32(1, 2), { rawHeader: enc.encode('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}') }), /duplicate tensor name 'a'/],
  ['negative shape', () => file({ w: { dtype: 'F32', shape: [-1], data_offsets: [0, 4] } }, f32(1)), /tensor 'w': shape\[0\]/],
  ['metadata not strings', () => file({ __metadata__: { k: 1 } }), /__metadata__ value of 'k' must be a string/],
  ['header not an object', () => file([1, 2]), /header must be a JSON object/],
  ['I64 out of int32', () => file({ i: { dtype: 'I64', shape: [1], data_offsets: [0, 8] } }, new Uint8Array(new BigInt64Array([1n << 40n]).buffer)), /tensor 'i': I64 value 1099511627776 at index 0/],
];

for (const [name, make, re] of bad) {
  test(`corrupt file: ${name}`, () => {
    assert.throws(() => aw.loadSafetensors(make()), (e) => {
      assert.equal(e.code, 'ERR_INVALID_ARGUMENT', e.message);
      assert.match(e.message, re);
      return true;
    });
    assert.deepEqual(Array.from(aw.loadSafetensors(valid()).a.data), [1.5, -2]);
  });
}

test('bytes must be bytes', () => {
  assert.throws(() => aw.loadSafetensors('model.safetensors'), { code: 'ERR_INVALID_TYPE' });
});

test('a loaded state dict feeds loadStateDict; integer tensors are rejected by name', () => {
  const lin = new aw.Linear(2, 1);
  const sd = aw.loadSafetensors(file({ weight: { dtype: 'F16', shape: [1, 2], data_offsets: [0, 4] }, bias: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }, new Uint8Array([...u16(0x3c00, 0x4000), ...f32(0.5)])));
  lin.loadStateDict(sd);
  assert.deepEqual(Array.from(lin.forward({ data: Float32Array.from([3, 4]), shape: [2] }).data), [3 + 8 + 0.5]);
  const bad2 = aw.loadSafetensors(file({ weight: { dtype: 'I32', shape: [1, 2], data_offsets: [0, 8] }, bias: { dtype: 'F32', shape: [1], data_offsets: [8, 12] } }, new Uint8Array(12)));
  assert.throws(() => lin.loadStateDict(bad2), (e) => e.code === 'ERR_DTYPE' && /stateDict\['weight'\]\.data: expected a Float32Array, got Int32Array/.test(e.message));
  lin.dispose();
});
