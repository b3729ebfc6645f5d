// A checkpoint as named files: its weights — one safetensors file, or shards listed by
// model.safetensors.index.json — and, when the source is a folder, the JSON files beside them (config.json,
// tokenizer.json, tokenizer_config.json, generation_config.json) and any other file of the folder by its
// path in it (`file`: sentence-transformers' modules.json, 1_Pooling/config.json, …). A folder is a Node
// path, a base URL ending in '/', or a map of paths to sources (an object, a Map, or the File list of a
// page's folder picker, each File named by its webkitRelativePath below the folder picked).
import { AttnWasmError, typeError, describe } from './errors.js';
import { isNode } from './checks.js';
import { nodeFs, nodePath, readText } from './sources.js';

export const INDEX = 'model.safetensors.index.json';
export const WEIGHTS = 'model.safetensors';
export const SIDE_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json'];

const missing = (what) => new AttnWasmError('ERR_INVALID_ARGUMENT', `source: ${what}`);
const base = (p) => String(p).split(/[\\/]/).pop();
const slashes = (p) => String(p).replace(/\\/g, '/').replace(/^(\.\/)+/, '');

/**
 * A map of paths to sources (an object, a Map, or an array / FileList of Files), or null. A File is named by
 * its webkitRelativePath without the picked folder's name ('bge/1_Pooling/config.json' → '1_Pooling/config.json'),
 * else by its name.
 */
function asMap(source) {
  if (source instanceof Map) return new Map([...source].map(([k, v]) => [slashes(k), v]));
  if (Array.isArray(source) || (typeof FileList === 'function' && source instanceof FileList)) {
    const m = new Map();
    for (const f of source) {
      if (!(typeof Blob === 'function' && f instanceof Blob) || typeof f.name !== 'string') {
        throw typeError(`source: expected Files with names in a list, got ${describe(f)}`);
      }
      const rel = typeof f.webkitRelativePath === 'string' && f.webkitRelativePath.includes('/')
        ? f.webkitRelativePath.slice(f.webkitRelativePath.indexOf('/') + 1) : f.name;
      m.set(slashes(rel), f);
    }
    return m;
  }
  if (source && typeof source === 'object' && Object.getPrototypeOf(source) === Object.prototype) {
    return new Map(Object.entries(source).map(([k, v]) => [slashes(k), v]));
  }
  return null;
}

/**
 * The lookup of a map's files by their paths in the checkpoint's folder: the folder is where the weights are
 * (a map may name every file by a longer path: 'ckpt/model.safetensors', 'ckpt/config.json'). A file at the
 * folder's top may also be named by a path outside it, by its base name, as before; a file in a subfolder of
 * the folder (1_Pooling/config.json) is never taken for a top-level one (config.json).
 */
function mapLookup(map) {
  let dir = '';
  for (const k of map.keys()) {
    if (base(k) === INDEX || (base(k) === WEIGHTS && !dir)) dir = k.slice(0, k.length - base(k).length);
  }
  return (name) => {
    if (map.has(dir + name)) return map.get(dir + name);
    if (name.includes('/')) return undefined;
    for (const [k, v] of map) if (base(k) === name && !k.startsWith(dir)) return v;
    return undefined;
  };
}

/** The shard names of an index, in the order weight_map first names them. */
export function shardNames(indexText) {
  let index;
  try {
    index = JSON.parse(indexText);
  } catch (e) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `index: ${INDEX} is not valid JSON (${e.message})`, { cause: e });
  }
  const map = index?.weight_map;
  if (!map || typeof map !== 'object' || Array.isArray(map)) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `index.weight_map: expected an object of tensor name → file name, got ${describe(map)}`);
  }
  return [...new Set(Object.values(map).filter((v) => typeof v === 'string'))];
}

/**
 * What a source holds: { weights: [{ name, source }], index: text | null, side: { 'config.json': source, … },
 * optionalSide?, file? }. A folder's `file(path)` resolves to the source of any file by its path in the folder
 * ('modules.json', '1_Pooling/config.json'), or undefined when the folder has none; a base URL's side files
 * and files are URLs whose absence shows when read (optionalSide: read them with { optional: true }).
 * A single file's weights are named 'source' in messages.
 */
export async function resolveCheckpoint(source) {
  const map = asMap(source);
  if (map) {
    const get = mapLookup(map);
    return { ...await fromFolder(get, 'among the files given'), file: async (name) => get(name) };
  }
  if (typeof source === 'string' || source instanceof URL) {
    const s = String(source);
    const remote = /^(https?|blob|data):/i.test(s);
    if (isNode && !remote) {
      const fs = await nodeFs();
      const path = await nodePath(s);
      let stat = null;
      try { stat = await fs.stat(path); } catch { /* openSource reports it */ }
      if (stat?.isDirectory()) {
        const dir = path.replace(/[\\/]*$/, '/');
        const names = new Set(await fs.readdir(dir));
        const file = async (name) => {
          if (!name.includes('/')) return names.has(name) ? dir + name : undefined;
          try { return (await fs.stat(dir + name)).isFile() ? dir + name : undefined; } catch { return undefined; }
        };
        return { ...await fromFolder((name) => (names.has(name) ? dir + name : undefined), `in the folder '${s}'`), file };
      }
      if (s.endsWith('.index.json')) {
        const dir = path.replace(/[^\\/]*$/, '');
        return fromIndex(await readText(path, INDEX), (name) => dir + name, {});
      }
    } else if (s.endsWith('/')) {  // a base URL: its index if there is one, else model.safetensors
      const index = await readText(s + INDEX, INDEX, { optional: true });
      const side = Object.fromEntries(SIDE_FILES.map((n) => [n, s + n]));
      const file = async (name) => s + name;
      return index === null ? { weights: [{ name: WEIGHTS, source: s + WEIGHTS }], index: null, side, optionalSide: true, file }
        : { ...fromIndex(index, (n) => s + n, side), optionalSide: true, file };
    } else if (s.endsWith('.index.json')) {
      const dir = s.replace(/[^/]*$/, '');
      return fromIndex(await readText(s, INDEX), (n) => dir + n, {});
    }
  }
  return { weights: [{ name: 'source', source }], index: null, side: {} };
}

async function fromFolder(get, where) {
  const side = {};
  for (const n of SIDE_FILES) if (get(n) !== undefined) side[n] = get(n);
  if (get(INDEX) !== undefined) return fromIndex(await readText(get(INDEX), INDEX), get, side, where);
  if (get(WEIGHTS) !== undefined) return { weights: [{ name: WEIGHTS, source: get(WEIGHTS) }], index: null, side };
  const found = SIDE_FILES.filter((n) => side[n]).length ? ` (there: ${Object.keys(side).join(', ')})` : '';
  throw missing(`neither ${WEIGHTS} nor ${INDEX} is ${where}${found}`);
}

function fromIndex(indexText, get, side, where = 'in the folder') {
  const shards = shardNames(indexText);
  const weights = shards.map((name) => {
    const src = get(name);
    if (src === undefined) throw missing(`${INDEX} names the shard ${name}, which is not ${where}`);
    return { name, source: src };
  });
  return { weights, index: indexText, side };
}
