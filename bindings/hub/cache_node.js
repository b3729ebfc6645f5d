// The hub cache in Node: a folder in the layout huggingface_hub keeps (~/.cache/huggingface/hub), so either
// can read what the other wrote:
//   models--org--name/blobs/<hash>              a file's bytes, named by its sha256 (LFS) or git blob id
//   models--org--name/blobs/<hash>.incomplete   a download under way or interrupted (resumed from its size)
//   models--org--name/refs/<revision>           the commit a branch or tag pointed at when last asked
//   models--org--name/snapshots/<commit>/<path> a relative link to the blob (a copy where links fail)
//   models--org--name/.attnwasm/<commit>.json   attnwasm's own: the commit's listing (sizes, hashes), for
//                                               offline use and to check every file's size when it is used
//   .locks/models--org--name/<hash>.lock        who is writing <hash>.incomplete (pid, host, heartbeat)
// A blob appears only by a rename of its complete, verified .incomplete file. Default root: ATTNWASM_CACHE,
// else $XDG_CACHE_HOME/attnwasm/hub, else ~/.cache/attnwasm/hub. Not here: what is fetched (folder.js).
import { repoFolder, idOfFolder, isBlobName, isCommit } from './ids.js';

const NODE = { fs: 'node:fs/promises', path: 'node:path', os: 'node:os' };
/** A lock whose heartbeat is older than this is taken for one whose writer died (its host may be another). */
const STALE_MS = 30000;
const HEARTBEAT_MS = 5000;
const READ_CHUNK = 8 << 20;

const load = (n) => import(/* webpackIgnore: true */ /* @vite-ignore */ n);

/** The default cache folder. */
export async function defaultNodeRoot() {
  const { join } = await load(NODE.path);
  const { homedir } = await load(NODE.os);
  if (process.env.ATTNWASM_CACHE) return process.env.ATTNWASM_CACHE;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'attnwasm', 'hub');
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
};

/**
 * The cache in the folder `root` (created when first written). Every method takes names already checked
 * (ids.js): a hub id, a commit, a blob name, a repository path.
 */
