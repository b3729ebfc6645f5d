// The BPE model of tokenizer.json, both kinds: byte-level (GPT-2, Llama 3, Qwen2: a piece becomes
// its byte symbols first) and SentencePiece-style (Llama 2, Mistral, Gemma: a piece is its
// characters, one not in the vocabulary becoming its <0xNN> byte tokens with byte_fallback, else
// the unknown token, runs of which fuse_unk joins). Merging is the Rust library's Word::merge_all on
// integer ids: the adjacent pair of lowest rank merges first, the leftmost of equal ranks; a binary
// heap of (rank, position) keys with stale entries skipped keeps a 100 KB piece at n log n.
import { BYTE_SYMBOL, byteSymbols } from './byte_level.js';
import { invalid, optionalBoolean, requireArray, requireType, show, unsupported } from './json.js';
import { BYTE_TOKENS, readVocab, unkId } from './vocab.js';

const POS = 2 ** 32; // a heap key is rank · 2^32 + position (ranks < 2^21 too)
const CACHE_ENTRIES = 10000; // as the Rust library's BPE cache
const CACHE_MAX_LENGTH = 256;

/**
 * model (type BPE): the vocabulary, its inverse and the merges as ids (left, right, merged of rank r
 * at merges[3r], [3r + 1], [3r + 2]), and the flags. `byteLevel`: the byte-level kind (all 256 byte
 * symbols in the vocabulary, no byte fallback or unknown token needed).
 */
export function readBpe(model, byteLevel) {
  requireType(model, 'model', ['BPE']);
  if (model.dropout != null && model.dropout !== 0) throw unsupported('model.dropout', 'null or 0 (BPE dropout is random: for training)', model.dropout);
  if (byteLevel && model.byte_fallback != null && model.byte_fallback !== false) throw unsupported('model.byte_fallback', 'false (byte fallback is the SentencePiece kind)', model.byte_fallback);
  if (model.continuing_subword_prefix != null && model.continuing_subword_prefix !== '') throw unsupported('model.continuing_subword_prefix', "null or ''", model.continuing_subword_prefix);
  // CLIP's files: '</w>' ends a word's last symbol (byte-level only here).
  const suffix = model.end_of_word_suffix ?? '';
  if (typeof suffix !== 'string') throw invalid('model.end_of_word_suffix', `expected a string or null, got ${show(suffix)}`);
  if (suffix !== '' && !byteLevel) throw unsupported('model.end_of_word_suffix', "null or '' (a suffix is read for byte-level files, CLIP's)", suffix);
  const ignoreMerges = optionalBoolean(model.ignore_merges, 'model.ignore_merges', false);
  const { vocab, tokenOf } = readVocab(model.vocab, 'model.vocab');
  if (byteLevel) {
    for (let b = 0; b < 256; b++) {
      if (!vocab.has(BYTE_SYMBOL[b])) throw invalid('model.vocab', `a byte-level vocabulary has all 256 byte symbols; '${BYTE_SYMBOL[b]}' (byte 0x${b.toString(16).padStart(2, '0')}) is missing`);
      // The Rust library would give the unknown token for a last byte without its suffixed symbol: not read here.
      if (suffix !== '' && !vocab.has(BYTE_SYMBOL[b] + suffix)) {
        throw unsupported('model.vocab', `every byte symbol also with end_of_word_suffix '${suffix}' (CLIP's vocabularies have them)`, `no '${BYTE_SYMBOL[b] + suffix}' (byte 0x${b.toString(16).padStart(2, '0')})`);
      }
    }
  }
  requireArray(model.merges, 'model.merges');
  const merges = new Int32Array(3 * model.merges.length);
  for (let r = 0; r < model.merges.length; r++) {
    const m = model.merges[r];
    let a, b;
    if (typeof m === 'string') {
      const space = m.indexOf(' ');
      if (space >= 0 && m.indexOf(' ', space + 1) < 0) {
        a = m.slice(0, space);
        b = m.slice(space + 1);
      }
    } else if (Array.isArray(m) && m.length === 2) {
      a = m[0];
      b = m[1];
    }
    if (typeof a !== 'string' || typeof b !== 'string') {
      throw invalid(`model.merges[${r}]`, `expected 'a b' or ['a', 'b'], got ${typeof m === 'string' ? `'${m}'` : show(m)}`);
    }
    const ab = a + b;
    for (const t of [a, b, ab]) {
      if (!vocab.has(t)) throw invalid(`model.merges[${r}]`, `'${t}' (of the merge ${a} + ${b}) is not in model.vocab`);
    }
    merges[3 * r] = vocab.get(a);
    merges[3 * r + 1] = vocab.get(b);
    merges[3 * r + 2] = vocab.get(ab);
  }
  const byteFallback = !byteLevel && optionalBoolean(model.byte_fallback, 'model.byte_fallback', false);
  const unk = model.unk_token == null ? -1 : unkId(vocab, model.unk_token, 'model.unk_token');
  const fuseUnk = optionalBoolean(model.fuse_unk, 'model.fuse_unk', false);
  return { vocab, tokenOf, merges, ignoreMerges, byteFallback, unk, fuseUnk, suffix };
}

