// The Tokenizer class of 'attnwasm/tokenizer': reads a tokenizer.json (and optionally its
// tokenizer_config.json) into one pipeline — added tokens split out, normalizer, pre-tokenizer,
// model (BPE, WordPiece, Unigram), post-processor — and decodes ids back through the decoder, by the
// Rust library's rules. Two kinds of file: byte-level BPE (GPT-2, Llama 3, Qwen2: a ByteLevel
// pre-tokenizer or decoder) with its strict rules, and the others (SentencePiece-style BPE,
// WordPiece, Unigram). Batches with padding: batch.js; the components: the files beside this one.
import { AttnWasmError, describe, rangeError, typeError } from '../errors.js';
import { AlignedText } from './aligned.js';
import { checkBool, checkOptions } from '../checks.js';
import { AddedTokenMatcher, checkAddedTokens } from './added_tokens.js';
import { encodeBatch, encodeInputs, readPadding } from './batch.js';
import { byteSymbols, symbolBytes } from './byte_level.js';
import { applyChatTemplate, chatStopTokens } from './chat.js';
import { readConfig } from './config.js';
import { decoder } from './decoders.js';
import { isObject, parseJson, requireType, unsupported } from './json.js';
import { BytePairEncoder, readBpe } from './bpe.js';
import { normalizer } from './normalizers.js';
import { readPostProcessor, trimOffsets } from './post_processors.js';
import { byteLevelSteps, preTokenizer } from './pre_tokenizers.js';
import { UnigramModel } from './unigram.js';
import { WordPieceModel } from './wordpiece.js';

const INTERNAL = Symbol('attnwasm.tokenizer');
const DECODERS = 'a decoder (Replace, ByteFallback, Fuse, Strip, Metaspace, WordPiece or a Sequence of them)';

/** Whether a file is of the byte-level kind: a ByteLevel pre-tokenizer (anywhere in a Sequence) or decoder. */
function isByteLevel(json) {
  const has = (pt) => isObject(pt) && (pt.type === 'ByteLevel' || (pt.type === 'Sequence' && Array.isArray(pt.pretokenizers) && pt.pretokenizers.some(has)));
  return has(json.pre_tokenizer) || (isObject(json.decoder) && json.decoder.type === 'ByteLevel');
}

/**
 * A tokenizer from a Hugging Face tokenizer.json. Immutable once made; holds no native memory
 * (nothing to dispose). Made with Tokenizer.fromJSON.
 */
export class Tokenizer {
  /**
   * Reads a tokenizer.json strictly (docs/tokenizer.md says what each kind reads, field by field):
   * byte-level BPE (GPT-2, Llama 3, SmolLM, Qwen2), SentencePiece-style BPE (Llama 2, Mistral,
   * Gemma, Phi-3: byte fallback), WordPiece (BERT) and Unigram (XLM-R). Anything else throws
   * AttnWasmError ERR_UNSUPPORTED naming the field, what is supported and what the file has; a file
   * the Rust library would refuse or give other ids to throws ERR_INVALID_ARGUMENT. `tokenizerConfig`
   * (tokenizer_config.json, optional) sets the BOS/EOS template of Llama and Gemma tokenizers, the
   * default maxLength (model_max_length) and the pad token; it is kept as `config`. Inputs are not
   * kept or modified.
   * @param {string | object | Uint8Array | ArrayBuffer} json the file's text, bytes or parsed object
   * @param {string | object | Uint8Array | ArrayBuffer} [tokenizerConfig] tokenizer_config.json, in any of the same forms
   * @returns {Tokenizer}
   */
  static fromJSON(json, tokenizerConfig) {
    return new Tokenizer(parseJson(json), tokenizerConfig, INTERNAL);
  }

