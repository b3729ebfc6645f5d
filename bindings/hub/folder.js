// A hub repository as a checkpoint folder the loader reads like any other (checkpoint.js: a Map of paths to
// sources): hubFolder('org/name', { revision, cache, host }) lists the revision's files (resolve.js; from
// the cache when the hub cannot be reached, or when the revision is a commit already listed), and each file
// is opened only when the loader reads it — from the cache when it holds the file whole, at the listed size;
// otherwise streamed from the hub straight into the loader while it is hashed and written to the cache, and
// kept only if its size and hash are the listing's. An interrupted download resumes from what the cache
// kept. Who writes a file holds its lock; a load that holds none waits for another writer of the same file
// (then reads what it wrote), a load that holds one never waits (it streams that file uncached instead), so
// two loads can never wait on each other. A cache that fails to write (quota, a full disk) is dropped for
// that file, and nothing half-written stays.
import { AttnWasmError } from '../errors.js';
import { openSource } from '../sources.js';
import { checkHubId, checkRevision, isCommit } from './ids.js';
import { hubHost, fetchListing, fileUrl, headMeta, networkError } from './resolve.js';
import { fetchBytes } from './download.js';
import { makeHasher } from './hasher.js';
import { storeOf } from './cache.js';
import { Sha256 } from './sha256.js';

/** What openSource() calls to open a source lazily (sources.js). */
export const OPEN = Symbol.for('attnwasm.open');
/**
 * What a lazy source says of itself without being opened (inspect reads a header through it): { size (the
 * listing's, or null), url (the file at the listed commit), cached() (the cache's copy when it holds the file
 * whole, else null; nothing is written) }.
 */
export const DESCRIBE = Symbol.for('attnwasm.describe');
/** How long a load waits for another writer of a file whose download shows no progress. */
const WAIT_STALLED_MS = 90000;
const POLL_MS = 200;

const sleep = (ms, signal) => new Promise((resolve, reject) => {
  if (signal?.aborted) { reject(signal.reason); return; }
  const t = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
});

/** Cache writes that fail for want of space: the file is then streamed without being kept. */
const isNoSpace = (e) => e?.name === 'QuotaExceededError' || e?.code === 'ENOSPC' || e?.code === 'EDQUOT';

/**
 * The files of a hub repository at a revision, for loadModel: { files: Map<path, lazy source>, commit,
 * revision, offline (the listing came from the cache), stats: { cached, downloaded, cacheError } (bytes
 * read from the cache and from the hub so far) }. Rejects with ERR_INVALID_ARGUMENT (a bad id, revision or
 * host; no such repository), ERR_NETWORK (the hub cannot be reached and the cache does not hold the
 * revision's listing).
 * @param {string} id 'organisation/name'
 * @param {{revision?: string, cache?: false|string|object, host?: string, signal?: AbortSignal, fetchImpl?: typeof fetch}} [options]
 */
export async function hubFolder(id, { revision = 'main', cache, host, signal, fetchImpl = fetch } = {}) {
  checkHubId(id);
  checkRevision(revision);
  const h = hubHost(host);
  let store = await storeOf(cache);
  const stats = { cached: 0, downloaded: 0, cacheError: null };
  const dropCache = (e) => { stats.cacheError ??= `not kept in the cache: ${e?.message ?? e}`; };
  let listing = store && isCommit(revision) ? await store.readListing(id, revision) : null;
  let offline = false;
  if (!listing) {
    const noNetwork = typeof navigator === 'object' && navigator.onLine === false;
    try {
      if (noNetwork) throw networkError('hub: this browser is offline');
      listing = await fetchListing(h, id, revision, { signal, fetchImpl });
    } catch (e) {
      if (e?.code !== 'ERR_NETWORK' || !store) throw e;
      const commit = isCommit(revision) ? revision : await store.readRef(id, revision);
      listing = commit ? await store.readListing(id, commit) : null;
      if (!listing) {
        throw new AttnWasmError('ERR_NETWORK', `${e.message}; and the cache (${store.where}) does not hold '${id}' at revision '${revision}'`, { cause: e });
      }
      offline = true;
    }
    if (store && !offline) {
      try {
        await store.writeListing(id, listing);
        await store.writeRef(id, revision, listing.commit);
      } catch (e) {
        dropCache(e);
        store = null;
      }
    }
  }
  const { commit } = listing;
  const held = { count: 0 };  // the locks this load holds: while it holds one, it never waits for another
  const files = new Map();
  for (const [path, meta] of Object.entries(listing.files)) {
    const url = fileUrl(h, id, commit, path);
    files.set(path, {
      [OPEN]: () => openFile({ id, path, meta, commit, url, store, offline, stats, dropCache, held, signal, fetchImpl }),
      [DESCRIBE]: {
        size: meta.size, url,
        cached: async () => (store && meta.size !== null ? store.blob(id, blobName(commit, path, meta), meta.size).catch(() => null) : null),
      },
    });
  }
  return { files, commit, revision, offline, stats, where: store?.where ?? null };
}

/** A file's name in the cache: its hash, or for a file the hub gave none a stand-in named by commit and path. */
const blobName = (commit, path, meta) => meta.hash?.hex ?? new Sha256().update(new TextEncoder().encode(`${commit}\0${path}`)).hex();

