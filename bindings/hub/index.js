// 'attnwasm/hub': models by their hub ids, downloaded once. loadModel('org/name', { revision, cache, host })
// reads a hub repository through hubFolder (folder.js); openCache() / cache are the cache's list() and
// delete() without a runtime (a page that runs its models in a worker lists the same cache: it is the
// origin's). Pure JS; imports nothing outside the package.
export { hubFolder } from './folder.js';
export { HubCache, openCache } from './cache.js';
export { looksLikeHubId, checkHubId, checkRevision } from './ids.js';
export { DEFAULT_HOST, hubHost, fileUrl } from './resolve.js';
import { HubCache } from './cache.js';

/** The default cache (Node: ATTNWASM_CACHE or ~/.cache/attnwasm/hub; a browser: the origin private file system). */
export const cache = new HubCache();