  /** @private Use Tokenizer.fromJSON. */
  constructor(json, tokenizerConfig, token) {
    if (token !== INTERNAL) throw typeError('Tokenizer: use Tokenizer.fromJSON(tokenizerJson)');
    const byteLevel = isByteLevel(json);
    let model, modelSize;
    if (byteLevel) {
      const bpe = readBpe(json.model, true);
      this._normalize = normalizer(json.normalizer);
      this._preTokenizer = byteLevelSteps(json.pre_tokenizer);
      if (json.decoder == null) throw unsupported('decoder', 'a ByteLevel decoder', json.decoder);
      requireType(json.decoder, 'decoder', ['ByteLevel']);
      this._decoder = null; // the byte path below
      model = { vocab: bpe.vocab, tokenOf: bpe.tokenOf, encoder: new BytePairEncoder(bpe, true) };
      modelSize = bpe.vocab.size;
    } else {
      const type = requireType(json.model, 'model', ['BPE', 'WordPiece', 'Unigram']);
      this._decoder = decoder(json.decoder, DECODERS);
      this._normalize = normalizer(json.normalizer);
      this._preTokenizer = preTokenizer(json.pre_tokenizer);
      if (type === 'BPE') {
        const bpe = readBpe(json.model, false);
        model = { vocab: bpe.vocab, tokenOf: bpe.tokenOf, encoder: new BytePairEncoder(bpe, false) };
        modelSize = bpe.vocab.size;
      } else {
        const m = type === 'WordPiece' ? new WordPieceModel(json.model) : new UnigramModel(json.model);
        model = { vocab: m.vocab, tokenOf: m.tokenOf, encoder: m };
        modelSize = m.tokenOf.length; // Unigram: entries, a piece given twice counted twice (as Rust)
      }
    }
    const { vocab, tokenOf } = model;
    const added = checkAddedTokens(json.added_tokens, { has: (t) => vocab.has(t), get: (t) => vocab.get(t), size: modelSize });

    // id → token as decode sees it: an added token with normalized: true as its normalized text.
    const normalize = (s) => (this._normalize ? this._normalize(s) : s);
    this._idToToken = tokenOf; // id → token (a sparse array where the ids have holes)
    this._vocab = vocab;
    this._added = new Map(); // added token content → id (looked up before the vocabulary, as in Rust)
    this._special = new Set();
    let extra = 0;
    for (const t of added) {
      if (tokenOf[t.id] === undefined) extra++;
      tokenOf[t.id] = t.normalized ? normalize(t.content) : t.content;
      this._added.set(t.content, t.id);
      if (t.special) this._special.add(t.id);
    }
    this._raw = new AddedTokenMatcher(added.filter((t) => !t.normalized).map((t) => ({ ...t, match: t.content })));
    this._normalized = new AddedTokenMatcher(added.filter((t) => t.normalized).map((t) => ({ ...t, match: normalize(t.content) })).filter((t) => t.match !== ''));
    this._model = model.encoder;
    if (byteLevel) this._bpe = model.encoder;
    this._byteLevel = byteLevel;
    this._bytes = new Map(); // id → its bytes (filled as ids are decoded)
    /** Number of ids: the vocabulary plus the added tokens not in it (the Rust library's get_vocab_size(true)). */
    this.vocabSize = modelSize + extra;
    /** @private The largest id (ids may have holes: it can exceed vocabSize - 1); a model's vocab_size must exceed it. */
    this._maxId = tokenOf.length - 1;
    // RoBERTa's byte-level files post-process with RobertaProcessing: <s> text </s> (its trim_offsets only moves offsets).
    const types = byteLevel ? ['ByteLevel', 'TemplateProcessing', 'RobertaProcessing', 'Sequence'] : ['TemplateProcessing', 'BertProcessing', 'RobertaProcessing', 'ByteLevel', 'Sequence'];
    this._template = readPostProcessor(json.post_processor, (id) => tokenOf[id], types);
    const cfg = readConfig(tokenizerConfig, (t) => this.tokenToId(t));
    if (cfg.template) this._template = cfg.template;
    // A pair's template (post_processors.js pairTemplate; null: _pairRefusal says why), truncated by Rust's rule.
    Object.assign(this, { _pairTemplate: this._template.pair, _pairRefusal: this._template.pairRefusal, _pairRule: 'rust' });
    /** tokenizer_config.json as given (frozen), or null. */
    this.config = cfg.config;
    /** @private the default maxLength of encodeBatch / encodeInputs (model_max_length), or null */
    this._maxLength = cfg.maxLength;
    /** @private { id, typeId, multiple } or null */
    this._pad = readPadding(json.padding, cfg.padToken, (t) => this.tokenToId(t));
    Object.freeze(this);
  }

