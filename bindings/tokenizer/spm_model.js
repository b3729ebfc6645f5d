// A SentencePiece model file (ModelProto: source.spm, target.spm, spiece.model,
// sentencepiece.bpe.model) read into plain data: the pieces with their scores and types, the
// trainer_spec fields encoding depends on, the normalizer and denormalizer specs (the precompiled
// charsmap as bytes) and the self-test samples. The checks are those sentencepiece makes when it
// loads a model (model_interface.cc InitializePieces), so a file it refuses is refused here, with
// the file and the field named. Not here: the normalizer (spm_normalizer.js), the models.
import { readRecords, valueOf } from './protobuf.js';
import { invalid, unsupported } from './json.js';

/** ModelProto.SentencePiece.Type. */
export const NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6;
const TYPE_NAMES = ['', 'NORMAL', 'UNKNOWN', 'CONTROL', 'USER_DEFINED', 'UNUSED', 'BYTE'];
const MODEL_TYPES = ['', 'UNIGRAM', 'BPE', 'WORD', 'CHAR'];

/** Field number → [name, kind] of the messages read; other fields are skipped (as protobuf skips unknown ones). */
const TRAINER = {
  3: ['model_type', 'enum'], 4: ['vocab_size', 'int32'], 24: ['treat_whitespace_as_suffix', 'bool'],
  35: ['byte_fallback', 'bool'], 40: ['unk_id', 'int32'], 41: ['bos_id', 'int32'], 42: ['eos_id', 'int32'],
  43: ['pad_id', 'int32'], 44: ['unk_surface', 'string'], 45: ['unk_piece', 'string'], 46: ['bos_piece', 'string'],
  47: ['eos_piece', 'string'], 48: ['pad_piece', 'string'], 20: ['max_sentencepiece_length', 'int32'],
  25: ['split_digits', 'bool'], 21: ['split_by_unicode_script', 'bool'], 22: ['split_by_whitespace', 'bool'],
};
const NORMALIZER = {
  1: ['name', 'string'], 2: ['precompiled_charsmap', 'bytes'], 3: ['add_dummy_prefix', 'bool'],
  4: ['remove_extra_whitespaces', 'bool'], 5: ['escape_whitespaces', 'bool'], 6: ['normalization_rule_tsv', 'string'],
};
const PIECE = { 1: ['piece', 'string'], 2: ['score', 'float'], 3: ['type', 'enum'] };
const SAMPLE = { 1: ['input', 'string'], 2: ['expected', 'string'] };

/** Applies a message's known fields onto `target` (a field given twice: the last wins; a sub-message given twice merges, as protobuf does). */
function apply(target, bytes, fields, file, path) {
  for (const r of readRecords(bytes, file, path)) {
    const known = fields[r.field];
    if (!known) continue;
    const [name, kind] = known;
    target[name] = valueOf(r, kind, bytes, file, `${path}.${name}`);
  }
  return target;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
let FLOAT = null; // a view of the file being read

/**
 * A piece message read in one pass, appended to the lists: piece (1, ASCII or UTF-8), score (2,
 * float), type (3, a one-byte varint), each at most once, nothing else. Anything else returns false
 * and the general reader reads (or refuses) it with its messages.
 */
function quickPiece(b, start, end, pieces, scores, types) {
  let piece = null, score = 0, type = NORMAL, seen = 0;
  for (let i = start; i < end;) {
    const key = b[i++];
    if (key === 0x0a && !(seen & 1)) { // field 1, length-delimited
      const n = b[i++];
      if (n > 127 || i + n > end) return false;
      let ascii = true;
      for (let k = i; k < i + n; k++) if (b[k] > 127) { ascii = false; break; }
      if (ascii) {
        piece = '';
        for (let k = i; k < i + n; k++) piece += String.fromCharCode(b[k]);
      } else {
        try {
          piece = UTF8.decode(b.subarray(i, i + n));
        } catch {
          return false;
        }
      }
      i += n;
      seen |= 1;
    } else if (key === 0x15 && !(seen & 2)) { // field 2, 32-bit
      if (i + 4 > end) return false;
      score = FLOAT.getFloat32(i, true); // FLOAT views the same bytes as b
      i += 4;
      seen |= 2;
    } else if (key === 0x18 && !(seen & 4)) { // field 3, a varint of one byte
      if (i >= end || b[i] > 127) return false;
      type = b[i++];
      seen |= 4;
    } else return false;
  }
  if (piece === null) return false;
  pieces.push(piece);
  scores.push(score);
  types.push(type);
  return true;
}

function normalizerSpec() {
  return { name: '', precompiled_charsmap: new Uint8Array(0), add_dummy_prefix: true, remove_extra_whitespaces: true, escape_whitespaces: true, normalization_rule_tsv: '' };
}

/**
 * Reads and checks a SentencePiece model file.
 * @param {Uint8Array} bytes the file's bytes
 * @param {string} file its name, for messages ('source.spm')
 * @returns {{ pieces: string[], scores: Float32Array, types: Uint8Array, trainer: object,
 *   normalizer: object, denormalizer: object | null, selfTest: { input: string, expected: string }[],
 *   unkId: number, pieceIds: Map<string, number>, reservedIds: Map<string, number> }} new objects owned by the caller
 */
export function readSpmModel(bytes, file) {
  bytes = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length); // a Node Buffer's subarray() is several times slower
  FLOAT = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const pieces = [];
  const scores = [];
  const types = [];
  const trainer = {
    model_type: 1, vocab_size: 8000, treat_whitespace_as_suffix: false, byte_fallback: false, unk_id: 0, bos_id: 1, eos_id: 2, pad_id: -1,
    unk_surface: ' \u2047 ', unk_piece: '<unk>', bos_piece: '<s>', eos_piece: '</s>', pad_piece: '<pad>', max_sentencepiece_length: 16,
  };
  let normalizer = normalizerSpec();
  let denormalizer = null;
  const selfTest = [];
  readRecords(bytes, file, '', (field, wire, a, b, at) => {
    if (field === 1) {
      // The common piece is read without allocating (a model has up to 256 000); anything unusual goes
      // through the general reader, which reads or refuses it with the field named.
      if (wire !== 2 || !quickPiece(bytes, a, b, pieces, scores, types)) {
        const name = `pieces[${pieces.length}]`;
        const p = apply({ piece: '', score: 0, type: NORMAL }, valueOf({ field, wire, at, value: wire === 2 ? bytes.subarray(a, b) : { lo: a, hi: b } }, 'message', bytes, file, name), PIECE, file, name);
        pieces.push(p.piece);
        scores.push(p.score);
        types.push(p.type);
      }
      return;
    }
    const record = { field, wire, at, value: wire === 0 ? { lo: a, hi: b } : wire === 2 ? bytes.subarray(a, b) : a };
    if (field === 2) apply(trainer, valueOf(record, 'message', bytes, file, 'trainer_spec'), TRAINER, file, 'trainer_spec');
    else if (field === 3) apply(normalizer, valueOf(record, 'message', bytes, file, 'normalizer_spec'), NORMALIZER, file, 'normalizer_spec');
    else if (field === 4) {
      const data = valueOf(record, 'message', bytes, file, 'self_test_data');
      for (const s of readRecords(data, file, 'self_test_data')) {
        if (s.field !== 1) continue;
        const name = `self_test_data.samples[${selfTest.length}]`;
        selfTest.push(apply({ input: '', expected: '' }, valueOf(s, 'message', data, file, name), SAMPLE, file, name));
      }
    } else if (field === 5) {
      denormalizer = apply(denormalizer ?? normalizerSpec(), valueOf(record, 'message', bytes, file, 'denormalizer_spec'), NORMALIZER, file, 'denormalizer_spec');
    }
  });
  const model = { pieces, scores: Float32Array.from(scores), types: Uint8Array.from(types), trainer, normalizer, denormalizer, selfTest };
  return { ...model, ...checkPieces(model, file) };
}

