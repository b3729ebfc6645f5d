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
// loadModel picks the family from the file; loadTranslator / loadClassifier
// insist on one. The file's bytes go into wasm once; the native loader
// (src/models/load_model.cpp) validates the config, builds the model and
// fills its parameters straight from the bytes.

import { AttnWasmError, typeError, describe } from './errors.js';
import { nativeError, isNode, checkOptions } from './checks.js';
import { makeTranslator } from './translator.js';
import { makeClassifier } from './classifier.js';

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

export function makeModels(rt, classes) {
  const Translator = makeTranslator(rt, classes);
  const Classifier = makeClassifier(rt, classes);
  const families = { translator: Translator, vit: Classifier };

  // One crossing builds and fills the model (code and message on failure);
  // then the JS object reads the vocabularies and labels from the same config.
  async function load(source, options, expected, where) {
    const o = checkOptions(options, ['onProgress'], where);
    const bytes = await readSource(source, o.onProgress);
    return rt._withFile(bytes, 'source', (file, metadata) => {
      const handle = rt._core.createModel(file, expected);
      if (handle.code() !== 0) {
        const e = nativeError(handle.code(), handle.message());
        handle.delete();
        throw e;
      }
      const config = JSON.parse(metadata['attnwasm.config']);  // validated natively by createModel
      return new families[config.model](handle, config, bytes.byteLength);
    });
  }

  /**
   * Loads any model attnwasm has a family for, from a URL, a Node path or
   * bytes: a Translator for a "translator" file, a Classifier for a "vit" one.
   * @param {string|URL|Uint8Array|ArrayBuffer} source
   * @param {{onProgress?: (p: {loaded: number, total: number|null}) => void}} [options]
   */
  const loadModel = (source, options) => load(source, options, '', 'loadModel');
  /** Loads an encoder–decoder ("translator") model; another kind is ERR_INVALID_ARGUMENT. */
  const loadTranslator = (source, options) => load(source, options, 'translator', 'loadTranslator');
  /** Loads an image classifier ("vit") model; another kind is ERR_INVALID_ARGUMENT. */
  const loadClassifier = (source, options) => load(source, options, 'vit', 'loadClassifier');

  return { Translator, Classifier, loadModel, loadTranslator, loadClassifier };
}