  /**
   * Text → token ids, as the Rust library's encode(text, add_special_tokens) gives them: added and
   * special tokens written in the text become their ids (longest first), the rest is normalized,
   * pre-tokenized and tokenized by the model; `addSpecialTokens` (default true) adds the
   * post-processor's tokens (Llama 3's <|begin_of_text|>, BERT's [CLS] … [SEP]). No truncation.
   * Unpaired surrogates count as U+FFFD. With `returnOffsets` the result is { ids, offsets }: each
   * token's [start, end) in `text`, in UTF-16 code units (text.slice(start, end) is what it covers),
   * the Rust library's offsets (which count code points) — through every normalizer, pre-tokenizer
   * and model, with RobertaProcessing's / ByteLevel's trim_offsets; the post-processor's tokens
   * [0, 0]; a token that is part of a character (a byte) covers the character.
   * @param {string} text
   * @param {{ addSpecialTokens?: boolean, returnOffsets?: boolean }} [options]
   * @returns {Int32Array | { ids: Int32Array, offsets: [number, number][] }} new, owned by the caller
   */
  encode(text, options) {
    if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
    const { addSpecialTokens, returnOffsets } = checkOptions(options, ['addSpecialTokens', 'returnOffsets'], 'encode');
    const special = checkBool(addSpecialTokens, 'addSpecialTokens', true);
    if (checkBool(returnOffsets, 'returnOffsets', false)) return this._encodeOffsets(text, special);
    const ids = this._encodeText(text);
    if (!special) return Int32Array.from(ids);
    const { before, after } = this._template;
    const out = new Int32Array(before.length + ids.length + after.length);
    out.set(before, 0);
    out.set(ids, before.length);
    out.set(after, before.length + ids.length);
    return out;
  }

  /** @private encode(text, { returnOffsets: true }). */
  _encodeOffsets(text, addSpecialTokens) {
    const well = text.toWellFormed();
    const ids = [];
    const offsets = [];
    const values = []; // each token's text as the Rust library's Token.value (an added token: the text it matched)
    let atOrigin = true;
    for (const part of this._raw.splitRanges(well)) {
      if (part.token) {
        ids.push(part.token.id);
        offsets.push([part.start, part.end]);
        values.push(well.slice(part.start, part.end));
        atOrigin = false;
        continue;
      }
      let t = AlignedText.of(well.slice(part.start, part.end), part.start);
      if (this._normalize) t = this._normalize.aligned(t);
      for (const sub of this._normalized.splitRanges(t.text)) {
        if (sub.token) {
          ids.push(sub.token.id);
          offsets.push(t.range(sub.start, sub.end));
          values.push(t.text.slice(sub.start, sub.end));
        } else if (sub.end > sub.start) {
          const piece = t.slice(sub.start, sub.end);
          const [pieces] = this._preTokenizer ? this._preTokenizer.aligned([piece], atOrigin) : [[piece]];
          for (const p of pieces) {
            const r = this._model.spans(p.text);
            for (let k = 0; k < r.ids.length; k++) {
              ids.push(r.ids[k]);
              offsets.push(p.range(r.starts[k], r.ends[k]));
              values.push(r.values ? r.values[k] : this._idToToken[r.ids[k]]);
            }
          }
        }
        atOrigin = false;
      }
    }
    // The offsets path must give the ids of the plain one (a guard against the two drifting apart).
    const plain = this._encodeText(text);
    if (plain.length !== ids.length || plain.some((id, k) => id !== ids[k])) {
      throw new AttnWasmError('ERR_INTERNAL', 'encode: the offsets path gave other ids than encode (a bug in attnwasm: please report the text and the tokenizer.json)');
    }
    for (const prefixSpace of this._template.trims ?? []) trimOffsets(well, offsets, values, prefixSpace);
    if (addSpecialTokens) {
      const { before, after } = this._template;
      return {
        ids: Int32Array.from([...before, ...ids, ...after]),
        offsets: [...Array.from(before, () => [0, 0]), ...offsets, ...Array.from(after, () => [0, 0])],
      };
    }
    return { ids: Int32Array.from(ids), offsets };
  }

