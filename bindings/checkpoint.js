// A checkpoint as named files: its weights — one safetensors file, or shards listed by
// model.safetensors.index.json — and, when the source is a folder, the JSON files beside them (config.json,
// tokenizer.json, tokenizer_config.json, generation_config.json) and any other file of the folder by its
// path in it (`file`: sentence-transformers' modules.json, 1_Pooling/config.json, …). A folder is a Node
// path, a base URL ending in '/', or a map of paths to sources (an object, a Map, or the File list of a
// page's folder picker, each File named by its webkitRelativePath below the folder picked). Every name asked of
// a folder, on every kind of source, passes folder_path.js's one rule: it stays inside the folder.
// A base URL lists nothing, so its weights are found by asking: model.safetensors first (a HEAD request, as
// transformers looks for the single file first), its shard index only when that is absent — a folder of one
// file, the common case of a model a page runs, then logs no 404 for an index it only probed.
import { AttnWasmError, typeError, describe } from './errors.js';
import { isNode } from './checks.js';
import { nodeFs, nodePath, readText, bounded, READ_TIMEOUT_MS } from './sources.js';
import { folderPath, folderUrl } from './folder_path.js';

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
  // The folder: the index's, else the top-most model.safetensors's (a sentence-transformers Dense module has its
  // own 2_Dense/model.safetensors, below the model's).
  let dir = null, index = false;
  for (const k of map.keys()) {
    const d = k.slice(0, k.length - base(k).length);
    if (base(k) === INDEX && !index) [dir, index] = [d, true];
    else if (base(k) === WEIGHTS && !index && (dir === null || d.split('/').length < dir.split('/').length)) dir = d;
  }
  dir ??= '';
  const get = (name) => {
    if (map.has(dir + name)) return map.get(dir + name);
    if (name.includes('/')) return undefined;
    for (const [k, v] of map) if (base(k) === name && !k.startsWith(dir)) return v;
    return undefined;
  };
  // Every file by the name `get` finds it by: its path in the folder, or a top-level file's base name.
  get.names = () => [...new Set([...map.keys()].map((k) => (k.startsWith(dir) ? k.slice(dir.length) : base(k))))];
  return get;
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
  const names = new Set();
  for (const [tensor, file] of Object.entries(map)) {
    if (typeof file === 'string') names.add(folderPath(file, `${INDEX} weight_map[${JSON.stringify(tensor)}]`));
  }
  return [...names];
}

/**
 * What a source holds: { weights: [{ name, source }], index: text | null, side: { 'config.json': source, … },
 * optionalSide?, file?, names?, kind }. A folder's `file(path)` resolves to the source of any file by its path in
 * the folder ('modules.json', '1_Pooling/config.json'; a path that leaves the folder is ERR_UNSAFE_PATH), or
 * undefined when the folder has none; a base URL's side files and files are URLs whose absence shows when read
 * (optionalSide: read them with { optional: true }). A folder that lists its files (a Node folder, a map) has
 * `names()`: their paths in the folder (a Node folder's top level and its subfolders' files, one level down).
 * `kind` says what the source was: 'folder', 'files' (a map), 'index' (an index's path), 'url' (a base URL),
 * 'index-url' or 'file' (one file's bytes or its path or URL). A single file's weights are named 'source' in
 * messages. `io` ({ signal, readTimeoutMs }) goes to every read (sources.js openSource).
 */
