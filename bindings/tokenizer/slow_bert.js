// transformers' BertTokenizer (v4.40; DistilBertTokenizer is the same) for folders with vocab.txt and
// no tokenizer.json: BasicTokenizer (control characters dropped, whitespace to spaces, spaces around
// CJK ideographs with tokenize_chinese_chars, NFC, lowercasing and accent stripping per
// do_lower_case / strip_accents, punctuation split off) then WordPiece (greedy longest match, '##'
// continuations, [UNK] for a word over 100 characters or with a part that matches nothing).
// Character classes are Python's (unicodedata through the engine's Unicode tables).
import { SlowTokenizer } from './slow_tokenizer.js';
import { addedTokensJson, convertedOnce } from './slow_converters.js';
import { pairTemplate, specials } from './post_processors.js';
import { PY_SPACE, pyStrip } from './slow_added.js';

const PY_SPLIT = new RegExp(`[${PY_SPACE}]+`);
const isWhitespace = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || /\p{Zs}/u.test(c);
const isControl = (c) => c !== '\t' && c !== '\n' && c !== '\r' && /\p{C}/u.test(c);
function isPunctuation(c) {
  const cp = c.codePointAt(0);
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126) || /\p{P}/u.test(c);
}
function isChinese(cp) {
  return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df) || (cp >= 0x2a700 && cp <= 0x2b73f)
    || (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b820 && cp <= 0x2ceaf) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);
}

/** Python's whitespace_tokenize: strip, then split on runs of whitespace. */
const whitespaceTokenize = (text) => {
  const s = pyStrip(text);
  return s === '' ? [] : s.split(PY_SPLIT);
};

/** vocab.txt as Python's readlines() reads it (universal newlines): token → its last line's index, index → token. */
export function readVocabTxt(text) {
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const vocab = new Map();
  const idsToTokens = new Map();
  lines.forEach((t, i) => {
    vocab.set(t, i);
    idsToTokens.set(i, t);
  });
  return { vocab, idsToTokens };
}

export class BertTokenizer extends SlowTokenizer {
  /**
   * The tokenizer.json transformers' BertConverter writes for this vocabulary and configuration
   * (BertNormalizer, BertPreTokenizer, WordPiece, [CLS] $A [SEP]), loaded: the offsets of encode's
   * returnOffsets. null without the basic tokenizer (never_split or do_basic_tokenize false, which
   * the converter does not carry) or when the file would not load.
   */
  _converted() {
    return convertedOnce(this, bertJson);
  }

  /** @param {{ vocab: Map<string, number>, idsToTokens: Map<number, string> }} files @param {object} kwargs */
  constructor({ vocab, idsToTokens }, kwargs) {
    super({ unk_token: '[UNK]', sep_token: '[SEP]', pad_token: '[PAD]', cls_token: '[CLS]', mask_token: '[MASK]', ...kwargs }, 'tokenizer_config.json');
    this.vocab = vocab;
    this.idsToTokens = idsToTokens;
    this.doBasicTokenize = kwargs.do_basic_tokenize ?? true;
    // do_lower_case is the BasicTokenizer's: without one (do_basic_tokenize false) nothing is lowercased.
    this.doLowerCase = this.doBasicTokenize && (kwargs.do_lower_case ?? true);
    this.neverSplit = new Set(kwargs.never_split ?? []);
    this.tokenizeChineseChars = kwargs.tokenize_chinese_chars ?? true;
    this.stripAccents = kwargs.strip_accents ?? null;
    this.maxInputCharsPerWord = 100;
    this.longest = 0; // the longest entry, in code units
    for (const t of vocab.keys()) this.longest = Math.max(this.longest, t.length);
    this._baseSize = vocab.size;
    this._finishInit();
  }

  _getVocab() {
    return new Map([...this.vocab, ...this._addedEncoder]);
  }

  _hasToken(token) {
    return this.vocab.has(token);
  }

  _hasId(id) {
    return this._addedDecoder.has(id) || this.idsToTokens.has(id);
  }

  _tokenize(text) {
    if (!this.doBasicTokenize) return this._wordpiece(text);
    const out = [];
    for (const token of this._basic(text, new Set([...this.neverSplit, ...this.allSpecialTokens()]))) {
      if (this.neverSplit.has(token)) out.push(token);
      else out.push(...this._wordpiece(token));
    }
    return out;
  }

  /** BasicTokenizer.tokenize. */
  _basic(text, neverSplit) {
    return basicTokenize(text, { neverSplit, doLowerCase: this.doLowerCase, stripAccents: this.stripAccents, tokenizeChineseChars: this.tokenizeChineseChars });
  }