  /**
   * One text, or a pair of texts (`pair`: the second, for cross-encoders), as a model takes it:
   * { inputIds, attentionMask, tokenTypeIds } (Int32Arrays owned by the caller), truncated as
   * encodeBatch truncates, never padded. A pair gets the post-processor's pair template ([CLS] A
   * [SEP] B [SEP], <s> A </s></s> B </s>) and type ids, as the Rust library's encode(text, pair).
   * @param {string} text
   * @param {{ pair?: string, addSpecialTokens?: boolean, maxLength?: number,
   *   truncation?: boolean | 'longest_first' | 'only_first' | 'only_second' }} [options]
   */
  encodeInputs(text, options) {
    return encodeInputs(this, text, options);
  }

  /**
   * Texts and pairs of texts as one padded batch: see tokenizer.d.ts EncodedBatch and docs/tokenizer.md.
   * @param {(string | [string, string])[]} texts each a text or a [text, pair] array
   * @param {{ addSpecialTokens?: boolean, maxLength?: number,
   *   truncation?: boolean | 'longest_first' | 'only_first' | 'only_second', padding?: 'longest' | 'max_length' | false }} [options]
   */
  encodeBatch(texts, options) {
    return encodeBatch(this, texts, options);
  }

  /** @private The ids of a (well-formed) text without the post-processor's tokens. */
  _encodeText(text) {
    const ids = [];
    let atOrigin = true; // the piece being read starts the text (Metaspace 'first' prepends only there)
    for (const part of this._raw.split(text.toWellFormed())) {
      if (part.token) {
        ids.push(part.token.id);
        atOrigin = false;
        continue;
      }
      const normalized = this._normalize ? this._normalize(part.text) : part.text;
      for (const sub of this._normalized.split(normalized)) {
        if (sub.token) ids.push(sub.token.id);
        else if (sub.text !== '') {
          const [pieces] = this._preTokenizer ? this._preTokenizer([sub.text], atOrigin) : [[sub.text]];
          for (const piece of pieces) for (const id of this._model.encode(piece)) ids.push(id);
        }
        atOrigin = false;
      }
    }
    return ids;
  }

  /**
   * A conversation as the model's prompt, as transformers' apply_chat_template(messages, ...) gives
   * it: the chat template rendered (transformers' Jinja environment, docs/chat.md) and, with
   * `tokenize` (default true), encoded without the post-processor's tokens (add_special_tokens=False:
   * the template writes the BOS token itself). The template: `chatTemplate` — a name of
   * tokenizer_config.json's templates ('tool_use', 'rag') or a template's text (a repo's
   * chat_template.jinja) — else tokenizer_config.json's chat_template ('tool_use' when `tools` are
   * given and it has one, else 'default'). The special tokens come from tokenizer_config.json; every
   * option not listed below is a template variable (enable_thinking, date_string, ...). Errors: no
   * template (no tokenizer_config.json, no chat_template in it, an unknown name) → AttnWasmError
   * ERR_INVALID_ARGUMENT naming what is missing; a template that calls raise_exception(text) →
   * AttnWasmError ERR_INVALID_ARGUMENT with message text; bad arguments → TypeError / RangeError
   * naming them; @huggingface/jinja not loadable (an import map without it) → ERR_UNSUPPORTED.
   * @param {{ role: string, content: string | object[] | null }[]} messages
   * @param {{ addGenerationPrompt?: boolean, tools?: object[] | null, documents?: object[] | null,
   *   chatTemplate?: string, tokenize?: boolean, now?: Date, [variable: string]: unknown }} [options]
   *   addGenerationPrompt: end with the assistant's header (default false); now: the time
   *   strftime_now formats (default: the time of the call)
   * @returns {Int32Array | string} the ids (tokenize true) or the text, new and owned by the caller
   */
  applyChatTemplate(messages, options) {
    return applyChatTemplate(this, messages, options);
  }

