// The BPE of transformers' slow byte-level classes (v4.40: RobertaTokenizer's and CLIPTokenizer's
// `bpe()`): rounds, each merging every occurrence of the lowest-ranked adjacent pair, left to right,
// until no pair has a rank. A heap of (rank, position) keeps a long word at n log n; the Python
// rescans the word each round. Not here: the tokenizer.json BPE (bpe.js, the Rust library's rules).
// Also what both classes share around it: the word cache and the byte symbols back to text.
import { BYTE_SYMBOL, SYMBOL_BYTE } from './byte_level.js';

const utf8 = new TextEncoder();
const lossy = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * bpe(token) through the class's cache (the Python's self.cache, bounded here: words under 256 characters, 10 000
 * of them): `symbols(token)` gives the starting symbols when the word is not cached.
 */
export function cachedBpe(cache, token, ranks, symbols) {
  const cached = cache.get(token);
  if (cached) return cached;
  const out = bpeRounds(symbols(token), ranks);
  if (token.length < 256 && cache.size < 10000) cache.set(token, out);
  return out;
}

/** A piece of text as byte-level symbols: its UTF-8 bytes, each as its symbol (the Python's byte_encoder). */
export function byteSymbols(piece) {
  let symbols = '';
  for (const b of utf8.encode(piece)) symbols += BYTE_SYMBOL[b];
  return symbols;
}

/** Byte-level symbols as the UTF-8 text they spell (errors="replace"); a symbol that is no byte's, as itself. */
export function byteSymbolsText(text) {
  const bytes = [];
  for (const c of text) {
    const code = c.codePointAt(0);
    const b = code < SYMBOL_BYTE.length ? SYMBOL_BYTE[code] : -1;
    if (b >= 0) bytes.push(b);
    else bytes.push(...utf8.encode(c)); // not a byte symbol (the Python raises KeyError)
  }
  return lossy.decode(Uint8Array.from(bytes));
}

/**
 * The merged symbols of one word.
 * @param {string[]} sym the word's starting symbols (modified: pass a copy you own)
 * @param {Map<string, number>} ranks 'left right' → rank (merges.txt order)
 * @returns {string[]} a new array owned by the caller
 */
export function bpeRounds(sym, ranks) {
  const n = sym.length;
  const next = Int32Array.from({ length: n }, (_, i) => (i + 1 < n ? i + 1 : -1));
  const prev = Int32Array.from({ length: n }, (_, i) => i - 1);
  const heap = []; // [rank, position, left symbol, right symbol]
  const less = (a, b) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);
  const push = (x) => {
    heap.push(x);
    for (let i = heap.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!less(heap[i], heap[p])) break;
      [heap[i], heap[p]] = [heap[p], heap[i]];
      i = p;
    }
  };
  const pop = () => {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length) {
      heap[0] = last;
      for (let i = 0; ;) {
        let m = i;
        for (const c of [2 * i + 1, 2 * i + 2]) if (c < heap.length && less(heap[c], heap[m])) m = c;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  };
  const pair = (i) => {
    const j = next[i];
    if (i < 0 || j < 0) return;
    const r = ranks.get(`${sym[i]} ${sym[j]}`);
    if (r !== undefined) push([r, i, sym[i], sym[j]]);
  };
  for (let i = 0; i + 1 < n; i++) pair(i);
  while (heap.length) {
    // One round: every occurrence of the lowest-ranked pair, left to right.
    const rank = heap[0][0];
    const round = [];
    while (heap.length && heap[0][0] === rank) round.push(pop());
    const merged = [];
    for (const [, i, a, b] of round) {
      const j = next[i];
      if (sym[i] !== a || j < 0 || sym[j] !== b) continue; // consumed earlier in this round
      sym[i] = a + b;
      sym[j] = null;
      next[i] = next[j];
      if (next[j] >= 0) prev[next[j]] = i;
      merged.push(i);
    }
    for (const i of merged) {
      if (sym[i] === null) continue;
      pair(prev[i]);
      pair(i);
    }
  }
  const out = [];
  for (let i = n > 0 ? 0 : -1; i >= 0; i = next[i]) out.push(sym[i]);
  return out;
}
