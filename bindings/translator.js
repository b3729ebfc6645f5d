// Translator: the encoder–decoder family (src/models/translator.h). The
// source text becomes token ids here (the file's "sourceText": the demo's
// "english-numbers" — checked and normalised by numberwords.js, refused with
// ERR_NOT_A_NUMBER — or "words", split at whitespace); decoding, greedy or
// beam, runs natively in one call and returns ids, the cross-attention of
// every step and step times.

import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkInteger, checkOptions } from './checks.js';
import { englishWords, parseEnglishNumber } from './numberwords.js';
import { Model } from './model.js';
import * as boundary from './boundary.js';

/**
 * An encoder–decoder model over tokens: the demo's English number words →
 * French or German, or any nn.Transformer exported with
 * tools/export_safetensors.py export_seq2seq. Owns native memory: call dispose().
 */
export class Translator extends Model {
  /** Internal: built by loadModel / loadTranslator from a handle of the native loader (model_loading.js). */
  constructor(rt, handle, config, fileBytes) {
    super(rt, handle, 'Translator', fileBytes);
    /** @readonly */ this.config = config;
    /** @readonly */ this.languages = Object.keys(config.langTokens);
    /** @readonly "english-numbers" (the demo: typed English numbers) or "words" (tokens split at whitespace). */
    this.sourceText = config.sourceText ?? 'english-numbers';
    this._src = new Map(config.srcVocab.map((t, i) => [t, i]));
  }

  /**
   * Text → source tokens. english-numbers: the normalised words (lower case;
   * words and hyphens): "Forty  two" → ['forty', 'two'], ERR_NOT_A_NUMBER for
   * text that is not one number in 0 … 999 999. words: split at whitespace.
   */
  tokenize(text) {
    return this._read(text).tokens;
  }

