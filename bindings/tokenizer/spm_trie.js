// A static trie over the UTF-16 code units of a SentencePiece model's pieces, laid out flat (each
// node's children are one sorted run of labels, found by binary search), so that a 256 000-piece
// vocabulary costs typed arrays, not a Map per node. Matching code units gives the same matches as
// sentencepiece's byte trie: pieces are whole characters, and UTF-8 and UTF-16 are both prefix-free.
export class PieceTrie {
  /** @param {Iterable<[string, number]>} entries (piece, id), pieces distinct and non-empty */
  constructor(entries) {
    const keys = [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const lo = [0], hi = [keys.length], depth = [0];
    const labels = [0];
    const first = [];
    const count = [];
    const value = [];
    // Breadth first: a node's children get consecutive numbers, so [first, first + count) holds them.
    for (let q = 0; q < lo.length; q++) {
      let a = lo[q];
      const b = hi[q];
      const d = depth[q];
      value.push(a < b && keys[a][0].length === d ? keys[a++][1] : -1);
      first.push(lo.length);
      let n = 0;
      while (a < b) {
        const c = keys[a][0].charCodeAt(d);
        let j = a + 1;
        while (j < b && keys[j][0].charCodeAt(d) === c) j++;
        lo.push(a);
        hi.push(j);
        depth.push(d + 1);
        labels.push(c);
        a = j;
        n++;
      }
      count.push(n);
    }
    this.labels = Uint16Array.from(labels);
    this.first = Int32Array.from(first);
    this.count = Int32Array.from(count);
    /** id of the piece ending at each node, -1 where none does */
    this.value = Int32Array.from(value);
  }

  /** The child of `node` along code unit `c`, or -1. */
  child(node, c) {
    let a = this.first[node];
    let b = a + this.count[node] - 1;
    const labels = this.labels;
    while (a <= b) {
      const m = (a + b) >>> 1;
      const l = labels[m];
      if (l === c) return m;
      if (l < c) a = m + 1;
      else b = m - 1;
    }
    return -1;
  }

  /** The length in code units of the longest piece at text[i…], or 0. */
  longest(text, i) {
    let node = 0;
    let best = 0;
    for (let k = i; k < text.length; k++) {
      node = this.child(node, text.charCodeAt(k));
      if (node < 0) break;
      if (this.value[node] >= 0) best = k + 1 - i;
    }
    return best;
  }
}