export class BytePairEncoder {
  /** @param {ReturnType<typeof readBpe>} model @param {boolean} byteLevel */
  constructor(model, byteLevel) {
    const { vocab, merges } = model;
    this.vocab = vocab;
    this.byteLevel = byteLevel;
    this.ignoreMerges = model.ignoreMerges;
    this.merges = merges;
    this.unk = model.unk;
    this.fuseUnk = model.fuseUnk;
    this.suffix = model.suffix ?? ''; // end_of_word_suffix: the last symbol of a piece is looked up with it
    // <0xNN> ids for byte fallback (-1: not in the vocabulary)
    this.byteIds = model.byteFallback ? Int32Array.from(BYTE_TOKENS, (t) => vocab.get(t) ?? -1) : null;
    // pair → rank: open addressing over Int32Arrays (a Map keyed by left · 2^21 + right boxes
    // every key, which made fromJSON of a 50 000-merge file several times slower).
    const count = merges.length / 3;
    let size = 16;
    while (size < 2 * count) size *= 2;
    this.mask = size - 1;
    this.slots = new Int32Array(size).fill(-1); // the rank whose pair is in this slot
    for (let r = 0; r < count; r++) {
      let i = this.slot(merges[3 * r], merges[3 * r + 1]);
      while (this.slots[i] >= 0 && !(merges[3 * this.slots[i]] === merges[3 * r] && merges[3 * this.slots[i] + 1] === merges[3 * r + 1])) i = (i + 1) & this.mask;
      this.slots[i] = r; // a later duplicate of a pair wins, as in Rust
    }
    this.cache = new Map();
  }