  /** The tokens of `text`, each in this model's source vocabulary, and what they read as. */
  _read(text) {
    let number = null, tokens;
    if (this.sourceText === 'words') {
      if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
      tokens = text.trim().split(/\s+/).filter((t) => t);
      if (!tokens.length) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'text: expected at least one token, got an empty text');
    } else {
      number = parseEnglishNumber(text);
      tokens = number.tokens;
    }
    for (const t of tokens) {
      if (!this._src.has(t)) {
        const hint = number ? `; write the number in its plain spelling, '${englishWords(number.value)}'` : '';
        throw new AttnWasmError('ERR_INVALID_ARGUMENT', `text: this model's source vocabulary has no '${t}'${hint}`);
      }
    }
    return number ? { tokens, words: number.words, value: number.value } : { tokens, words: tokens.join(' ') };
  }

  _sourceIds(tokens) {
    const ids = tokens.map((t) => this._src.get(t));
    if (this.config.srcAddsEos) ids.push(this.config.eos);
    return Int32Array.from(ids);  // their count against maxLen: natively
  }

  /** Target token ids → display text in `lang` (stops at the end token; skips <special> tokens). */
  detokenize(ids, lang) {
    this._checkIds(ids, 'ids');
    this._lang(lang, 'lang');
    const words = [];
    for (const id of ids) {
      if (id === this.config.eos) break;
      const t = this.config.tgtVocab[id];
      if (t.startsWith('<')) continue;
      words.push(t);
    }
    const rule = this.config.detokenize?.[lang] ?? (this.sourceText === 'words' ? 'space-join' : 'hyphen-join');
    if (rule === 'concat') return words.join('');
    if (rule === 'space-join') return words.join(' ');
    return words.join(' ').replace(/ - /g, '-');
  }

  _lang(lang, name) {
    if (typeof lang !== 'string' || !Object.hasOwn(this.config.langTokens, lang)) {
      throw rangeError(`${name}: expected one of ${this.languages.map((l) => `'${l}'`).join(', ')}, got ${typeof lang === 'string' ? JSON.stringify(lang) : describe(lang)}`);
    }
    return lang;
  }

  /**
   * Checks an array of target token ids: integers, and with `range` each in
   * [0, tgtVocab.length) (for the JS-only detokenize; a native call checks its ids itself).
   */
  _checkIds(ids, name, range = true) {
    if (!Array.isArray(ids) && !(ids instanceof Int32Array)) {
      throw typeError(`${name}: expected an array of token ids, got ${describe(ids)}`);
    }
    const V = this.config.tgtVocab.length;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (typeof id !== 'number' || !Number.isInteger(id)) throw typeError(`${name}[${i}]: expected an integer token id, got ${typeof id === 'number' ? id : describe(id)}`);
      if (range && (id < 0 || id >= V)) throw rangeError(`${name}[${i}]: expected a token id in [0, ${V}), got ${id}`);
    }
  }

  /** One native call: greedy (beamSize 1) or beam search; beamSearch forces the beam path. */
  _decode(src, first, maxLength, beamSize, lengthPenalty, beamSearch = false) {
    const h = this._handle();
    const [ids, cross, stepMs, score] = boundary.models.translatorDecode(this._rt, h, { src: { data: src, shape: [src.length] } },
      { firstToken: first, maxLength, beamSize, lengthPenalty, beamSearch });
    return { ids: Array.from(ids.data), cross, stepMs: Array.from(stepMs.data), score: score.data[0] };
  }

  // The two searches, kept for tests: beam size 1 must equal greedy.
  _greedy(src, first, maxLength) { return this._decode(src, first, maxLength, 1, 1.0); }
  _beam(src, first, maxLength, beamSize, lengthPenalty) { return this._decode(src, first, maxLength, beamSize, lengthPenalty, true); }

  /**
   * Translates a text (english-numbers: English number words as people type them).
   * @param {string} text e.g. "three hundred seventy-one"
   * @param {{to?: string, beamSize?: number, lengthPenalty?: number, maxLength?: number}} [options]
   *   beamSize in [1, 16] (1: greedy), maxLength in [1, maxLen − 1] (default maxLen − 1): checked natively.
   * @returns {{text: string, input: string, value?: number, tokens: string[], tokenIds: number[], sourceTokens: string[],
   *   crossAttention: {layers: number, heads: number, targetLength: number, sourceLength: number, data: Float32Array},
   *   score: number, stepMs: number[], totalMs: number}}
   *   crossAttention.data is (layers, heads, targetLength, sourceLength): the weight of each source token for each output token.
   *   input: the normalised words the model translated ("42" → "forty-two"); value: the number (english-numbers only).
   * @throws {AttnWasmError} ERR_NOT_A_NUMBER (with `suggestion` when one is close) for text that is not one number in 0 … 999 999.
   */
  translate(text, options) {
    const o = checkOptions(options, ['to', 'beamSize', 'lengthPenalty', 'maxLength'], 'translate');
    const to = this._lang(o.to === undefined ? this.languages[0] : o.to, 'to');
    const beamSize = o.beamSize === undefined ? 1 : checkInteger(o.beamSize, 'beamSize');
    const lengthPenalty = o.lengthPenalty === undefined ? 1.0 : o.lengthPenalty;
    if (typeof lengthPenalty !== 'number') throw typeError(`lengthPenalty: expected a finite number, got ${describe(lengthPenalty)}`);
    const maxLength = o.maxLength === undefined ? this.config.maxLen - 1 : checkInteger(o.maxLength, 'maxLength');
    const read = this._read(text);
    const src = this._sourceIds(read.tokens);
    const t0 = performance.now();
    const { ids, cross, stepMs, score } = this._decode(src, this.config.langTokens[to], maxLength, beamSize, lengthPenalty);
    const totalMs = performance.now() - t0;
    const [layers, heads, targetLength, sourceLength] = cross.shape;
    const out = ids[ids.length - 1] === this.config.eos ? ids.slice(0, -1) : ids;
    const result = {
      text: this.detokenize(out, to),
      input: read.words,
      tokens: out.map((i) => this.config.tgtVocab[i]),
      tokenIds: out,
      sourceTokens: this.config.srcAddsEos ? [...read.tokens, '<eos>'] : read.tokens,
      crossAttention: { layers, heads, targetLength, sourceLength, data: cross.data },
      score,
      stepMs,
      totalMs,
    };
    if (read.value !== undefined) result.value = read.value;
    return result;
  }

  /**
   * Logits of a whole target at once (no cache, causal mask): (T, V).
   * `targetIds` starts with the language token. For checking the cached path.
   */
  scoreFull(text, targetIds) {
    const h = this._handle();
    this._checkIds(targetIds, 'targetIds', false);  // their count and range: natively
    const src = this._sourceIds(this.tokenize(text));
    return boundary.models.translatorForward(this._rt, h,
      { src: { data: src, shape: [src.length] }, tgt: { data: Int32Array.from(targetIds), shape: [targetIds.length] } })[0];
  }
}
