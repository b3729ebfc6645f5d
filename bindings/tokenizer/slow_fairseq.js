// transformers' slow tokenizers over fairseq dictionaries (v4.40): XLMRobertaTokenizer
// (sentencepiece.bpe.model, fairseq's ids: <s> <pad> </s> <unk> then the pieces shifted by one,
// <mask> last), NllbTokenizer (the same offset, 202 language codes as added tokens after the pieces,
// [lang] text </s> or, with legacy_behaviour, text </s> [lang]) and M2M100Tokenizer (vocab.json's
// ids for the pieces, __xx__ language tokens after them, [__src__] text </s>). Their `srcLang` /
// `tgtLang` options choose the language tokens; an unknown code is refused by name (the Python
// classes raise KeyError or quietly use <unk>). MBartTokenizer (mBART-25: text </s> [lang]) and MBart50Tokenizer
// ([lang] text </s>): XLM-R's ids with the language codes and <mask> as fairseq ids after the pieces.
import { AttnWasmError } from '../errors.js';
import { invalid, show } from './json.js';
import { SlowTokenizer } from './slow_tokenizer.js';
import { fairseqPair } from './post_processors.js';
import { addedToken, pyStrip, tokenText } from './slow_added.js';
import { M2M100_LANGUAGES, MBART50_LANGUAGES, MBART_LANGUAGES, NLLB_LANGUAGES } from './slow_languages.js';
import { convertedOnce, xlmRobertaJson } from './slow_converters.js';
import { spmTokensToString } from './slow_t5.js';

const asToken = (v, d, flags) => (v === undefined ? addedToken(d, flags) : typeof v === 'string' ? addedToken(v, flags) : v);

function unknownLanguage(option, code, codes) {
  return new AttnWasmError('ERR_INVALID_ARGUMENT', `${option}: expected one of this tokenizer's ${codes.length} language codes (${codes.slice(0, 6).join(', ')}, …), got ${typeof code === 'string' ? `'${code}'` : show(code)}`);
}

/**
 * The language of a text: srcLang (tokenizer_config.json's src_lang by default), or for a target text
 * tgtLang (tgt_lang); both options are checked whenever given.
 */
function chooseLanguage(o, tok) {
  for (const k of ['srcLang', 'tgtLang']) if (o[k] !== undefined && !tok.languageCodes.includes(o[k])) throw unknownLanguage(k, o[k], tok.languageCodes);
  const target = o.target === true;
  const lang = target ? o.tgtLang ?? tok.tgtLang : o.srcLang ?? tok.srcLang;
  if (lang === null) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'tgtLang: a target text needs a target language (none given, and tokenizer_config.json has no tgt_lang)');
  if (!tok.languageCodes.includes(lang)) throw unknownLanguage(target ? 'tgt_lang' : 'src_lang', lang, tok.languageCodes);
  return lang;
}

/** The join every fairseq class decodes with: pieces concatenated, '▁' as spaces, stripped. */
const joinPieces = (tokens) => pyStrip(tokens.join('').replaceAll('\u2581', ' '));

/** The classes whose fairseq tokens (this.fairseq: token → id) come before the pieces shifted by one (XLM-R, mBART). */
class FairseqSpmTokenizer extends SlowTokenizer {
  _hasToken() {
    return true;
  }

  _tokenize(text) {
    return this.sp.encode(text).pieces;
  }

  _convertTokenToId(token) {
    if (this.fairseq.has(token)) return this.fairseq.get(token);
    const id = this.sp.pieceToId(token);
    return id ? id + 1 : this.specialTokenId('unk_token');
  }

  _convertIdToToken(id) {
    return this.fairseqIds.get(id) ?? this.sp.idToPiece(id - 1);
  }
}

export class XLMRobertaTokenizer extends FairseqSpmTokenizer {
  /** @param {import('./sentencepiece.js').SentencePieceProcessor} sp @param {object} kwargs */
  constructor(sp, kwargs) {
    super({ bos_token: '<s>', eos_token: '</s>', sep_token: '</s>', cls_token: '<s>', unk_token: '<unk>', pad_token: '<pad>', ...kwargs,
      mask_token: asToken(kwargs.mask_token, '<mask>', { lstrip: true, special: true }) }, 'tokenizer_config.json');
    this.sp = sp;
    this.fairseq = new Map([['<s>', 0], ['<pad>', 1], ['</s>', 2], ['<unk>', 3], ['<mask>', sp.size + 1]]);
    this.fairseqIds = new Map([...this.fairseq].map(([t, id]) => [id, t]));
    this._baseSize = sp.size + 2;
    this._finishInit();
  }

  /** XLMRobertaConverter's tokenizer.json for this model, loaded (slow_converters.js): encode's returnOffsets. */
  _converted() {
    return convertedOnce(this, xlmRobertaJson);
  }

  convertTokensToString(tokens) {
    return joinPieces(tokens);
  }

  _specials() {
    return { before: [this.specialTokenId('cls_token')], after: [this.specialTokenId('sep_token')] };
  }