  /**
   * The ids that end an assistant's turn (CausalLM#chat's default stop tokens, with the model's
   * eos_token_id): tokenizer_config.json's eos_token; the end-of-turn tokens <|eot_id|>, <|eom_id|>,
   * <|im_end|>, <end_of_turn>, <|end|> that the chat template (chosen as applyChatTemplate chooses
   * it) writes; <|endoftext|>, <|end_of_text|>, </s>, <eos> — each when this vocabulary has it as a
   * special token (eos_token: as any token). Throws as applyChatTemplate does when there is no template.
   * @param {{ chatTemplate?: string, tools?: object[] | null }} [options]
   * @returns {number[]} ascending, a new array owned by the caller
   */
  chatStopTokens(options) {
    return chatStopTokens(this, options);
  }

  /**
   * The pre-tokenizer's pieces of `text` (no normalizer, no added tokens), as the Rust library's
   * pre_tokenizer.pre_tokenize_str gives them: byte-level files in byte symbols ('Ġworld' for ' world').
   * @param {string} text
   * @returns {string[]}
   */
  preTokenize(text) {
    if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
    const well = text.toWellFormed();
    if (!this._preTokenizer) return well === '' ? [] : [well];
    const [pieces] = this._preTokenizer(well === '' ? [] : [well], true);
    return this._byteLevel ? pieces.map(byteSymbols) : pieces;
  }

  /**
   * Token ids → text, as the Rust library's decode(ids, skip_special_tokens) gives it (through the
   * file's decoder; byte-level: the tokens' bytes read as UTF-8, a broken sequence as U+FFFD).
   * `skipSpecialTokens` (default false) leaves out the special tokens. An id outside the vocabulary
   * throws RangeError (the Rust library would drop it silently).
   * @param {ArrayLike<number>} ids an Array or typed array of ids
   * @param {{ skipSpecialTokens?: boolean }} [options]
   * @returns {string}
   */
  decode(ids, options) {
    const { skipSpecialTokens } = checkOptions(options, ['skipSpecialTokens'], 'decode');
    const skip = checkBool(skipSpecialTokens, 'skipSpecialTokens', false);
    const list = this._checkIds(ids);
    if (this._byteLevel) return this._decodeBytes(list, skip);
    const stream = new StreamDecoder(this, skip, INTERNAL);
    let text = '';
    for (let i = 0; i < list.length; i++) text += stream._push(list[i]);
    return text + stream.end();
  }

  /**
   * A streaming decoder for generation: push(id) returns the text that became complete with that
   * token and holds back what a later token can still change (an incomplete UTF-8 sequence, a run of
   * <0xNN> byte-fallback tokens, trailing characters a Strip decoder may cut): an emoji split
   * across byte tokens comes out whole, never as U+FFFD halves; end() returns what is held back.
   * The pushed texts joined with end()'s equal decode(ids) of the same ids.
   * @param {{ skipSpecialTokens?: boolean }} [options]
   * @returns {StreamDecoder}
   */
  streamDecoder(options) {
    const { skipSpecialTokens } = checkOptions(options, ['skipSpecialTokens'], 'streamDecoder');
    return new StreamDecoder(this, checkBool(skipSpecialTokens, 'skipSpecialTokens', false), INTERNAL);
  }

  /**
   * The id of a token: a vocabulary entry (byte-level files: in byte symbols, 'Ġthe') or an added
   * token's content ('<|endoftext|>'); undefined for anything else.
   * @param {string} token
   * @returns {number | undefined}
   */
  tokenToId(token) {
    if (typeof token !== 'string') throw typeError(`token: expected a string, got ${describe(token)}`);
    return this._added.get(token) ?? this._vocab.get(token);
  }

