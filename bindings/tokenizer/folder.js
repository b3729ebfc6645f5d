// A checkpoint folder's tokenizer, as transformers v4.40's AutoTokenizer.from_pretrained picks it:
// tokenizer.json when the folder has one (Tokenizer.fromJSON, the fast tokenizer's ids), else the
// slow tokenizer's own files (source.spm / target.spm / vocab.json, spiece.model,
// sentencepiece.bpe.model, vocab.txt, vocab.json + merges.txt) read by the class that
// tokenizer_config.json's tokenizer_class, config.json or the files name — one registry row each.
// from_pretrained's reading of tokenizer_config.json (added_tokens_decoder), special_tokens_map.json
// and added_tokens.json is emulated here; the classes are slow_*.js.
import { AttnWasmError, describe, typeError } from '../errors.js';
import { invalid, isObject, parseJson, show } from './json.js';
import { Tokenizer } from './tokenizer.js';
import { SentencePieceProcessor } from './sentencepiece.js';
import { SPECIAL_ATTRIBUTES, addedToken, tokenFrom, tokenText } from './slow_added.js';
import { MarianTokenizer } from './slow_marian.js';
import { T5Tokenizer } from './slow_t5.js';
import { M2M100Tokenizer, MBart50Tokenizer, MBartTokenizer, NllbTokenizer, XLMRobertaTokenizer } from './slow_fairseq.js';
import { BertTokenizer, readVocabTxt } from './slow_bert.js';
import { RobertaTokenizer, readMerges } from './slow_roberta.js';
import { CLIPTokenizer, readClipMerges } from './slow_clip.js';
import { SiglipTokenizer } from './slow_siglip.js';

/** The slow tokenizer classes: the files each reads (required, then optional) and how it is made. */
const CLASSES = {
  MarianTokenizer: {
    files: ['source.spm', 'target.spm', 'vocab.json'], optional: ['target_vocab.json'],
    make: (f, k) => new MarianTokenizer({ source: spm(f, 'source.spm'), target: spm(f, 'target.spm'), vocab: jsonVocab(f, 'vocab.json'), targetVocab: f['target_vocab.json'] ? jsonVocab(f, 'target_vocab.json') : null }, k),
  },
  T5Tokenizer: { files: ['spiece.model'], make: (f, k) => new T5Tokenizer(spm(f, 'spiece.model'), k) },
  M2M100Tokenizer: {
    files: ['vocab.json', 'sentencepiece.bpe.model'],
    make: (f, k) => new M2M100Tokenizer({ sp: spm(f, 'sentencepiece.bpe.model'), vocab: jsonVocab(f, 'vocab.json') }, k),
  },
  NllbTokenizer: { files: ['sentencepiece.bpe.model'], make: (f, k) => new NllbTokenizer(spm(f, 'sentencepiece.bpe.model'), k) },
  MBartTokenizer: { files: ['sentencepiece.bpe.model'], make: (f, k) => new MBartTokenizer(spm(f, 'sentencepiece.bpe.model'), k) },
  MBart50Tokenizer: { files: ['sentencepiece.bpe.model'], make: (f, k) => new MBart50Tokenizer(spm(f, 'sentencepiece.bpe.model'), k) },
  XLMRobertaTokenizer: { files: ['sentencepiece.bpe.model'], make: (f, k) => new XLMRobertaTokenizer(spm(f, 'sentencepiece.bpe.model'), k) },
  BertTokenizer: { files: ['vocab.txt'], make: (f, k) => new BertTokenizer(readVocabTxt(text(f, 'vocab.txt')), k) },
  RobertaTokenizer: {
    files: ['vocab.json', 'merges.txt'],
    make: (f, k) => new RobertaTokenizer({ vocab: jsonVocab(f, 'vocab.json'), ranks: readMerges(text(f, 'merges.txt')) }, k),
  },
  CLIPTokenizer: {
    files: ['vocab.json', 'merges.txt'],
    make: (f, k) => new CLIPTokenizer({ vocab: jsonVocab(f, 'vocab.json'), ranks: readClipMerges(text(f, 'merges.txt')) }, k),
  },
  SiglipTokenizer: { files: ['spiece.model'], make: (f, k) => new SiglipTokenizer(spm(f, 'spiece.model'), k) },
};
/** Other names of the same classes. */
const ALIASES = { MT5Tokenizer: 'T5Tokenizer', DistilBertTokenizer: 'BertTokenizer' };
/** config.json model_type → the class (transformers' TOKENIZER_MAPPING, slow side, for these). */
const BY_MODEL_TYPE = {
  marian: 'MarianTokenizer', t5: 'T5Tokenizer', mt5: 'T5Tokenizer', m2m_100: 'M2M100Tokenizer', nllb: 'NllbTokenizer', mbart: 'MBartTokenizer',
  'xlm-roberta': 'XLMRobertaTokenizer', bert: 'BertTokenizer', distilbert: 'BertTokenizer', roberta: 'RobertaTokenizer',
  // The text towers' own model_types too (transformers v4.40 maps only clip and siglip).
  clip: 'CLIPTokenizer', clip_text_model: 'CLIPTokenizer', siglip: 'SiglipTokenizer', siglip_text_model: 'SiglipTokenizer',
};
/** With neither: the files decide, first match wins (CLIP's and SigLIP's files look like RoBERTa's and T5's: never chosen here). */
const BY_FILES = [
  [['source.spm'], 'MarianTokenizer'], [['spiece.model'], 'T5Tokenizer'], [['sentencepiece.bpe.model', 'vocab.json'], 'M2M100Tokenizer'],
  [['sentencepiece.bpe.model'], 'XLMRobertaTokenizer'], [['vocab.txt'], 'BertTokenizer'], [['vocab.json', 'merges.txt'], 'RobertaTokenizer'],
];
const ALL_FILES = [...new Set([...Object.values(CLASSES).flatMap((c) => [...c.files, ...(c.optional ?? [])]), 'special_tokens_map.json', 'added_tokens.json'])];

