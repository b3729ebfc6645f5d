// sentence-transformers' side of an embedder: its pooling modes (Pooling.py's names, the native Pooling's values:
// bindings/native_constants.js POOLING, generated), a pooling option's canonical form, Python's str.strip that
// it applies to every text, and what a folder's modules.json, 1_Pooling/config.json, sentence_bert_config.json
// and config_sentence_transformers.json say (readSentenceTransformers). Not here: the model (embedder.js).
import { AttnWasmError, typeError, describe } from './errors.js';
import { POOLING } from './native_constants.js';
import { readDense } from './st_dense.js';

export { POOLING };
// The order Pooling.forward concatenates several modes in: the native enum's.
const POOLING_ORDER = Object.keys(POOLING).sort((a, b) => POOLING[a] - POOLING[b]);
const POOLING_ALIASES = { mean_sqrt_len_tokens: 'mean_sqrt_len' };  // Pooling(pooling_mode=…)'s spelling
const POOLING_NAMES = Object.keys(POOLING).map((n) => `'${n}'`).join(', ');

/**
 * A pooling option → its canonical form: one mode ('mean', …) or several joined by '+' ('cls+max+mean'),
 * written in the order sentence-transformers concatenates them; `name` names the argument in messages.
 */
export function checkPooling(v, name = 'pooling') {
  if (typeof v !== 'string') throw typeError(`${name}: expected one of ${POOLING_NAMES} (or several joined by '+'), got ${describe(v)}`);
  const modes = new Set(v.toLowerCase().split('+').map((m) => {
    const mode = POOLING_ALIASES[m.trim()] ?? m.trim();
    if (!(mode in POOLING)) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${name}: expected one of ${POOLING_NAMES} (or several joined by '+'), got '${v}'`);
    return mode;
  }));
  return POOLING_ORDER.filter((m) => modes.has(m)).join('+');
}

/** A pooling's modes ('cls+max+mean') as the native bitmask (src/models/encoder.h EmbedOptions.modes). */
export const poolingModes = (pooling) => pooling.split('+').reduce((m, mode) => m | (1 << POOLING[mode]), 0);

// Python's str.strip(), which sentence-transformers applies to every text: str.isspace() characters
// (JS's trim() differs: it keeps \x1c-\x1f and \x85, and strips U+FEFF).
const PY_SPACE = '\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'g');
export const pyStrip = (s) => s.replace(PY_STRIP, '');

// ---- sentence-transformers' folder files ----

const ST_TYPES = {
  'sentence_transformers.models.Transformer': 'Transformer',
  'sentence_transformers.models.Pooling': 'Pooling',
  'sentence_transformers.models.Dense': 'Dense',
  'sentence_transformers.models.Normalize': 'Normalize',
};
const POOLING_KEYS = {
  pooling_mode_cls_token: 'cls', pooling_mode_mean_tokens: 'mean', pooling_mode_max_tokens: 'max',
  pooling_mode_mean_sqrt_len_tokens: 'mean_sqrt_len', pooling_mode_weightedmean_tokens: 'weightedmean', pooling_mode_lasttoken: 'lasttoken',
};

const invalid = (file, message) => new AttnWasmError('ERR_INVALID_ARGUMENT', `${file}: ${message}`);
const unsupported = (file, message) => new AttnWasmError('ERR_UNSUPPORTED', `${file}: ${message}`);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const show = (v) => (typeof v === 'string' ? `'${v}'` : JSON.stringify(v) ?? describe(v));

function parseFile(text, file) {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalid(file, `not valid JSON (${e.message})`);
  }
}

/**
 * What a sentence-transformers folder says about its embeddings, read as SentenceTransformer(folder) reads it:
 *   modules.json                      Transformer (at the folder's top), Pooling, any Dense modules, optionally
 *                                     Normalize — in that order; any other module (LayerNorm, …) is ERR_UNSUPPORTED;
 *   <Dense's path>/config.json, model.safetensors   each Dense module (st_dense.js);
 *   <Pooling's path>/config.json      the pooling mode (Pooling's defaults for absent keys: mean) and include_prompt;
 *   sentence_bert_config.json         max_seq_length, do_lower_case;
 *   config_sentence_transformers.json prompts, default_prompt_name.
 * Without modules.json: mean pooling, no Normalize (sentence-transformers' fallback for a plain checkpoint).
 * `read(path)` resolves to a file's text or undefined; `override` is loadModel's { pooling, normalize }: a
 * pooling given there is used instead of the folder's (which may then name several modes). `files`: { readBytes,
 * loadSafetensors } for Dense modules' weights (a folder without Dense needs neither).
 * @returns {Promise<{pooling: string, normalize: boolean, includePrompt: boolean, maxSeqLength: number|null,
 *   doLowerCase: boolean, prompts: Record<string, string>, defaultPromptName: string|null, dense: object[]}>}
 *   owned by the caller
 */
export async function readSentenceTransformers(read, hiddenSize, override = {}, files = {}) {
  const out = { pooling: 'mean', normalize: false, includePrompt: true, maxSeqLength: null, doLowerCase: false, prompts: {}, defaultPromptName: null, dense: [] };
  const modulesText = await read('modules.json');
  if (modulesText !== undefined) {
    const modules = parseFile(modulesText, 'modules.json');
    if (!Array.isArray(modules)) throw invalid('modules.json', `expected an array of modules, got ${describe(modules)}`);
    const kinds = modules.map((m, i) => {
      if (!isObject(m) || typeof m.type !== 'string') throw invalid('modules.json', `[${i}]: expected { type, path }, got ${show(m)}`);
      const kind = ST_TYPES[m.type];
      if (!kind) {
        throw unsupported('modules.json', `[${i}].type: expected ${Object.keys(ST_TYPES).map((t) => `'${t}'`).join(', ')}, got '${m.type}' `
          + '(attnwasm runs a Transformer, its Pooling, Dense modules and an optional Normalize)');
      }
      if (m.path !== undefined && typeof m.path !== 'string') throw invalid('modules.json', `[${i}].path: expected a string, got ${show(m.path)}`);
      return kind;
    });
    if (!/^Transformer,Pooling(,Dense)*(,Normalize)?$/.test(kinds.join(','))) {
      throw unsupported('modules.json', `expected the modules Transformer, Pooling, any Dense and optionally Normalize, in that order, got ${kinds.join(', ') || 'none'}`);
    }
    if (modules[0].path) {
      throw unsupported('modules.json', `[0].path: the Transformer's files in a subfolder ('${modules[0].path}') are not read; `
        + 'give that subfolder as the source (with modules.json and the Pooling folder beside its files)');
    }
    const poolingPath = modules[1].path ?? '';
    if (!poolingPath) throw unsupported('modules.json', '[1].path: expected the Pooling module\'s folder (e.g. \'1_Pooling\'), got \'\'');
    const file = `${poolingPath.replace(/\/+$/, '')}/config.json`;
    const text = await read(file);
    if (text === undefined) throw invalid('source', `${file}, the Pooling module's config named by modules.json, is not in the folder`);
    Object.assign(out, poolingConfig(parseFile(text, file), file, hiddenSize, override.pooling !== undefined));
    out.normalize = kinds.at(-1) === 'Normalize';
    // Dense modules take the pooled vector: its size is the hidden size per pooling mode.
    let width = hiddenSize * (override.pooling ?? out.pooling).split('+').length;
    for (let i = 2; i < kinds.length && kinds[i] === 'Dense'; i++) {
      if (!modules[i].path) throw unsupported('modules.json', `[${i}].path: expected the Dense module's folder (e.g. '2_Dense'), got ''`);
      const dense = await readDense(modules[i].path, width, { read, ...files });
      out.dense.push(dense);
      width = dense.outFeatures;
    }
  }
  const sbertText = await read('sentence_bert_config.json');
  if (sbertText !== undefined) {
    const file = 'sentence_bert_config.json';
    const c = parseFile(sbertText, file);
    if (!isObject(c)) throw invalid(file, `expected an object, got ${describe(c)}`);
    if (c.max_seq_length != null) {
      if (!Number.isInteger(c.max_seq_length) || c.max_seq_length < 1) throw invalid(file, `max_seq_length: expected a positive integer or null, got ${show(c.max_seq_length)}`);
      out.maxSeqLength = c.max_seq_length;
    }
    if (c.do_lower_case !== undefined) {
      if (typeof c.do_lower_case !== 'boolean') throw invalid(file, `do_lower_case: expected a boolean, got ${show(c.do_lower_case)}`);
      out.doLowerCase = c.do_lower_case;
    }
  }
  const stText = await read('config_sentence_transformers.json');
  if (stText !== undefined) {
    const file = 'config_sentence_transformers.json';
    const c = parseFile(stText, file);
    if (!isObject(c)) throw invalid(file, `expected an object, got ${describe(c)}`);
    if (c.prompts != null) {
      if (!isObject(c.prompts)) throw invalid(file, `prompts: expected an object of name → text, got ${show(c.prompts)}`);
      for (const [k, v] of Object.entries(c.prompts)) {
        if (typeof v !== 'string') throw invalid(file, `prompts.${k}: expected a string, got ${show(v)}`);
        out.prompts[k] = v;
      }
    }
    if (c.default_prompt_name != null) {
      if (typeof c.default_prompt_name !== 'string' || !(c.default_prompt_name in out.prompts)) {
        throw invalid(file, `default_prompt_name: expected one of the prompts' names (${Object.keys(out.prompts).join(', ') || 'none'}), got ${show(c.default_prompt_name)}`);
      }
      out.defaultPromptName = c.default_prompt_name;
    }
  }
  if (override.pooling !== undefined) out.pooling = override.pooling;
  if (override.normalize !== undefined) out.normalize = override.normalize;
  return out;
}

