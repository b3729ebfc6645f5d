// CharTokenizer: the "chars" tokenizer of a causal_lm file's attnwasm.config (the demo model's): one id per
// character, special ids (<eos>) that are not characters. Used by the CausalLM face (causal_lm.js) as
// 'attnwasm/tokenizer''s Tokenizer is; immutable.
import { AttnWasmError, typeError, rangeError, describe } from './errors.js';
import { checkBool, checkOptions } from './checks.js';

/**
 * A character-level tokenizer (the "chars" tokenizer of a file's
 * attnwasm.config, the demo model's): one id per character, `special` ids
 * (<eos>) that are not characters. Immutable. The same methods as
 * 'attnwasm/tokenizer''s Tokenizer where they apply.
 */
export class CharTokenizer {
  /** @param {{vocab: string[], special?: number[], bos?: number|null, eos?: number|null, unknown?: 'refuse'|'skip'}} spec validated natively */
  constructor(spec) {
    this._vocab = spec.vocab;
    this._special = new Set(spec.special ?? []);
    this._ids = new Map();
    spec.vocab.forEach((t, i) => { if (!this._special.has(i)) this._ids.set(t, i); });
    this.bos = spec.bos ?? null;
    this.eos = spec.eos ?? null;
    this._skipUnknown = spec.unknown === 'skip';
    /** Number of ids. */
    this.vocabSize = spec.vocab.length;
    Object.freeze(this);
  }

  /**
   * Text → ids: `bos` first (with addSpecialTokens, the default), then one id
   * per character. A character outside the vocabulary is refused
   * (ERR_INVALID_ARGUMENT naming it and its position), or skipped when the
   * file says "unknown": "skip".
   * @param {string} text @param {{addSpecialTokens?: boolean}} [options]
   * @returns {Int32Array}
   */
  encode(text, options) {
    if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
    const o = checkOptions(options, ['addSpecialTokens'], 'encode');
    const ids = checkBool(o.addSpecialTokens, 'addSpecialTokens', true) && this.bos !== null ? [this.bos] : [];
    let at = 0;
    for (const ch of text) {
      const id = this._ids.get(ch);
      if (id !== undefined) ids.push(id);
      else if (!this._skipUnknown) {
        const cp = ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0');
        throw new AttnWasmError('ERR_INVALID_ARGUMENT',
          `text: this model's vocabulary has no '${ch}' (U+${cp}, character ${at}); it writes ${this._describeVocab()}`);
      }
      at++;
    }
    return Int32Array.from(ids);
  }

  _describeVocab() {
    const chars = [...this._ids.keys()];
    const printable = chars.filter((c) => c > ' ' && c <= '~').length;
    return printable === 94 && chars.length <= 98 ? 'printable ASCII, tab and newline only' : `${chars.length} characters`;
  }

  /**
   * Ids → text; special ids (<eos>) give nothing with skipSpecialTokens
   * (default false: their names).
   * @param {ArrayLike<number>} ids @param {{skipSpecialTokens?: boolean}} [options]
   */
  decode(ids, options) {
    const o = checkOptions(options, ['skipSpecialTokens'], 'decode');
    const skip = checkBool(o.skipSpecialTokens, 'skipSpecialTokens', false);
    if (!(Array.isArray(ids) || (ArrayBuffer.isView(ids) && !(ids instanceof DataView)))) {
      throw typeError(`ids: expected an Array or typed array of token ids, got ${describe(ids)}`);
    }
    let out = '';
    for (let i = 0; i < ids.length; i++) {
      this._check(ids[i], `ids[${i}]`);
      if (!(skip && this._special.has(ids[i]))) out += this._vocab[ids[i]];
    }
    return out;
  }

  /** A streaming decoder: push(id) → its text (as decode, one id at a time); end() → ''. */
  streamDecoder(options) {
    const o = checkOptions(options, ['skipSpecialTokens'], 'streamDecoder');
    const skip = checkBool(o.skipSpecialTokens, 'skipSpecialTokens', false);
    return { push: (id) => this.decode([id], { skipSpecialTokens: skip }), end: () => '' };
  }

  /** The id of a character or special token's name, or undefined. */
  tokenToId(token) {
    if (typeof token !== 'string') throw typeError(`token: expected a string, got ${describe(token)}`);
    const id = this._ids.get(token);
    return id !== undefined ? id : [...this._special].find((i) => this._vocab[i] === token);
  }

  /** The token of an id, undefined outside the vocabulary. */
  idToToken(id) {
    if (!Number.isInteger(id)) throw typeError(`id: expected an integer, got ${typeof id === 'number' ? id : describe(id)}`);
    return this._vocab[id];
  }

  /** Whether an id is special (not a character). */
  isSpecial(id) {
    if (!Number.isInteger(id)) throw typeError(`id: expected an integer, got ${typeof id === 'number' ? id : describe(id)}`);
    return this._special.has(id);
  }

  _check(id, name) {
    if (typeof id !== 'number' || !Number.isInteger(id)) throw typeError(`${name}: expected an integer token id, got ${typeof id === 'number' ? id : describe(id)}`);
    if (id < 0 || id >= this.vocabSize) throw rangeError(`${name}: expected an id in [0, ${this.vocabSize - 1}], got ${id}`);
  }
}
