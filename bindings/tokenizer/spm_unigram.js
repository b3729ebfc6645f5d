// SentencePiece's unigram model (unigram_model.cc EncodeOptimized): the Viterbi segmentation of
// the whole normalized text over the NORMAL, USER_DEFINED and UNUSED pieces (UNUSED ones skipped),
// with the library's float arithmetic: path scores are stored as float32, a piece's candidate is
// computed in double and compared with the stored float (as the C++ does), an unknown character
// costs min(NORMAL scores) − 10 in float, a user-defined piece scores bytes · max(NORMAL scores) − 0.1
// (the max starting from FLT_MIN, as the library's does). Ties keep the first candidate. O(n·k): k
// the longest piece. Not here: unknown runs and byte fallback (sentencepiece.js).
import { PieceTrie } from './spm_trie.js';
import { NORMAL, UNUSED, USER_DEFINED } from './spm_model.js';

const FLT_MAX = 3.4028234663852886e38;
const FLT_MIN = 1.1754943508222875e-38;
const isHigh = (c) => c >= 0xd800 && c < 0xdc00;
const isLow = (c) => c >= 0xdc00 && c < 0xe000;

/** UTF-8 length of a well-formed string. */
function utf8Length(s) {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : isHigh(c) ? (i++, 4) : 3;
  }
  return n;
}

export class SpmUnigram {
  /** @param {ReturnType<import('./spm_model.js').readSpmModel>} model */
  constructor(model) {
    this.trie = new PieceTrie(model.pieceIds);
    this.types = model.types;
    this.unkId = model.unkId;
    let min = FLT_MAX;
    let max = FLT_MIN;
    model.types.forEach((t, id) => {
      if (t !== NORMAL) return;
      min = Math.min(min, model.scores[id]);
      max = Math.max(max, model.scores[id]);
    });
    this.unkScore = Math.fround(min - 10);
    // A piece's score as the Viterbi adds it (a double: user-defined pieces get a bonus that always wins).
    this.score = Float64Array.from(model.scores);
    model.types.forEach((t, id) => {
      if (t === USER_DEFINED) this.score[id] = Math.fround(utf8Length(model.pieces[id]) * max) - 0.1;
    });
  }

  /**
   * The best segmentation of a normalized text.
   * @param {string} text
   * @returns {{ starts: number[], ids: number[] }} piece i is text[starts[i], starts[i + 1] or the end)
   */
  encode(text) {
    const n = text.length;
    if (n === 0) return { starts: [], ids: [] };
    const best = new Float64Array(n + 1); // float32 values: the best path's score ending here
    const from = new Int32Array(n + 1).fill(-1);
    const idAt = new Int32Array(n + 1);
    const { trie, types, score } = this;
    const { labels, first, count, value } = trie;
    for (let s = 0; s < n;) {
      const till = best[s];
      const width = isHigh(text.charCodeAt(s)) && s + 1 < n && isLow(text.charCodeAt(s + 1)) ? 2 : 1;
      let single = false;
      let node = 0;
      for (let e = s; e < n; e++) {
        // trie.child(node, c), inlined: this is the hot loop
        const c = text.charCodeAt(e);
        let a = first[node];
        let b = a + count[node] - 1;
        node = -1;
        while (a <= b) {
          const m = (a + b) >>> 1;
          const l = labels[m];
          if (l === c) {
            node = m;
            break;
          }
          if (l < c) a = m + 1;
          else b = m - 1;
        }
        if (node < 0) break;
        const id = value[node];
        if (id < 0 || types[id] === UNUSED) continue;
        const candidate = score[id] + till;
        const t = e + 1;
        if (from[t] < 0 || candidate > best[t]) {
          best[t] = Math.fround(candidate);
          from[t] = s;
          idAt[t] = id;
        }
        if (t - s === width) single = true;
      }
      if (!single) {
        const t = s + width;
        const candidate = Math.fround(this.unkScore + till);
        if (from[t] < 0 || candidate > best[t]) {
          best[t] = candidate;
          from[t] = s;
          idAt[t] = this.unkId;
        }
      }
      s += width;
    }
    const starts = [];
    const ids = [];
    for (let e = n; e > 0; e = from[e]) {
      starts.push(from[e]);
      ids.push(idAt[e]);
    }
    return { starts: starts.reverse(), ids: ids.reverse() };
  }
}
