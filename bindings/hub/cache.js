// Where hub files are kept, and the public handle on it (aw.cache, 'attnwasm/hub' cache): in Node a folder
// in the hub cache's layout (cache_node.js), in a browser the origin private file system (cache_browser.js).
// `cache` option values: undefined (the default place), false (no cache: every load downloads), a Node folder
// path, or a HubCache from openCache().
import { AttnWasmError, typeError, describe } from '../errors.js';
import { isNode } from '../checks.js';
import { checkHubId, isCommit } from './ids.js';

const stores = new Map();  // where → the store's promise, one per place

/**
 * The store of a `cache` option: null for false (or a browser without OPFS), else the store (memoized).
 * @param {undefined|false|string|HubCache} cache
 */
export async function storeOf(cache) {
  if (cache === false) return null;
  if (cache instanceof HubCache) return cache._store();
  if (cache !== undefined && typeof cache !== 'string') {
    throw typeError(`cache: expected false, a folder path (Node) or a cache from openCache(), got ${describe(cache)}`);
  }
  if (typeof cache === 'string' && !isNode) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `cache: a folder path ('${cache}') is a Node cache; in a browser leave it out (the origin's private file system) or pass false`);
  const key = cache ?? '';
  if (!stores.has(key)) {
    stores.set(key, (async () => {
      if (isNode) {
        const { nodeStore, defaultNodeRoot } = await import('./cache_node.js');
        return nodeStore(cache ?? await defaultNodeRoot());
      }
      const { browserStore, opfsAvailable } = await import('./cache_browser.js');
      if (!opfsAvailable()) return null;
      try {
        return await browserStore();
      } catch {
        return null;  // OPFS refused (a private window): no cache
      }
    })());
    stores.get(key).catch(() => stores.delete(key));
  }
  return stores.get(key);
}

/**
 * The models downloaded from the hub, kept for the next load: list() and delete(). In Node a folder (the
 * default: ATTNWASM_CACHE, else ~/.cache/attnwasm/hub), in a browser the origin's private file system,
 * shared by the origin's pages and workers.
 */
export class HubCache {
  /** @param {string} [folder] Node: the cache folder (default: the default folder) */
  constructor(folder) {
    if (folder !== undefined && typeof folder !== 'string') throw typeError(`folder: expected a path (a string), got ${describe(folder)}`);
    this._folder = folder;
  }

  /** @returns {Promise<object|null>} */
  _store() {
    return storeOf(this._folder);
  }

  /**
   * Where the cache is: a folder path in Node, a description in a browser; null where there is none (a
   * browser without the origin private file system).
   * @returns {Promise<string|null>}
   */
  async where() {
    return (await this._store())?.where ?? null;
  }

  /**
   * Every cached model: [{ id, bytes, files, revisions, commits }] — its hub id, the bytes its files take,
   * how many files are complete, the commit each revision asked for pointed at, the commits kept.
   * @returns {Promise<Array<{id: string, bytes: number, files: number, revisions: Record<string, string>, commits: string[]}>>}
   */
  async list() {
    const s = await this._store();
    return s ? s.list() : [];
  }

  /**
   * The complete files of a cached model at a revision (default 'main', else the newest listing kept): a Map
   * of paths to Blobs (a browser) or file paths (Node); empty when none is cached. Nothing is downloaded.
   * @param {string} id @param {{revision?: string}} [options]
   * @returns {Promise<Map<string, Blob|string>>}
   */
  async files(id, { revision = 'main' } = {}) {
    checkHubId(id, 'id');
    const s = await this._store();
    const out = new Map();
    if (!s) return out;
    const commit = (isCommit(revision) ? revision : await s.readRef(id, revision)) ?? (await s.list()).find((m) => m.id === id)?.commits.at(-1);
    const listing = commit ? await s.readListing(id, commit) : null;
    for (const [path, meta] of Object.entries(listing?.files ?? {})) {
      const src = meta.hash && meta.size !== null ? await s.blob(id, meta.hash.hex, meta.size) : null;
      if (src) out.set(path, src);
    }
    return out;
  }

  /**
   * Removes a model's files (every revision). A load reading them at the time may fail.
   * @param {string} id a hub id 'organisation/name'
   * @returns {Promise<boolean>} whether there was anything to remove
   */
  async delete(id) {
    checkHubId(id, 'id');
    const s = await this._store();
    return s ? s.remove(id) : false;
  }
}

/** A handle on the cache at `folder` (Node; default: the default cache), or on the browser's. */
export const openCache = (folder) => new HubCache(folder);
