// loadModel's hook for hub ids (models.js load()): whether a source names a hub repository, and if so the
// repository as a folder of lazily opened files for resolveCheckpoint, with a progress callback that tells
// the bytes read from the cache apart from those downloaded. The rest of the hub code is imported only when
// a hub id is loaded.
import { isNode } from '../checks.js';
import { nodeFs } from '../sources.js';
import { looksLikeHubId, checkHubId } from './ids.js';

/** loadModel's options that only a hub id takes. */
export const HUB_OPTIONS = ['revision', 'cache', 'host'];

/** Whether a Node path of that name exists (a local folder or file wins over a hub id, as from_pretrained decides). */
async function isLocal(s) {
  if (!isNode) return false;
  const fs = await nodeFs();
  return fs.stat(s).then(() => true, () => false);
}

/**
 * The hub repository `source` names, or null when it names none. A string 'org/name' that is not a local path
 * is a hub id; with a hub option (revision, cache, host) the source must be one (a URL, an absolute path or
 * '..' is then refused by name). Returns { files, progress(onProgress), hub } (hub: hubFolder's answer).
 * @param {unknown} source @param {{revision?: string, cache?: unknown, host?: string, signal?: AbortSignal}} o
 */
export async function hubSource(source, o) {
  const asked = HUB_OPTIONS.some((k) => o[k] !== undefined);
  if (!asked && !(looksLikeHubId(source) && !await isLocal(source))) return null;
  checkHubId(source);
  const { hubFolder } = await import('./folder.js');
  const hub = await hubFolder(source, { revision: o.revision, cache: o.cache, host: o.host, signal: o.signal });
  const progress = (fn) => fn && ((p) => fn({
    ...p, cached: hub.stats.cached, downloaded: hub.stats.downloaded, ...(hub.stats.cacheError ? { cacheError: hub.stats.cacheError } : {}),
  }));
  return { files: hub.files, progress, hub };
}
