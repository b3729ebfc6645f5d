// attnwasm models: the model families of src/models/, loaded from a
// safetensors file whose metadata "attnwasm.config" names the family and
// holds its config, vocabularies and labels (tools/export_safetensors.py
// export_seq2seq / export_vit; the demo trainers in tools/models/).
//
//   "translator" → Translator (translator.js): an encoder–decoder
//                  nn.Transformer with token embeddings, greedy or beam
//                  decoding against a KV cache, natively in one call.
//   "vit"        → Classifier (classifier.js): a ViT-style image classifier
//                  with the class token's attention and rollout, natively in
//                  one call.
//   "causal_lm"  → CausalLM (causal_lm.js): a Llama / Qwen2 decoder-only
//                  language model that streams tokens; also from a Hugging
//                  Face checkpoint (model.safetensors) with its config.json
//                  ({ config }) and tokenizer.json ({ tokenizer }).
//   "encoder"    → Embedder (embedder.js): a BERT / RoBERTa / XLM-R sentence
//                  embedder from a Hugging Face checkpoint with its
//                  config.json, and sentence-transformers' files of its folder
//                  (modules.json, 1_Pooling/config.json, …; { pooling, normalize }).
// loadModel picks the family from the file (or the config passed);
// loadTranslator / loadClassifier / loadCausalLM / loadEmbedder insist on one. The file's bytes go into wasm once; the native loader
// (src/models/load_model.cpp) validates the config, builds the model and
// fills its parameters straight from the bytes.

import { AttnWasmError, typeError, describe } from './errors.js';
import { checkBool, checkOptions } from './checks.js';
import { resolveCheckpoint } from './checkpoint.js';
import { readText } from './sources.js';
import { loadFiles } from './model_loading.js';
import { makeTranslator } from './translator.js';
import { makeClassifier } from './classifier.js';
import { makeCausalLm, CharTokenizer } from './causal_lm.js';
import { makeEmbedder, checkPooling, readSentenceTransformers } from './embedder.js';

/** config.json as text: a parsed object, its text or its bytes. */
function configText(config) {
  if (typeof config === 'string') return config;
  if (config instanceof Uint8Array || config instanceof ArrayBuffer) return new TextDecoder().decode(config);
  if (config !== null && typeof config === 'object' && !Array.isArray(config) && !ArrayBuffer.isView(config)) {
    return JSON.stringify(config);
  }
  throw typeError(`config: expected a Hugging Face config.json (an object, its text or its bytes), got ${describe(config)}`);
}

/** A tokenizer option: a Tokenizer of 'attnwasm/tokenizer', or a tokenizer.json (object, text or bytes), with its tokenizer_config.json. */
async function readTokenizer(tokenizer, tokenizerConfig, template) {
  const { Tokenizer } = await import('./tokenizer.js');
  if (tokenizer instanceof Tokenizer) return tokenizer;
  if (tokenizer === null || !['string', 'object'].includes(typeof tokenizer) || Array.isArray(tokenizer)) {
    throw typeError(`tokenizer: expected a tokenizer.json (an object, its text or its bytes) or a Tokenizer, got ${describe(tokenizer)}`);
  }
  if (template) {
    // transformers reads a repo's chat_template.jinja (or chat_template.json) before tokenizer_config.json's
    // chat_template: the tokenizer's config gets the file's template, as its tokenizer.chat_template does.
    const { parseJson } = await import('./tokenizer/json.js');
    tokenizerConfig = { ...(tokenizerConfig === undefined ? {} : parseJson(tokenizerConfig, 'tokenizer_config.json')), chat_template: template };
  }
  return tokenizerConfig === undefined ? Tokenizer.fromJSON(tokenizer) : Tokenizer.fromJSON(tokenizer, tokenizerConfig);
}

const ENCODER_TYPES = ['bert', 'roberta', 'xlm-roberta'];

/** generation_config.json (parsed, text or bytes) as an object; a key given twice is refused, as in config.json. */
async function readGenerationConfig(given) {
  const { parseJson } = await import('./tokenizer/json.js');
  return Object.freeze(structuredClone(parseJson(given, 'generation_config.json')));
}

/**
 * generation_config.json's eos_token_id, which transformers' generate() stops at (it replaces config.json's):
 * the ids as an array, null when it gives none, or an error message (ids must be integers in [0, vocab)).
 */
function generationEos(generation, vocab) {
  const v = generation.eos_token_id;
  if (v == null) return null;
  const ids = Array.isArray(v) ? v : [v];
  for (let i = 0; i < ids.length; i++) {
    if (!Number.isInteger(ids[i]) || ids[i] < 0 || ids[i] >= vocab) {
      return `generation_config.json eos_token_id${Array.isArray(v) ? `[${i}]` : ''}: expected a token id (an integer in [0, ${vocab})), got ${JSON.stringify(ids[i])}`;
    }
  }
  return ids.length ? [...new Set(ids)] : null;
}