const utf8 = new TextDecoder('utf-8', { ignoreBOM: false });
const bytesOf = (f, name) => (typeof f[name] === 'string' ? new TextEncoder().encode(f[name]) : f[name]);
const text = (f, name) => (typeof f[name] === 'string' ? f[name] : utf8.decode(f[name]));
const spm = (f, name) => SentencePieceProcessor.fromBytes(bytesOf(f, name), name);

/** vocab.json: token → integer id. */
function jsonVocab(f, name) {
  const obj = parseJson(f[name], name);
  const vocab = new Map();
  for (const [t, id] of Object.entries(obj)) {
    if (!Number.isInteger(id) || id < 0 || id > 2 ** 31 - 1) throw invalid(`'${t}'`, `expected an integer id in [0, 2^31 - 1], got ${show(id)}`, name);
    vocab.set(t, id);
  }
  if (vocab.size === 0) throw invalid('(top level)', 'expected a vocabulary (token → id), got an empty object', name);
  return vocab;
}

/**
 * from_pretrained's init kwargs for a slow class: tokenizer_config.json's fields, its
 * added_tokens_decoder as AddedTokens, else the legacy special_tokens_map.json and added_tokens.json.
 */
function initKwargs(config, specialMap, addedFile) {
  const FILE = 'tokenizer_config.json';
  const k = config ? { ...config } : {};
  delete k.tokenizer_class;
  const decoder = new Map();
  const byContent = new Map();
  if ('added_tokens_decoder' in k) {
    if (!isObject(k.added_tokens_decoder)) throw invalid('added_tokens_decoder', `expected an object id → token, got ${show(k.added_tokens_decoder)}`, FILE);
    for (const [id, t] of Object.entries(k.added_tokens_decoder)) {
      if (!/^\d+$/.test(id)) throw invalid('added_tokens_decoder', `expected integer ids as keys, got '${id}'`, FILE);
      const token = tokenFrom(t, FILE, `added_tokens_decoder.${id}`);
      const tok = typeof token === 'string' ? addedToken(token) : token;
      decoder.set(Number(id), tok);
      byContent.set(tok.content, tok);
    }
  } else {
    if (specialMap) {
      for (const [key, value] of Object.entries(specialMap)) {
        if (key === 'additional_special_tokens' && Array.isArray(value)) {
          const list = [...(k.additional_special_tokens ?? [])];
          for (const v of value) {
            const t = isObject(v) ? { ...tokenFrom(v, 'special_tokens_map.json', key), special: true } : v;
            if (!list.some((x) => tokenText(x) === tokenText(t))) list.push(t);
          }
          k[key] = list;
        } else k[key] = isObject(value) ? { ...tokenFrom(value, 'special_tokens_map.json', key), special: true } : value;
      }
    }
    if (addedFile) {
      const specials = SPECIAL_ATTRIBUTES.flatMap((key) => (k[key] == null ? [] : key === 'additional_special_tokens' ? k[key].map(tokenText) : [tokenText(k[key])]));
      for (const [t, id] of Object.entries(addedFile)) {
        if (!Number.isInteger(id) || id < 0) throw invalid(`'${t}'`, `expected an integer id >= 0, got ${show(id)}`, 'added_tokens.json');
        const special = specials.includes(t);
        decoder.set(id, addedToken(t, { normalized: !special, special }));
      }
    }
  }
  // Tokens written as { "__type": "AddedToken", … } (older configs), and the special attributes as the decoder's own tokens.
  for (const key of SPECIAL_ATTRIBUTES) {
    if (k[key] == null) continue;
    if (key === 'additional_special_tokens') {
      if (!Array.isArray(k[key])) throw invalid(key, `expected a list of tokens, got ${show(k[key])}`, FILE);
      k[key] = k[key].map((t, i) => tokenFrom(t, FILE, `${key}[${i}]`));
    } else {
      const t = tokenFrom(k[key], FILE, key);
      k[key] = byContent.size ? byContent.get(tokenText(t)) ?? t : t;
    }
  }
  k.added_tokens_decoder = decoder;
  return k;
}