/** A Pooling module's config.json → { pooling, includePrompt }, keys as Pooling(**config) takes them. */
function poolingConfig(c, file, hiddenSize, overridden) {
  if (!isObject(c)) throw invalid(file, `expected an object, got ${describe(c)}`);
  // Pooling.__init__'s defaults: mean pooling, the prompt included.
  const modes = { cls: false, mean: true, max: false, mean_sqrt_len: false, weightedmean: false, lasttoken: false };
  let includePrompt = true;
  for (const [k, v] of Object.entries(c)) {
    if (k === 'word_embedding_dimension') {
      if (v !== hiddenSize) throw invalid(file, `word_embedding_dimension: expected the model's hidden_size (${hiddenSize}), got ${show(v)}`);
    } else if (k in POOLING_KEYS) {
      if (typeof v !== 'boolean') throw invalid(file, `${k}: expected a boolean, got ${show(v)}`);
      modes[POOLING_KEYS[k]] = v;
    } else if (k === 'include_prompt') {
      if (typeof v !== 'boolean') throw invalid(file, `include_prompt: expected a boolean, got ${show(v)}`);
      includePrompt = v;
    } else if (k !== 'pooling_mode') {
      // Pooling(**config) would refuse it too (an unexpected keyword argument).
      throw unsupported(file, `${k}: not a key of sentence-transformers' Pooling (expected word_embedding_dimension, pooling_mode, ${Object.keys(POOLING_KEYS).join(', ')}, include_prompt)`);
    }
  }
  if (c.word_embedding_dimension === undefined) throw invalid(file, 'word_embedding_dimension: missing');
  if (c.pooling_mode != null) {  // Pooling(pooling_mode=…) overrides the flags
    if (typeof c.pooling_mode !== 'string' || c.pooling_mode.includes('+')) throw invalid(file, `pooling_mode: expected one of ${POOLING_NAMES}, got ${show(c.pooling_mode)}`);
    const mode = checkPooling(c.pooling_mode, `${file}: pooling_mode`);
    for (const m of Object.keys(modes)) modes[m] = m === mode;
  }
  const on = POOLING_ORDER.filter((m) => modes[m]);
  if (overridden) return { includePrompt };
  if (on.length === 0) throw unsupported(file, 'no pooling mode is set (sentence-transformers would give empty embeddings)');
  return { pooling: on.join('+'), includePrompt };
}

