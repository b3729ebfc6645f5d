// SentencePieceProcessor in pure JS: a SentencePiece model file (ModelProto, read by spm_model.js)
// → text to pieces and ids, pieces or ids back to text, as the sentencepiece library (0.1.97, the
// oracle of the tests) gives them: its normalizer, its unigram or BPE model, unknown runs fused into
// one piece (or, with byte_fallback, each unknown character as its UTF-8 <0xNN> pieces), and its
// decoder (the leading '▁' dropped, control pieces invisible, <unk> as ' ⁇ ', byte pieces read as
// UTF-8 with one U+FFFD per bad byte, the denormalizer). Immutable; holds no native memory.
import { describe, rangeError, typeError } from '../errors.js';
import { invalid } from './json.js';
import { BYTE, CONTROL, UNKNOWN, USER_DEFINED, readSpmModel } from './spm_model.js';
import { BytePrefixMatcher, SpmNormalizer, utf8CharLength } from './spm_normalizer.js';
import { SpmUnigram } from './spm_unigram.js';
import { SpmBpe } from './spm_bpe.js';

const utf8 = new TextEncoder();
const lossy = new TextDecoder('utf-8', { ignoreBOM: true });
const BYTE_PIECE = /^<0x([0-9A-F]{2})>$/;

/** Bytes as text, one U+FFFD per byte that does not start a valid character (sentencepiece's rule, not WHATWG's). */
function bytesToText(bytes) {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const n = utf8CharLength(bytes, i, bytes.length);
    out += n === 0 ? '\ufffd' : lossy.decode(bytes.subarray(i, i + n));
    i += n || 1;
  }
  return out;
}

export class SentencePieceProcessor {
  /**
   * Reads a SentencePiece model file. A file sentencepiece would refuse (truncated or not a
   * protobuf, no pieces, no unknown piece, a piece given twice, byte pieces missing with
   * byte_fallback, a broken charsmap, a failing self-test) throws AttnWasmError ERR_INVALID_ARGUMENT;
   * a WORD or CHAR model ERR_UNSUPPORTED; both name `file` and the field.
   * @param {Uint8Array | ArrayBuffer} bytes the file's bytes (not kept: the model is copied out)
   * @param {string} [file] the file's name, for messages (default 'sentencepiece model')
   * @returns {SentencePieceProcessor}
   */
  static fromBytes(bytes, file = 'sentencepiece model') {
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    if (!(bytes instanceof Uint8Array)) throw typeError(`${file}: expected the model file's bytes (a Uint8Array or ArrayBuffer), got ${describe(bytes)}`);
    return new SentencePieceProcessor(readSpmModel(bytes, file), file);
  }

  /** @private Use SentencePieceProcessor.fromBytes. */
  constructor(model, file) {
    this._model = model;
    this.file = file;
    this.modelType = model.modelType;
    const userDefined = new BytePrefixMatcher(model.pieces.filter((_, i) => model.types[i] === USER_DEFINED));
    this._normalizer = new SpmNormalizer(model.normalizer, { suffix: model.trainer.treat_whitespace_as_suffix, userDefined }, file, 'normalizer_spec');
    this._denormalizer = model.denormalizer && model.denormalizer.precompiled_charsmap.length > 0
      ? new SpmNormalizer(model.denormalizer, {}, file, 'denormalizer_spec') : null;
    this._encoder = model.modelType === 'BPE' ? new SpmBpe(model) : new SpmUnigram(model);
    this._byteFallback = model.trainer.byte_fallback;
    this._byteIds = this._byteFallback ? Int32Array.from({ length: 256 }, (_, b) => this.pieceToId(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)) : null;
    this._selfTest();
    Object.freeze(this);
  }

  /**
   * The same model with normalizer_spec fields changed (T5Tokenizer with legacy=false loads its
   * model with add_dummy_prefix false): a new processor; this one is unchanged.
   * @param {{ add_dummy_prefix?: boolean, remove_extra_whitespaces?: boolean, escape_whitespaces?: boolean }} changes
   */
  withNormalizer(changes) {
    return new SentencePieceProcessor({ ...this._model, normalizer: { ...this._model.normalizer, ...changes } }, this.file);
  }

  /** Number of pieces (ids are 0 … size − 1). */
  get size() {
    return this._model.pieces.length;
  }

  /** The id of a piece: control, unknown and byte pieces first, then the others; the unknown id for anything else. */
  pieceToId(piece) {
    if (typeof piece !== 'string') throw typeError(`piece: expected a string, got ${describe(piece)}`);
    return this._model.reservedIds.get(piece) ?? this._model.pieceIds.get(piece) ?? this._model.unkId;
  }

  /** The piece of an id (RangeError outside 0 … size − 1). */
  idToPiece(id) {
    this._checkId(id, 'id');
    return this._model.pieces[id];
  }

  /** The piece's score (float32). */
  scoreOf(id) {
    this._checkId(id, 'id');
    return this._model.scores[id];
  }

  /** Whether an id is the unknown piece. */
  isUnknown(id) { return this._model.types[id] === UNKNOWN; }
  /** Whether an id is a control piece (<s>, </s>: invisible when decoding). */
  isControl(id) { return this._model.types[id] === CONTROL; }
  /** Whether an id is a byte piece (<0xNN>, byte_fallback). */
  isByte(id) { return this._model.types[id] === BYTE; }

  /** The unknown piece's id, and the trainer's bos / eos / pad ids where they are control pieces (else -1), as sentencepiece's bos_id() etc. */
  get unkId() { return this._model.unkId; }
  get bosId() { return this._specialId('bos'); }
  get eosId() { return this._specialId('eos'); }
  get padId() { return this._specialId('pad'); }

