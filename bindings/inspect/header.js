// A safetensors file's header checked in JS from the file's first 8 + N bytes only: the standalone level of
// inspect, with the runtime reader's rules and messages (src/io/safetensors.cpp ParseSafetensorsHeader; the format
// at the top of src/io/safetensors.h): N within limits and the file, every entry exactly { dtype, shape,
// data_offsets } in range, unique names and metadata keys, tensors that tile the data. A refusal is an
// AttnWasmError ERR_INVALID_ARGUMENT starting "safetensors: ". With a runtime the native reader answers instead.
import { AttnWasmError } from '../errors.js';
import { parseTree, asUint53 } from './json_tree.js';

/** Largest header accepted (the reference implementation's limit, src/io/safetensors.h kStMaxHeaderBytes). */
export const MAX_HEADER_BYTES = 100_000_000;
/** Most elements of one tensor, and of one of its dimensions (src/core/tensor.h kMaxElements). */
export const MAX_ELEMENTS = 2 ** 29;
/** The format's dtypes and their bytes per element, in the order the runtime's messages list them. */
export const DTYPE_BYTES = Object.freeze({ F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 });
/** The dtypes a model's weights may have (the others are integer buffers). */
export const FLOAT_DTYPES = Object.freeze(['F64', 'F32', 'F16', 'BF16']);

const refuse = (message) => new AttnWasmError('ERR_INVALID_ARGUMENT', `safetensors: ${message}`);
const utf8 = new TextEncoder();

/** A name or key quoted for a message, cut after 200 bytes (hostile names may be huge). */
export function quote(s) {
  const b = utf8.encode(s);
  return `'${b.byteLength <= 200 ? s : `${new TextDecoder().decode(b.subarray(0, 200))}...`}'`;
}

/** "number 1.5", "string 'x'", "array", …: a JSON node in a message. */
function describeNode(v) {
  if (v.type === 'number') return `number ${v.str.slice(0, 40)}`;
  if (v.type === 'string') return `string ${quote(v.str)}`;
  return v.type;
}

const range = (b, e) => `[${b}, ${e})`;
/** A shape as the runtime writes one: "(2, 3)", "(4,)", "()". */
export const shapeText = (shape) => `(${shape.join(', ')}${shape.length === 1 ? ',' : ''})`;

/**
 * The header length N from a file's first bytes (`first`, at least 8 of them to succeed), checked against the
 * limit and, when `size` (the file's bytes) is known, the file. Then the file's first 8 + N bytes are its header.
 * @param {Uint8Array} first @param {number|null} size
 * @returns {number}
 */
export function headerLength(first, size) {
  if (first.byteLength < 8) throw refuse(`file is ${first.byteLength} bytes, shorter than the 8-byte header length`);
  const n = new DataView(first.buffer, first.byteOffset, 8).getBigUint64(0, true);
  if (n > BigInt(MAX_HEADER_BYTES)) throw refuse(`header length ${n} is over the limit of ${MAX_HEADER_BYTES} bytes`);
  if (size !== null && Number(n) > size - 8) throw refuse(`header length ${n} runs past the end of the file (${size} bytes)`);
  return Number(n);
}

/**
 * A file described by its header: { tensors: [{ name, dtype, shape, begin, end }] (header order, offsets
 * absolute in the file), metadata: { key: text } ("__metadata__"), dataStart: 8 + N, dataSize: where the
 * tensors end, from dataStart }. `head`: the file's first bytes (8 + N of them, or all of a shorter file);
 * `size`: the file's bytes, or null when not known (a download: the tensors must still tile the data from its
 * start, and the file's end is checked by the loader when it reads the data). Owner: the caller.
 * @param {Uint8Array} head @param {number|null} size
 */
export function readHeader(head, size) {
  const n = headerLength(head, size);
  if (n > head.byteLength - 8) {
    throw refuse(size === null || size > head.byteLength
      ? `the header (${n} bytes) is not all in the ${head.byteLength} bytes given`
      : `header length ${n} runs past the end of the file (${head.byteLength} bytes)`);
  }
  // The reference implementation requires the '{' first (no leading spaces, no byte order mark).
  if (n === 0 || head[8] !== 0x7b) throw refuse("header must be a JSON object starting with '{'");
  let root;
  try {
    root = parseTree(head.subarray(8, 8 + n));
  } catch (e) {
    throw refuse(`header is not valid JSON: ${e.message} of the header`);
  }
  if (root.type !== 'object') throw refuse(`header must be a JSON object, got ${describeNode(root)}`);
  const dataStart = 8 + n;
  const known = size !== null;
  const dataBytes = known ? size - dataStart : 2 ** 62;
  const tensors = [];
  let metadata = null;
  for (const m of root.members) {
    if (m.key === '__metadata__') {
      if (metadata) throw refuse('duplicate __metadata__');
      metadata = readMetadata(m.value);
      continue;
    }
    tensors.push(readEntry(m.key, m.value, dataBytes));
  }
  const repeated = firstRepeated(tensors.map((t) => t.name));
  if (repeated !== null) throw refuse(`duplicate tensor name ${quote(repeated)}`);
  const dataSize = checkLayout(tensors, known ? dataBytes : null);
  for (const t of tensors) {
    t.begin += dataStart;
    t.end += dataStart;
  }
  return { tensors, metadata: Object.fromEntries(metadata ?? []), dataStart, dataSize };
}

