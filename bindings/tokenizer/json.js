// The strict reading of tokenizer.json and tokenizer_config.json: the parse (text, bytes or object; a
// key given twice refused), the field checks, and the two refusals every reader throws —
// ERR_UNSUPPORTED for a valid file of a kind not run here, ERR_INVALID_ARGUMENT for a file the Rust
// library would not load either (or would load with ids other than the file's). Each message names
// the field, what is supported or expected, and what the file has. Not here: what any field means.
import { AttnWasmError, describe, typeError } from '../errors.js';
import { repeatedKey } from '../json_text.js';

/** The largest token id: ids are int32 (the Rust library's u32, kept below 2^31 for Int32Array). */
export const MAX_ID = 2 ** 31 - 1;

export const unsupported = (field, expected, got, file = 'tokenizer.json') => new AttnWasmError('ERR_UNSUPPORTED', `${file} ${field}: expected ${expected}, got ${show(got)}`);
export const invalid = (field, message, file = 'tokenizer.json') => new AttnWasmError('ERR_INVALID_ARGUMENT', `${file} ${field}: ${message}`);

/** A description of what the file has, shown as is (show() quotes strings). */
class Phrase {
  constructor(text) { this.text = text; }
}
export const phrase = (text) => new Phrase(text);

export function show(v) {
  if (v instanceof Phrase) return v.text;
  if (v === undefined) return 'nothing (the field is missing)';
  if (typeof v === 'string') return `'${v}'`;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return describe(v);
}

export function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function requireObject(v, field) {
  if (!isObject(v)) throw invalid(field, `expected an object, got ${show(v)}`);
  return v;
}

export function requireArray(v, field) {
  if (!Array.isArray(v)) throw invalid(field, `expected an array, got ${show(v)}`);
  return v;
}

export function requireBoolean(v, field) {
  if (typeof v !== 'boolean') throw invalid(field, `expected a boolean, got ${show(v)}`);
  return v;
}

/** A boolean field that may be missing (then `dflt`, the Rust library's default). */
export function optionalBoolean(v, field, dflt) {
  return v === undefined || v === null ? dflt : requireBoolean(v, field);
}

export function requireString(v, field, { nonEmpty = false } = {}) {
  if (typeof v !== 'string' || (nonEmpty && v === '')) throw invalid(field, `expected a ${nonEmpty ? 'non-empty ' : ''}string, got ${show(v)}`);
  return v;
}

/** A string of exactly one character (a Rust `char`). */
export function requireChar(v, field) {
  if (typeof v !== 'string' || [...v].length !== 1) throw invalid(field, `expected one character, got ${show(v)}`);
  return v;
}

/** An integer in [min, max]. */
export function requireInteger(v, field, min = 0, max = MAX_ID) {
  if (!Number.isInteger(v) || v < min || v > max) throw invalid(field, `expected an integer in [${min}, ${max === MAX_ID ? '2^31 - 1' : max}], got ${show(v)}`);
  return v;
}

/** A type name among `types`, else ERR_UNSUPPORTED naming field.type. */
export function requireType(v, field, types) {
  requireObject(v, field);
  if (!types.includes(v.type)) throw unsupported(`${field}.type`, types.map((t) => `'${t}'`).join(' or '), v.type);
  return v.type;
}

/**
 * A JSON file given as its text, its bytes (Uint8Array or ArrayBuffer) or the parsed object → the
 * object. `name` ('tokenizer.json') starts every message.
 */
export function parseJson(json, name = 'tokenizer.json') {
  if (json instanceof ArrayBuffer) json = new Uint8Array(json);
  if (json instanceof Uint8Array) json = new TextDecoder('utf-8', { fatal: false }).decode(json);
  if (typeof json === 'string') {
    const repeated = repeatedKey(json);
    if (repeated) throw invalid(repeated.path === '' ? '(top level)' : repeated.path.slice(repeated.path[0] === '.' ? 1 : 0), `the key '${repeated.key}' is given twice (JSON.parse would keep the last, other readers the first)`, name);
    try {
      json = JSON.parse(json);
    } catch (e) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: not JSON (${e.message})`, { cause: e });
    }
  } else if (!isObject(json)) {
    throw typeError(`${name}: expected the parsed object, its text or its bytes (a Uint8Array or ArrayBuffer), got ${describe(json)}`);
  }
  if (!isObject(json)) throw invalid('(top level)', `expected an object, got ${describe(json)}`, name);
  return json;
}
