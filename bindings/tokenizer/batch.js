// Texts as model inputs: one text (encodeInputs) or a padded batch (encodeBatch), with Hugging
// Face's truncation (the special tokens kept, the text cut from the right to maxLength minus their
// number) and right padding with the file's pad token (tokenizer.json padding, else
// tokenizer_config.json pad_token). Shapes: (n, T) row-major, T the padded length.
import { AttnWasmError, describe, rangeError, typeError } from '../errors.js';
import { checkBool, checkInteger, checkOptions } from '../checks.js';
import { MAX_ID, invalid, isObject, requireInteger, show, unsupported } from './json.js';

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

/** The options both entry points share → { addSpecial, limit } (limit: the text's ids kept, or Infinity). */
function truncation(tok, o) {
  const addSpecial = checkBool(o.addSpecialTokens, 'addSpecialTokens', true);
  const truncate = checkBool(o.truncation, 'truncation', true);
  const maxLength = o.maxLength === undefined ? tok._maxLength : checkInteger(o.maxLength, 'maxLength', { min: 1, max: MAX_ID });
  const added = addSpecial ? tok._template.before.length + tok._template.after.length : 0;
  if (!truncate || maxLength === null) return { addSpecial, limit: Infinity, maxLength };
  if (maxLength < added) throw rangeError(`maxLength: expected at least ${added} (the special tokens this tokenizer adds to a text), got ${maxLength}`);
  return { addSpecial, limit: maxLength - added, maxLength };
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
  const o = checkOptions(options, ['addSpecialTokens', 'maxLength', 'truncation'], 'encodeInputs');
  const { addSpecial, limit } = truncation(tok, o);
  const { inputIds, tokenTypeIds } = row(tok, tok._encodeText(text), addSpecial, limit);
  return { inputIds, attentionMask: new Int32Array(inputIds.length).fill(1), tokenTypeIds };
}

export function encodeBatch(tok, texts, options) {
  if (!Array.isArray(texts)) throw typeError(`texts: expected an Array of strings, got ${describe(texts)}`);
  texts.forEach((t, i) => {
    if (typeof t !== 'string') throw typeError(`texts[${i}]: expected a string, got ${describe(t)}`);
  });
  const o = checkOptions(options, ['addSpecialTokens', 'maxLength', 'truncation', 'padding'], 'encodeBatch');
  const padding = o.padding === undefined ? 'longest' : o.padding;
  if (!['longest', 'max_length', false].includes(padding)) throw typeError(`padding: expected 'longest', 'max_length' or false, got ${typeof padding === 'string' ? `'${padding}'` : describe(padding)}`);
  const { addSpecial, limit, maxLength } = truncation(tok, o);
  const rows = texts.map((text) => row(tok, tok._encodeText(text), addSpecial, limit));
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
