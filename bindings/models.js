// Loading a model: one generic load for every family. The family registry answers "which family" once — before
// the load from config.json's model_type (families.js rowOfConfig: what to read beside the weights, which
// options the family takes), after it from the native handle's kind (rowOfKind) — and the family's row makes
// the face (CausalLM, Embedder, Translator, Classifier). The weights stream into the native loader
// (model_loading.js; src/models/load_model.cpp validates the config, builds the model and fills its parameters
// from the bytes as they arrive). A hub id's files come from hub/ (downloaded once, cached); every read belongs
// to the load's LoadScope (signal, close(), readTimeoutMs).
// loadModel takes any family; loadTranslator / loadClassifier / loadCausalLM / loadEmbedder insist on one.
import { AttnWasmError, typeError, describe } from './errors.js';
import { checkBool, checkOptions } from './checks.js';
import { resolveCheckpoint } from './checkpoint.js';
import { readText, readBytes } from './sources.js';
import { loadFiles } from './model_loading.js';
import { LoadScope } from './load_scope.js';
import { checkPooling } from './sentence_transformers.js';
import { readGenerationConfig } from './generation.js';
import { templateOfFiles } from './chat_template_files.js';
import { ROWS, FAMILY_OPTIONS, ENCODER_TASKS, rowOfConfig, rowOfKind, optionRefusal } from './families.js';
import { WEIGHT_TYPES } from './native_constants.js';
import { hubSource, HUB_OPTIONS } from './hub/hook.js';
import * as boundary from './boundary.js';

const LOAD_OPTIONS = ['onProgress', 'config', 'dtype', 'signal', 'readTimeoutMs', ...HUB_OPTIONS, ...FAMILY_OPTIONS];
const DTYPES = `${WEIGHT_TYPES.slice(0, -1).map((t) => `'${t}'`).join(', ')} or '${WEIGHT_TYPES.at(-1)}'`;

/** config.json as text: a parsed object, its text or its bytes. */
function configText(config) {
  if (typeof config === 'string') return config;
  if (config instanceof Uint8Array || config instanceof ArrayBuffer) return new TextDecoder().decode(config);
  if (config !== null && typeof config === 'object' && !Array.isArray(config) && !ArrayBuffer.isView(config)) {
    return JSON.stringify(config);
  }
  throw typeError(`config: expected a Hugging Face config.json (an object, its text or its bytes), got ${describe(config)}`);
}

/** config.json parsed, or null (not JSON: the native reader names the problem). */
function parsedConfig(text) {
  try {
    const c = text ? JSON.parse(text) : null;
    return c !== null && typeof c === 'object' ? c : null;
  } catch {
    return null;
  }
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
    tokenizerConfig = { ...(tokenizerConfig === undefined ? {} : parseJson(tokenizerConfig, 'tokenizer_config.json')), chat_template: template.value };
  }
  return tokenizerConfig === undefined ? Tokenizer.fromJSON(tokenizer) : Tokenizer.fromJSON(tokenizer, tokenizerConfig);
}

/** The slow classes whose srcLang / tgtLang options choose the language tokens (tokenizer/slow_fairseq.js). */
const LANGUAGE_CLASSES = ['NllbTokenizer', 'M2M100Tokenizer', 'MBartTokenizer', 'MBart50Tokenizer'];

/** Whether tokenizer_config.json's tokenizer_class (else config.json's model_type) is one of LANGUAGE_CLASSES. */
function languageClass(tokenizerConfig, hf) {
  let cls = null;
  try {
    const t = tokenizerConfig instanceof ArrayBuffer || ArrayBuffer.isView(tokenizerConfig) ? new TextDecoder().decode(tokenizerConfig) : tokenizerConfig;
    cls = (typeof t === 'string' ? JSON.parse(t) : t)?.tokenizer_class ?? null;
  } catch {
    return false;  // a broken file: the fast tokenizer's reader says what is wrong with it
  }
  if (typeof cls === 'string') return LANGUAGE_CLASSES.includes(cls.replace(/Fast$/, ''));
  return hf?.model_type === 'mbart' || hf?.model_type === 'm2m_100';
}

/** The files that make a folder's slow tokenizer (tokenizer/folder.js reads the one its class needs). */
const SLOW_FILES = ['source.spm', 'target.spm', 'target_vocab.json', 'vocab.txt', 'vocab.json', 'merges.txt', 'sentencepiece.bpe.model', 'spiece.model', 'tokenizer_config.json', 'special_tokens_map.json', 'added_tokens.json'];

