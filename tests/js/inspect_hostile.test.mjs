// attnwasm/inspect on checkpoints the runtime refuses: every hostile header is refused with a code, and where
// aw.loadModel refuses the same files it is the same code and the same words — the header cases of
// load_hostile.test.mjs and safetensors.test.mjs, the fuzz corpus (tests/fuzz/corpus/safetensors), a shard index
// that does not match its shards, a tensor in two files — plus a differential run against the native reader
// (aw.loadSafetensors) over 4 000 mutated headers from a fixed seed, JSON syntax errors included (byte offsets). A source that cannot be read rejects as
// loadModel rejects: a shard the folder lacks, a name that leaves the folder (ERR_UNSAFE_PATH), a 404.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { inspect, readHeader } from '../../bindings/inspect/index.js';
import { lmConfig, lmTensors, safetensors, sharded } from './lm_checkpoint.mjs';

const aw = await init({ threads: 1 });
const config = lmConfig();
const tensors = lmTensors(config, { seed: 4 });
const bytes = safetensors(tensors);
const sh = sharded(tensors, { shards: 3 });
const [S1, S2, S3] = sh.names;
const INDEX = 'model.safetensors.index.json';
const enc = (o) => new TextEncoder().encode(typeof o === 'string' ? o : JSON.stringify(o));

/** A safetensors file of a header's text (or bytes) and `data` bytes of zeros. */
function file(header, data = 0, n = null) {
  const h = typeof header === 'string' || header instanceof Uint8Array ? (header instanceof Uint8Array ? header : enc(header)) : enc(header);
  const out = new Uint8Array(8 + h.byteLength + data);
  new DataView(out.buffer).setBigUint64(0, BigInt(n ?? h.byteLength), true);
  out.set(h, 8);
  return out;
}

/** `b` with its header replaced by `header` (an object), the data kept. */
function reheader(b, header, n = null) {
  const len = Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
  const h = enc(header);
  const out = file(h, b.byteLength - 8 - len, n);
  out.set(b.subarray(8 + len), 8 + h.byteLength);
  return out;
}
const headerOf = (b) => JSON.parse(new TextDecoder().decode(b.subarray(8, 8 + Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true)))));

/** inspect and loadModel of the same source: inspect refuses with a code; loadModel refuses with the same code and words. */
async function sameRefusal(source, options, what) {
  const r = await inspect(source, options);
  assert.ok(r.refused, `${what}: inspect accepted it`);
  assert.match(r.refused.code, /^ERR_[A-Z_]+$/, what);
  const e = await aw.loadModel(source, options).then((m) => { m.dispose(); return null; }, (x) => x);
  assert.ok(e, `${what}: loadModel accepted what inspect refused (${r.refused.message})`);
  assert.deepEqual(r.refused, { code: e.code, message: e.message }, what);
  return r;
}

test('headers that lie, as load_hostile.test.mjs has them: the loader\'s code and words, from bytes, a Map and a stream', async () => {
  const h = headerOf(bytes);
  const names = Object.keys(h).filter((k) => k !== '__metadata__');
  const last = names.at(-1), first = names[0];
  const [b0, e0] = h[last].data_offsets;
  const [a0, a1] = h[first].data_offsets;
  const cases = {
    'offsets past the end': reheader(bytes, { ...h, [last]: { ...h[last], shape: [h[last].shape[0] * 2, h[last].shape[1]], data_offsets: [b0, b0 + 2 * (e0 - b0)] } }),
    'a header length past the file': reheader(bytes, h, 10 ** 7),
    'a header length over the limit': reheader(bytes, h, 2 ** 40),
    overlap: reheader(bytes, { ...h, [names[1]]: { ...h[names[1]], data_offsets: [a1 - 4, a1 - 4 + h[names[1]].data_offsets[1] - h[names[1]].data_offsets[0]] } }),
    hole: reheader(bytes, { ...h, [first]: { ...h[first], data_offsets: [a0 + 4, a1 + 4] } }),
    'not JSON': file('{"a": ['),
    'an empty file': new Uint8Array(0),
    'five bytes': new Uint8Array(5),
    'bytes past the last tensor': (() => { const b = new Uint8Array(bytes.byteLength + 3); b.set(bytes); return b; })(),
  };
  for (const [what, b] of Object.entries(cases)) {
    await sameRefusal(b, { config }, what);
    // A shard of a Map: named by its file.
    const r = await sameRefusal(new Map([...sh.files, [S3, b], ['config.json', enc(config)]]), undefined, `${what} (a shard)`);
    assert.ok(r.refused.message.startsWith(`source: ${S3}: safetensors: `), r.refused.message);
  }
  // A stream (size unknown): the header length past what the stream holds; the stream is cancelled.
  let cancelled = false;
  const stream = new ReadableStream({ start(c) { c.enqueue(reheader(bytes, h, 10 ** 7).subarray(0, 5000)); c.close(); }, cancel() { cancelled = true; } });
  const r = await inspect(stream, { config });
  assert.match(r.refused.message, /^source: source: safetensors: the header \(10000000 bytes\) is not all in the 5000 bytes given$/);
  // A long stream is cancelled after its header: nothing past it is read.
  let pulled = 0;
  const long = new ReadableStream({
    pull(c) { pulled++; c.enqueue(bytes.slice((pulled - 1) * 512, pulled * 512)); if (pulled * 512 >= bytes.byteLength) c.close(); },
    cancel() { cancelled = true; },
  });
  const ok = await inspect(long, { config });
  assert.equal(ok.refused, null);
  assert.ok(cancelled && pulled * 512 < bytes.byteLength / 4, `${pulled} pieces of 512 bytes read of ${bytes.byteLength}`);
});