  /**
   * The token of an id, undefined for an id outside the vocabulary.
   * @param {number} id
   * @returns {string | undefined}
   */
  idToToken(id) {
    if (!Number.isInteger(id)) throw typeError(`id: expected an integer, got ${typeof id === 'number' ? id : describe(id)}`);
    return id >= 0 ? this._idToToken[id] : undefined;
  }

  /**
   * Whether an id is a special added token (those decode's skipSpecialTokens leaves out).
   * @param {number} id
   * @returns {boolean}
   */
  isSpecial(id) {
    if (!Number.isInteger(id)) throw typeError(`id: expected an integer, got ${typeof id === 'number' ? id : describe(id)}`);
    return this._special.has(id);
  }

  _checkIds(ids) {
    if (!(Array.isArray(ids) || (ArrayBuffer.isView(ids) && !(ids instanceof DataView)))) {
      throw typeError(`ids: expected an Array or typed array of token ids, got ${describe(ids)}`);
    }
    for (let i = 0; i < ids.length; i++) this._checkId(ids[i], `ids[${i}]`);
    return ids;
  }

  _checkId(id, name) {
    if (typeof id !== 'number' || !Number.isInteger(id)) throw typeError(`${name}: expected an integer token id, got ${typeof id === 'number' ? id : describe(id)}`);
    if (id < 0 || this._idToToken[id] === undefined) throw rangeError(`${name}: expected an id of this tokenizer's vocabulary (${this.vocabSize} ids), got ${id}`);
  }

  /** Byte-level decode: the tokens' bytes joined and read as UTF-8 once (the stream decoder's result, faster). */
  _decodeBytes(list, skip) {
    const parts = [];
    let length = 0;
    for (let i = 0; i < list.length; i++) {
      if (skip && this._special.has(list[i])) continue;
      const bytes = this._tokenBytes(list[i]);
      parts.push(bytes);
      length += bytes.length;
    }
    const all = new Uint8Array(length);
    let at = 0;
    for (const bytes of parts) {
      all.set(bytes, at);
      at += bytes.length;
    }
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(all);
  }

  /** The bytes a byte-level id decodes to: its token's byte symbols, or its UTF-8 when a character is not one. */
  _tokenBytes(id) {
    let bytes = this._bytes.get(id);
    if (!bytes) {
      bytes = symbolBytes(this._idToToken[id]);
      this._bytes.set(id, bytes);
    }
    return bytes;
  }
}

/**
 * Decodes ids one at a time (Tokenizer#streamDecoder). Byte-level files: holds at most three bytes
 * of an unfinished UTF-8 sequence between calls; others: the decoder's held-back tokens.
 */
class StreamDecoder {
  /** @private Use tokenizer.streamDecoder(). */
  constructor(tokenizer, skipSpecialTokens, token) {
    if (token !== INTERNAL) throw typeError('StreamDecoder: use tokenizer.streamDecoder()');
    this._tokenizer = tokenizer;
    this._skip = skipSpecialTokens;
    // ignoreBOM: a U+FEFF at the start is text, as in the Rust library's from_utf8_lossy.
    this._utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
    this._stage = tokenizer._decoder ? tokenizer._decoder() : null;
  }

  /**
   * The text that became complete with this token ('' while it is held back or for a skipped
   * special token).
   * @param {number} id
   * @returns {string}
   */
  push(id) {
    this._tokenizer._checkId(id, 'id');
    return this._push(id);
  }

  _push(id) {
    const tok = this._tokenizer;
    if (this._skip && tok._special.has(id)) return '';
    if (!this._stage) return this._utf8.decode(tok._tokenBytes(id), { stream: true });
    return this._stage.push(tok._idToToken[id]).join('');
  }

  /**
   * The text held back ('' after whole characters; U+FFFD for an incomplete sequence, as decode
   * gives it). The decoder can be used again afterwards, as a new one.
   * @returns {string}
   */
  end() {
    if (!this._stage) return this._utf8.decode();
    const rest = this._stage.end().join('');
    this._stage = this._tokenizer._decoder();
    return rest;
  }
}
