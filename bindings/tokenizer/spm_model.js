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
  for (const r of readRecords(bytes, file, '')) {
    if (r.field === 1) {
      const at = `pieces[${pieces.length}]`;
      const p = apply({ piece: '', score: 0, type: NORMAL }, valueOf(r, 'message', bytes, file, at), PIECE, file, at);
      pieces.push(p.piece);
      scores.push(p.score);
      types.push(p.type);
    } else if (r.field === 2) apply(trainer, valueOf(r, 'message', bytes, file, 'trainer_spec'), TRAINER, file, 'trainer_spec');
    else if (r.field === 3) apply(normalizer, valueOf(r, 'message', bytes, file, 'normalizer_spec'), NORMALIZER, file, 'normalizer_spec');
    else if (r.field === 4) {
      for (const s of readRecords(valueOf(r, 'message', bytes, file, 'self_test_data'), file, 'self_test_data')) {
        if (s.field !== 1) continue;
        const at = `self_test_data.samples[${selfTest.length}]`;
        selfTest.push(apply({ input: '', expected: '' }, valueOf(s, 'message', r.value, file, at), SAMPLE, file, at));
      }
    } else if (r.field === 5) {
      denormalizer = apply(denormalizer ?? normalizerSpec(), valueOf(r, 'message', bytes, file, 'denormalizer_spec'), NORMALIZER, file, 'denormalizer_spec');
    }
  }
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
    const field = `pieces[${i}]`;
    const t = types[i];
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
