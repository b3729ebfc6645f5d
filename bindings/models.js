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
// loadModel picks the family from the file (or the config passed);
// loadTranslator / loadClassifier insist on one. The file's bytes go into wasm once; the native loader
// (src/models/load_model.cpp) validates the config, builds the model and
// fills its parameters straight from the bytes.

import { AttnWasmError, typeError, describe } from './errors.js';
import { isNode, checkOptions } from './checks.js';
import { makeTranslator } from './translator.js';
import { makeClassifier } from './classifier.js';
import { makeCausalLm, CharTokenizer } from './causal_lm.js';

// Held in a variable so bundlers do not resolve a Node built-in for the browser.
const NODE_FS = 'node:fs/promises';

/**
 * Reads model bytes from a URL (fetch, with progress), a Node path or file
 * URL, or takes bytes as they are.
 * @param {string|URL|Uint8Array|ArrayBuffer} source
 * @param {(p: {loaded: number, total: number|null}) => void} [onProgress]
 */
export async function readSource(source, onProgress) {
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw typeError(`onProgress: expected a function, got ${describe(onProgress)}`);
  }
  const progress = (loaded, total) => onProgress && onProgress({ loaded, total });
  if (source instanceof Uint8Array) { progress(source.byteLength, source.byteLength); return source; }
  if (source instanceof ArrayBuffer) { progress(source.byteLength, source.byteLength); return new Uint8Array(source); }
  if (typeof source !== 'string' && !(source instanceof URL)) {
    throw typeError(`source: expected a URL, a path or bytes (Uint8Array/ArrayBuffer), got ${describe(source)}`);
  }
  const s = String(source);
  const isRemote = /^(https?|blob|data):/i.test(s);
  if (isNode && !isRemote) {
    const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS);
    let bytes;
    try {
      bytes = new Uint8Array(await readFile(s.startsWith('file:') ? new URL(s) : s));
    } catch (e) {
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `source: cannot read '${s}': ${e.message}`);
    }
    progress(bytes.byteLength, bytes.byteLength);
    return bytes;
  }
  let res;
  try {
    res = await fetch(s);
  } catch (e) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `source: cannot fetch '${s}': ${e.message}`);
  }
  if (!res.ok) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `source: fetching '${s}' gave HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length')) || null;
  if (!res.body || !res.body.getReader) {
    const bytes = new Uint8Array(await res.arrayBuffer());
    progress(bytes.byteLength, total ?? bytes.byteLength);
    return bytes;
  }
  const reader = res.body.getReader();
  const chunks = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    progress(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let off = 0;
  for (const c of chunks) { bytes.set(c, off); off += c.byteLength; }
  return bytes;
}

/** config.json as text: a parsed object, its text or its bytes. */
function configText(config) {
  if (typeof config === 'string') return config;
  if (config instanceof Uint8Array || config instanceof ArrayBuffer) return new TextDecoder().decode(config);
  if (config !== null && typeof config === 'object' && !Array.isArray(config) && !ArrayBuffer.isView(config)) {
    return JSON.stringify(config);
  }
  throw typeError(`config: expected a Hugging Face config.json (an object, its text or its bytes), got ${describe(config)}`);
}

/** A tokenizer option: a Tokenizer of 'attnwasm/tokenizer', or a tokenizer.json (object, text or bytes). */
async function readTokenizer(tokenizer) {
  const { Tokenizer } = await import('./tokenizer.js');
  if (tokenizer instanceof Tokenizer) return tokenizer;
  if (tokenizer === null || !['string', 'object'].includes(typeof tokenizer) || Array.isArray(tokenizer)) {
    throw typeError(`tokenizer: expected a tokenizer.json (an object, its text or its bytes) or a Tokenizer, got ${describe(tokenizer)}`);
  }
  return Tokenizer.fromJSON(tokenizer);
}

export function makeModels(rt, classes) {
  const Translator = makeTranslator(rt, classes);
  const Classifier = makeClassifier(rt, classes);
  const { CausalLM } = makeCausalLm(rt, classes);
  const families = { translator: Translator, vit: Classifier };

  // One crossing builds and fills the model (code and message on failure);
  // then the JS object reads the vocabularies and labels from the same config.
  async function load(source, options, expected, where) {
    const o = checkOptions(options, ['onProgress', 'config', 'tokenizer'], where);
    const config = o.config === undefined ? '' : configText(o.config);
    if (config === '' && o.config !== undefined) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'config: expected a config.json, got an empty text');
    const tokenizer = o.tokenizer === undefined ? null : await readTokenizer(o.tokenizer);
    const bytes = await readSource(source, o.onProgress);
    return rt._withFile(bytes, 'source', (file, metadata) => {
      const handle = rt._checked(rt._core.createModel(file, expected, config));
      // Validated natively by createModel: the config passed, or the file's (keys unique, so JSON.parse reads
      // what the native reader read). The model's numbers come from the handle (CausalLM).
      const own = config ? null : JSON.parse(metadata['attnwasm.config']);
      if (config || own.model === 'causal_lm') {
        const hfConfig = config ? JSON.parse(config) : own.hf_config;
        let tok = tokenizer;
        if (!tok && own?.tokenizer) tok = new CharTokenizer(own.tokenizer);
        const { vocabSize } = JSON.parse(handle.info());
        const problem = !tok ? null
          : tok.vocabSize > vocabSize ? `it has ${tok.vocabSize} ids, more than the model's vocab_size (${vocabSize})`
            : (tok._maxId ?? 0) >= vocabSize ? `its largest id is ${tok._maxId}, past the model's vocab_size (${vocabSize})` : null;
        if (problem) {
          handle.delete();
          throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tokenizer: ${problem}`);
        }
        return new CausalLM(handle, { hfConfig, tokenizer: tok }, bytes.byteLength);
      }
      if (tokenizer) {
        handle.delete();
        throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tokenizer: only a causal LM takes a tokenizer; this file is a "${own.model}" model`);
      }
      return new families[own.model](handle, own, bytes.byteLength);
    });
  }

  /**
   * Loads any model attnwasm has a family for, from a URL, a Node path or
   * bytes: a Translator for a "translator" file, a Classifier for a "vit" one,
   * a CausalLM for a "causal_lm" one or a Hugging Face checkpoint passed with
   * its config.json (`config`) and, for text in and out, its tokenizer.json
   * (`tokenizer`).
   * @param {string|URL|Uint8Array|ArrayBuffer} source
   * @param {{onProgress?: (p: {loaded: number, total: number|null}) => void, config?: object|string|Uint8Array,
   *   tokenizer?: object|string|Uint8Array}} [options]
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

  return { Translator, Classifier, CausalLM, loadModel, loadTranslator, loadClassifier, loadCausalLM };
}
