// transformers' SiglipTokenizer (v4.40; the only SigLIP tokenizer it has) for spiece.model folders:
// the text lowercased (do_lower_case, default true; special tokens kept), '▁' written first (any '▁'
// in the text a space), each part between added tokens canonicalized — ASCII punctuation
// (string.punctuation) removed, runs of whitespace one space, stripped — and encoded by SentencePiece
// with add_dummy_prefix off behind the unknown token's pieces (cut off again), </s> appended unless
// the ids already end with it, no BOS. model_max_length defaults to 64: SiglipProcessor's
// padding="max_length" pads to it with </s> (encodeBatch { padding: 'max_length' }).
import { SlowTokenizer } from './slow_tokenizer.js';
import { addedToken, PY_SPACE, pyStrip } from './slow_added.js';
import { eosUnlessPresent, spmTokensToString } from './slow_t5.js';

const PUNCTUATION = /[!-/:-@[-`{-~]/g; // string.punctuation: the ASCII punctuation
const SPACES = new RegExp(`[${PY_SPACE}]+`, 'g'); // Python re's \s (str.isspace)
const UNDERLINE = '\u2581';

export class SiglipTokenizer extends SlowTokenizer {
  /**
   * @param {import('./sentencepiece.js').SentencePieceProcessor} sp spiece.model
   * @param {object} kwargs from_pretrained's init kwargs
   */
  constructor(sp, kwargs) {
    const flags = { lstrip: true, rstrip: true, normalized: false, special: true };
    const t = (v, d) => (v === undefined ? addedToken(d, flags) : typeof v === 'string' ? addedToken(v, flags) : v);
    super({ model_max_length: 64, ...kwargs, eos_token: t(kwargs.eos_token, '</s>'), unk_token: t(kwargs.unk_token, '<unk>'),
      pad_token: t(kwargs.pad_token, '</s>') }, 'tokenizer_config.json');
    this.doLowerCase = kwargs.do_lower_case ?? true;
    this._holdAfterSpecial = true; // convertTokensToString writes ' ' before a run of pieces once a special token follows it
    this.sp = sp.withNormalizer({ add_dummy_prefix: false });
    this._baseSize = sp.size;
    this._finishInit();
    this._unkLength = this.sp.encode(this.specialToken('unk_token')).pieces.length;
  }

  _hasToken() {
    return true; // piece_to_id answers for any string (the unknown id)
  }

  /** tokenize: '▁' first; a leading lone '▁' before a special token dropped. */
  tokenize(text, mode) {
    const tokens = super.tokenize(UNDERLINE + text.replaceAll(UNDERLINE, ' '), mode);
    if (tokens.length > 1 && tokens[0] === UNDERLINE && this.allSpecialTokens().includes(tokens[1])) return tokens.slice(1);
    return tokens;
  }

  /** canonicalize_text, then encode(unk_token + text) less the unknown token's pieces. */
  _tokenize(text) {
    const canonical = pyStrip(text.replace(PUNCTUATION, '').replace(SPACES, ' '));
    const pieces = this.sp.encode(this.specialToken('unk_token') + canonical).pieces;
    return pieces.length >= this._unkLength ? pieces.slice(this._unkLength) : pieces;
  }

  _convertTokenToId(token) {
    return this.sp.pieceToId(token);
  }

  _convertIdToToken(id) {
    return this.sp.idToPiece(id);
  }

  convertTokensToString(tokens) {
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
