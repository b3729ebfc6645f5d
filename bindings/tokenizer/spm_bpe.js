// SentencePiece's BPE model (bpe_model.cc, Encode = SampleEncode without dropout): the normalized
// text split into characters (a user-defined piece whole, never merged), then the adjacent pair
// whose concatenation is a piece with the highest score merged first (ties: the leftmost), with a
// priority queue of candidate pairs and stale entries skipped; a merged UNUSED piece is split back
// into the pair it was made from. Merges are scored by the pieces' own scores, not by a merges
// list (tokenizer.json's BPE, bpe.js). O(n log n). Not here: unknown runs and byte fallback.
import { PieceTrie } from './spm_trie.js';
import { UNUSED, USER_DEFINED } from './spm_model.js';

const isHigh = (c) => c >= 0xd800 && c < 0xdc00;
const isLow = (c) => c >= 0xdc00 && c < 0xe000;

/** A binary max-heap of candidate pairs: higher score first, then the smaller left index. */
class Agenda {
  constructor() {
    this.items = [];
  }

  static before(a, b) {
    return a.score > b.score || (a.score === b.score && a.left < b.left);
  }

  push(x) {
    const h = this.items;
    h.push(x);
    for (let i = h.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!Agenda.before(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  pop() {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0) {
      h[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && Agenda.before(h[l], h[m])) m = l;
        if (r < h.length && Agenda.before(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}

export class SpmBpe {
  /** @param {ReturnType<import('./spm_model.js').readSpmModel>} model */
  constructor(model) {
    this.pieceIds = model.pieceIds;
    this.reservedIds = model.reservedIds;
    this.scores = model.scores;
    this.types = model.types;
    this.unkId = model.unkId;
    const userDefined = [...model.pieceIds].filter(([, id]) => model.types[id] === USER_DEFINED);
    this.userDefined = userDefined.length ? new PieceTrie(userDefined) : null;
  }

  /** ModelInterface::PieceToId: control, unknown and byte pieces first, then the others, else unk. */
  pieceToId(piece) {
    return this.reservedIds.get(piece) ?? this.pieceIds.get(piece) ?? this.unkId;
  }

  /**
   * The BPE segmentation of a normalized text.
   * @param {string} text
   * @returns {{ starts: number[], ids: number[] }} piece i is text[starts[i], starts[i + 1] or the end)
   */
  encode(text) {
    const n = text.length;
    if (n === 0) return { starts: [], ids: [] };
    // Symbols: start and length in code units, linked list, frozen (user-defined).
    const start = [];
    const len = [];
    const freeze = [];
    for (let i = 0; i < n;) {
      const ud = this.userDefined ? this.userDefined.longest(text, i) : 0;
      const w = ud > 0 ? ud : isHigh(text.charCodeAt(i)) && i + 1 < n && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
      start.push(i);
      len.push(w);
      freeze.push(ud > 0);
      i += w;
    }
    const count = start.length;
    const prev = Int32Array.from({ length: count }, (_, i) => i - 1);
    const next = Int32Array.from({ length: count }, (_, i) => (i + 1 < count ? i + 1 : -1));
    const agenda = new Agenda();
    const revMerge = new Map(); // an UNUSED merged piece → the two pieces it was made from
    const maybeAdd = (left, right) => {
      if (left === -1 || right === -1 || freeze[left] || freeze[right]) return;
      const size = len[left] + len[right];
      const piece = text.substr(start[left], size);
      const id = this.pieceIds.get(piece);
      if (id === undefined) return;
      agenda.push({ left, right, score: this.scores[id], size });
      if (this.types[id] === UNUSED) revMerge.set(piece, [text.substr(start[left], len[left]), text.substr(start[right], len[right])]);
    };
    for (let i = 1; i < count; i++) maybeAdd(i - 1, i);
    while (agenda.items.length > 0) {
      const top = agenda.pop();
      const { left, right } = top;
      if (len[left] === 0 || len[right] === 0 || len[left] + len[right] !== top.size) continue; // stale
      len[left] += len[right];
      next[left] = next[right];
      if (next[right] >= 0) prev[next[right]] = left;
      len[right] = 0;
      maybeAdd(prev[left], left);
      maybeAdd(left, next[left]);
    }
    const starts = [];
    const ids = [];
    const resegment = (piece, at) => {
      const id = this.pieceToId(piece);
      const split = this.types[id] === UNUSED ? revMerge.get(piece) : undefined;
      if (!split) {
        starts.push(at);
        ids.push(id);
        return;
      }
      resegment(split[0], at);
      resegment(split[1], at + split[0].length);
    };
    for (let i = 0; i !== -1; i = next[i]) resegment(text.substr(start[i], len[i]), start[i]);
    return { starts, ids };
  }
}