/**
 * The tokenizer of a checkpoint folder: its tokenizer.json (with tokenizer_config.json) when it has
 * one, else the slow tokenizer its files name (MarianTokenizer, T5Tokenizer, M2M100Tokenizer,
 * NllbTokenizer, XLMRobertaTokenizer, BertTokenizer, RobertaTokenizer, CLIPTokenizer — as it runs
 * without ftfy —, SiglipTokenizer), giving the Python class's ids.
 * @param {(name: string) => (string | Uint8Array | ArrayBuffer | undefined | Promise<string | Uint8Array | ArrayBuffer | undefined>)} readFile
 *   a file of the folder by name (text or bytes), undefined where the folder has none
 * @param {{ slow?: boolean }} [options] slow: read the slow tokenizer's files even when tokenizer.json is there
 * @returns {Promise<Tokenizer | import('./slow_tokenizer.js').SlowTokenizer>} a new tokenizer owned by the caller
 */
export async function tokenizerFromFolder(readFile, options = {}) {
  if (typeof readFile !== 'function') throw typeError(`readFile: expected a function (name) → text, bytes or undefined, got ${describe(readFile)}`);
  if (!isObject(options)) throw typeError(`options: expected an object, got ${describe(options)}`);
  const read = async (name) => {
    let v = await readFile(name);
    if (v == null) return undefined;
    if (v instanceof ArrayBuffer) v = new Uint8Array(v);
    if (typeof v !== 'string' && !(v instanceof Uint8Array)) throw typeError(`readFile('${name}'): expected a string, Uint8Array, ArrayBuffer or undefined, got ${describe(v)}`);
    return v;
  };
  const tokenizerConfig = await read('tokenizer_config.json');
  const tokenizerJson = options.slow ? undefined : await read('tokenizer.json');
  const files = {};
  for (const name of ALL_FILES) files[name] = await read(name);
  if (tokenizerJson !== undefined) {
    try {
      return Tokenizer.fromJSON(tokenizerJson, tokenizerConfig);
    } catch (e) {
      // A tokenizer.json of a kind not read here: say so, and name the slow files the folder also has.
      const slowFiles = ALL_FILES.filter((f) => files[f] !== undefined && !f.endsWith('.json'));
      if (e.code !== 'ERR_UNSUPPORTED' || slowFiles.length === 0) throw e;
      throw new AttnWasmError('ERR_UNSUPPORTED', `${e.message} (the folder also has ${slowFiles.join(', ')}: tokenizerFromFolder(readFile, { slow: true }) reads the slow tokenizer's files instead)`, { cause: e });
    }
  }
  const config = tokenizerConfig === undefined ? null : parseJson(tokenizerConfig, 'tokenizer_config.json');
  let name = config?.tokenizer_class;
  let from = 'tokenizer_config.json tokenizer_class';
  if (name == null) {
    const modelConfig = await read('config.json');
    const mc = modelConfig === undefined ? null : parseJson(modelConfig, 'config.json');
    name = mc?.tokenizer_class ?? BY_MODEL_TYPE[mc?.model_type];
    from = mc?.tokenizer_class != null ? 'config.json tokenizer_class' : 'config.json model_type';
    if (name == null) {
      name = BY_FILES.find(([need]) => need.every((f) => files[f] !== undefined))?.[1];
      from = 'the files';
    }
  }
  if (name == null) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `tokenizer: the folder has no tokenizer.json and no slow tokenizer's files (${BY_FILES.map(([f]) => f.join(' + ')).join(', ')})`);
  }
  if (typeof name !== 'string') throw invalid('tokenizer_class', `expected a class name, got ${show(name)}`, 'tokenizer_config.json');
  const base = name.replace(/Fast$/, '');
  const cls = CLASSES[ALIASES[base] ?? base];
  if (!cls) {
    throw new AttnWasmError('ERR_UNSUPPORTED', `${from}: expected one of ${[...Object.keys(CLASSES), ...Object.keys(ALIASES)].join(', ')} (or a folder with tokenizer.json), got '${name}'`);
  }
  for (const f of cls.files) {
    if (files[f] === undefined) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `${f}: ${name} needs this file and the folder has none (and no tokenizer.json)`);
  }
  const specialMap = files['special_tokens_map.json'] === undefined ? null : parseJson(files['special_tokens_map.json'], 'special_tokens_map.json');
  const addedFile = files['added_tokens.json'] === undefined ? null : parseJson(files['added_tokens.json'], 'added_tokens.json');
  const kwargs = initKwargs(config, specialMap, addedFile);
  const tok = cls.make(files, kwargs);
  tok.tokenizerClass = ALIASES[base] ?? base;
  tok.config = config === null ? null : deepFreeze(config);
  return Object.freeze(tok);
}

function deepFreeze(o) {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    Object.values(o).forEach(deepFreeze);
  }
  return o;
}