/** sentencepiece's InitializePieces: the piece maps, the unknown piece, the byte pieces; a model it refuses throws. */
function checkPieces({ pieces, types, trainer }, file) {
  const type = MODEL_TYPES[trainer.model_type];
  if (type === undefined) throw invalid('trainer_spec.model_type', `expected 1 (UNIGRAM), 2 (BPE), 3 (WORD) or 4 (CHAR), got ${trainer.model_type}`, file);
  if (type !== 'UNIGRAM' && type !== 'BPE') throw unsupported('trainer_spec.model_type', "1 (UNIGRAM) or 2 (BPE)", `${trainer.model_type} (${type})`, file);
  if (pieces.length === 0) throw invalid('pieces', 'expected a list of pieces, got none (an empty or truncated model file)', file);
  const pieceIds = new Map(); // normal, user-defined and unused pieces: what the models match
  const reservedIds = new Map(); // control, unknown and byte pieces: only looked up by name
  const bytesFound = new Uint8Array(256);
  let unkId = -1;
  for (let i = 0; i < pieces.length; i++) {
    const t = types[i];
    if (t === NORMAL && pieces[i] !== '' && !pieceIds.has(pieces[i])) { // the common case, checked without making strings
      pieceIds.set(pieces[i], i);
      continue;
    }
    const field = `pieces[${i}]`;
    if (t < NORMAL || t > BYTE) throw invalid(`${field}.type`, `expected 1 to 6 (NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE), got ${t}`, file);
    if (pieces[i] === '') throw invalid(`${field}.piece`, 'expected a non-empty piece, got an empty one (sentencepiece refuses the model)', file);
    const map = t === NORMAL || t === USER_DEFINED || t === UNUSED ? pieceIds : reservedIds;
    if (map.has(pieces[i])) throw invalid(`${field}.piece`, `'${pieces[i]}' is already defined (pieces[${map.get(pieces[i])}]); sentencepiece refuses the model`, file);
    map.set(pieces[i], i);
    if (t === UNKNOWN) {
      if (unkId >= 0) throw invalid(`${field}.type`, `a second UNKNOWN piece (the first is pieces[${unkId}]); sentencepiece refuses the model`, file);
      unkId = i;
    }
    if (t === BYTE) {
      if (!trainer.byte_fallback) throw invalid(`${field}.type`, `a BYTE piece '${pieces[i]}' in a model whose trainer_spec.byte_fallback is false; sentencepiece refuses the model`, file);
      const m = /^<0x([0-9A-F]{2})>$/.exec(pieces[i]);
      if (!m) throw invalid(`${field}.piece`, `a BYTE piece must be <0x00> … <0xFF>, got '${pieces[i]}'`, file);
      bytesFound[parseInt(m[1], 16)] = 1;
    }
  }
  if (unkId < 0) throw invalid('pieces', `no piece has type UNKNOWN (${pieces.length} pieces); sentencepiece refuses the model`, file);
  if (trainer.byte_fallback && bytesFound.includes(0)) {
    throw invalid('trainer_spec.byte_fallback', `true, but the model has ${bytesFound.reduce((a, b) => a + b, 0)} of the 256 BYTE pieces <0x00> … <0xFF>; sentencepiece refuses the model`, file);
  }
  if (type === 'UNIGRAM' && pieceIds.size === 0) throw invalid('pieces', 'a unigram model without NORMAL, USER_DEFINED or UNUSED pieces has nothing to match; sentencepiece refuses it', file);
  return { unkId, pieceIds, reservedIds, modelType: type };
}

export { TYPE_NAMES };