/** One entry "name": { dtype, shape, data_offsets } → { name, dtype, shape, begin, end }, offsets from the data's start. */
function readEntry(name, v, dataBytes) {
  const bad = (m) => refuse(`tensor ${quote(name)}: ${m}`);
  if (v.type !== 'object') throw bad(`entry must be an object with dtype, shape and data_offsets, got ${describeNode(v)}`);
  const f = {};
  for (const { key, value } of v.members) {
    if (key !== 'dtype' && key !== 'shape' && key !== 'data_offsets') throw bad(`unexpected field ${quote(key)} (expected exactly dtype, shape, data_offsets)`);
    if (f[key]) throw bad(`duplicate field ${quote(key)}`);
    f[key] = value;
  }
  for (const k of ['dtype', 'shape', 'data_offsets']) if (!f[k]) throw bad(`missing field '${k}'`);
  if (f.dtype.type !== 'string') throw bad(`dtype must be a string, got ${describeNode(f.dtype)}`);
  const dtype = f.dtype.str;
  if (!Object.hasOwn(DTYPE_BYTES, dtype)) throw bad(`unknown dtype ${quote(dtype)} (known: ${Object.keys(DTYPE_BYTES).join(', ')})`);
  if (f.shape.type !== 'array') throw bad(`shape must be an array, got ${describeNode(f.shape)}`);
  const shape = f.shape.items.map((d, i) => {
    const x = asUint53(d);
    if (x === null) throw bad(`shape[${i}] must be a non-negative integer <= 2^53, got ${describeNode(d)}`);
    return x;
  });
  const numel = elements(shape);
  if (numel === null) throw bad(`shape ${shapeText(shape)} is too large (limit: 2^29 elements and 2^29 per dimension)`);
  const o = f.data_offsets;
  if (o.type !== 'array' || o.items.length !== 2) {
    throw bad(`data_offsets must be an array [begin, end], got ${o.type === 'array' ? `an array of ${o.items.length} elements` : describeNode(o)}`);
  }
  const [begin, end] = o.items.map((d, i) => {
    const x = asUint53(d);
    if (x === null) throw bad(`data_offsets[${i}] must be a non-negative integer <= 2^53, got ${describeNode(d)}`);
    return x;
  });
  if (begin > end) throw bad(`data_offsets ${range(begin, end)}: begin is after end`);
  if (end > dataBytes) throw bad(`data_offsets ${range(begin, end)} run past the end of the data buffer (${dataBytes} bytes)`);
  const need = numel * DTYPE_BYTES[dtype];
  if (end - begin !== need) {
    throw bad(`data_offsets ${range(begin, end)} hold ${end - begin} bytes, but dtype ${dtype} and shape ${shapeText(shape)} need ${need}`);
  }
  return { name, dtype, shape, begin, end };
}

/** A shape's elements, or null past 2^29 (in all, or in one dimension even when another is 0). */
export function elements(shape) {
  if (shape.some((d) => d > MAX_ELEMENTS)) return null;
  let n = 1;
  for (const d of shape) {
    n *= d;
    if (n > MAX_ELEMENTS) return null;  // as the runtime counts: past the limit on the way, whatever follows
  }
  return n;
}

/** "__metadata__": an object of strings, keys unique → [[key, text]] in order. */
function readMetadata(v) {
  if (v.type !== 'object') throw refuse(`__metadata__ must be an object of strings, got ${describeNode(v)}`);
  const pairs = v.members.map(({ key, value }) => {
    if (value.type !== 'string') throw refuse(`__metadata__ value of ${quote(key)} must be a string, got ${describeNode(value)}`);
    return [key, value.str];
  });
  const repeated = firstRepeated(pairs.map(([k]) => k));
  if (repeated !== null) throw refuse(`duplicate __metadata__ key ${quote(repeated)}`);
  return pairs;
}

/** The first (in sorted order) of the strings that occurs twice, or null. */
function firstRepeated(names) {
  const sorted = [...names].sort();
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return sorted[i];
  return null;
}

/**
 * Sorted by (begin, end), the tensors must tile the data from 0: each starts where the one before ends, and
 * the last ends at `dataBytes` when that is known. Returns where they end.
 */
function checkLayout(tensors, dataBytes) {
  const order = tensors.map((t, i) => i).sort((a, b) => tensors[a].begin - tensors[b].begin || tensors[a].end - tensors[b].end || a - b);
  let covered = 0, prev = null;
  for (const i of order) {
    const t = tensors[i];
    if (t.begin < covered) throw refuse(`tensors ${quote(prev.name)} at ${range(prev.begin, prev.end)} and ${quote(t.name)} at ${range(t.begin, t.end)} overlap`);
    if (t.begin > covered) throw refuse(`bytes ${range(covered, t.begin)} of the data buffer are not covered by any tensor (a hole before tensor ${quote(t.name)})`);
    covered = t.end;
    prev = t;
  }
  if (dataBytes !== null && covered !== dataBytes) {
    throw refuse(`bytes ${range(covered, dataBytes)} at the end of the data buffer (${dataBytes} bytes) are not covered by any tensor`);
  }
  return covered;
}
