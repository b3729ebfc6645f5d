// Which family a checkpoint is, read from the registry's rows (native_constants.js FAMILIES, generated from the
// native registry: src/models/families.h) as the runtime decides it: a Hugging Face config.json by its
// model_type, or else the first weight file's own "attnwasm.config" metadata by its "model". Refusals carry the
// runtime's code and, but for the native hints ("gemma3" is not "gemma3_text"), its message. Not here: whether
// the config's values are in range (the family's config reader, natively: a runtime's inspect answers that).
import { typeError, describe } from '../errors.js';
import { FAMILIES } from '../native_constants.js';
import { parseTree } from './json_tree.js';

const refusal = (message) => ({ code: 'ERR_INVALID_ARGUMENT', message });

/** A JSON node as the runtime describes a value in a message (src/io/json_fields.h Describe). */
export function describeValue(v) {
  if (!v) return 'nothing';
  switch (v.type) {
    case 'null': return 'null';
    case 'boolean': return String(v.bool);
    case 'number': return v.str.length <= 40 ? v.str : `${v.str.slice(0, 40)}...`;
    case 'string': return quoteJson(v.str);
    case 'array': return `an array of ${v.items.length} element${v.items.length === 1 ? '' : 's'}`;
    default: return `an object with ${v.members.length} key${v.members.length === 1 ? '' : 's'}`;
  }
}

/** A string as a JSON literal, cut after 60 characters (src/io/json_fields.h QuoteJson). */
const quoteJson = (s) => JSON.stringify(s.length > 60 ? s.slice(0, 60) : s);
/** '"a", "b" or "c"' */
const quoted = (items) => items.map((s, i) => `${i === 0 ? '' : i === items.length - 1 ? ' or ' : ', '}"${s}"`).join('');
const keyPath = (k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${quoteJson(k)}]`);

/** The first key given twice in one object, depth first as the runtime looks (io::UniqueKeys): a message, or null. */
export function repeatedKey(v, root, path = '') {
  if (v.type === 'object') {
    const seen = new Set();
    for (const m of v.members) {
      if (seen.has(m.key)) return `${root}${path}: expected unique keys, got ${quoteJson(m.key)} more than once`;
      seen.add(m.key);
    }
    for (const m of v.members) {
      const r = repeatedKey(m.value, root, path + keyPath(m.key));
      if (r) return r;
    }
  } else if (v.type === 'array') {
    for (let i = 0; i < v.items.length; i++) {
      const r = repeatedKey(v.items[i], root, `${path}[${i}]`);
      if (r) return r;
    }
  }
  return null;
}

const member = (v, key) => v.members.find((m) => m.key === key)?.value;

/**
 * The family of a checkpoint: { family: a FAMILIES row or null, modelType: string or null, config: the parsed
 * object or null, refused: { code, message } or null }. `configText`: a config.json's text, or null (then the
 * first weight file's `metadata` names its family by its attnwasm.config).
 * @param {string|null} configText @param {Record<string, string>} metadata
 */
export function findFamily(configText, metadata) {
  const own = configText === null;
  if (own && !Object.hasOwn(metadata, 'attnwasm.config')) {
    return { family: null, modelType: null, config: null, refused: refusal('source: the file has no "attnwasm.config" metadata (export it with '
      + "tools/export_safetensors.py, or pass a Hugging Face checkpoint's config.json: loadModel(bytes, { config }))") };
  }
  const root = own ? 'source: attnwasm.config' : 'config';
  const text = own ? metadata['attnwasm.config'] : configText;
  let tree;
  try {
    tree = parseTree(text);
  } catch (e) {
    return { family: null, modelType: null, config: null, refused: refusal(`${root}: not valid JSON: ${e.message}`) };
  }
  if (tree.type !== 'object') {
    return { family: null, modelType: null, config: null, refused: refusal(`${root}: expected a JSON object${own ? '' : ' (a Hugging Face config.json)'}, got ${describeValue(tree)}`) };
  }
  // A file's own config: its top-level keys first (they name the family), the rest once the family is known.
  const repeated = repeatedKey(own ? { type: 'object', members: tree.members.map(({ key }) => ({ key, value: { type: 'null' } })) } : tree, root);
  if (repeated) return { family: null, modelType: null, config: null, refused: refusal(repeated) };
  const config = JSON.parse(text);
  if (own) {
    const model = member(tree, 'model');
    const family = FAMILIES.find((f) => f.ownModel !== null && model?.type === 'string' && model.str === f.ownModel) ?? null;
    const modelType = typeof config.hf_config?.model_type === 'string' ? config.hf_config.model_type : null;
    if (!family) return { family: null, modelType, config, refused: refusal(`${root}.model: expected ${quoted(FAMILIES.filter((f) => f.ownModel).map((f) => f.ownModel))}, got ${describeValue(model)}`) };
    const deep = repeatedKey(tree, root);
    return { family, modelType, config, refused: deep ? refusal(deep) : null };
  }
  const mt = member(tree, 'model_type');
  const modelType = mt?.type === 'string' ? mt.str : null;
  const family = FAMILIES.find((f) => modelType !== null && f.modelTypes.includes(modelType)) ?? null;
  if (family) return { family, modelType, config, refused: null };
  const takes = FAMILIES.filter((f) => f.modelTypes.length);
  const list = takes.map((f, i) => `${i === 0 ? '' : i === takes.length - 1 ? ' or ' : ', '}${f.noun}'s (${quoted(f.modelTypes)})`).join('');
  return { family: null, modelType, config, refused: refusal(`config.model_type: expected ${list}, got ${describeValue(mt)}`) };
}

/**
 * config.json given as an option (an object, its text or its bytes) as text; a TypeError for anything else.
 * @param {unknown} config
 */
export function configOption(config) {
  if (typeof config === 'string') return config;
  if (config instanceof Uint8Array || config instanceof ArrayBuffer) return new TextDecoder().decode(config);
  if (config !== null && typeof config === 'object' && !Array.isArray(config) && !ArrayBuffer.isView(config)) return JSON.stringify(config);
  throw typeError(`config: expected a Hugging Face config.json (an object, its text or its bytes), got ${describe(config)}`);
}
