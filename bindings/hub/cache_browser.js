// The hub cache in a browser: the origin private file system (OPFS), in the hub cache's layout where it can
// be, in a page and in its workers alike:
//   attnwasm-hub/models--org--name/blobs/<hash>/000000, 000001, …  a file's bytes in segments of SEGMENT bytes
//   attnwasm-hub/models--org--name/blobs/<hash>/complete           written last: the file's size
//   attnwasm-hub/models--org--name/refs/<revision, URI-encoded>     the commit a branch or tag pointed at
//   attnwasm-hub/models--org--name/listings/<commit>.json           the commit's listing (sizes, hashes)
// Why segments: a writable OPFS file commits its bytes only when closed (Chromium writes a swap file), and
// reopening one to append copies it whole; a segment is closed when full, so an interrupted download keeps
// every full segment and resumes after the last, and a blob is read as one Blob of its segment Files
// (disk-backed: nothing is read before the loader asks). Who writes a blob holds a Web Lock on it, which
// the browser releases if the tab dies. Not here: what is fetched (folder.js).
import { repoFolder, idOfFolder, isBlobName, isCommit } from './ids.js';

/** Bytes per segment file. */
export const SEGMENT = 32 << 20;
const WRITE_BLOCK = 4 << 20;
const ROOT = 'attnwasm-hub';
const segName = (i) => String(i).padStart(6, '0');

/** Whether this browser has what the cache needs: OPFS with writable files. */
export function opfsAvailable() {
  return typeof navigator === 'object' && typeof navigator.storage?.getDirectory === 'function'
    && typeof FileSystemFileHandle === 'function' && typeof FileSystemFileHandle.prototype.createWritable === 'function';
}

async function dir(parent, path, create) {
  let d = parent;
  for (const part of path) {
    try {
      d = await d.getDirectoryHandle(part, { create });
    } catch (e) {
      if (!create && (e.name === 'NotFoundError' || e.name === 'TypeMismatchError')) return null;
      throw e;
    }
  }
  return d;
}

async function readText(d, name) {
  try {
    return await (await (await d.getFileHandle(name)).getFile()).text();
  } catch {
    return null;
  }
}

async function writeText(d, name, text) {
  const w = await (await d.getFileHandle(name, { create: true })).createWritable();
  try {
    await w.write(text);
    await w.close();  // atomic: the file is replaced whole on close
  } catch (e) {
    await w.abort().catch(() => {});
    throw e;
  }
}

/** The full segments of a blob folder, in order, each exactly SEGMENT bytes: [File]. */
async function fullSegments(b) {
  const files = [];
  for (let i = 0; ; i++) {
    let f;
    try {
      f = await (await b.getFileHandle(segName(i))).getFile();
    } catch {
      return files;
    }
    if (f.size !== SEGMENT) return files;
    files.push(f);
  }
}