/** config.json's model_type, or undefined (the native reader checks the file itself). */
function modelTypeOf(configText) {
  try {
    return configText ? JSON.parse(configText).model_type : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A folder's chat template file, which transformers prefers to tokenizer_config.json's chat_template:
 * chat_template.jinja's text, else chat_template.json's "chat_template" (a template, or a list of
 * { name, template }); null when the folder has neither (or the source is not a folder).
 */
async function folderChatTemplate(cp) {
  if (!cp.file) return null;
  for (const name of ['chat_template.jinja', 'chat_template.json']) {
    const src = await cp.file(name);
    const text = src === undefined ? null : await readText(src, name, { optional: true });
    if (text == null) continue;
    if (name === 'chat_template.jinja') return text;
    const { parseJson } = await import('./tokenizer/json.js');
    const t = parseJson(text, name).chat_template;
    if (typeof t !== 'string' && !Array.isArray(t)) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `chat_template.json: expected { "chat_template": a template or a list of { name, template } }, got chat_template ${describe(t)}`);
    }
    return t;
  }
  return null;
}

export function makeModels(rt, classes) {
  const Translator = makeTranslator(rt, classes);
  const Classifier = makeClassifier(rt, classes);
  const { CausalLM } = makeCausalLm(rt, classes);
  const { Embedder } = makeEmbedder(rt, classes);
  const families = { translator: Translator, vit: Classifier };

  // The checkpoint's files stream into the native loader (model_loading.js), which builds the model and
  // fills its weights as they arrive; the JS face then reads the model's numbers from the handle and its
  // vocabularies and labels from the same config.
  async function load(source, options, expected, where) {
    const o = checkOptions(options, ['onProgress', 'config', 'tokenizer', 'tokenizerConfig', 'generationConfig', 'dtype', 'pooling', 'normalize'], where);
    if (o.onProgress !== undefined && typeof o.onProgress !== 'function') {
      throw typeError(`onProgress: expected a function, got ${describe(o.onProgress)}`);
    }
    if (o.dtype !== undefined && typeof o.dtype !== 'string') {
      throw typeError(`dtype: expected 'f32', 'bf16', 'f16', 'q8', 'q4' or 'q4a16', got ${describe(o.dtype)}`);
    }
    if (o.dtype === '') throw new AttnWasmError('ERR_INVALID_ARGUMENT', "dtype: expected 'f32', 'bf16', 'f16', 'q8', 'q4' or 'q4a16' (or no dtype: the weights as stored), got ''");
    // An encoder's: checked now, used once the checkpoint is known to be one.
    const st = { pooling: o.pooling === undefined ? undefined : checkPooling(o.pooling), normalize: checkBool(o.normalize, 'normalize', undefined) };
    const cp = await resolveCheckpoint(source);
    // A folder's own config.json and tokenizer files, unless the options give them.
    const side = async (name, given) => (given !== undefined ? given
      : cp.side[name] !== undefined ? readText(cp.side[name], name, { optional: !!cp.optionalSide }).then((t) => t ?? undefined) : undefined);
    const configGiven = await side('config.json', o.config);
    const config = configGiven === undefined ? '' : configText(configGiven);
    if (config === '' && configGiven !== undefined) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'config: expected a config.json, got an empty text');
    const tokenizerJson = await side('tokenizer.json', o.tokenizer);
    const tokenizerConfig = await side('tokenizer_config.json', o.tokenizerConfig);
    // The folder's chat_template.jinja / .json joins the folder's tokenizer_config.json (a tokenizerConfig
    // given as an option is used as it is); an encoder's folder is not asked for one, nor for generation_config.json.
    const encoderType = ENCODER_TYPES.includes(modelTypeOf(config));
    if (encoderType && o.generationConfig !== undefined) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `generationConfig: only a causal LM takes a generation_config.json; this checkpoint is "${modelTypeOf(config)}" (an encoder)`);
    }
    const template = tokenizerJson === undefined || o.tokenizerConfig !== undefined || encoderType ? null : await folderChatTemplate(cp);
    const tokenizer = tokenizerJson === undefined ? null : await readTokenizer(tokenizerJson, tokenizerConfig, template);
    const generationGiven = encoderType ? undefined : await side('generation_config.json', o.generationConfig);
    const generation = generationGiven === undefined ? null : await readGenerationConfig(generationGiven);
    const { handle, metadata, bytes: fileBytes } = await loadFiles(rt, {
      weights: cp.weights, config, index: cp.index ?? '', dtype: o.dtype ?? '', expected, onProgress: o.onProgress,
    });
    // Validated natively by the loader: the config passed, or the file's (keys unique, so JSON.parse reads
    // what the native reader read). The model's numbers come from the handle (CausalLM, Embedder).
    const own = config ? null : JSON.parse(metadata['attnwasm.config']);
    const info = JSON.parse(handle.info());
    // Only an encoder's info() has typeVocabSize: the native loader's decision, read back.
    const encoder = info.typeVocabSize !== undefined;
    const stOption = st.pooling !== undefined ? 'pooling' : st.normalize !== undefined ? 'normalize' : null;
    if (stOption && !encoder) {
      handle.delete();
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${stOption}: only an encoder (a BERT-family sentence embedder) takes ${stOption}; this checkpoint is ${
        config || own.model === 'causal_lm' ? 'a causal LM' : `a "${own.model}" model`}`);
    }
    if (config || own.model === 'causal_lm') {
      const hfConfig = config ? JSON.parse(config) : own.hf_config;
      let tok = tokenizer;
      if (!tok && own?.tokenizer) tok = new CharTokenizer(own.tokenizer);
      const { vocabSize } = info;
      const problem = !tok ? null
        : tok.vocabSize > vocabSize ? `it has ${tok.vocabSize} ids, more than the model's vocab_size (${vocabSize})`
          : (tok._maxId ?? 0) >= vocabSize ? `its largest id is ${tok._maxId}, past the model's vocab_size (${vocabSize})` : null;
      if (problem) {
        handle.delete();
        throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tokenizer: ${problem}`);
      }
      if (!encoder) {
        const eos = generation ? generationEos(generation, vocabSize) : null;
        if (typeof eos === 'string') {
          handle.delete();
          throw new AttnWasmError('ERR_INVALID_ARGUMENT', eos);
        }
        return new CausalLM(handle, { hfConfig, tokenizer: tok, generationConfig: generation, eos }, fileBytes);
      }
      // sentence-transformers' files, from a folder (a single file has none: the options or the defaults).
      const read = async (name) => {
        const src = cp.file ? await cp.file(name) : undefined;
        return src === undefined ? undefined : (await readText(src, name, { optional: true })) ?? undefined;
      };
      try {
        const sentence = await readSentenceTransformers(read, info.hiddenSize, st);
        return new Embedder(handle, { hfConfig, tokenizer: tok, st: sentence }, fileBytes);
      } catch (e) {
        handle.delete();
        throw e;
      }
    }
    if (tokenizer) {
      handle.delete();
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tokenizer: only a causal LM takes a tokenizer (an encoder too); this file is a "${own.model}" model`);
    }
    return new families[own.model](handle, own, fileBytes);
  }

  /**
   * Loads any model attnwasm has a family for, from a URL, a Node path or
   * bytes: a Translator for a "translator" file, a Classifier for a "vit" one,
   * a CausalLM for a "causal_lm" one or a Hugging Face causal LM checkpoint passed with
   * its config.json (`config`) and, for text in and out, its tokenizer.json
   * (`tokenizer`); an Embedder for a BERT / RoBERTa / XLM-R checkpoint (a
   * sentence-transformers folder, or model.safetensors with `config`, `tokenizer`,
   * `pooling`, `normalize`).
   * @param {string|URL|Uint8Array|ArrayBuffer} source
   * @param {{onProgress?: (p: {loaded: number, total: number|null}) => void, config?: object|string|Uint8Array,
   *   tokenizer?: object|string|Uint8Array, pooling?: string, normalize?: boolean}} [options]
   */
  const loadModel = (source, options) => load(source, options, '', 'loadModel');
  /** Loads an encoder–decoder ("translator") model; another kind is ERR_INVALID_ARGUMENT. */
  const loadTranslator = (source, options) => load(source, options, 'translator', 'loadTranslator');
  /** Loads an image classifier ("vit") model; another kind is ERR_INVALID_ARGUMENT. */
  const loadClassifier = (source, options) => load(source, options, 'vit', 'loadClassifier');
  /**
   * Loads a causal language model: a "causal_lm" file, or a Hugging Face checkpoint with `config`
   * (and `tokenizer`); another kind is ERR_INVALID_ARGUMENT.
   */
  const loadCausalLM = (source, options) => load(source, options, 'causal_lm', 'loadCausalLM');
  /**
   * Loads a sentence embedder: a BERT / RoBERTa / XLM-R checkpoint with its config.json (a hub folder with
   * sentence-transformers' files, or `config`); another kind is ERR_INVALID_ARGUMENT.
   */
  const loadEmbedder = (source, options) => load(source, options, 'encoder', 'loadEmbedder');

  return { Translator, Classifier, CausalLM, Embedder, loadModel, loadTranslator, loadClassifier, loadCausalLM, loadEmbedder };
}
