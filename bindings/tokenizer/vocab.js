// A model's vocabulary read from tokenizer.json: token → id as the `{ token: id }` object of BPE and
// WordPiece files, checked (ids int32, no id given twice), with its inverse id → token.
import { MAX_ID, invalid, requireObject, show } from './json.js';

/**
 * @returns {{ vocab: Map<string, number>, tokenOf: string[] }} tokenOf: id → token, a sparse array
 *   where the ids have holes
 */
export function readVocab(object, field) {
  requireObject(object, field);
  const vocab = new Map();
  const tokenOf = [];
  for (const token in object) {
    const id = object[token];
    // Ids are int32 everywhere (the Rust library's u32 ids, Int32Array here): 2^40 would wrap to 0.
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) throw invalid(`${field}['${token}']`, `expected an id (an integer in [0, 2^31 - 1]), got ${show(id)}`);
    if (tokenOf[id] !== undefined) throw invalid(`${field}['${token}']`, `id ${id} is also the id of '${tokenOf[id]}'`);
    tokenOf[id] = token;
    vocab.set(token, id);
  }
  return { vocab, tokenOf };
}

/** The id of a model's unknown token (named by `field`), which must be in the vocabulary. */
export function unkId(vocab, token, field) {
  if (!vocab.has(token)) throw invalid(field, `'${token}' is not in model.vocab (the tokenizers library fails on the first unknown character)`);
  return vocab.get(token);
}

/** '<0x0A>': the token of a byte in byte-fallback vocabularies (Rust's format!("<{b:#04X}>")). */
export const BYTE_TOKENS = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