export async function nodeStore(root) {
  const fs = await load(NODE.fs);
  const { join, dirname } = await load(NODE.path);
  const { hostname } = await load(NODE.os);
  const repo = (id) => join(root, repoFolder(id));
  const blobPath = (id, blob) => join(repo(id), 'blobs', blob);
  const readJson = async (p) => {
    try {
      return JSON.parse(await fs.readFile(p, 'utf8'));
    } catch {
      return null;  // absent, or written half by a process that died: as if absent
    }
  };
  /** Writes `text` to `p` whole or not at all: a temporary file renamed over it. */
  const writeAtomic = async (p, text) => {
    await fs.mkdir(dirname(p), { recursive: true });
    const tmp = `${p}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    await fs.writeFile(tmp, text);
    await fs.rename(tmp, p);
  };
  const held = new Set();  // the locks this process holds

  return {
    kind: 'folder',
    where: root,

    async readRef(id, rev) {
      const c = (await fs.readFile(join(repo(id), 'refs', rev), 'utf8').catch(() => '')).trim();
      return isCommit(c) ? c : null;
    },
    async writeRef(id, rev, commit) {
      if (rev !== commit) await writeAtomic(join(repo(id), 'refs', rev), commit);
    },
    async readListing(id, commit) {
      const l = await readJson(join(repo(id), '.attnwasm', `${commit}.json`));
      return l && l.commit === commit && l.files && typeof l.files === 'object' ? l : null;
    },
    async writeListing(id, listing) {
      await writeAtomic(join(repo(id), '.attnwasm', `${listing.commit}.json`), JSON.stringify(listing));
    },

    /** A complete blob's path, or null; a blob of the wrong size (a 0-byte file, a truncated copy) is removed. */
    async blob(id, blob, size) {
      const p = blobPath(id, blob);
      let st;
      try {
        st = await fs.stat(p);
      } catch {
        return null;
      }
      if (st.isFile() && (size === null || st.size === size)) return p;
      await fs.rm(p, { force: true, recursive: true });
      return null;
    },
    /** Bytes of the blob's .incomplete file (0 when none). */
    async partialSize(id, blob) {
      return fs.stat(`${blobPath(id, blob)}.incomplete`).then((s) => s.size, () => 0);
    },
    /** The first `n` bytes of the .incomplete file, in chunks. */
    async *readPartial(id, blob, n) {
      const fh = await fs.open(`${blobPath(id, blob)}.incomplete`, 'r');
      try {
        for (let at = 0; at < n;) {
          const { bytesRead, buffer } = await fh.read({ buffer: new Uint8Array(Math.min(READ_CHUNK, n - at)), position: at });
          if (!bytesRead) throw new Error(`the partial file ended at ${at} of ${n} bytes`);
          at += bytesRead;
          yield buffer.subarray(0, bytesRead);
        }
      } finally {
        await fh.close();
      }
    },
    /**
     * A writer of the blob from byte `from` (the .incomplete file cut there): write(bytes), commit() (the
     * rename that makes the blob), abort(keep) (keep: leave what was written for a later resumption).
     */
    async writer(id, blob, from) {
      const p = blobPath(id, blob);
      await fs.mkdir(dirname(p), { recursive: true });
      const fh = await fs.open(`${p}.incomplete`, from ? 'r+' : 'w');
      if (from) await fh.truncate(from);
      let at = from, open = true;
      const close = async () => { if (open) { open = false; await fh.close(); } };
      return {
        async write(bytes) {
          for (let done = 0; done < bytes.byteLength;) {
            const { bytesWritten } = await fh.write(bytes, done, bytes.byteLength - done, at);
            done += bytesWritten;
            at += bytesWritten;
          }
        },
        async commit() {
          await fh.sync();
          await close();
          await fs.rename(`${p}.incomplete`, p);
        },
        async abort(keep) {
          await close().catch(() => {});
          if (!keep) await fs.rm(`${p}.incomplete`, { force: true });
        },
      };
    },
    /** snapshots/<commit>/<path> → the blob, as huggingface_hub links them (a copy where links are refused). */
    async link(id, commit, path, blob) {
      const target = join(repo(id), 'snapshots', commit, ...path.split('/'));
      const rel = `${'../'.repeat(path.split('/').length + 1)}blobs/${blob}`;
      const have = await fs.readlink(target).catch(() => null);
      if (have === rel) return;
      await fs.mkdir(dirname(target), { recursive: true });
      await fs.rm(target, { force: true });
      try {
        await fs.symlink(rel, target);
      } catch {
        await fs.copyFile(blobPath(id, blob), target);
      }
    },

    /**
     * Takes the blob's lock if no live writer holds it: a release function, or null. A lock whose process is
     * gone (same host) or whose heartbeat stopped STALE_MS ago is broken.
     */
    async tryLock(id, blob) {
      const key = `${id}/${blob}`;
      if (held.has(key)) return null;
      const p = join(root, '.locks', repoFolder(id), `${blob}.lock`);
      await fs.mkdir(dirname(p), { recursive: true });
      for (let attempt = 0; attempt < 2; attempt++) {
        let fh;
        try {
          fh = await fs.open(p, 'wx');
        } catch (e) {
          if (e.code !== 'EEXIST') throw e;
          const text = await fs.readFile(p, 'utf8').catch(() => '');
          const st = await fs.stat(p).catch(() => null);
          const [pid, host] = text.split(' ');
          const dead = (host === hostname() && Number(pid) > 0 && !alive(Number(pid))) || (st && Date.now() - st.mtimeMs > STALE_MS);
          if (!dead) return null;
          await fs.rm(p, { force: true });
          continue;
        }
        await fh.writeFile(`${process.pid} ${hostname()} ${Date.now()}`);
        await fh.close();
        held.add(key);
        const beat = setInterval(() => { const now = new Date(); fs.utimes(p, now, now).catch(() => {}); }, HEARTBEAT_MS);
        beat.unref?.();
        return async () => {
          clearInterval(beat);
          held.delete(key);
          await fs.rm(p, { force: true });
        };
      }
      return null;
    },

    /** [{ id, bytes, files, revisions: { rev: commit }, commits: [commit] }] of every cached repository. */
    async list() {
      const out = [];
      const names = await fs.readdir(root).catch(() => []);
      for (const name of names.sort()) {
        const id = idOfFolder(name);
        if (!id) continue;
        const dir = join(root, name);
        let bytes = 0, files = 0;
        for (const b of await fs.readdir(join(dir, 'blobs')).catch(() => [])) {
          const st = await fs.stat(join(dir, 'blobs', b)).catch(() => null);
          if (!st?.isFile()) continue;
          bytes += st.size;
          if (isBlobName(b)) files++;
        }
        const revisions = {};
        const walk = async (d, prefix) => {
          for (const e of await fs.readdir(d, { withFileTypes: true }).catch(() => [])) {
            if (e.isDirectory()) await walk(join(d, e.name), `${prefix}${e.name}/`);
            else {
              const c = (await fs.readFile(join(d, e.name), 'utf8').catch(() => '')).trim();
              if (isCommit(c)) revisions[prefix + e.name] = c;
            }
          }
        };
        await walk(join(dir, 'refs'), '');
        const commits = (await fs.readdir(join(dir, 'snapshots')).catch(() => [])).filter(isCommit);
        out.push({ id, bytes, files, revisions, commits });
      }
      return out;
    },
    /** Removes a repository's folder (and its locks); true when there was one. */
    async remove(id) {
      const dir = repo(id);
      const had = await fs.stat(dir).then(() => true, () => false);
      await fs.rm(dir, { recursive: true, force: true });
      await fs.rm(join(root, '.locks', repoFolder(id)), { recursive: true, force: true });
      return had;
    },
  };
}
