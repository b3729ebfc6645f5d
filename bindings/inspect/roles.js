// What each file of a checkpoint's folder is for, by its name as the hub names it: the weights (the files the
// index names, or model.safetensors), the shard index, config.json, the tokenizer's files, the chat template
// files, generation_config.json, an image processor's preprocessor_config.json, and sentence-transformers'
// files (modules.json, its config files and the folders modules.json names: 1_Pooling/, 2_Normalize/, …).
// A slow tokenizer's own files (vocab.txt, vocab.json + merges.txt, a SentencePiece model, Marian's source.spm /
// target.spm / target_vocab.json: what the loader reads
// when the folder has no tokenizer.json) are the tokenizer's too. Everything else is 'other' (a README, another
// .safetensors). Not here: reading any of them.

/** The roles a file may have, as inspect reports them. */
export const ROLES = Object.freeze(['weights', 'index', 'config', 'tokenizer', 'tokenizer_config', 'generation_config', 'chat_template',
  'preprocessor_config', 'sentence-transformers', 'other']);

/** Files of these names have these roles (weights are the ones the checkpoint's resolution found). */
const BY_NAME = Object.freeze({
  'model.safetensors.index.json': 'index',
  'config.json': 'config',
  'tokenizer.json': 'tokenizer',
  'tokenizer_config.json': 'tokenizer_config',
  'generation_config.json': 'generation_config',
  'chat_template.jinja': 'chat_template',
  'chat_template.json': 'chat_template',
  'preprocessor_config.json': 'preprocessor_config',
  'modules.json': 'sentence-transformers',
  'sentence_bert_config.json': 'sentence-transformers',
  'config_sentence_transformers.json': 'sentence-transformers',
});

/** The side files inspect looks for in a folder that does not list its files (a base URL), in this order. */
export const SIDE_NAMES = Object.freeze(Object.keys(BY_NAME).filter((n) => n !== 'model.safetensors.index.json'));

/** A slow tokenizer's files (tokenizer/folder.js reads them when there is no tokenizer.json); not probed for. */
const SLOW_TOKENIZER = new Set(['vocab.txt', 'vocab.json', 'merges.txt', 'sentencepiece.bpe.model', 'spiece.model', 'source.spm', 'target.spm', 'target_vocab.json', 'special_tokens_map.json', 'added_tokens.json']);

/**
 * The role of the file at `path` in its folder. `weights`: the weight files' paths; `modules`: the folders
 * sentence-transformers' modules.json names ('1_Pooling'), whose files are its too.
 * @param {string} path @param {Set<string>} weights @param {string[]} [modules]
 */
export function roleOf(path, weights, modules = []) {
  if (weights.has(path)) return 'weights';
  if (Object.hasOwn(BY_NAME, path)) return BY_NAME[path];
  if (SLOW_TOKENIZER.has(path)) return 'tokenizer';
  if (modules.some((d) => path.startsWith(`${d}/`))) return 'sentence-transformers';
  return 'other';
}

/**
 * The folders a modules.json text names ('1_Pooling', '2_Normalize'), or none when it is not such a list (the
 * loader says what is wrong with it when it loads).
 * @param {string|null} text
 * @returns {string[]}
 */
export function moduleFolders(text) {
  try {
    const modules = JSON.parse(text);
    return Array.isArray(modules) ? modules.map((m) => m?.path).filter((p) => typeof p === 'string' && p !== '') : [];
  } catch {
    return [];
  }
}

/**
 * The side files found, by what they are: { tokenizer, tokenizerConfig, chatTemplate, generationConfig,
 * preprocessorConfig, sentenceTransformers }, each the file's name or null. The chat template is the file the
 * loader reads it from: chat_template.jinja, else chat_template.json, else tokenizer_config.json when that has a
 * "chat_template" (transformers' order).
 * @param {(name: string) => boolean} has whether the folder holds a file
 * @param {boolean} templateInConfig whether tokenizer_config.json has a chat_template
 */
export function sideFiles(has, templateInConfig) {
  const one = (name) => (has(name) ? name : null);
  return {
    tokenizer: one('tokenizer.json'),
    tokenizerConfig: one('tokenizer_config.json'),
    chatTemplate: one('chat_template.jinja') ?? one('chat_template.json') ?? (templateInConfig ? 'tokenizer_config.json' : null),
    generationConfig: one('generation_config.json'),
    preprocessorConfig: one('preprocessor_config.json'),
    sentenceTransformers: one('modules.json'),
  };
}
