// Texts and pairs of texts as model inputs: one (encodeInputs) or a padded batch (encodeBatch), with
// Hugging Face's truncation (the special tokens kept; one text cut from the right to maxLength minus
// their number, whatever the strategy; a pair by the strategy, truncation.js) and right padding with
// the file's pad token (tokenizer.json padding, else tokenizer_config.json pad_token). Shapes: (n, T)
// row-major, T the padded length. The tokenizer seen here (Tokenizer, or a slow class's view) gives
// _encodeText, _template (one text), _pairTemplate or _pairRefusal, _pairRule ('rust' | 'python').
import { AttnWasmError, describe, rangeError, typeError } from '../errors.js';
import { checkBool, checkInteger, checkOptions } from '../checks.js';
import { MAX_ID, invalid, isObject, requireInteger, show, unsupported } from './json.js';
import { pairLengths, readStrategy } from './truncation.js';

/**
 * tokenizer.json's padding (its pad_id, pad_type_id and pad_to_multiple_of; direction Right only),
 * else the config's pad token: { id, typeId, multiple } or null. The strategy (Fixed, BatchLongest) is
 * encodeBatch's `padding` option here, as in transformers, which resets the file's.
 */
export function readPadding(padding, configPadToken, tokenToId) {
  if (padding != null) {
    if (!isObject(padding)) throw invalid('padding', `expected an object or null, got ${show(padding)}`);
    if ((padding.direction ?? 'Right') !== 'Right') throw unsupported('padding.direction', "'Right'", padding.direction);
    const multiple = padding.pad_to_multiple_of == null ? 1 : requireInteger(padding.pad_to_multiple_of, 'padding.pad_to_multiple_of', 1);
    return { id: requireInteger(padding.pad_id, 'padding.pad_id'), typeId: requireInteger(padding.pad_type_id ?? 0, 'padding.pad_type_id'), multiple };
  }
  if (configPadToken === null) return null;
  const id = tokenToId(configPadToken);
  if (id === undefined) throw invalid('pad_token', `'${configPadToken}' is not a token of tokenizer.json`, 'tokenizer_config.json');
  return { id, typeId: 0, multiple: 1 };
}

/** The options both entry points share → { addSpecial, strategy, maxLength }. */
function readOptions(tok, o) {
  const addSpecial = checkBool(o.addSpecialTokens, 'addSpecialTokens', true);
  const strategy = readStrategy(o.truncation);
  const maxLength = o.maxLength === undefined ? tok._maxLength : checkInteger(o.maxLength, 'maxLength', { min: 1, max: MAX_ID });
  return { addSpecial, strategy, maxLength };
}

/** One text's limit: its ids kept, or Infinity. */
function singleLimit(tok, { addSpecial, strategy, maxLength }) {
  const added = addSpecial ? tok._template.before.length + tok._template.after.length : 0;
  if (strategy === false || maxLength === null) return Infinity;
  if (maxLength < added) throw rangeError(`maxLength: expected at least ${added} (the special tokens this tokenizer adds to a text), got ${maxLength}`);
  return maxLength - added;
}

/**
 * Two texts' ids (no special tokens) → the row, truncated by the strategy, with the pair template's
 * tokens and type ids (without addSpecial: the texts alone, with the template's plain type ids).
 * `where` names the texts in a truncation error.
 */
function pairRow(tok, a, b, o, where) {
  const t = tok._pairTemplate;
  if (!t) throw new AttnWasmError('ERR_UNSUPPORTED', tok._pairRefusal);
  const added = o.addSpecial ? t.added : 0;
  let [k1, k2] = [a.length, b.length];
  if (o.strategy !== false && o.maxLength !== null) {
    if (o.maxLength < added) throw rangeError(`maxLength: expected at least ${added} (the special tokens this tokenizer adds to a pair of texts), got ${o.maxLength}`);
    [k1, k2] = pairLengths(a.length, b.length, o.maxLength - added, o.strategy, tok._pairRule ?? 'rust', () => `${where} with maxLength ${o.maxLength}`);
  }
  const texts = [a.slice(0, k1), b.slice(0, k2)];
  let items = t.items;
  if (!o.addSpecial) items = t.plain ? [{ seq: 0, typeId: t.plain[0] }, { seq: 1, typeId: t.plain[1] }] : t.items.filter((it) => !it.ids);
  const n = items.reduce((m, it) => m + (it.ids ? it.ids.length : texts[it.seq].length), 0);
  const inputIds = new Int32Array(n);
  const tokenTypeIds = new Int32Array(n);
  let at = 0;
  for (const it of items) {
    if (it.ids) {
      inputIds.set(it.ids, at);
      tokenTypeIds.set(it.typeIds, at);
      at += it.ids.length;
    } else {
      inputIds.set(texts[it.seq], at);
      tokenTypeIds.fill(it.typeId, at, at + texts[it.seq].length);
      at += texts[it.seq].length;
    }
  }
  return { inputIds, tokenTypeIds };
}