test('safetensors.test.mjs\'s corrupt headers and the fuzz corpus: inspect refuses what the native reader refuses, in its words', async () => {
  const f32 = (n) => n * 4;
  const bad = {
    'malformed JSON': file('{"a": {"dtype": "F32",'),
    'non-UTF-8 header': file(Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])),
    'unknown dtype': file({ w: { dtype: 'F8_E4M3', shape: [1], data_offsets: [0, 1] } }, 1),
    'size disagrees with shape': file({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, f32(2)),
    'duplicate names': file('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', 8),
    'negative shape': file({ w: { dtype: 'F32', shape: [-1], data_offsets: [0, 4] } }, 4),
    'a shape of 2.0': file('{"w":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}', 8),
    'metadata not strings': file({ __metadata__: { k: 1 } }),
    'header not an object': file([1, 2]),
    'a leading space': file(' {}'),
    'a byte order mark': file(Uint8Array.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])),
    'an unpaired surrogate': file('{"\\ud800":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4),
    'nesting 65 deep': file(`{"w":${'['.repeat(65)}${']'.repeat(65)}}`),
    'a dimension past 2^29': file({ w: { dtype: 'F32', shape: [0, 2 ** 29 + 1], data_offsets: [0, 0] } }),
  };
  for (const [what, b] of Object.entries(bad)) {
    let native = null;
    try { aw.loadSafetensors(b); } catch (e) { native = e; }
    assert.ok(native, `${what}: the native reader accepted it`);
    assert.throws(() => readHeader(b, b.byteLength), (e) => e.code === native.code && e.message === native.message.replace(/^bytes: /, ''), what);
    await sameRefusal(b, { config }, what);
  }
  const dir = new URL('../fuzz/corpus/safetensors/', import.meta.url);
  for (const name of readdirSync(dir)) {
    const b = new Uint8Array(readFileSync(new URL(name, dir)));
    const r = await inspect(b, { config });
    if (name.startsWith('valid-') || !r.refused) continue;
    await sameRefusal(b, { config }, `corpus ${name}`);
  }
});

test('4 000 mutated headers: the same refusal, code and words, as the native reader', () => {
  let s = 2024;
  const rnd = (n) => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s % n; };
  const vals = ['0', '1', '2', '4', '8', '2.0', '-1', '1e1', '"2"', 'null', '[]', '{}', 'true', '536870913', '9007199254740993', '1E400', '[1]'];
  const dtypes = ['"F32"', '"F16"', '"BF16"', '"F64"', '"I64"', '"U8"', '"F8_E4M3"', '1'];
  const tokens = ['{', '}', '[', ']', ',', ':', '"', '0', '2.0', '-1', 'null', '\\u', '\\ud800', '\u00e9', '\x01'];
  let agreed = 0, accepted = 0;
  for (let k = 0; k < 4000; k++) {
    const parts = [];
    let at = 0;
    for (let i = 0; i < 1 + rnd(3); i++) {
      const shape = Array.from({ length: rnd(4) }, () => (rnd(4) ? String(1 + rnd(3)) : vals[rnd(vals.length)]));
      const bytesOf = shape.reduce((a, d) => a * (Number(d) || 0), 1) * 4;
      const fields = [`"dtype":${rnd(4) ? '"F32"' : dtypes[rnd(dtypes.length)]}`, `"shape":[${shape.join(',')}]`,
        `"data_offsets":[${rnd(6) ? at : vals[rnd(vals.length)]},${rnd(6) ? at + bytesOf : vals[rnd(vals.length)]}]`];
      if (rnd(15) === 0) fields.splice(rnd(3), 1);
      if (rnd(15) === 0) fields.push(rnd(2) ? '"extra":1' : fields[0]);
      at += bytesOf;
      parts.push(`"${rnd(10) ? `t${i}` : 't0'}":${rnd(30) ? `{${fields.join(',')}}` : vals[rnd(vals.length)]}`);
    }
    if (rnd(3) === 0) parts.splice(rnd(parts.length + 1), 0, ['"__metadata__":{"a":"b"}', '"__metadata__":{"a":1}', '"__metadata__":[]', '"__metadata__":{"a":"b","a":"c"}'][rnd(4)]);
    let text = `{${parts.join(',')}}`;
    if (k % 4 === 3) {  // a quarter mangled as text
      const p = rnd(text.length + 1);
      text = text.slice(0, p) + tokens[rnd(tokens.length)] + text.slice(p + rnd(3));
    }
    const data = Number.isFinite(at) ? Math.min(1e5, Math.max(0, at + (rnd(6) ? 0 : rnd(9) - 4))) : 0;
    const b = file(text, data);
    let js = 'accepted', native = 'accepted';
    try { readHeader(b, b.byteLength); } catch (e) { js = `${e.code} ${e.message}`; }
    try { aw.loadSafetensors(b); } catch (e) { native = `${e.code} ${e.message.replace(/^bytes: /, '')}`; }
    assert.equal(js, native, text);
    agreed++;
    if (js === 'accepted') accepted++;
  }
  assert.ok(accepted > 300 && agreed - accepted > 3000, `${accepted} accepted of ${agreed}`);
});