  _specialId(name) {
    const id = this.pieceToId(this._model.trainer[`${name}_piece`] || { bos: '<s>', eos: '</s>', pad: '<pad>' }[name]);
    return this.isControl(id) ? id : -1;
  }

  /** The normalized text (sentencepiece's normalize()): the charsmap, whitespace rules and '▁'. */
  normalize(text) {
    if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
    return this._normalizer.normalize(text.toWellFormed());
  }

  /**
   * Text → pieces and ids, as sentencepiece's encode(text, out_type=str) and encode(text) give them.
   * @param {string} text
   * @returns {{ pieces: string[], ids: number[] }} new arrays owned by the caller
   */
  encode(text) {
    const normalized = this.normalize(text);
    const { starts, ids } = this._encoder.encode(normalized);
    const outPieces = [];
    const outIds = [];
    let prevUnk = false;
    for (let i = 0; i < ids.length; i++) {
      const piece = normalized.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : normalized.length);
      const id = ids[i];
      const unk = this.isUnknown(id);
      if (unk && this._byteFallback) {
        for (const b of utf8.encode(piece)) {
          outPieces.push(this._model.pieces[this._byteIds[b]]);
          outIds.push(this._byteIds[b]);
        }
      } else if (unk && prevUnk) {
        outPieces[outPieces.length - 1] += piece; // a run of unknown characters is one unknown piece
      } else {
        outPieces.push(piece);
        outIds.push(id);
      }
      prevUnk = unk;
    }
    return { pieces: outPieces, ids: outIds };
  }

  /** encode(text).ids */
  encodeIds(text) {
    return this.encode(text).ids;
  }

  /** encode(text).pieces */
  encodePieces(text) {
    return this.encode(text).pieces;
  }

  /**
   * Ids → text, as sentencepiece's decode(ids). An id outside the model throws RangeError (sentencepiece: "Invalid id").
   * @param {ArrayLike<number>} ids
   */
  decodeIds(ids) {
    if (!(Array.isArray(ids) || (ArrayBuffer.isView(ids) && !(ids instanceof DataView)))) throw typeError(`ids: expected an Array or typed array of ids, got ${describe(ids)}`);
    return this.decodePieces(Array.from(ids, (id, i) => this._model.pieces[this._checkId(id, `ids[${i}]`)]));
  }

  /**
   * Pieces → text, as sentencepiece's decode_pieces(pieces) (a piece not in the model is written as it is).
   * @param {string[]} pieces
   */
  decodePieces(pieces) {
    if (!Array.isArray(pieces)) throw typeError(`pieces: expected an Array of strings, got ${describe(pieces)}`);
    const { add_dummy_prefix: dummy, remove_extra_whitespaces: removeExtra } = this._model.normalizer;
    const unkSurface = this._model.trainer.unk_surface;
    let text = '';
    let bytes = [];
    const flush = () => {
      if (bytes.length) text += bytesToText(Uint8Array.from(bytes));
      bytes = [];
    };
    let bosWs = true; // still at the start: a leading '▁' is dropped
    let bosWsSeen = false;
    pieces.forEach((p, i) => {
      if (typeof p !== 'string') throw typeError(`pieces[${i}]: expected a string, got ${describe(p)}`);
      const id = this.pieceToId(p);
      if (this.isByte(id)) {
        bytes.push(parseInt(BYTE_PIECE.exec(p)[1], 16));
        return;
      }
      flush();
      if (bosWsSeen || text !== '') bosWs = false;
      let piece = p;
      bosWsSeen = false;
      if (this.isControl(id)) piece = '';
      else if (this.isUnknown(id)) piece = p === this._model.pieces[id] ? unkSurface : p;
      else {
        if (bosWs && (dummy || removeExtra) && piece.startsWith('\u2581')) {
          piece = piece.slice(1);
          bosWsSeen = !removeExtra; // with remove_extra_whitespaces every leading '▁' goes
        }
        piece = piece.replaceAll('\u2581', ' ');
      }
      text += piece;
    });
    flush();
    return this._denormalizer ? this._denormalizer.normalize(text) : text;
  }

  _checkId(id, name) {
    if (typeof id !== 'number' || !Number.isInteger(id)) throw typeError(`${name}: expected an integer id, got ${typeof id === 'number' ? id : describe(id)}`);
    if (id < 0 || id >= this._model.pieces.length) throw rangeError(`${name}: expected an id in [0, ${this._model.pieces.length - 1}] (${this.file} has ${this._model.pieces.length} pieces), got ${id}`);
    return id;
  }

  /** sentencepiece refuses a model whose self_test_data it does not reproduce; so does this reader. */
  _selfTest() {
    this._model.selfTest.forEach((s, i) => {
      const got = this.encode(s.input).pieces.join(' ');
      if (got === s.expected) return;
      if (this.modelType === 'UNIGRAM' && Math.abs(this._pathScore(s.expected) - this._pathScore(got)) <= 1e-7) return;
      throw invalid(`self_test_data.samples[${i}]`, `expected '${s.expected}' for '${s.input}', got '${got}' (sentencepiece refuses a model that fails its self-test)`, this.file);
    });
  }

  /** A segmentation's unigram score, as VerifyOutputsEquivalent sums it (float). */
  _pathScore(pieces) {
    let total = 0;
    const enc = this._encoder;
    for (const p of pieces.split(' ')) {
      const id = this.pieceToId(p);
      total = Math.fround(total + (id === this.unkId ? enc.unkScore : enc.score[id]));
    }
    return total;
  }
}