  /** build_inputs_with_special_tokens(ids_0, ids_1): <s> A </s></s> B </s>, all type 0. */
  _pairSpecials() {
    return fairseqPair(this.specialTokenId('cls_token'), this.specialTokenId('sep_token'));
  }
}

export class NllbTokenizer extends SlowTokenizer {
  /** @param {import('./sentencepiece.js').SentencePieceProcessor} sp @param {object} kwargs */
  constructor(sp, kwargs) {
    const plain = { normalized: false, special: true };
    const bos = asToken(kwargs.bos_token, '<s>', plain);
    const pad = asToken(kwargs.pad_token, '<pad>', plain);
    const eos = asToken(kwargs.eos_token, '</s>', plain);
    const unk = asToken(kwargs.unk_token, '<unk>', plain);
    const additional = kwargs.additional_special_tokens ?? NLLB_LANGUAGES;
    if (!Array.isArray(additional)) throw invalid('additional_special_tokens', `expected a list of language codes, got ${show(additional)}`, 'tokenizer_config.json');
    super({ sep_token: '</s>', cls_token: '<s>', ...kwargs, bos_token: bos, pad_token: pad, eos_token: eos, unk_token: unk,
      mask_token: asToken(kwargs.mask_token, '<mask>', { normalized: true, lstrip: true, special: true }), additional_special_tokens: additional,
      preset_added: new Map([[0, bos], [1, pad], [2, eos], [3, unk]]) }, 'tokenizer_config.json');
    this.sp = sp;
    this._baseSize = sp.size + 1;
    this.legacyBehaviour = kwargs.legacy_behaviour === true;
    /** The language codes (srcLang / tgtLang values): additional_special_tokens. */
    this.languageCodes = additional.map(tokenText);
    this._finishInit();
    this.srcLang = kwargs.src_lang ?? 'eng_Latn';
    this.tgtLang = kwargs.tgt_lang ?? null;
  }

  _hasToken() {
    return true;
  }

  _tokenize(text) {
    return this.sp.encode(text).pieces;
  }

  _convertTokenToId(token) {
    const id = this.sp.pieceToId(token);
    return id ? id + 1 : this.specialTokenId('unk_token');
  }

  _convertIdToToken(id) {
    return this.sp.idToPiece(id - 1);
  }

  convertTokensToString(tokens) {
    return joinPieces(tokens);
  }

  /** The id of a language code (the forced first token of a translation into it). */
  languageId(code) {
    if (!this.languageCodes.includes(code)) throw unknownLanguage('language', code, this.languageCodes);
    return this.convertTokenToId(code);
  }

  _modeOptions() {
    return ['srcLang', 'tgtLang', 'target'];
  }

  _mode(o) {
    return { lang: this.convertTokenToId(chooseLanguage(o, this)) };
  }

  _specials(mode) {
    const eos = this.specialTokenId('eos_token');
    return this.legacyBehaviour ? { before: [], after: [eos, mode.lang] } : { before: [mode.lang], after: [eos] };
  }
}

export class M2M100Tokenizer extends SlowTokenizer {
  /** @param {{ sp: import('./sentencepiece.js').SentencePieceProcessor, vocab: Map<string, number> }} files @param {object} kwargs */
  constructor({ sp, vocab }, kwargs) {
    const set = kwargs.language_codes ?? 'm2m100';
    const codes = M2M100_LANGUAGES[set];
    if (!codes) throw invalid('language_codes', `expected 'm2m100' or 'wmt21', got ${show(set)}`, 'tokenizer_config.json');
    // The Python appends no language token to additional_special_tokens (its condition is never true):
    // they are special only when the file lists them.
    super({ bos_token: '<s>', eos_token: '</s>', sep_token: '</s>', pad_token: '<pad>', unk_token: '<unk>', ...kwargs,
      additional_special_tokens: kwargs.additional_special_tokens ?? [] }, 'tokenizer_config.json');
    this.sp = sp;
    this.encoder = vocab;
    this.decoder = new Map([...vocab].map(([t, id]) => [id, t]));
    this._baseSize = vocab.size;
    this.languageCodes = codes;
    this.langTokenToId = new Map(codes.map((c, i) => [`__${c}__`, vocab.size + i]));
    this.idToLangToken = new Map([...this.langTokenToId].map(([t, id]) => [id, t]));
    if (!vocab.has(this.specialToken('unk_token'))) throw invalid('unk_token', `'${this.specialToken('unk_token')}' is not in vocab.json`, 'vocab.json');
    this._finishInit();
    this._maxId = Math.max(this._maxId, vocab.size + codes.length - 1); // the language tokens follow the vocabulary
    this.srcLang = kwargs.src_lang ?? 'en';
    this.tgtLang = kwargs.tgt_lang ?? null;
  }

  _hasToken(token) {
    return this.encoder.has(token) || this.langTokenToId.has(token);
  }

  _hasId(id) {
    return this._addedDecoder.has(id) || this.decoder.has(id) || this.idToLangToken.has(id);
  }

  _tokenize(text) {
    return this.sp.encode(text).pieces;
  }

  _convertTokenToId(token) {
    return this.langTokenToId.get(token) ?? this.encoder.get(token) ?? this.encoder.get(this.specialToken('unk_token'));
  }