/** A folder's slow tokenizer, or null when it has none of the files one needs (or not `needs`, when given). */
async function slowTokenizer(readFileBytes, configText, needs = null) {
  const files = new Map();
  for (const name of SLOW_FILES) {
    const bytes = await readFileBytes(name);
    if (bytes !== undefined) files.set(name, name.endsWith('.json') || name.endsWith('.txt') ? new TextDecoder().decode(bytes) : bytes);
  }
  if (!['vocab.txt', 'vocab.json', 'sentencepiece.bpe.model', 'spiece.model', 'source.spm'].some((f) => files.has(f))) return null;
  if (needs !== null && !files.has(needs)) return null;
  const { tokenizerFromFolder } = await import('./tokenizer.js');
  return tokenizerFromFolder((name) => (name === 'config.json' ? configText || undefined : files.get(name)), { slow: true });
}

export function makeModels(rt) {
  async function load(source, options, expected, where) {
    const o = checkOptions(options, LOAD_OPTIONS, where);
    boundary.ensureOpen(rt);  // ERR_CLOSED on a closed runtime, before anything is read
    const scope = new LoadScope(rt, o);
    try {
      const model = await loadIn(scope, source, o, expected);
      try {
        scope.check();  // closed or aborted while the face was made
      } catch (e) {
        try { model.dispose(); } catch { /* closed: freed with the runtime */ }
        throw e;
      }
      return model;
    } finally {
      scope.end();
    }
  }

  async function loadIn(scope, source, o, expected) {
    const io = scope.io;
    if (o.onProgress !== undefined && typeof o.onProgress !== 'function') {
      throw typeError(`onProgress: expected a function, got ${describe(o.onProgress)}`);
    }
    if (o.dtype !== undefined && typeof o.dtype !== 'string') throw typeError(`dtype: expected ${DTYPES}, got ${describe(o.dtype)}`);
    if (o.dtype === '') throw new AttnWasmError('ERR_INVALID_ARGUMENT', `dtype: expected ${DTYPES} (or no dtype: the weights as stored), got ''`);
    // Family options' values, checked before anything is read; whether the family takes them, once it is known.
    if (o.task !== undefined && !ENCODER_TASKS.includes(o.task)) throw typeError(`task: expected ${ENCODER_TASKS.map((t) => `'${t}'`).join(', ')}, got ${typeof o.task === 'string' ? `'${o.task}'` : describe(o.task)}`);
    const options = { pooling: o.pooling === undefined ? undefined : checkPooling(o.pooling), normalize: checkBool(o.normalize, 'normalize', undefined), task: o.task };
    checkBool(o.boundedHead, 'boundedHead', undefined);
    // A hub id 'org/name': its files, cached (hub/); the load's signal ends its downloads too.
    const hub = await hubSource(source, { ...o, signal: scope.signal });
    scope.check();
    const cp = await resolveCheckpoint(hub ? hub.files : source, io);
    scope.check();
    const readOptional = async (src, name) => {
      const text = src === undefined ? undefined : (await readText(src, name, { ...io, optional: true })) ?? undefined;
      scope.check();
      return text;
    };
    // A folder's own config.json and tokenizer files, unless the options give them.
    const side = async (name, given) => {
      if (given !== undefined) return given;
      if (cp.side[name] === undefined) return undefined;
      const text = await readText(cp.side[name], name, { ...io, optional: !!cp.optionalSide });
      scope.check();
      return text ?? undefined;
    };
    /** A folder's file by its path in it (sentence-transformers' modules.json, …): its text, or undefined. */
    const read = async (name) => readOptional(cp.file ? await cp.file(name) : undefined, name);
    /** The same file's bytes, or undefined. */
    const readFileBytes = async (name) => {
      const src = cp.file ? await cp.file(name) : undefined;
      const bytes = src === undefined ? null : await readBytes(src, name, { ...io, optional: true });
      scope.check();
      return bytes ?? undefined;
    };
    const configGiven = await side('config.json', o.config);
    const config = configGiven === undefined ? '' : configText(configGiven);
    if (config === '' && configGiven !== undefined) throw new AttnWasmError('ERR_INVALID_ARGUMENT', 'config: expected a config.json, got an empty text');
    // The family, when config.json names it: its options are checked now and only what it reads is read. A file
    // with its own config (attnwasm.config) says its family in its header: what the options and folder give is read.
    const hf = parsedConfig(config);
    const early = hf && rowOfConfig(hf);
    if (early) {
      const refused = optionRefusal(early, o, hf.model_type);
      if (refused) throw refused;
    }
    const reads = (what) => (early ? !!early.reads[what] : true);
    // A loader two families share (loadEmbedder: the encoder's and ModernBERT's) asks the native loader for the one
    // config.json names.
    const nativeExpected = expected && early && early !== ROWS[expected] && early.loader === ROWS[expected].loader
      ? Object.keys(ROWS).find((k) => ROWS[k] === early) : expected;
    const tokenizerJson = reads('tokenizer') ? await side('tokenizer.json', o.tokenizer) : undefined;
    const tokenizerConfig = tokenizerJson === undefined ? undefined : await side('tokenizer_config.json', o.tokenizerConfig);
    // The folder's chat_template.jinja / .json joins the folder's tokenizer_config.json; a tokenizerConfig given
    // as an option is used as it is.
    let template = null;
    if (tokenizerJson !== undefined && o.tokenizerConfig === undefined && reads('chatTemplate') && cp.file) {
      const files = {};
      for (const name of ['chat_template.jinja', 'chat_template.json']) {
        const text = await read(name);
        if (text !== undefined) files[name] = text;
      }
      template = templateOfFiles(files);
    }
    // A translator whose languages are options of its slow class (NLLB, mBART: transformers' fast classes rewrite their
    // template in Python; M2M100 has no fast one) reads its slow files first, so that srcLang / tgtLang work.
    let tokenizer = tokenizerJson !== undefined && o.tokenizer === undefined && early?.reads.slowTokenizer && cp.file
      && languageClass(tokenizerConfig, hf) ? await slowTokenizer(readFileBytes, config, 'sentencepiece.bpe.model') : null;
    if (!tokenizer && tokenizerJson !== undefined) tokenizer = await readTokenizer(tokenizerJson, tokenizerConfig, template);
    // No tokenizer.json: the slow tokenizer's own files, as AutoTokenizer reads them (vocab.txt, vocab.json +
    // merges.txt, sentencepiece.bpe.model), for the families that read them.
    if (!tokenizer && o.tokenizer === undefined && early?.reads.slowTokenizer && cp.file) tokenizer = await slowTokenizer(readFileBytes, config);
    const generationGiven = reads('generationConfig') ? await side('generation_config.json', o.generationConfig) : undefined;
    const generation = generationGiven === undefined ? null : await readGenerationConfig(generationGiven);
    const { handle, metadata, bytes: fileBytes } = await loadFiles(rt, {
      weights: cp.weights, config, index: cp.index ?? '', dtype: o.dtype ?? '', boundedHead: o.boundedHead === true, expected: nativeExpected, onProgress: hub ? hub.progress(o.onProgress) : o.onProgress, scope,
    });
    try {
      // The native loader's decision, read back: the handle's kind. A file's own config was validated natively
      // (keys unique, so JSON.parse reads what the native reader read).
      const info = boundary.params.info(handle);
      const row = rowOfKind(info.kind);
      const own = config ? null : JSON.parse(metadata['attnwasm.config']);
      const refused = optionRefusal(row, o, hf?.model_type);
      if (refused) throw refused;
      return await row.make({ rt, handle, info, fileBytes, own, hfConfig: hf, tokenizer: row.reads.tokenizer ? tokenizer : null, generation, read, readBytes: readFileBytes, options, expected });
    } catch (e) {
      try { handle.delete(); } catch { /* adopted by a face and freed, or closed */ }
      throw e;
    }
  }

  /**
   * Loads any model attnwasm has a family for (families.js), from a URL, a Node path, a folder, a hub id or
   * bytes: a CausalLM for a Hugging Face causal LM checkpoint (its config.json, tokenizer.json beside it or
   * passed) or a "causal_lm" file; an Embedder for a BERT / RoBERTa / XLM-R checkpoint (a sentence-transformers
   * folder, or model.safetensors with `config`, `tokenizer`, `pooling`, `normalize`); a Translator for a
   * "translator" file, a Classifier for a "vit" one.
   */
  const loadModel = (source, options) => load(source, options, '', 'loadModel');
  const loadAs = (kind, where) => (source, options) => load(source, options, kind, where);
  return {
    loadModel,
    // loadCausalLM, loadEmbedder, loadTranslator, loadClassifier: one family's load (another kind is ERR_INVALID_ARGUMENT).
    // (A loader two rows share is the first row's: loadEmbedder is the encoder's, and takes ModernBERT too: loadIn.)
    ...Object.fromEntries(Object.entries(ROWS).reverse().map(([kind, row]) => [row.loader, loadAs(kind, row.loader)])),
    /** The model classes by kind, for instanceof (aw.CausalLM, …). */
    faces: Object.fromEntries(Object.values(ROWS).flatMap((r) => [r.face, ...(r.faces ?? [])]).map((f) => [f.name, f])),
  };
}