export async function resolveCheckpoint(source, io = {}) {
  const map = asMap(source);
  if (map) {
    const get = mapLookup(map);
    const file = async (name) => get(folderPath(name, `a file of the folder`));
    return { ...await fromFolder(get, 'among the files given', io), file, names: async () => get.names(), kind: 'files' };
  }
  if (typeof source === 'string' || source instanceof URL) {
    const s = String(source);
    // data: and blob: URLs are one file's bytes, never a folder or an index, whatever their text ends with.
    const opaque = /^(blob|data):/i.test(s);
    const remote = opaque || /^https?:/i.test(s);
    if (isNode && !remote) {
      const fs = await nodeFs();
      const path = await nodePath(s);
      let stat = null;
      try { stat = await fs.stat(path); } catch { /* openSource reports it */ }
      if (stat?.isDirectory()) {
        const dir = path.replace(/[\\/]*$/, '/');
        const names = new Set(await fs.readdir(dir));
        const inDir = (name) => dir + folderPath(name, `a file of the folder '${s}'`);
        const file = async (name) => {
          const p = inDir(name);
          if (!name.includes('/')) return names.has(name) ? p : undefined;
          try { return (await fs.stat(p)).isFile() ? p : undefined; } catch { return undefined; }
        };
        const get = (name) => (names.has(name) ? dir + name : undefined);
        const list = async () => (await Promise.all((await fs.readdir(dir, { withFileTypes: true })).map(async (e) => {
          if (e.isFile()) return [e.name];
          if (!e.isDirectory()) return [];
          return (await fs.readdir(dir + e.name, { withFileTypes: true }).catch(() => [])).filter((f) => f.isFile()).map((f) => `${e.name}/${f.name}`);
        }))).flat().sort();
        return { ...await fromFolder(get, `in the folder '${s}'`, io), file, names: list, kind: 'folder' };
      }
      if (s.endsWith('.index.json')) {
        const dir = path.replace(/[^\\/]*$/, '');
        return { ...fromIndex(await readText(path, INDEX, io), (name) => dir + name, {}), kind: 'index' };
      }
    } else if (!opaque && s.endsWith('/')) {  // a base URL: model.safetensors if it is there, else its index
      const at = (name) => folderUrl(s, name, `a file of the folder ${s}`);
      const side = Object.fromEntries(SIDE_FILES.map((n) => [n, at(n)]));
      const file = async (name) => at(name);
      const single = { weights: [{ name: WEIGHTS, source: at(WEIGHTS) }], index: null, side, optionalSide: true, file, kind: 'url' };
      if (await urlExists(at(WEIGHTS), io) === true) return single;
      const index = await readText(at(INDEX), INDEX, { ...io, optional: true });
      return index === null ? single : { ...fromIndex(index, at, side), optionalSide: true, file, kind: 'url' };
    } else if (!opaque && s.endsWith('.index.json')) {
      const dir = s.replace(/[^/]*$/, '');
      return { ...fromIndex(await readText(s, INDEX, io), (n) => folderUrl(dir, n, `${INDEX} weight_map`), {}), kind: 'index-url' };
    }
  }
  return { weights: [{ name: 'source', source }], index: null, side: {}, kind: 'file' };
}

/**
 * Whether a URL names a file, asked with a HEAD request: true (2xx), false (404, 410, or 403 as object stores
 * answer for a missing key), or null when the answer says neither (a server that refuses HEAD, a network
 * failure: the caller then asks as before, and a real failure shows on the read that follows). An abort throws.
 * @param {string} url @param {{signal?: AbortSignal|null, readTimeoutMs?: number}} [io]
 * @returns {Promise<boolean|null>}
 */
export async function urlExists(url, { signal, readTimeoutMs = READ_TIMEOUT_MS } = {}) {
  let res;
  try {
    res = await bounded(fetch(url, { method: 'HEAD', ...(signal ? { signal } : {}) }), signal, readTimeoutMs, () => new Error('timeout'));
  } catch (e) {
    if (signal?.aborted && e === signal.reason) throw e;
    return null;
  }
  if (res.ok) return true;
  return [403, 404, 410].includes(res.status) ? false : null;
}

async function fromFolder(get, where, io) {
  const side = {};
  for (const n of SIDE_FILES) if (get(n) !== undefined) side[n] = get(n);
  if (get(INDEX) !== undefined) return fromIndex(await readText(get(INDEX), INDEX, io), get, side, where);
  if (get(WEIGHTS) !== undefined) return { weights: [{ name: WEIGHTS, source: get(WEIGHTS) }], index: null, side };
  const found = SIDE_FILES.filter((n) => side[n]).length ? ` (there: ${Object.keys(side).join(', ')})` : '';
  throw missing(`neither ${WEIGHTS} nor ${INDEX} is ${where}${found}`);
}

/** The shards an index names (each checked by shardNames to stay in the folder), found with `get`. */
function fromIndex(indexText, get, side, where = 'in the folder') {
  const shards = shardNames(indexText);
  const weights = shards.map((name) => {
    const src = get(name);
    if (src === undefined) throw missing(`${INDEX} names the shard ${name}, which is not ${where}`);
    return { name, source: src };
  });
  return { weights, index: indexText, side };
}
