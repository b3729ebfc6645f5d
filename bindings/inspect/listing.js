// A checkpoint's files as inspect lists them — each with its role (roles.js) and its size when known — and its
// side files, from a resolved checkpoint (checkpoint.js resolveCheckpoint): a folder that lists its files (a
// Node folder, a map of files, a picked folder, a hub repository's listing) says it all; a base URL lists
// nothing, so its side files are asked for one by one (a HEAD request each; a file that is absent is then a 404
// in the server's log and a browser's console) unless `probe` is false; an index, or one file, has none.
// Small files are read only where inspect needs their content: tokenizer_config.json (has it a chat template?)
// and modules.json (which folders are sentence-transformers').
import { isNode } from '../checks.js';
import { nodeFs, nodePath, readText } from '../sources.js';
import { urlExists } from '../checkpoint.js';
import { roleOf, moduleFolders, sideFiles, SIDE_NAMES } from './roles.js';

const DESCRIBE = Symbol.for('attnwasm.describe');
const INDEX = 'model.safetensors.index.json';

/** The bytes of a file's source when they are known without reading it (a path: its stat), else null. */
export async function sizeOf(source) {
  if (source === null || source === undefined) return null;
  if (typeof source === 'object' && source[DESCRIBE]) return source[DESCRIBE].size ?? null;
  if (typeof Blob === 'function' && source instanceof Blob) return source.size;
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return source.byteLength;
  if ((typeof source === 'string' || source instanceof URL) && isNode && !/^(https?|blob|data):/i.test(String(source))) {
    const fs = await nodeFs();
    return fs.stat(await nodePath(String(source))).then((s) => s.size, () => null);
  }
  return null;
}

/** A small file's text (a side file), or null when it is absent and `optional`. */
export const readSmall = (source, name, io, optional) => readText(source, name, { ...io, optional });

/**
 * The files of `cp` (resolveCheckpoint's answer): { files: [{ name, role, bytes }], side: sideFiles' object, or
 * null when not asked (a base URL with probe false; an index or a single file, which have none) }. `config`: the
 * folder's config.json text as the caller read it (null: absent), so that a base URL is not asked twice.
 * @param {object} cp @param {{signal?: AbortSignal, readTimeoutMs: number}} io @param {boolean} probe
 * @param {string|null} config
 */
export async function listFiles(cp, io, probe, config) {
  const weights = new Set(cp.weights.map((w) => w.name));
  if (cp.names) {  // a folder that lists its files
    const names = await cp.names();
    const present = new Set(names);
    const text = async (name) => (present.has(name) ? readSmall(await cp.file(name), name, io, false) : null);
    const modules = moduleFolders(await text('modules.json'));
    // A name the folder rule refuses ('c:notes.txt' on Linux, a map's '../x') is listed, never opened.
    const opened = async (name) => cp.file(name).catch((e) => { if (e?.code === 'ERR_UNSAFE_PATH') return null; throw e; });
    const files = await Promise.all(names.map(async (name) => ({ name, role: roleOf(name, weights, modules), bytes: await sizeOf(await opened(name)) })));
    return { files, side: sideFiles((n) => present.has(n), hasTemplate(await text('tokenizer_config.json'))) };
  }
  const listed = [...(cp.index !== null ? [{ name: INDEX, role: 'index', bytes: byteLength(cp.index) }] : []),
    ...await Promise.all(cp.weights.map(async (w) => ({ name: w.name, role: 'weights', bytes: await sizeOf(w.source) })))];
  if (!cp.file) return { files: cp.kind === 'file' ? listed.map((f) => ({ ...f, name: fileName(cp.weights[0].source) ?? f.name })) : listed, side: null };
  // A base URL: config.json as read; with `probe`, each side file asked for (HEAD), the two inspect reads, read.
  const texts = { 'config.json': config };
  const present = new Set(config === null ? [] : ['config.json']);
  if (probe) {
    for (const name of ['tokenizer_config.json', 'modules.json']) {
      texts[name] = await readSmall(await cp.file(name), name, io, true);
      if (texts[name] !== null) present.add(name);
    }
    const asked = SIDE_NAMES.filter((n) => !(n in texts));
    const found = await Promise.all(asked.map(async (name) => urlExists(await cp.file(name), io)));
    asked.forEach((name, i) => { if (found[i]) present.add(name); });
  }
  const modules = moduleFolders(texts['modules.json'] ?? null);
  const files = [...listed, ...[...present].map((name) => ({ name, role: roleOf(name, weights, modules), bytes: texts[name] != null ? byteLength(texts[name]) : null }))];
  return { files, side: probe ? sideFiles((n) => present.has(n), hasTemplate(texts['tokenizer_config.json'] ?? null)) : null };
}

/** Whether a tokenizer_config.json text has a chat template (a template, or a list of named ones). */
function hasTemplate(text) {
  if (text === null) return false;
  try {
    const t = JSON.parse(text)?.chat_template;
    return typeof t === 'string' || Array.isArray(t);
  } catch {
    return false;
  }
}

const byteLength = (text) => new TextEncoder().encode(text).byteLength;
/** A single file's name: a path's or URL's last segment; null for bytes, a Blob without a name, a stream. */
function fileName(source) {
  if (typeof Blob === 'function' && source instanceof Blob) return typeof source.name === 'string' ? source.name : null;
  if (typeof source !== 'string' && !(source instanceof URL)) return null;
  const s = String(source);
  if (/^(blob|data):/i.test(s)) return null;
  return decodeURIComponent(s.split(/[?#]/)[0].split(/[\\/]/).pop()) || null;
}