  slot(a, b) {
    return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b + 0x7f4a7c15, 0x85ebca77)) >>> 0 & this.mask;
  }

  /** The rank of merging ids a and b, or -1. */
  rank(a, b) {
    const { slots, merges, mask } = this;
    for (let i = this.slot(a, b); ; i = (i + 1) & mask) {
      const r = slots[i];
      if (r < 0 || (merges[3 * r] === a && merges[3 * r + 1] === b)) return r;
    }
  }

  /**
   * The ids of one pre-tokenized piece of text (byte-level: before its byte symbols; the cache skips
   * those too); the array may be shared (the cache): do not modify.
   */
  encode(text) {
    if (text === '') return [];
    const cached = this.cache.get(text);
    if (cached) return cached;
    const piece = this.byteLevel ? byteSymbols(text) : text;
    let ids;
    if (this.ignoreMerges && this.vocab.has(piece)) ids = [this.vocab.get(piece)];
    else ids = this.byteLevel ? this.merge(piece) : this.mergeIds(this.symbols(piece));
    if (text.length < CACHE_MAX_LENGTH && this.cache.size < CACHE_ENTRIES) this.cache.set(text, ids);
    return ids;
  }

  /** Merges a string of byte symbols. */
  merge(piece) {
    return this.mergeIds(this.startIds(piece));
  }

  /** A byte-level piece's starting ids: its byte symbols, the last with end_of_word_suffix (Rust's merge_word). */
  startIds(piece) {
    const sym = new Int32Array(piece.length);
    for (let i = 0; i < piece.length; i++) sym[i] = this.vocab.get(piece[i]);
    if (this.suffix !== '' && piece.length > 0) sym[piece.length - 1] = this.vocab.get(piece[piece.length - 1] + this.suffix);
    return sym;
  }

  /**
   * A SentencePiece-style piece's starting ids (Rust's merge_word): each character's id, else its
   * UTF-8 bytes' <0xNN> ids when byte_fallback has them all, else the unknown token (fuse_unk: one
   * for a run), else nothing.
   */
  symbols(piece, spans = null) {
    const out = [];
    let unkPending = false;
    let unkStart = 0;
    let at = 0; // the code unit where c starts
    const push = (id, start, end) => {
      out.push(id);
      if (spans) spans.push(start, end);
    };
    for (const c of piece) {
      const end = at + c.length;
      const id = this.vocab.get(c);
      if (id !== undefined) {
        if (unkPending) push(this.unk, unkStart, at);
        unkPending = false;
        push(id, at, end);
        at = end;
        continue;
      }
      if (this.byteIds) {
        const bytes = new TextEncoder().encode(c);
        const ids = Array.from(bytes, (b) => this.byteIds[b]);
        if (ids.every((x) => x >= 0)) {
          for (const x of ids) push(x, at, end); // as in Rust, a pending unknown token stays pending
          at = end;
          continue;
        }
      }
      if (this.unk >= 0) {
        if (unkPending && !this.fuseUnk) push(this.unk, unkStart, at);
        if (!unkPending || !this.fuseUnk) unkStart = at;
        unkPending = true;
      }
      at = end;
    }
    if (unkPending) push(this.unk, unkStart, at);
    return Int32Array.from(out);
  }

  /**
   * The ids of one piece with each one's [start, end) in the piece's code units (offsets): a merged
   * token spans its parts; a byte symbol or <0xNN> token spans the character it is a byte of.
   */
  spans(text) {
    if (text === '') return { ids: [], starts: [], ends: [] };
    const piece = this.byteLevel ? byteSymbols(text) : text;
    if (this.ignoreMerges && this.vocab.has(piece)) return { ids: [this.vocab.get(piece)], starts: [0], ends: [text.length] };
    let sym;
    const bounds = [];
    if (this.byteLevel) {
      sym = this.startIds(piece);
      let at = 0;
      for (const c of text) {
        const cp = c.codePointAt(0);
        const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        for (let k = 0; k < n; k++) bounds.push(at, at + c.length);
        at += c.length;
      }
    } else {
      sym = this.symbols(piece, bounds);
    }
    const starts = Int32Array.from({ length: sym.length }, (_, i) => bounds[2 * i]);
    const ends = Int32Array.from({ length: sym.length }, (_, i) => bounds[2 * i + 1]);
    return this.mergeIds(sym, starts, ends);
  }

  /** Word::merge_all on starting ids (with `starts` / `ends`, their spans, merged alongside: returns { ids, starts, ends }). */
  mergeIds(sym, starts = null, ends = null) {
    const n = sym.length;
    if (n <= 1 && !starts) return Array.from(sym);
    const next = new Int32Array(n);
    const prev = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      next[i] = i + 1 < n ? i + 1 : -1;
      prev[i] = i - 1;
    }
    const heap = [];
    const offer = (pos) => {
      const r = this.rank(sym[pos], sym[next[pos]]);
      if (r >= 0) heapPush(heap, r * POS + pos);
    };
    for (let i = 0; i + 1 < n; i++) offer(i);
    while (heap.length) {
      const key = heapPop(heap);
      const r = Math.floor(key / POS);
      const pos = key - r * POS;
      const right = next[pos];
      // stale: the left symbol was merged away, it has no right neighbour, or the pair changed
      if (sym[pos] < 0 || right < 0 || this.rank(sym[pos], sym[right]) !== r) continue;
      sym[pos] = this.merges[3 * r + 2];
      sym[right] = -1;
      if (ends) ends[pos] = ends[right];
      next[pos] = next[right];
      if (next[pos] >= 0) prev[next[pos]] = pos;
      if (prev[pos] >= 0) offer(prev[pos]);
      if (next[pos] >= 0) offer(pos);
    }
    const ids = [];
    if (starts) {
      const s = [];
      const e = [];
      for (let i = n > 0 ? 0 : -1; i >= 0; i = next[i]) {
        ids.push(sym[i]);
        s.push(starts[i]);
        e.push(ends[i]);
      }
      return { ids, starts: s, ends: e };
    }
    for (let i = 0; i >= 0; i = next[i]) ids.push(sym[i]);
    return ids;
  }
}

/** Min-heap of numbers in a plain array. */
function heapPush(heap, key) {
  let i = heap.push(key) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (heap[parent] <= key) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = key;
}

function heapPop(heap) {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length) {
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1] < heap[child]) child++;
      if (heap[child] >= last) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = last;
  }
  return top;
}