test('an index that does not match its shards, a tensor in two files: the loader\'s code and words', async () => {
  const wm = sh.index.weight_map;
  const withIndex = (map, patch = {}) => new Map([...sh.files, ['config.json', enc(config)], [INDEX, enc({ metadata: {}, weight_map: map })], ...Object.entries(patch)]);
  const moved = Object.keys(wm).find((n) => wm[n] === S2);
  const { [moved]: gone, ...rest } = wm;
  await sameRefusal(withIndex({ ...wm, 'model.layers.0.extra.weight': S1 }), undefined, 'a tensor no shard holds');
  await sameRefusal(withIndex({ ...wm, [moved]: S3 }), undefined, 'the wrong shard');
  await sameRefusal(withIndex(rest), undefined, 'a tensor left out');
  await sameRefusal(withIndex({ ...wm, [moved]: 3 }), undefined, 'a file name that is a number');
  const dup = tensors.find((t) => wm[t.name] === S1);
  const s3 = safetensors([...tensors.filter((t) => wm[t.name] === S3), dup]);
  await sameRefusal(new Map([...sh.files, ['config.json', enc(config)], [S3, s3]]), undefined, 'a tensor in two shards');
  // A config.json of no family, an own config of none.
  await sameRefusal(bytes, { config: { ...config, model_type: 'gpt2' } }, 'model_type gpt2');
  await sameRefusal(bytes, { config: '{"model_type": "llama", "model_type": "qwen2"}' }, 'a key twice');
  await sameRefusal(bytes, undefined, 'no config');
  await sameRefusal(safetensors(tensors, { metadata: { 'attnwasm.config': '{"model": "gpt"}' } }), undefined, 'an own config of no family');
});

test('sources that cannot be read reject as loadModel rejects; arguments are checked', async () => {
  const m = new Map([...sh.files, ['config.json', enc(config)]]);
  m.delete(S2);
  const rejects = async (source, what) => {
    const e = await aw.loadModel(source).then(() => null, (x) => x);
    await assert.rejects(inspect(source), (x) => x.code === e.code && x.message === e.message, what);
  };
  await rejects(m, 'a missing shard');
  await rejects(new Map([[INDEX, enc({ weight_map: { w: '../../private/model.safetensors' } })]]), 'a shard outside the folder');
  await rejects(new Map([['config.json', enc(config)]]), 'no weights');
  await rejects('/nonexistent/model.safetensors', 'no such file');
  await rejects(new Response('gone', { status: 410 }), 'a 410');
  // A file of the folder named outside it (a map's key) is listed, never opened; nothing is refused for it.
  const listed = await inspect(new Map([['model.safetensors', bytes], ['config.json', enc(config)], ['../secret.txt', '/etc/passwd']]));
  assert.deepEqual(listed.files.find((f) => f.name === '../secret.txt'), { name: '../secret.txt', role: 'other', bytes: null });
  assert.equal(listed.refused, null);
  await assert.rejects(inspect(bytes, { dtype: 'q8' }), (e) => e instanceof TypeError && /unknown option 'dtype'/.test(e.message));
  await assert.rejects(inspect(bytes, { probe: 1 }), (e) => e instanceof TypeError && /^probe: /.test(e.message));
  await assert.rejects(inspect(bytes, { readTimeoutMs: 0 }), (e) => e.code === 'ERR_OUT_OF_RANGE');
  await assert.rejects(inspect(bytes, { config: 5 }), (e) => e instanceof TypeError && /^config: /.test(e.message));
  await assert.rejects(inspect(42), (e) => e instanceof TypeError && /^source: expected/.test(e.message));
  const c = new AbortController();
  c.abort(new Error('stop'));
  await assert.rejects(inspect(bytes, { config, signal: c.signal }), /stop/);
});
