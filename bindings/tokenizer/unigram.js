// The Unigram model of tokenizer.json (XLM-R, multilingual-e5, paraphrase-multilingual-MiniLM, T5):
// the segmentation of highest total score (Viterbi over the pieces' log-probabilities, as the Rust
// library's encode_optimized), a character no piece starts with scoring the lowest score − 10 as the
// unknown piece, runs of unknown pieces fused; a piece not in the vocabulary becomes its <0xNN>
// byte tokens with byte_fallback, else unk_id. Scores are float64 and summed in the same order as
// Rust, so ties resolve the same way (the first, shortest candidate keeps a tie).
import { MAX_ID, invalid, optionalBoolean, requireArray, requireInteger, requireType, show } from './json.js';
import { BYTE_TOKENS } from './vocab.js';

const UNK_PENALTY = 10;

export class UnigramModel {
  constructor(model) {
    requireType(model, 'model', ['Unigram']);
    const list = requireArray(model.vocab, 'model.vocab');
    if (list.length > MAX_ID) throw invalid('model.vocab', `expected at most 2^31 - 1 entries, got ${list.length}`);
    this.tokenOf = new Array(list.length);
    this.scores = new Float64Array(list.length);
    this.vocab = new Map();
    this.root = new Map(); // a trie over UTF-16 code units; node.id: the piece ending here
    let minScore = Infinity;
    list.forEach((entry, id) => {
      const field = `model.vocab[${id}]`;
      if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || typeof entry[1] !== 'number') {
        throw invalid(field, `expected [piece, score], got ${Array.isArray(entry) ? `[${entry.map(show).join(', ')}]` : show(entry)}`);
      }
      const [piece, score] = entry;
      if (!piece.isWellFormed()) throw invalid(field, 'the piece has an unpaired surrogate (not UTF-8)');
      this.tokenOf[id] = piece;
      this.scores[id] = score;
      this.vocab.set(piece, id); // a piece given twice: the last id, as Rust's map
      minScore = Math.min(minScore, score);
      let node = this.root;
      for (let i = 0; i < piece.length; i++) {
        const c = piece.charCodeAt(i);
        if (!node.has(c)) node.set(c, new Map());
        node = node.get(c);
      }
      if (piece !== '') node.piece = true;
    });
    this.unkScore = minScore - UNK_PENALTY;
    this.unk = model.unk_id == null ? -1 : requireInteger(model.unk_id, 'model.unk_id', 0, list.length - 1);
    if (model.unk_id != null && list.length === 0) throw invalid('model.vocab', 'expected at least the unknown piece, got none');
    this.byteIds = optionalBoolean(model.byte_fallback, 'model.byte_fallback', false) ? Int32Array.from(BYTE_TOKENS, (t) => this.vocab.get(t) ?? -1) : null;
    this.cache = new Map();
  }

  /** The ids of one pre-tokenized piece (an array that may be shared: do not modify). */
  encode(text) {
    if (text === '') return [];
    const cached = this.cache.get(text);
    if (cached) return cached;
    const ids = [];
    for (const piece of this.viterbi(text)) {
      const id = this.vocab.get(piece);
      if (id !== undefined) {
        ids.push(id);
        continue;
      }
      if (this.byteIds) {
        const bytes = Array.from(new TextEncoder().encode(piece), (b) => this.byteIds[b]);
        if (bytes.every((b) => b >= 0)) {
          ids.push(...bytes);
          continue;
        }
      }
      if (this.unk < 0) throw invalid('model.unk_id', `the text has ${show(piece)}, which no piece covers, and the model has no unk_id (the tokenizers library fails the same way)`);
      ids.push(this.unk);
    }
    if (text.length < 256 && this.cache.size < 10000) this.cache.set(text, ids);
    return ids;
  }

  /**
   * The ids of one piece with each one's [start, end) in its code units (byte tokens: their
   * character's) and its value as the Rust library's Token has it (an unknown piece: its own text).
   */
  spans(text) {
    const ids = [];
    const starts = [];
    const ends = [];
    const values = [];
    let at = 0;
    for (const piece of text === '' ? [] : this.viterbi(text)) {
      const end = at + piece.length;
      const id = this.vocab.get(piece);
      let out = id === undefined ? null : [id];
      if (!out && this.byteIds) {
        const bytes = Array.from(new TextEncoder().encode(piece), (b) => this.byteIds[b]);
        if (bytes.every((b) => b >= 0)) out = bytes;
      }
      if (!out) {
        if (this.unk < 0) throw invalid('model.unk_id', `the text has ${show(piece)}, which no piece covers, and the model has no unk_id (the tokenizers library fails the same way)`);
        out = [this.unk];
      }
      for (const x of out) {
        ids.push(x);
        starts.push(at);
        ends.push(end);
        values.push(x === this.unk ? piece : this.tokenOf[x]);
      }
      at = end;
    }
    return { ids, starts, ends, values };
  }

  /** The pieces of the best segmentation, unknown runs fused. */
  viterbi(text) {
    const n = text.length;
    const score = new Float64Array(n + 1);
    const from = new Int32Array(n + 1).fill(-1); // where the best path to here starts; -1: none yet
    const idAt = new Int32Array(n + 1);
    for (let start = 0; start < n;) {
      const base = score[start];
      const width = isHigh(text.charCodeAt(start)) && start + 1 < n && isLow(text.charCodeAt(start + 1)) ? 2 : 1;
      let single = false;
      let node = this.root;
      for (let end = start; end < n; end++) {
        node = node.get(text.charCodeAt(end));
        if (!node) break;
        if (!node.piece) continue;
        const id = this.vocab.get(text.slice(start, end + 1));
        const candidate = this.scores[id] + base;
        if (from[end + 1] < 0 || candidate > score[end + 1]) {
          score[end + 1] = candidate;
          from[end + 1] = start;
          idAt[end + 1] = id;
        }
        if (end + 1 - start === width) single = true;
      }
      if (!single) {
        const end = start + width;
        const candidate = this.unkScore + base;
        if (from[end] < 0 || candidate > score[end]) {
          if (this.unk < 0) throw invalid('model.unk_id', `the text has ${show(text.slice(start, end))}, which no piece covers, and the model has no unk_id (the tokenizers library fails the same way)`);
          score[end] = candidate;
          from[end] = start;
          idAt[end] = this.unk;
        }
      }
      start += width;
    }
    const pieces = [];
    let unkEnd = -1; // the end of a run of unknown pieces being fused
    for (let end = n; end > 0;) {
      const start = from[end];
      if (idAt[end] === this.unk) {
        if (unkEnd < 0) unkEnd = end;
      } else {
        if (unkEnd >= 0) pieces.push(text.slice(end, unkEnd));
        unkEnd = -1;
        pieces.push(text.slice(start, end));
      }
      end = start;
    }
    if (unkEnd >= 0) pieces.push(text.slice(0, unkEnd));
    return pieces.reverse();
  }
}

const isHigh = (c) => c >= 0xd800 && c < 0xdc00;
const isLow = (c) => c >= 0xdc00 && c < 0xe000;
