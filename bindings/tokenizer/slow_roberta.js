// transformers' RobertaTokenizer (v4.40) for folders with vocab.json + merges.txt and no
// tokenizer.json: GPT-2's pre-tokenizer regex, each piece's UTF-8 bytes as byte symbols, BPE by
// merge rank as the Python `bpe()` runs it (each round merges every occurrence of the lowest-ranked
// pair, left to right; a heap keeps a long word at n log n), <s> text </s>. Decoding reads the byte
// symbols back as UTF-8 (errors="replace").
import { SlowTokenizer } from './slow_tokenizer.js';
import { fairseqPair } from './post_processors.js';
import { addedToken, pyIsSpace } from './slow_added.js';
import { BYTE_SYMBOL, SYMBOL_BYTE } from './byte_level.js';
import { convertedOnce, robertaJson } from './slow_converters.js';

// `regex`'s \s is Unicode White_Space (with U+0085, without U+FEFF: JS's \s differs in both).
const S = '\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PATTERN = new RegExp(`'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${S}\\p{L}\\p{N}]+|[${S}]+(?![^${S}])|[${S}]+`, 'gu');
const utf8 = new TextEncoder();
const lossy = new TextDecoder('utf-8', { ignoreBOM: true });

/** merges.txt as the Python reads it: lines after the first, the last (after the final newline) dropped; a pair given twice keeps its last rank. */
export function readMerges(text) {
  const ranks = new Map();
  text.split('\n').slice(1, -1).forEach((line, r) => {
    const parts = line.split(/[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\x1c-\x1f]+/).filter((p) => p !== '');
    if (parts.length === 2) ranks.set(`${parts[0]} ${parts[1]}`, r); // another shape never matches a pair
  });
  return ranks;
}

export class RobertaTokenizer extends SlowTokenizer {
  /** @param {{ vocab: Map<string, number>, ranks: Map<string, number> }} files @param {object} kwargs */
  constructor({ vocab, ranks }, kwargs) {
    const t = (v, d, flags = {}) => (v === undefined ? addedToken(d, flags) : typeof v === 'string' ? addedToken(v, flags) : v);
    super({ ...kwargs, bos_token: t(kwargs.bos_token, '<s>'), eos_token: t(kwargs.eos_token, '</s>'), sep_token: t(kwargs.sep_token, '</s>'),
      cls_token: t(kwargs.cls_token, '<s>'), unk_token: t(kwargs.unk_token, '<unk>'), pad_token: t(kwargs.pad_token, '<pad>'),
      mask_token: t(kwargs.mask_token, '<mask>', { lstrip: true, normalized: false }) }, 'tokenizer_config.json');
    this.encoder = vocab;
    this.decoder = new Map([...vocab].map(([tok, id]) => [id, tok]));
    this.ranks = ranks;
    this.addPrefixSpace = kwargs.add_prefix_space ?? false;
    /** RobertaTokenizerFast's trim_offsets (tokenizer_config.json, default true): only the converted tokenizer's offsets read it. */
    this.trimOffsets = kwargs.trim_offsets ?? true;
    this.cache = new Map();
    this._baseSize = vocab.size;
    this._finishInit();
  }

  _getVocab() {
    return new Map([...this.encoder, ...this._addedEncoder]);
  }

  /** RobertaConverter's tokenizer.json for these files, loaded (slow_converters.js): encode's returnOffsets. */
  _converted() {
    return convertedOnce(this, robertaJson);
  }

  _hasToken(token) {
    return this.encoder.has(token);
  }

  _hasId(id) {
    return this._addedDecoder.has(id) || this.decoder.has(id);
  }

  _prepareForTokenization(text) {
    return this.addPrefixSpace && text.length > 0 && !pyIsSpace(String.fromCodePoint(text.codePointAt(0))) ? ' ' + text : text;
  }

  _tokenize(text) {
    const out = [];
    for (const [piece] of text.matchAll(PATTERN)) {
      let symbols = '';
      for (const b of utf8.encode(piece)) symbols += BYTE_SYMBOL[b];
      for (const t of this._bpe(symbols)) out.push(t);
    }
    return out;
  }

  /** bpe(token): the merged symbols of one piece. */
  _bpe(token) {
    const cached = this.cache.get(token);
    if (cached) return cached;
    const sym = [...token];
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
      const r = this.ranks.get(`${sym[i]} ${sym[j]}`);
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
    for (let i = 0; i >= 0; i = next[i]) out.push(sym[i]);
    if (token.length < 256 && this.cache.size < 10000) this.cache.set(token, out);
    return out;
  }

  _convertTokenToId(token) {
    return this.encoder.get(token) ?? this.encoder.get(this.specialToken('unk_token'));
  }

  _convertIdToToken(id) {
    return this.decoder.get(id);
  }

  convertTokensToString(tokens) {
    const text = tokens.join('');
    const bytes = [];
    for (const c of text) {
      const code = c.codePointAt(0);
      const b = code < SYMBOL_BYTE.length ? SYMBOL_BYTE[code] : -1;
      if (b >= 0) bytes.push(b);
      else bytes.push(...utf8.encode(c)); // not a byte symbol (the Python raises KeyError)
    }
    return lossy.decode(Uint8Array.from(bytes));
  }

  _specials() {
    return { before: [this.specialTokenId('cls_token')], after: [this.specialTokenId('sep_token')] };
  }

  /** build_inputs_with_special_tokens(ids_0, ids_1): <s> A </s></s> B </s>, all type 0. */
  _pairSpecials() {
    return fairseqPair(this.specialTokenId('cls_token'), this.specialTokenId('sep_token'));
  }
}
