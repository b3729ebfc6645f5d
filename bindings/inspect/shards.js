// The checks across a checkpoint's weight files that the loader makes before reading any data, in its order and
// words (src/models/load_model.cpp Begin, CheckIndex): no tensor in two files; a sharded checkpoint's
// model.safetensors.index.json names, for every tensor, the file that holds it, and lists every tensor of every
// file. Not here: reading the files (inspect.js), each file's own header (header.js).
import { parseTree } from './json_tree.js';
import { describeValue, repeatedKey } from './family.js';

const refusal = (message) => ({ code: 'ERR_INVALID_ARGUMENT', message });
const keyPath = (k) => (/^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k.length > 60 ? k.slice(0, 60) : k)}]`);

/**
 * The first problem across the files, as the loader refuses it ({ code, message }), or null.
 * @param {{name: string, tensors: {name: string}[]}[]} files the weight files in order, their headers read
 * @param {string|null} indexText the shard index's text, or null for one file
 */
export function checkShards(files, indexText) {
  const fileOf = new Map();  // tensor name → file index
  for (let f = 0; f < files.length; f++) {
    for (const t of files[f].tensors) {
      if (fileOf.has(t.name)) return refusal(`source: tensor '${t.name}' is in two files: ${files[fileOf.get(t.name)].name} and ${files[f].name}`);
      fileOf.set(t.name, f);
    }
  }
  return indexText === null ? null : checkIndex(indexText, files, fileOf);
}

function checkIndex(text, files, fileOf) {
  let tree;
  try {
    tree = parseTree(text);
  } catch (e) {
    return refusal(`index: not valid JSON: ${e.message}`);
  }
  if (tree.type !== 'object') return refusal(`index: expected a JSON object (a model.safetensors.index.json), got ${describeValue(tree)}`);
  const repeated = repeatedKey(tree, 'index');
  if (repeated) return refusal(repeated);
  const map = tree.members.find((m) => m.key === 'weight_map')?.value;
  if (!map || map.type !== 'object') return refusal(`index.weight_map: expected an object of tensor name → file name, got ${describeValue(map)}`);
  for (const { key, value } of map.members) {
    if (value.type !== 'string') return refusal(`index.weight_map${keyPath(key)}: expected a file name, got ${describeValue(value)}`);
    const f = fileOf.get(key);
    if (f === undefined || files[f].name !== value.str) {
      const given = files.some((x) => x.name === value.str);
      return refusal(`index: weight_map names tensor '${key}' in ${value.str}, ${!given ? 'a file that was not given'
        : `which does not hold it${f === undefined ? ' (no file does)' : ` (${files[f].name} does)`}`}`);
    }
  }
  if (map.members.length !== fileOf.size) {
    const listed = new Set(map.members.map((m) => m.key));
    const name = [...fileOf.keys()].sort().find((n) => !listed.has(n));
    if (name !== undefined) return refusal(`index: ${files[fileOf.get(name)].name} holds tensor '${name}', which weight_map does not list`);
  }
  return null;
}
