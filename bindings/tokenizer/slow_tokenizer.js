// The base of the slow tokenizers (transformers v4.40's PreTrainedTokenizer, for folders without a
// tokenizer.json): construction as from_pretrained does it (special-token attributes, the added
// tokens of tokenizer_config.json, `_add_tokens` for special tokens outside the vocabulary), tokenize
// (lowercasing for do_lower_case, the split around added tokens, the class's _tokenize), ids, the
// special tokens around a text, decode (_decode: added tokens kept apart, spaces between them,
// clean_up_tokenization) and the public face of 'attnwasm/tokenizer''s Tokenizer (encode, decode,
// encodeInputs, encodeBatch, streamDecoder, tokenToId, idToToken, isSpecial). A class (slow_*.js)
// gives its vocabulary, _tokenize, ids ↔ tokens, convertTokensToString and its special tokens.
import { AttnWasmError, describe, rangeError, typeError } from '../errors.js';
import { checkBool, checkOptions } from '../checks.js';
import { encodeBatch, encodeInputs } from './batch.js';
import { MAX_ID, invalid, show } from './json.js';
import { addedToken, addedTrie, allSpecialTokensExtended, splitOnAdded, SPECIAL_ATTRIBUTES, tokenText } from './slow_added.js';

const CLEAN_UP = [[' .', '.'], [' ?', '?'], [' !', '!'], [' ,', ','], [" ' ", "'"], [" n't", "n't"], [" 'm", "'m"], [" 's", "'s"], [" 've", "'ve"], [" 're", "'re"]];
const escapeRegex = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class SlowTokenizer {
  /**
   * @param {object} kwargs tokenizer_config.json's fields as from_pretrained passes them (tokens as
   *   strings or addedToken objects), with `added_tokens_decoder` as a Map id → addedToken and
   *   `preset_added` the class's own added tokens (a Map id → addedToken, set before the file's)
   * @param {string} file the file named in messages about the configuration
   */
  constructor(kwargs, file) {
    this.file = file;
    this.config = kwargs.config ?? null;
    /** @type {Map<number, object>} id → AddedToken */
    this._addedDecoder = new Map([...(kwargs.preset_added ?? []), ...(kwargs.added_tokens_decoder ?? [])]); // the class's, then the file's
    this._addedEncoder = new Map([...this._addedDecoder].map(([id, t]) => [t.content, id]));
    this._special = {};
    for (const key of SPECIAL_ATTRIBUTES) {
      const v = kwargs[key];
      if (v == null) continue;
      if (key === 'additional_special_tokens') {
        if (!Array.isArray(v)) throw invalid(key, `expected a list of tokens, got ${show(v)}`, file);
        this._special[key] = v;
      } else this._special[key] = v;
    }
    this.cleanUpTokenizationSpaces = kwargs.clean_up_tokenization_spaces ?? true;
    this.splitSpecialTokens = kwargs.split_special_tokens ?? false;
    const m = kwargs.model_max_length;
    this._maxLength = Number.isInteger(m) && m >= 1 && m <= MAX_ID ? m : null;
    this._paddingSide = kwargs.padding_side ?? 'right';
  }

  /** PreTrainedTokenizer.__init__'s end: special tokens not yet added get ids (_add_tokens). Call once the class's vocabulary exists. */
  _finishInit() {
    this._addTokens(allSpecialTokensExtended(this._special).filter((t) => typeof t !== 'string' || !this._addedEncoder.has(t)));
    this._refresh();
    const vocab = this._getVocab();
    /** Number of tokens: the vocabulary and the added tokens (Python's len(tokenizer)). */
    this.vocabSize = vocab.size;
    /** @private The largest id (a model's vocab_size must exceed it). */
    this._maxId = -1;
    for (const id of vocab.values()) if (id > this._maxId) this._maxId = id;
    for (const id of this._addedDecoder.keys()) if (id > this._maxId) this._maxId = id;
  }

  /** _add_tokens(new_tokens, special_tokens=True) */
  _addTokens(tokens) {
    const vocab = this._getVocab();
    let newIdx = vocab.size;
    const specials = new Set(this.allSpecialTokens());
    for (let token of tokens) {
      if (tokenText(token) === '') continue;
      if (typeof token === 'string') {
        if (this._addedEncoder.has(token)) continue;
        const isSpecial = true; // special_tokens=True
        token = addedToken(token, { normalized: !isSpecial && !specials.has(token), special: isSpecial });
      } else token = { ...token, special: true }; // __setstate__({ special: True, normalized: token.normalized })
      if (!token.special && token.normalized && this.doLowerCase) token.content = token.content.toLowerCase();
      let id;
      if (!vocab.has(token.content)) {
        id = newIdx++;
        vocab.set(token.content, id);
      } else id = vocab.get(token.content);
      this._addedDecoder.set(id, token);
      this._addedEncoder.set(token.content, id);
    }
  }

  /** Caches derived from the added and special tokens. */
  _refresh() {
    this._trie = addedTrie(this._addedEncoder.keys());
    this._addedByContent = new Map([...this._addedEncoder].map(([c, id]) => [c, this._addedDecoder.get(id)]));
    this._specialIds = new Set(this.allSpecialTokens().map((t) => this.convertTokenToId(t)));
    const specials = new Set(this.allSpecialTokens());
    const extra = (this._special.additional_special_tokens ?? []).map(tokenText).filter((t) => this.convertTokenToId(t) >= this._baseSize);
    this._legacyAdded = new Set([...[...this._addedEncoder.keys()].filter((t) => !specials.has(t)), ...extra]);
  }

  /** get_vocab() as a Map token → id (the class's vocabulary and the added tokens). */
  _getVocab() {
    const vocab = new Map();
    for (let i = 0; i < this._baseSize; i++) vocab.set(this.convertIdToToken(i), i);
    for (const [c, id] of [...this._addedEncoder].sort((a, b) => a[1] - b[1])) vocab.set(c, id);
    return vocab;
  }

  /** all_special_tokens: the special attributes' contents, each once. */
  allSpecialTokens() {
    return allSpecialTokensExtended(this._special).map(tokenText);
  }

  /** A special attribute's content ('eos_token' → '</s>') or null. */
  specialToken(key) {
    return tokenText(this._special[key]);
  }

  /** A special attribute's id, or null when the attribute is not set. */
  specialTokenId(key) {
    const t = this.specialToken(key);
    return t === null ? null : this.convertTokenToId(t);
  }

  convertTokenToId(token, mode = {}) {
    return this._addedEncoder.get(token) ?? this._convertTokenToId(token, mode);
  }

  convertIdToToken(id) {
    const added = this._addedDecoder.get(id);
    return added ? added.content : this._convertIdToToken(id);
  }

  /** tokenize(text): the tokens (strings) of one text, no special tokens around it. */
  tokenize(text, mode) {
    text = this._prepareForTokenization(text);
    if (this.doLowerCase) {
      const keep = [...this.allSpecialTokens(), ...[...this._addedDecoder.values()].filter((t) => !t.special && t.normalized).map((t) => t.content)];
      // Python's '.' stops at '\n' only; JS's also at \r, U+2028, U+2029, which have no case.
      const re = new RegExp(`(${keep.map(escapeRegex).join('|')})|(.+?)`, 'gu');
      text = text.replace(re, (m, special, other) => special ?? other.toLowerCase());
    }
    const parts = this.splitSpecialTokens ? (text === '' ? [] : [{ text, token: false }]) : splitOnAdded(text, this._addedByContent, this._trie);
    const out = [];
    for (const p of parts) {
      if (p.token) out.push(p.text);
      else for (const t of this._tokenize(p.text, mode)) out.push(t);
    }
    return out;
  }

  _prepareForTokenization(text) {
    return text;
  }

  /** The ids of a text without special tokens (mode: the class's input or target side, language). */
  _ids(text, mode) {
    if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
    return this.tokenize(text.toWellFormed(), mode).map((t) => this.convertTokenToId(t, mode));
  }

  /** The special tokens around a text: { before, after } (build_inputs_with_special_tokens for one sequence). */
  _specials(mode) {
    void mode;
    return { before: [], after: [] };
  }

  /**
   * The special tokens around a pair (build_inputs_with_special_tokens(ids_0, ids_1) and
   * create_token_type_ids_from_sequences) as post_processors.js pairTemplate, or null where pairs
   * are not read (the seq2seq classes).
   */
  _pairSpecials(mode) {
    void mode;
    return null;
  }

  /** batch.js's view of this tokenizer in one mode: ids, the templates, the limits. */
  _view(mode) {
    const { before, after } = this._specials(mode);
    const template = { before, after, typeId: 0, beforeTypes: new Int32Array(before.length), afterTypes: new Int32Array(after.length) };
    const pad = this.specialTokenId('pad_token');
    return {
      _encodeText: (t) => this._ids(t, mode),
      _template: template,
      _templateOf: this._templateOf ? (ids) => this._templateOf(ids, template) : undefined,
      _pairTemplate: this._pairSpecials(mode),
      _pairRefusal: `pair: ${this.constructor.name} (a slow tokenizer) does not encode pairs of texts here; BertTokenizer, RobertaTokenizer and XLMRobertaTokenizer do`,
      _pairRule: 'python', // transformers' truncate_sequences (truncation.js)
      _maxLength: this._maxLength,
      _pad: pad === null ? null : { id: pad, typeId: 0, multiple: 1 },
    };
  }

  /** The mode an entry point's options ask for: the option types checked here, their values by the class. */
  _modeOf(o) {
    checkBool(o.target, 'target', false);
    for (const k of ['srcLang', 'tgtLang']) if (o[k] !== undefined && typeof o[k] !== 'string') throw typeError(`${k}: expected a language code (a string), got ${describe(o[k])}`);
    return this._mode(o);
  }

  /** The class's mode (the seq2seq classes read their language and target options here). */
  _mode(o) {
    void o;
    return {};
  }

  /**
   * Text → ids, as the Python class's encode(text, add_special_tokens) gives them. `returnOffsets`:
   * { ids, offsets } as Tokenizer#encode gives them, from the fast tokenizer transformers converts
   * this class to (what its pipelines run: BertTokenizer → BertTokenizerFast by BertConverter,
   * RobertaTokenizer and XLMRobertaTokenizer by theirs; slow_converters.js); a class without that
   * here, or a text whose converted ids differ from the slow ones, throws AttnWasmError ERR_UNSUPPORTED.
   * @param {string} text
   * @param {{ addSpecialTokens?: boolean, returnOffsets?: boolean }} [options] the seq2seq classes also take their language and target options
   * @returns {Int32Array | { ids: Int32Array, offsets: [number, number][] }}
   */
  encode(text, options) {
    const o = checkOptions(options, ['addSpecialTokens', 'returnOffsets', ...this._modeOptions()], 'encode');
    if (checkBool(o.returnOffsets, 'returnOffsets', false)) {
      const { returnOffsets, ...rest } = o;
      void returnOffsets;
      return this._offsets(text, rest);
    }
    const view = this._view(this._modeOf(o));
    const ids = view._encodeText(text);
    if (!checkBool(o.addSpecialTokens, 'addSpecialTokens', true)) return Int32Array.from(ids);
    const t = view._templateOf ? view._templateOf(ids) : view._template;
    return Int32Array.from([...t.before, ...ids, ...t.after]);
  }

  _modeOptions() {
    return [];
  }

  /** encode(text, { returnOffsets: true }) through the converted fast tokenizer (_converted), checked against the slow ids. */
  _offsets(text, o) {
    const name = this.constructor.name;
    const fast = this._converted();
    if (!fast) {
      const why = this._converted === SlowTokenizer.prototype._converted
        ? 'are not supported; they are for BertTokenizer, RobertaTokenizer, XLMRobertaTokenizer and every tokenizer.json'
        : "come from the fast tokenizer transformers converts it to, and this one's (its settings or vocabulary) is not one attnwasm reads";
      throw new AttnWasmError('ERR_UNSUPPORTED', `returnOffsets: character offsets of a ${name} (slow files, no tokenizer.json) ${why} — put the model's tokenizer.json in the folder`);
    }
    const slow = this.encode(text, o);
    const r = fast.encode(text, { addSpecialTokens: o.addSpecialTokens ?? true, returnOffsets: true });
    if (r.ids.length !== slow.length || r.ids.some((id, k) => id !== slow[k])) {
      throw new AttnWasmError('ERR_UNSUPPORTED', `returnOffsets: this text's ids from ${name} differ from those of the fast tokenizer transformers converts it to, whose offsets these would be; put the model's tokenizer.json in the folder`);
    }
    return { ids: slow, offsets: r.offsets };
  }

  /** The fast Tokenizer transformers' converter makes of this class (null: none here). */
  _converted() {
    return null;
  }

  /** One text or a pair as model inputs, truncated as transformers truncates (the special tokens kept). */
  encodeInputs(text, options) {
    const o = checkOptions(options, ['addSpecialTokens', 'maxLength', 'truncation', 'pair', ...this._modeOptions()], 'encodeInputs');
    const { rest, mode } = this._split(o);
    return encodeInputs(this._view(mode), text, rest);
  }

  /** Texts and [text, pair] arrays as one right-padded batch (tokenizer.d.ts EncodedBatch). */
  encodeBatch(texts, options) {
    const o = checkOptions(options, ['addSpecialTokens', 'maxLength', 'truncation', 'padding', ...this._modeOptions()], 'encodeBatch');
    const { rest, mode } = this._split(o);
    return encodeBatch(this._view(mode), texts, rest);
  }

  _split(o) {
    const rest = {};
    for (const k of ['addSpecialTokens', 'maxLength', 'truncation', 'padding', 'pair']) if (o[k] !== undefined) rest[k] = o[k];
    return { rest, mode: this._modeOf(o) };
  }

  /**
   * Ids → text, as the Python class's decode(ids, skip_special_tokens) gives it (clean_up_tokenization_spaces
   * from tokenizer_config.json, default true). An id the tokenizer cannot name throws RangeError.
   * @param {ArrayLike<number>} ids
   * @param {{ skipSpecialTokens?: boolean }} [options]
   */
  decode(ids, options) {
    const { skipSpecialTokens } = checkOptions(options, ['skipSpecialTokens'], 'decode');
    const skip = checkBool(skipSpecialTokens, 'skipSpecialTokens', false);
    if (!(Array.isArray(ids) || (ArrayBuffer.isView(ids) && !(ids instanceof DataView)))) throw typeError(`ids: expected an Array or typed array of token ids, got ${describe(ids)}`);
    const tokens = [];
    for (let i = 0; i < ids.length; i++) {
      const id = this._checkId(ids[i], `ids[${i}]`);
      if (skip && this._specialIds.has(id)) continue;
      tokens.push(this.convertIdToToken(id));
    }
    const subTexts = [];
    let current = [];
    for (const token of tokens) {
      if (this._legacyAdded.has(token)) {
        if (current.length) {
          const s = this.convertTokensToString(current);
          if (s.length > 0) subTexts.push(s);
          current = [];
        }
        subTexts.push(token);
      } else current.push(token);
    }
    if (current.length) subTexts.push(this.convertTokensToString(current));
    let text = subTexts.join(' ');
    if (this.cleanUpTokenizationSpaces) for (const [a, b] of CLEAN_UP) text = text.replaceAll(a, b);
    return text;
  }

  /** convert_tokens_to_string (the class's). */
  convertTokensToString(tokens) {
    return tokens.join(' ');
  }

  /**
   * A streaming decoder: push(id) returns the text that became final, end() the rest; the pieces
   * joined equal decode(ids). Each push decodes the ids so far again (translations are short) and
   * holds back what a later token may still change: trailing spaces and U+FFFD (an unfinished byte
   * sequence), the last four characters (clean_up_tokenization's patterns look back that far), and for
   * T5 everything after the last special token (its decode writes a space before the text that
   * precedes a special token, once that token comes).
   */
  streamDecoder(options) {
    const { skipSpecialTokens } = checkOptions(options, ['skipSpecialTokens'], 'streamDecoder');
    const skip = checkBool(skipSpecialTokens, 'skipSpecialTokens', false);
    const ids = [];
    let emitted = '';
    const tok = this;
    return {
      push(id) {
        tok._checkId(id, 'id');
        ids.push(id);
        let upTo = ids.length;
        if (tok._holdAfterSpecial && !skip) {
          for (let j = ids.length - 1; j >= 0; j--) {
            if (tok._specialIds.has(ids[j])) {
              upTo = j + 1;
              break;
            }
          }
        }
        let stable = tok.decode(ids.slice(0, upTo), { skipSpecialTokens: skip }).replace(/[\s\ufffd]+$/u, '');
        stable = stable.slice(0, Math.max(0, stable.length - 4));
        if (!stable.startsWith(emitted) || stable.length <= emitted.length) return '';
        const out = stable.slice(emitted.length);
        emitted = stable;
        return out;
      },
      end() {
        const full = tok.decode(ids, { skipSpecialTokens: skip });
        const out = full.slice(emitted.length);
        ids.length = 0;
        emitted = '';
        return out;
      },
    };
  }

  /** The id of a token (added tokens first, then the vocabulary), undefined where the tokenizer has no such token. */
  tokenToId(token) {
    if (typeof token !== 'string') throw typeError(`token: expected a string, got ${describe(token)}`);
    if (this._addedEncoder.has(token)) return this._addedEncoder.get(token);
    return this._hasToken(token) ? this._convertTokenToId(token) : undefined;
  }

  /** The token of an id, undefined outside the vocabulary. */
  idToToken(id) {
    if (!Number.isInteger(id)) throw typeError(`id: expected an integer, got ${typeof id === 'number' ? id : describe(id)}`);
    return this._hasId(id) ? this.convertIdToToken(id) : undefined;
  }

  /** Whether an id is one of the special tokens (those skipSpecialTokens leaves out). */
  isSpecial(id) {
    if (!Number.isInteger(id)) throw typeError(`id: expected an integer, got ${typeof id === 'number' ? id : describe(id)}`);
    return this._specialIds.has(id);
  }

  _hasId(id) {
    return this._addedDecoder.has(id) || (id >= 0 && id < this._baseSize);
  }

  _checkId(id, name) {
    if (typeof id !== 'number' || !Number.isInteger(id)) throw typeError(`${name}: expected an integer token id, got ${typeof id === 'number' ? id : describe(id)}`);
    if (!this._hasId(id)) throw rangeError(`${name}: expected an id of this tokenizer (0 to ${this._maxId}), got ${id}`);
    return id;
  }
}