/** The cache in OPFS (the folder `name` of the origin's private file system). */
export async function browserStore(name = ROOT) {
  const root = await dir(await navigator.storage.getDirectory(), [name], true);
  const repo = (id, create) => dir(root, [repoFolder(id)], create);
  const blobDir = async (id, blob, create) => dir(root, [repoFolder(id), 'blobs', blob], create);
  const removeBlob = async (id, blob) => {
    const b = await dir(root, [repoFolder(id), 'blobs'], false);
    await b?.removeEntry(blob, { recursive: true }).catch(() => {});
  };
  const locks = typeof navigator.locks?.request === 'function' ? navigator.locks : null;
  const held = new Set();

  return {
    kind: 'opfs',
    where: `the origin's private file system (${name}/)`,

    async readRef(id, rev) {
      const d = await dir(root, [repoFolder(id), 'refs'], false);
      const c = d && (await readText(d, encodeURIComponent(rev)))?.trim();
      return isCommit(c) ? c : null;
    },
    async writeRef(id, rev, commit) {
      if (rev !== commit) await writeText(await dir(root, [repoFolder(id), 'refs'], true), encodeURIComponent(rev), commit);
    },
    async readListing(id, commit) {
      const d = await dir(root, [repoFolder(id), 'listings'], false);
      try {
        const l = d && JSON.parse(await readText(d, `${commit}.json`));
        return l && l.commit === commit && l.files && typeof l.files === 'object' ? l : null;
      } catch {
        return null;
      }
    },
    async writeListing(id, listing) {
      await writeText(await dir(root, [repoFolder(id), 'listings'], true), `${listing.commit}.json`, JSON.stringify(listing));
    },

    /** A complete blob as one Blob of its segments, or null; a blob whose sizes disagree is removed. */
    async blob(id, blob, size) {
      const b = await blobDir(id, blob, false);
      if (!b) return null;
      const mark = await readText(b, 'complete');
      if (mark === null) return null;  // being written, or interrupted
      const want = Number(mark);
      const files = [];
      let total = 0;
      for (let i = 0; total < want; i++) {
        const f = await b.getFileHandle(segName(i)).then((h) => h.getFile(), () => null);
        if (!f || !f.size) break;
        files.push(f);
        total += f.size;
      }
      if (total === want && (size === null || want === size) && files.slice(0, -1).every((f) => f.size === SEGMENT)) return new Blob(files);
      await removeBlob(id, blob);
      return null;
    },
    async partialSize(id, blob) {
      const b = await blobDir(id, blob, false);
      if (!b || (await readText(b, 'complete')) !== null) return 0;
      return (await fullSegments(b)).length * SEGMENT;
    },
    async *readPartial(id, blob, n) {
      const b = await blobDir(id, blob, false);
      const files = b ? await fullSegments(b) : [];
      let at = 0;
      for (const f of files) {
        if (at >= n) return;
        const bytes = new Uint8Array(await f.slice(0, Math.min(SEGMENT, n - at)).arrayBuffer());
        at += bytes.byteLength;
        yield bytes;
      }
      if (at < n) throw new Error(`the partial blob ended at ${at} of ${n} bytes`);
    },
    /**
     * A writer from byte `from` (a multiple of SEGMENT): a segment file at a time, each committed when full.
     * Bytes are gathered into WRITE_BLOCK-byte writes: each OPFS write is a round trip to the browser process
     * (64 KB writes ran at 15 MB/s here, 32 MB ones at 60 MB/s, on a loaded 2-core VM).
     */
    async writer(id, blob, from) {
      if (from % SEGMENT) throw new Error(`a blob resumes at a segment's start, not at byte ${from}`);
      const b = await blobDir(id, blob, true);
      let seg = from / SEGMENT, w = null, filled = 0, total = from;
      const block = new Uint8Array(WRITE_BLOCK);
      let held = 0;  // bytes of `block` not yet written
      const flush = async () => {
        if (!held) return;
        if (!w) w = await (await b.getFileHandle(segName(seg), { create: true })).createWritable();
        await w.write(block.slice(0, held));
        held = 0;
      };
      const closeSeg = async () => { await flush(); if (w) { await w.close(); w = null; seg++; filled = 0; } };
      return {
        async write(bytes) {
          for (let at = 0; at < bytes.byteLength;) {
            const take = Math.min(SEGMENT - filled, WRITE_BLOCK - held, bytes.byteLength - at);
            block.set(bytes.subarray(at, at + take), held);
            held += take;
            filled += take;
            total += take;
            at += take;
            if (filled === SEGMENT) await closeSeg();
            else if (held === WRITE_BLOCK) await flush();
          }
        },
        async commit() {
          await closeSeg();
          await writeText(b, 'complete', String(total));
        },
        async abort(keep) {
          if (w) await w.abort().catch(() => {});  // the segment being written is dropped: only full ones stay
          w = null;
          if (!keep) await removeBlob(id, blob);
        },
      };
    },
    async link() {},  // the listing maps paths to blobs

    /** The blob's Web Lock if no one holds it: a release function, or null. */
    async tryLock(id, blob) {
      const key = `${ROOT}:${id}/${blob}`;
      if (held.has(key)) return null;
      if (!locks) {
        held.add(key);
        return async () => { held.delete(key); };
      }
      return new Promise((resolve, reject) => {
        locks.request(key, { ifAvailable: true }, (lock) => {
          if (!lock) {
            resolve(null);
            return undefined;
          }
          held.add(key);
          return new Promise((done) => resolve(async () => { held.delete(key); done(); }));
        }).catch(reject);
      });
    },

    async list() {
      const out = [];
      for await (const [name, handle] of root.entries()) {
        const id = idOfFolder(name);
        if (!id || handle.kind !== 'directory') continue;
        let bytes = 0, files = 0;
        const blobs = await dir(handle, ['blobs'], false);
        if (blobs) {
          for await (const [b, bh] of blobs.entries()) {
            if (bh.kind !== 'directory' || !isBlobName(b)) continue;
            for await (const [sn, sh] of bh.entries()) if (sh.kind === 'file' && sn !== 'complete') bytes += (await sh.getFile()).size;
            if ((await readText(bh, 'complete')) !== null) files++;
          }
        }
        const revisions = {};
        const refs = await dir(handle, ['refs'], false);
        if (refs) for await (const [r, rh] of refs.entries()) {
          const c = rh.kind === 'file' ? (await readText(refs, r))?.trim() : null;
          if (isCommit(c)) revisions[decodeURIComponent(r)] = c;
        }
        const commits = [];
        const listings = await dir(handle, ['listings'], false);
        if (listings) for await (const [l] of listings.entries()) if (isCommit(l.replace(/\.json$/, ''))) commits.push(l.replace(/\.json$/, ''));
        out.push({ id, bytes, files, revisions, commits });
      }
      return out.sort((a, b) => (a.id < b.id ? -1 : 1));
    },
    async remove(id) {
      const had = (await repo(id, false)) !== null;
      if (had) await root.removeEntry(repoFolder(id), { recursive: true });
      return had;
    },
  };
}
