// The Protocol Buffers wire format, read by hand for SentencePiece's ModelProto (spm_model.js): a
// message is a run of (key, value) records, key = field number · 8 + wire type; wire type 0 is a
// varint, 1 eight bytes, 2 a varint length then that many bytes (strings, bytes, sub-messages), 5
// four bytes. Groups (3, 4) and types 6, 7 are refused (ModelProto has none). Not here: what any
// field means. Every error names the file and the field path being read.
import { invalid } from './json.js';

/**
 * The records of one message, in file order, to `visit(field, wire, a, b, at)` — wire 0: the varint's
 * low and high 32 bits (unsigned); wire 1 / 5: a the value's byte offset; wire 2: the value is
 * bytes[a, b) — or, without `visit`, as an array of { field, wire, value, at } (value: { lo, hi }, the
 * offset, or a subarray of the bytes). Throws ERR_INVALID_ARGUMENT on a truncated or malformed
 * record, naming `file` and `path` (the message being read).
 * @param {Uint8Array} bytes @param {string} file @param {string} path
 * @param {(field: number, wire: number, a: number, b: number, at: number) => void} [visit]
 */
export function readRecords(bytes, file, path, visit) {
  const out = [];
  const where = () => (path === '' ? '(top level)' : path);
  let i = 0;
  let lo = 0;
  let hi = 0;
  const varint = (what) => {
    lo = 0;
    hi = 0;
    for (let n = 0; ; n++) {
      if (i >= bytes.length) throw invalid(where(), `the protobuf ends inside a varint (${what}) at byte ${i} of ${bytes.length}: the file is truncated`, file);
      if (n === 10) throw invalid(where(), `a varint (${what}) longer than 10 bytes at byte ${i}: not a protobuf`, file);
      const b = bytes[i++];
      if (n < 4) lo |= (b & 127) << (7 * n);
      else if (n === 4) {
        lo |= (b & 15) << 28;
        hi |= (b & 127) >> 4;
      } else hi |= (b & 127) << (7 * n - 32);
      if (!(b & 128)) {
        lo >>>= 0;
        hi >>>= 0;
        return;
      }
    }
  };
  const emit = visit ?? ((field, wire, a, b, at) => {
    out.push({ field, wire, at, value: wire === 0 ? { lo: a, hi: b } : wire === 2 ? bytes.subarray(a, b) : a });
  });
  while (i < bytes.length) {
    const at = i;
    varint('a record key');
    const wire = lo & 7;
    const field = (lo >>> 3) + hi * 2 ** 29;
    if (field === 0) throw invalid(where(), `a record with field number 0 at byte ${at}: not a protobuf`, file);
    if (wire === 0) {
      varint(`field ${field}`);
      emit(field, wire, lo, hi, at);
    } else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      if (i + n > bytes.length) throw invalid(where(), `field ${field} needs ${n} bytes at byte ${i}, the file has ${bytes.length - i}: the file is truncated`, file);
      emit(field, wire, i, i + n, at);
      i += n;
    } else if (wire === 2) {
      varint(`the length of field ${field}`);
      if (hi !== 0 || lo > bytes.length - i) {
        throw invalid(where(), `field ${field} at byte ${at} says ${hi ? 'more than 2^32' : lo} bytes follow, the file has ${bytes.length - i}: the file is truncated or not a protobuf`, file);
      }
      const start = i;
      i += lo;
      emit(field, wire, start, i, at);
    } else {
      throw invalid(where(), `field ${field} at byte ${at} has wire type ${wire}${wire === 3 || wire === 4 ? ' (a group)' : ''}, which a SentencePiece model never has: not a SentencePiece model file`, file);
    }
  }
  return out;
}

/** The wire type each kind of field must have. */
const WIRE = { bool: 0, int32: 0, enum: 0, uint64: 0, float: 5, string: 2, bytes: 2, message: 2 };
const WIRE_NAMES = ['varint', '64-bit', 'length-delimited', 'group start', 'group end', '32-bit'];

/**
 * Reads a record's value as `kind` ('bool', 'int32', 'enum', 'uint64', 'float', 'string', 'bytes',
 * 'message'), checking its wire type: a known field written with another wire type is refused
 * (protobuf would skip it as unknown and read the file differently from what its writer meant).
 */
export function valueOf(record, kind, bytes, file, name) {
  if (record.wire !== WIRE[kind]) {
    throw invalid(name, `expected a ${WIRE_NAMES[WIRE[kind]]} ${kind} (wire type ${WIRE[kind]}), got wire type ${record.wire} at byte ${record.at}: not a SentencePiece model file`, file);
  }
  const v = record.value;
  switch (kind) {
    case 'bool': return v.lo !== 0 || v.hi !== 0;
    case 'int32': case 'enum': return v.lo | 0; // int32: the low 32 bits, two's complement (-1 is written as ten bytes)
    case 'uint64': return v.hi * 2 ** 32 + v.lo;
    case 'float': return new DataView(bytes.buffer, bytes.byteOffset + v, 4).getFloat32(0, true);
    case 'string': {
      try {
        return UTF8.decode(v);
      } catch {
        throw invalid(name, `expected UTF-8 text, got bytes that are not UTF-8 at byte ${record.at}`, file);
      }
    }
    default: return v; // bytes, message: the subarray
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
