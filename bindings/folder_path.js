// The one rule for a file named relative to a checkpoint's folder — a shard in model.safetensors.index.json's
// weight_map, a side file, a sentence-transformers module's folder (modules.json "path"), a hub file — on every
// kind of source (a Node path, an index path, a base URL, an index URL, a FileList, a map of files): the name
// must stay inside the folder. Refused, with code ERR_UNSAFE_PATH: a '..' segment, an absolute path ('/x',
// '\x', 'C:\x', '//host/x'), a URL of any scheme ('https:', 'file:', 'data:', 'blob:'), a NUL, and the same
// written percent-encoded ('%2e%2e/', '%2F…', '%252e…': decoded until it no longer changes). A URL load is
// joined to its folder with new URL() and checked once more to lie below it.
import { AttnWasmError, describe } from './errors.js';

const unsafe = (what, name, why) => new AttnWasmError('ERR_UNSAFE_PATH',
  `${what}: expected a file name inside the checkpoint's folder, got ${JSON.stringify(name)} (${why})`);

/** Why `s` (one spelling of a name) leaves its folder, or null. */
function escapes(s) {
  if (s.includes('\0')) return 'a NUL character';
  if (/^[a-z]:/i.test(s)) return 'a drive';
  if (/^[a-z][a-z0-9+.-]*:/i.test(s)) return 'a URL';
  if (/^[\\/]/.test(s)) return s.startsWith('//') || s.startsWith('\\\\') ? 'a host' : 'an absolute path';
  if (s.split(/[\\/]/).some((seg) => seg === '..')) return "a '..' segment";
  return null;
}

/**
 * `name` checked to stay inside its folder (module header), as the folder's own spelling: forward slashes,
 * no leading './'. `what` names it in the message ("model.safetensors.index.json weight_map['lm_head.weight']").
 * @param {unknown} name @param {string} what
 * @returns {string}
 */
export function folderPath(name, what) {
  if (typeof name !== 'string' || name === '') {
    throw new AttnWasmError('ERR_UNSAFE_PATH', `${what}: expected a file name inside the checkpoint's folder, got ${typeof name === 'string' ? "''" : describe(name)}`);
  }
  for (let s = name, i = 0; i < 4; i++) {
    const why = escapes(s);
    if (why) throw unsafe(what, name, i ? `${why}, percent-encoded` : why);
    let next;
    try { next = decodeURIComponent(s); } catch { throw unsafe(what, name, 'a malformed percent-encoding'); }
    if (next === s) break;
    s = next;
  }
  return name.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
}

/**
 * The URL of `name` in the folder at `base` (a URL ending in '/', absolute or relative to the page), checked
 * (folderPath) and then checked once more as the URL parser reads it: below `base`, same origin.
 * @param {string} base @param {string} name @param {string} what
 * @returns {string}
 */
export function folderUrl(base, name, what) {
  const rel = folderPath(name, what);
  const root = new URL(base, globalThis.location?.href);  // a page's relative base URL: against the page
  const url = new URL(rel, root);
  if (url.origin !== root.origin || !url.pathname.startsWith(root.pathname)) throw unsafe(what, name, `it resolves to ${url.href}, outside ${root.href}`);
  return url.href;
}