  _convertIdToToken(id) {
    return this.idToLangToken.get(id) ?? this.decoder.get(id) ?? this.specialToken('unk_token');
  }

  convertTokensToString(tokens) {
    const specials = new Set(this.allSpecialTokens());
    let current = [];
    let out = '';
    for (const t of tokens) {
      if (specials.has(t)) {
        out += this.sp.decodePieces(current) + t;
        current = [];
      } else current.push(t);
    }
    return pyStrip(out + this.sp.decodePieces(current));
  }

  /** The id of a language code's __xx__ token (the forced first token of a translation into it). */
  languageId(code) {
    if (!this.languageCodes.includes(code)) throw unknownLanguage('language', code, this.languageCodes);
    return this.langTokenToId.get(`__${code}__`);
  }

  _modeOptions() {
    return ['srcLang', 'tgtLang', 'target'];
  }

  _mode(o) {
    return { lang: this.langTokenToId.get(`__${chooseLanguage(o, this)}__`) };
  }

  _specials(mode) {
    return { before: [mode.lang], after: [this.specialTokenId('eos_token')] };
  }
}

/**
 * MBartTokenizer (tokenization_mbart.py, mBART-25) and, with `fifty`, MBart50Tokenizer: sentencepiece.bpe.model with
 * fairseq's ids (<s> <pad> </s> <unk>, the pieces shifted by one), the language codes next (sp size + 1 + i, special
 * tokens), <mask> last. mBART-25 writes text </s> [lang], mBART-50 [lang] text </s>; srcLang (src_lang, default
 * en_XX) for sources, tgtLang for targets. mBART-50 decodes as ALBERT does (special tokens outside sentencepiece).
 */
class MBartBase extends FairseqSpmTokenizer {
  constructor(sp, kwargs, fifty) {
    const codes = fifty ? MBART50_LANGUAGES : MBART_LANGUAGES;
    const given = kwargs.additional_special_tokens ?? [];
    if (!Array.isArray(given)) throw invalid('additional_special_tokens', `expected a list of tokens, got ${show(given)}`, 'tokenizer_config.json');
    const givenText = given.map(tokenText);
    // mBART-25 lists its codes first then the file's others; mBART-50 the file's then the codes it lacks.
    const additional = fifty ? [...given, ...codes.filter((c) => !givenText.includes(c))] : [...codes, ...given.filter((t) => !codes.includes(tokenText(t)))];
    super({ bos_token: '<s>', eos_token: '</s>', sep_token: '</s>', cls_token: '<s>', unk_token: '<unk>', pad_token: '<pad>', ...kwargs,
      mask_token: asToken(kwargs.mask_token, '<mask>', fifty ? { lstrip: true, rstrip: false } : { lstrip: true, normalized: false }),
      additional_special_tokens: additional }, 'tokenizer_config.json');
    this.sp = sp;
    this.fifty = fifty;
    // mBART-50's convertTokensToString writes ' ' before a run of pieces once a special token follows it
    this._holdAfterSpecial = fifty;
    this.fairseq = new Map([['<s>', 0], ['<pad>', 1], ['</s>', 2], ['<unk>', 3]]);
    codes.forEach((c, i) => this.fairseq.set(c, sp.size + 1 + i));
    this.fairseq.set('<mask>', sp.size + 1 + codes.length);
    this.fairseqIds = new Map([...this.fairseq].map(([t, id]) => [id, t]));
    this._baseSize = sp.size + codes.length + 2;
    /** The language codes (srcLang / tgtLang values). */
    this.languageCodes = codes;
    this._finishInit();
    this.srcLang = kwargs.src_lang ?? 'en_XX';
    this.tgtLang = kwargs.tgt_lang ?? null;
    if (!codes.includes(this.srcLang)) throw unknownLanguage('src_lang', this.srcLang, codes);
  }

  convertTokensToString(tokens) {
    return this.fifty ? spmTokensToString(this, tokens) : joinPieces(tokens);  // mBART-50's is ALBERT's, as T5's
  }

  /** The id of a language code (the forced first token of a translation into it). */
  languageId(code) {
    if (!this.languageCodes.includes(code)) throw unknownLanguage('language', code, this.languageCodes);
    return this.fairseq.get(code);
  }

  _modeOptions() {
    return ['srcLang', 'tgtLang', 'target'];
  }

  _mode(o) {
    return { lang: this.fairseq.get(chooseLanguage(o, this)) };
  }

  _specials(mode) {
    const eos = this.specialTokenId('eos_token');
    return this.fifty ? { before: [mode.lang], after: [eos] } : { before: [], after: [eos, mode.lang] };
  }
}

export class MBartTokenizer extends MBartBase {
  /** @param {import('./sentencepiece.js').SentencePieceProcessor} sp @param {object} kwargs */
  constructor(sp, kwargs) { super(sp, kwargs, false); }
}

export class MBart50Tokenizer extends MBartBase {
  /** @param {import('./sentencepiece.js').SentencePieceProcessor} sp @param {object} kwargs */
  constructor(sp, kwargs) { super(sp, kwargs, true); }
}
