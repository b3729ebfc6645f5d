// transformers' T5Tokenizer (v4.40) for spiece.model folders (t5, mt5, flan-t5): SentencePiece ids,
// the <extra_id_N> sentinels (extra_ids, default 100) as added tokens at the end of the vocabulary in
// reverse order, </s> appended unless the text already ends with it, and the `legacy` flag (false: the
// model loaded with add_dummy_prefix off, a '▁' written first, and text after an added token encoded
// without a spurious '▁'). Decoding drops the first piece's '▁' (add_prefix_space, default true).
import { invalid, show } from './json.js';
import { SlowTokenizer } from './slow_tokenizer.js';
import { addedToken, pyStrip, tokenText } from './slow_added.js';

export class T5Tokenizer extends SlowTokenizer {
  /**
   * @param {import('./sentencepiece.js').SentencePieceProcessor} sp spiece.model
   * @param {object} kwargs from_pretrained's init kwargs
   */
  constructor(sp, kwargs) {
    const special = (v, d) => (v === undefined ? addedToken(d, { special: true }) : typeof v === 'string' ? addedToken(v, { special: true }) : v);
    const extraIds = kwargs.extra_ids ?? 100;
    if (!Number.isInteger(extraIds) || extraIds < 0) throw invalid('extra_ids', `expected an integer >= 0, got ${show(extraIds)}`, 'tokenizer_config.json');
    let additional = kwargs.additional_special_tokens;
    let extraTokens;
    if (additional != null) {
      if (!Array.isArray(additional)) throw invalid('additional_special_tokens', `expected a list of tokens, got ${show(additional)}`, 'tokenizer_config.json');
      extraTokens = additional.filter((x) => tokenText(x).includes('<extra_id_'));
      if (extraTokens.length < 1) additional = [...additional, ...Array.from({ length: extraIds }, (_, i) => `<extra_id_${i}>`)];
      else if (extraIds > 0 && extraIds !== extraTokens.length) {
        throw invalid('extra_ids', `${extraIds}, but additional_special_tokens has ${extraTokens.length} <extra_id_N> tokens (T5Tokenizer refuses this too)`, 'tokenizer_config.json');
      }
    } else {
      extraTokens = Array.from({ length: extraIds }, (_, i) => `<extra_id_${i}>`);
      additional = extraTokens;
    }
    // The sentinels: <extra_id_0> is the last id, as the Python class presets them.
    const preset = new Map();
    for (let i = 0; i < extraTokens.length; i++) {
      preset.set(sp.size - 1 + extraIds - i, addedToken(`<extra_id_${i}>`, { lstrip: true, rstrip: true, special: true, normalized: false }));
    }
    const k = { ...kwargs, eos_token: special(kwargs.eos_token, '</s>'), unk_token: special(kwargs.unk_token, '<unk>'), pad_token: special(kwargs.pad_token, '<pad>'), additional_special_tokens: additional, preset_added: preset };
    super(k, 'tokenizer_config.json');
    this.legacy = kwargs.legacy ?? true;
    this._extraIds = extraIds;
    this._holdAfterSpecial = true; // convertTokensToString writes ' ' before a run of pieces once a special token follows it
    this.addPrefixSpace = kwargs.add_prefix_space ?? true;
    this.sp = this.legacy ? sp : sp.withNormalizer({ add_dummy_prefix: false });
    this._baseSize = sp.size;
    this._finishInit();
    this._unkLength = this.sp.encode(this.specialToken('unk_token')).pieces.length;
  }

  _hasToken() {
    return true; // piece_to_id answers for any string (the unknown id)
  }

  tokenize(text, mode) {
    if (this.legacy || text.length === 0) return super.tokenize(text, mode);
    text = text.replaceAll('\u2581', ' ');
    if (this.addPrefixSpace) text = '\u2581' + text;
    const tokens = super.tokenize(text, mode);
    if (tokens.length > 1 && tokens[0] === '\u2581' && this.allSpecialTokens().includes(tokens[1])) return tokens.slice(1);
    return tokens;
  }

  _tokenize(text) {
    const tokens = this.sp.encode(text).pieces;
    if (this.legacy || !(text.startsWith('\u2581') || text.startsWith(' '))) return tokens;
    const withUnk = this.sp.encode(this.specialToken('unk_token') + text).pieces;
    return withUnk.length >= this._unkLength ? withUnk.slice(this._unkLength) : withUnk;
  }

  _convertTokenToId(token) {
    return this.sp.pieceToId(token);
  }

  _convertIdToToken(id) {
    return this.sp.idToPiece(id);
  }

  convertTokensToString(tokens) {
    tokens = tokens.slice();
    if (tokens[0].startsWith('\u2581') && this.addPrefixSpace) tokens[0] = tokens[0].slice(1);
    return spmTokensToString(this, tokens);
  }

  _specials() {
    return { before: [], after: [this.specialTokenId('eos_token')] };
  }

  /** _add_eos_if_not_present: a text whose ids already end with </s> gets no second one. */
  _templateOf(ids, template) {
    return eosUnlessPresent(this, ids, template);
  }
}

/**
 * convert_tokens_to_string of T5Tokenizer and SiglipTokenizer: runs of pieces decoded by
 * SentencePiece, a special token written as itself (with a space before the first of a run), stripped.
 * @param {SlowTokenizer & { sp: import('./sentencepiece.js').SentencePieceProcessor }} tok
 * @param {string[]} tokens
 */
export function spmTokensToString(tok, tokens) {
  const specials = new Set(tok.allSpecialTokens());
  let current = [];
  let out = '';
  let prevSpecial = false;
  for (const t of tokens) {
    if (specials.has(t)) {
      if (!prevSpecial) out += ' ';
      out += tok.sp.decodePieces(current) + t;
      prevSpecial = true;
      current = [];
    } else {
      current.push(t);
      prevSpecial = false;
    }
  }
  out += tok.sp.decodePieces(current);
  return pyStrip(out);
}

/** _add_eos_if_not_present (T5Tokenizer, SiglipTokenizer): the template without its </s> when the ids already end with it. */
export function eosUnlessPresent(tok, ids, template) {
  const eos = tok.specialTokenId('eos_token');
  return ids.length > 0 && ids[ids.length - 1] === eos ? { ...template, after: [], afterTypes: new Int32Array(0) } : template;
}