/** ids (no special tokens) → the row: ids and type ids with the template's tokens when addSpecial. */
function row(tok, ids, addSpecial, limit) {
  const text = ids.length > limit ? ids.slice(0, limit) : ids;
  // A slow tokenizer's special tokens may depend on the ids (T5 adds no second </s>).
  const t = tok._templateOf ? tok._templateOf(text) : tok._template;
  const before = addSpecial ? t.before : [];
  const after = addSpecial ? t.after : [];
  const n = before.length + text.length + after.length;
  const inputIds = new Int32Array(n);
  const tokenTypeIds = new Int32Array(n).fill(t.typeId);
  inputIds.set(before, 0);
  inputIds.set(text, before.length);
  inputIds.set(after, before.length + text.length);
  if (addSpecial) {
    tokenTypeIds.set(t.beforeTypes, 0);
    tokenTypeIds.set(t.afterTypes, before.length + text.length);
  }
  return { inputIds, tokenTypeIds };
}

export function encodeInputs(tok, text, options) {
  if (typeof text !== 'string') throw typeError(`text: expected a string, got ${describe(text)}`);
  const o = checkOptions(options, ['addSpecialTokens', 'maxLength', 'truncation', 'pair'], 'encodeInputs');
  if (o.pair != null && typeof o.pair !== 'string') throw typeError(`pair: expected a string (the second text) or undefined, got ${describe(o.pair)}`);
  const opts = readOptions(tok, o);
  const { inputIds, tokenTypeIds } = o.pair == null
    ? row(tok, tok._encodeText(text), opts.addSpecial, singleLimit(tok, opts))
    : pairRow(tok, tok._encodeText(text), tok._encodeText(o.pair), opts, 'text and pair');
  return { inputIds, attentionMask: new Int32Array(inputIds.length).fill(1), tokenTypeIds };
}

/** Each item a string or a [text, pair] array of two strings. */
function checkItems(texts) {
  if (!Array.isArray(texts)) throw typeError(`texts: expected an Array of strings or [text, pair] arrays, got ${describe(texts)}`);
  texts.forEach((t, i) => {
    if (typeof t === 'string') return;
    if (!Array.isArray(t)) throw typeError(`texts[${i}]: expected a string or a [text, pair] array of two strings, got ${describe(t)}`);
    if (t.length !== 2) throw typeError(`texts[${i}]: expected a string or a [text, pair] array of two strings, got an Array of length ${t.length}`);
    t.forEach((s, k) => {
      if (typeof s !== 'string') throw typeError(`texts[${i}][${k}]: expected a string, got ${describe(s)}`);
    });
  });
}

export function encodeBatch(tok, texts, options) {
  checkItems(texts);
  const o = checkOptions(options, ['addSpecialTokens', 'maxLength', 'truncation', 'padding'], 'encodeBatch');
  const padding = o.padding === undefined ? 'longest' : o.padding;
  if (!['longest', 'max_length', false].includes(padding)) throw typeError(`padding: expected 'longest', 'max_length' or false, got ${typeof padding === 'string' ? `'${padding}'` : describe(padding)}`);
  const opts = readOptions(tok, o);
  const { addSpecial, maxLength } = opts;
  // One text's limit is checked up front (as before pairs), unless every item is a pair.
  const limit = texts.length > 0 && texts.every(Array.isArray) ? Infinity : singleLimit(tok, opts);
  const rows = texts.map((t, i) => (typeof t === 'string'
    ? row(tok, tok._encodeText(t), addSpecial, limit)
    : pairRow(tok, tok._encodeText(t[0]), tok._encodeText(t[1]), opts, `texts[${i}]`)));
  const lengths = Int32Array.from(rows, (r) => r.inputIds.length);
  let T = lengths.reduce((a, b) => Math.max(a, b), 0);
  if (padding === 'max_length') {
    if (maxLength === null) throw rangeError("maxLength: padding 'max_length' needs a maxLength (none given, and no model_max_length in tokenizer_config.json)");
    T = Math.max(T, maxLength);
  }
  const multiple = tok._pad?.multiple ?? 1;
  if (padding !== false) T = Math.ceil(T / multiple) * multiple;
  if (padding === false && lengths.some((n) => n !== T)) {
    throw new AttnWasmError('ERR_SHAPE', `padding: false needs texts of one length in tokens, got lengths from ${Math.min(...lengths)} to ${T}`);
  }
  if (lengths.some((n) => n !== T) && tok._pad === null) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `padding: the texts have ${Math.min(...lengths)} to ${Math.max(...lengths)} tokens and this tokenizer has no pad token (tokenizer.json padding.pad_id or tokenizer_config.json pad_token); encode them one by one or give a tokenizer_config.json with a pad_token`);
  }
  const n = texts.length;
  const inputIds = new Int32Array(n * T);
  const attentionMask = new Int32Array(n * T);
  const tokenTypeIds = new Int32Array(n * T);
  rows.forEach((r, i) => {
    inputIds.set(r.inputIds, i * T);
    tokenTypeIds.set(r.tokenTypeIds, i * T);
    attentionMask.fill(1, i * T, i * T + r.inputIds.length);
    if (r.inputIds.length < T) {
      inputIds.fill(tok._pad.id, i * T + r.inputIds.length, (i + 1) * T);
      tokenTypeIds.fill(tok._pad.typeId, i * T + r.inputIds.length, (i + 1) * T);
    }
  });
  return { inputIds, attentionMask, tokenTypeIds, shape: [n, T], lengths };
}
