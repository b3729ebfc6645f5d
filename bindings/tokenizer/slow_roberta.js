// transformers' RobertaTokenizer (v4.40) for folders with vocab.json + merges.txt and no
// tokenizer.json: GPT-2's pre-tokenizer regex, each piece's UTF-8 bytes as byte symbols, BPE by
// merge rank as the Python `bpe()` runs it (slow_bpe.js), <s> text </s>. Decoding reads the byte
// symbols back as UTF-8 (errors="replace").
import { SlowTokenizer } from './slow_tokenizer.js';
import { fairseqPair } from './post_processors.js';
import { addedToken, pyIsSpace } from './slow_added.js';
import { convertedOnce, robertaJson } from './slow_converters.js';
import { byteSymbols, byteSymbolsText, cachedBpe } from './slow_bpe.js';

// `regex`'s \s is Unicode White_Space (with U+0085, without U+FEFF: JS's \s differs in both).
const S = '\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PATTERN = new RegExp(`'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^${S}\\p{L}\\p{N}]+|[${S}]+(?![^${S}])|[${S}]+`, 'gu');

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
      for (const t of this._bpe(byteSymbols(piece))) out.push(t);
    }
    return out;
  }

  /** bpe(token): the merged symbols of one piece. */
  _bpe(token) {
    return cachedBpe(this.cache, token, this.ranks, (t) => [...t]);
  }

  _convertTokenToId(token) {
    return this.encoder.get(token) ?? this.encoder.get(this.specialToken('unk_token'));
  }

  _convertIdToToken(id) {
    return this.decoder.get(id);
  }

  convertTokensToString(tokens) {
    return byteSymbolsText(tokens.join(''));
  }

  _specials() {
    return { before: [this.specialTokenId('cls_token')], after: [this.specialTokenId('sep_token')] };
  }

  /** build_inputs_with_special_tokens(ids_0, ids_1): <s> A </s></s> B </s>, all type 0. */
  _pairSpecials() {
    return fairseqPair(this.specialTokenId('cls_token'), this.specialTokenId('sep_token'));
  }
}
