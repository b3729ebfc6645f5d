// tokenizer_config.json, the optional second argument of Tokenizer.fromJSON: read strictly (no key
// given twice), kept frozen as tok.config for other modules (a chat template needs chat_template,
// bos_token, eos_token, …), and the three things it changes here: add_bos_token / add_eos_token
// rebuild the single-text template as transformers' LlamaTokenizerFast / GemmaTokenizerFast do in
// update_post_processor (only for those tokenizer_class values), model_max_length becomes the
// default truncation length, pad_token the pad token when tokenizer.json's padding has none.
import { MAX_ID, invalid, isObject, parseJson, show } from './json.js';
import { bosEosTemplate } from './post_processors.js';

const FILE = 'tokenizer_config.json';
/** The tokenizer classes whose fast tokenizer rebuilds its post-processor from add_bos_token / add_eos_token. */
export const BOS_EOS_CLASSES = ['LlamaTokenizer', 'LlamaTokenizerFast', 'GemmaTokenizer', 'GemmaTokenizerFast'];
/** Their __init__ defaults for a bos_token / eos_token the config does not write. */
const DEFAULT_TOKENS = { Llama: { bos_token: '<s>', eos_token: '</s>' }, Gemma: { bos_token: '<bos>', eos_token: '<eos>' } };

function deepFreeze(o) {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    Object.values(o).forEach(deepFreeze);
  }
  return o;
}

/** A special token of the config: a string, { content } (transformers' AddedToken), or null. */
export function tokenText(config, key) {
  const v = config[key];
  if (v == null) return null;
  if (typeof v === 'string') return v;
  if (isObject(v) && typeof v.content === 'string') return v.content;
  throw invalid(key, `expected a token (a string or { content: string }) or null, got ${show(v)}`, FILE);
}

/**
 * Reads the config (object, text or bytes; undefined: none) against a tokenizer's ids.
 * @returns {{ config: object | null, template: object | null, maxLength: number | null, padToken: string | null }}
 */
export function readConfig(input, tokenToId) {
  if (input === undefined || input === null) return { config: null, template: null, maxLength: null, padToken: null };
  const config = deepFreeze(structuredClone(parseJson(input, FILE)));
  let template = null;
  if (BOS_EOS_CLASSES.includes(config.tokenizer_class)) {
    // transformers' defaults: add_bos_token true, add_eos_token false
    const flag = (key, dflt) => {
      const v = config[key];
      if (v == null) return dflt;
      if (typeof v !== 'boolean') throw invalid(key, `expected a boolean, got ${show(v)}`, FILE);
      return v;
    };
    const addBos = flag('add_bos_token', true);
    const addEos = flag('add_eos_token', false);
    const id = (key, add) => {
      if (!add) return null;
      const token = config[key] === undefined ? DEFAULT_TOKENS[config.tokenizer_class.startsWith('Llama') ? 'Llama' : 'Gemma'][key] : tokenText(config, key);
      if (token === null) throw invalid(key, `expected a token, got ${show(config[key])} (add_${key} is true: transformers refuses this too)`, FILE);
      const found = tokenToId(token);
      if (found === undefined) throw invalid(key, `'${token}' is not a token of tokenizer.json`, FILE);
      return found;
    };
    template = bosEosTemplate(id('bos_token', addBos), id('eos_token', addEos));
  }
  let maxLength = null;
  const m = config.model_max_length;
  if (m != null) {
    if (typeof m !== 'number' || !(m >= 1)) throw invalid('model_max_length', `expected a number >= 1, got ${show(m)}`, FILE);
    // Llama's 1e30 means "no limit" (transformers' VERY_LARGE_INTEGER).
    if (Number.isInteger(m) && m <= MAX_ID) maxLength = m;
  }
  return { config, template, maxLength, padToken: tokenText(config, 'pad_token') };
}
