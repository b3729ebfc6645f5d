// transformers' CLIPTokenizer (v4.40) for folders with vocab.json + merges.txt and no tokenizer.json,
// as it runs without the ftfy package (the Python class's fallback, and what a Python user without
// ftfy gets): BasicTokenizer(strip_accents=False, do_split_on_punc=False) — control characters
// dropped, spaces around CJK ideographs, NFC, lowercased — its tokens joined by one space, CLIP's
// regex, each piece's UTF-8 bytes as byte symbols, BPE by merge rank with '</w>' on the last symbol
// (slow_bpe.js), <|startoftext|> text <|endoftext|>. With ftfy the Python class first runs
// ftfy.fix_text (mojibake repair, not emulated here): texts ftfy would change can get other ids.
import { SlowTokenizer } from './slow_tokenizer.js';
import { fairseqPair } from './post_processors.js';
import { addedToken, PY_SPACE, pyStrip } from './slow_added.js';
import { basicTokenize } from './slow_bert.js';
import { byteSymbols, byteSymbolsText, cachedBpe } from './slow_bpe.js';

// `regex`'s \s is Unicode White_Space (with U+0085, without U+FEFF); IGNORECASE as the Python's (simple case folding: 'ſ' matches 's').
const S = '\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PATTERN = new RegExp(`<\\|startoftext\\|>|<\\|endoftext\\|>|'s|'t|'re|'ve|'m|'ll|'d|\\p{L}+|\\p{N}|[^${S}\\p{L}\\p{N}]+`, 'giu');
const PY_SPLIT = new RegExp(`[${PY_SPACE}]+`);
/** The Python reads this many merges at most (49152 - 256 - 2: CLIP's vocabulary less the bytes and the two specials). */
const MAX_MERGES = 49152 - 256 - 2;
const SUFFIX = '</w>';

/**
 * CLIP's merges.txt as the Python reads it: the text stripped, its lines after the first, at most
 * 48 894 of them, each split on whitespace; rank = line index (a pair given twice keeps its last).
 * @param {string} text
 * @returns {Map<string, number>} 'left right' → rank, new
 */
export function readClipMerges(text) {
  const ranks = new Map();
  pyStrip(text).split('\n').slice(1, MAX_MERGES + 1).forEach((line, r) => {
    const parts = line.split(PY_SPLIT).filter((p) => p !== '');
    if (parts.length === 2) ranks.set(`${parts[0]} ${parts[1]}`, r); // another shape never matches a pair
  });
  return ranks;
}

export class CLIPTokenizer extends SlowTokenizer {
  /** @param {{ vocab: Map<string, number>, ranks: Map<string, number> }} files @param {object} kwargs */
  constructor({ vocab, ranks }, kwargs) {
    const t = (v, d) => (v === undefined ? addedToken(d) : typeof v === 'string' ? addedToken(v) : v);
    super({ ...kwargs, unk_token: t(kwargs.unk_token, '<|endoftext|>'), bos_token: t(kwargs.bos_token, '<|startoftext|>'),
      eos_token: t(kwargs.eos_token, '<|endoftext|>'), pad_token: kwargs.pad_token === undefined ? '<|endoftext|>' : kwargs.pad_token }, 'tokenizer_config.json');
    this.encoder = vocab;
    this.decoder = new Map([...vocab].map(([tok, id]) => [id, tok]));
    this.ranks = ranks;
    // The Python's cache starts with the two specials: the regex's first alternatives, kept whole (no '</w>').
    this.cache = new Map([['<|startoftext|>', ['<|startoftext|>']], ['<|endoftext|>', ['<|endoftext|>']]]);
    this._baseSize = vocab.size;
    this._finishInit();
  }

  _getVocab() {
    return new Map([...this.encoder, ...this._addedEncoder]);
  }

  _hasToken(token) {
    return this.encoder.has(token);
  }

  _hasId(id) {
    return this._addedDecoder.has(id) || this.decoder.has(id);
  }

  _tokenize(text) {
    const clean = basicTokenize(text, { doLowerCase: true, stripAccents: false, splitOnPunc: false }).join(' ');
    const out = [];
    for (const [piece] of clean.matchAll(PATTERN)) {
      for (const t of this._bpe(byteSymbols(piece))) out.push(t);
    }
    return out;
  }

  /** bpe(token): the merged symbols of one piece, '</w>' on its last. */
  _bpe(token) {
    return cachedBpe(this.cache, token, this.ranks, (t) => {
      const sym = [...t];
      sym[sym.length - 1] += SUFFIX;
      return sym;
    });
  }

  _convertTokenToId(token) {
    return this.encoder.get(token) ?? this.encoder.get(this.specialToken('unk_token'));
  }

  _convertIdToToken(id) {
    return this.decoder.get(id);
  }

  /** The tokens' byte symbols as UTF-8 (errors="replace"), each '</w>' a space, stripped. */
  convertTokensToString(tokens) {
    return pyStrip(byteSymbolsText(tokens.join('')).replaceAll(SUFFIX, ' '));
  }

  _specials() {
    return { before: [this.specialTokenId('bos_token')], after: [this.specialTokenId('eos_token')] };
  }

  /** build_inputs_with_special_tokens(ids_0, ids_1): bos A eos eos B eos, all type 0. */
  _pairSpecials() {
    return fairseqPair(this.specialTokenId('bos_token'), this.specialTokenId('eos_token'));
  }
}