  /**
   * WordpieceTokenizer.tokenize. The candidates start at the longest vocabulary entry's length, not
   * at the word's end: a longer substring matches nothing, so the result is the same and a word costs
   * O(length · longest entry), not O(length²).
   */
  _wordpiece(text) {
    const out = [];
    const unk = this.specialToken('unk_token');
    for (const token of whitespaceTokenize(text)) {
      const at = []; // code unit offset of each character, and the end
      for (let i = 0; i < token.length; i += token.codePointAt(i) > 0xffff ? 2 : 1) at.push(i);
      const n = at.length;
      at.push(token.length);
      if (n > this.maxInputCharsPerWord) {
        out.push(unk);
        continue;
      }
      const sub = [];
      let bad = false;
      for (let start = 0; start < n;) {
        let end = n;
        while (end > start && (start > 0 ? 2 : 0) + at[end] - at[start] > this.longest) end--;
        let found = null;
        for (; start < end; end--) {
          const s = (start > 0 ? '##' : '') + token.slice(at[start], at[end]);
          if (this.vocab.has(s)) {
            found = s;
            break;
          }
        }
        if (found === null) {
          bad = true;
          break;
        }
        sub.push(found);
        start = end;
      }
      if (bad) out.push(unk);
      else out.push(...sub);
    }
    return out;
  }

  _convertTokenToId(token) {
    return this.vocab.get(token) ?? this.vocab.get(this.specialToken('unk_token'));
  }

  _convertIdToToken(id) {
    return this.idsToTokens.get(id) ?? this.specialToken('unk_token');
  }

  convertTokensToString(tokens) {
    return pyStrip(tokens.join(' ').replaceAll(' ##', ''));
  }

  _specials() {
    return { before: [this.specialTokenId('cls_token')], after: [this.specialTokenId('sep_token')] };
  }

  /** build_inputs_with_special_tokens(ids_0, ids_1): [CLS] A [SEP] B [SEP], B [SEP] type 1 (create_token_type_ids_from_sequences). */
  _pairSpecials() {
    const cls = this.specialTokenId('cls_token');
    const sep = this.specialTokenId('sep_token');
    return pairTemplate([specials([cls], 0), { seq: 0, typeId: 0 }, specials([sep], 0), { seq: 1, typeId: 1 }, specials([sep], 1)], [0, 0]);
  }
}

/**
 * transformers' BasicTokenizer.tokenize (BERT's, and CLIP's copy without ftfy): control characters
 * dropped, whitespace to spaces, spaces around CJK ideographs, NFC, then per whitespace-separated
 * token lowercasing (and accent stripping unless stripAccents is false) and the punctuation split.
 * @param {string} text
 * @param {{ neverSplit?: Set<string>, doLowerCase?: boolean, stripAccents?: boolean | null,
 *   tokenizeChineseChars?: boolean, splitOnPunc?: boolean }} options the Python's defaults when left out
 * @returns {string[]} the tokens, a new array
 */
export function basicTokenize(text, { neverSplit = new Set(), doLowerCase = true, stripAccents = null, tokenizeChineseChars = true, splitOnPunc = true }) {
  let clean = '';
  for (const c of text) {
    const cp = c.codePointAt(0);
    if (cp === 0 || cp === 0xfffd || isControl(c)) continue;
    clean += isWhitespace(c) ? ' ' : tokenizeChineseChars && isChinese(cp) ? ` ${c} ` : c;
  }
  const split = [];
  for (let token of whitespaceTokenize(clean.normalize('NFC'))) {
    if (!neverSplit.has(token)) {
      if (doLowerCase) {
        token = token.toLowerCase();
        if (stripAccents !== false) token = stripAccentsOf(token);
      } else if (stripAccents) token = stripAccentsOf(token);
    }
    if (!splitOnPunc || neverSplit.has(token)) split.push(token);
    else for (const t of splitOnPunctuation(token)) split.push(t);
  }
  return whitespaceTokenize(split.join(' '));
}

const stripAccentsOf = (t) => t.normalize('NFD').replace(/\p{Mn}/gu, '');

function splitOnPunctuation(text) {
  const out = [];
  let startNew = true;
  for (const c of text) {
    if (isPunctuation(c)) {
      out.push(c);
      startNew = true;
    } else {
      if (startNew) out.push('');
      startNew = false;
      out[out.length - 1] += c;
    }
  }
  return out;
}

/** BertConverter's tokenizer.json for a BertTokenizer, or null where the converter would lose its settings. */
function bertJson(tok) {
  if (!tok.doBasicTokenize || tok.neverSplit.size !== 0) return null;
  const cls = tok.specialToken('cls_token');
  const sep = tok.specialToken('sep_token');
  return {
    version: '1.0',
    added_tokens: addedTokensJson(tok),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: tok.tokenizeChineseChars, strip_accents: tok.stripAccents, lowercase: tok.doLowerCase },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: { type: 'BertProcessing', cls: [cls, tok.vocab.get(cls)], sep: [sep, tok.vocab.get(sep)] },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: tok.specialToken('unk_token'), continuing_subword_prefix: '##', max_input_chars_per_word: tok.maxInputCharsPerWord, vocab: Object.fromEntries(tok.vocab) },
  };
}