/** One file's source: the cached blob, or a Response streaming it from the hub (into the cache). */
async function openFile(f) {
  const { id, path, store, stats } = f;
  let meta = f.meta;
  const blob = blobName(f.commit, path, meta);
  if (store && meta.size !== null) {
    const src = await store.blob(id, blob, meta.size).catch(() => null);
    if (src) {
      stats.cached += meta.size;
      await store.link(id, f.commit, path, blob).catch(() => {});
      return src;
    }
  }
  if (f.offline) throw new AttnWasmError('ERR_NETWORK', `hub: '${id}' ${path} is not in the cache (${store?.where ?? 'none'}) and the hub cannot be reached`);
  if (meta.size === null) meta = { ...meta, ...(await headMeta(f.url, { signal: f.signal, fetchImpl: f.fetchImpl })), hash: meta.hash };
  const it = streamFile({ ...f, meta, blob, store: meta.size === null ? null : store });
  const body = new ReadableStream({
    async pull(ctrl) {
      try {
        const r = await it.next();
        if (r.done) ctrl.close();
        else ctrl.enqueue(r.value);
      } catch (e) {
        ctrl.error(e);
      }
    },
    cancel: () => it.return(),
  }, { highWaterMark: 0 });
  return new Response(body, { headers: meta.size === null ? {} : { 'content-length': String(meta.size) } });
}

/**
 * Waits for the blob's lock: { release } once taken, { done: source } when another writer completed it
 * meanwhile, { bypass: true } when this load holds a lock already or the other writer shows no progress.
 */
async function claim(store, id, blob, size, held, signal) {
  let last = -1, since = Date.now();
  for (;;) {
    const release = await store.tryLock(id, blob);
    if (release) {
      // Another writer may have completed it between the caller's look and this lock.
      const done = await store.blob(id, blob, size).catch(() => null);
      if (!done) return { release };
      await release();
      return { done };
    }
    if (held.count > 0) return { bypass: true };
    const done = await store.blob(id, blob, size);
    if (done) return { done };
    const n = await store.partialSize(id, blob);
    if (n !== last) { last = n; since = Date.now(); } else if (Date.now() - since > WAIT_STALLED_MS) return { bypass: true };
    await sleep(POLL_MS, signal);
  }
}

/** The file's bytes, from the cache's partial file and then the hub, hashed, written to the cache, verified. */
async function* streamFile({ id, path, meta, blob, commit, url, store, stats, dropCache, held, signal, fetchImpl }) {
  const { size, hash } = meta;
  let release = null, writer = null, committed = false, from = 0, failure = null;
  /** A cache write failed (quota, a full disk, …): what was written goes, the file streams on uncached. */
  const giveUp = async (e) => {
    await writer.abort(false).catch(() => {});
    writer = null;
    dropCache(isNoSpace(e) ? Object.assign(new Error(`no space for ${path} (${e.message})`), { cause: e }) : e);
  };
  try {
    if (store) {
      const c = await claim(store, id, blob, size, held, signal);
      if (c.done) {
        stats.cached += size;
        const src = await openSource(c.done, path);
        try { yield* src.chunks(); } finally { await src.close(); }
        return;
      }
      if (c.release) {
        release = c.release;
        held.count++;
        try {
          from = Math.min(await store.partialSize(id, blob), size);
          writer = await store.writer(id, blob, from);
        } catch (e) {
          from = 0;
          dropCache(e);
        }
      }
    }
    const hasher = await makeHasher(hash, size);
    if (from) {
      try {
        for await (const c of store.readPartial(id, blob, from)) {
          hasher?.update(c);
          stats.cached += c.byteLength;
          yield c;
        }
      } catch (e) {
        throw new AttnWasmError('ERR_INTEGRITY', `hub: '${id}' ${path}: the cache's partial download could not be read (${e.message}); it is removed, load again`, { cause: e });
      }
    }
    for await (const c of fetchBytes(url, { from, size, commit, signal, fetchImpl })) {
      hasher?.update(c);
      if (writer) {
        try {
          await writer.write(c);
        } catch (e) {
          await giveUp(e);
        }
      }
      stats.downloaded += c.byteLength;
      yield c;
    }
    const got = hasher ? await hasher.hex() : null;
    if (got !== null && got !== hash.hex) {
      throw new AttnWasmError('ERR_INTEGRITY', `hub: '${id}' ${path}: the bytes' ${hash.kind} is ${got}, the hub's listing says ${hash.hex}; nothing was kept`, { url });
    }
    if (writer) {
      try {
        await writer.commit();
        committed = true;
        await store.link(id, commit, path, blob);
      } catch (e) {
        if (!committed) await giveUp(e);
      }
    }
  } catch (e) {
    failure = e;
    throw e;
  } finally {
    // Not committed: an integrity failure drops what was written; an interruption (the network, an abort,
    // the loader giving up) keeps it for a later resumption.
    if (writer && !committed) await writer.abort(failure?.code !== 'ERR_INTEGRITY').catch(() => {});
    if (release) {
      held.count--;
      await release().catch(() => {});
    }
  }
}
