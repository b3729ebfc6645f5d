// A local server (127.0.0.1) that answers as the Hugging Face hub does, for the hub tests (hub*.test.mjs,
// tests/browser/hub*.mjs, bench/hub_second_visit.mjs). Not a test file.
//   GET  /api/models/<org>/<name>/revision/<rev>[?blobs=true]   { id, sha, siblings: [{ rfilename, size, blobId, lfs? }] }
//   GET|HEAD /<org>/<name>/resolve/<rev>/<path>                  a small file: 200, ETag "<git blob id>", X-Repo-Commit;
//        an LFS file (.safetensors, or over lfsOver bytes): 302 to the content host with X-Linked-Size,
//        X-Linked-Etag "<sha256>", X-Repo-Commit (the hub's headers)
//   GET|HEAD /cdn/<sha256>                                      the content host: Range (206, Content-Range), Accept-Ranges
// Everything is CORS-open (a page of another origin reads it, Range included). Hostile modes, set per test
// on `server.modes`: lieHash (the listing names another sha256 for LFS files), lieSize (the listing adds N bytes),
// dropAt (a fraction: the first full GET of each LFS file sends that part, then the connection is destroyed),
// truncateAfter (every content answer stops after N bytes, then ends cleanly), extraBytes (the content host
// sends N bytes more than the file), ignoreRange (200 with the whole file to a Range request), failAfterDrop
// (after a drop, every content request answers 503), chunkDelayMs (a pause between 64 KB pieces),
// badSibling (the listing also names '../../escape.txt'). `server.log` records every request.
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

const gitBlobId = (b) => createHash('sha1').update(`blob ${b.byteLength}\0`).update(b).digest('hex');
const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const commitOf = (seed) => createHash('sha1').update(`commit ${seed}`).digest('hex');
const PIECE = 64 << 10;

/**
 * Starts the hub on 127.0.0.1 (port 0: any free one). repos: { 'org/name': { main: { path: bytes }, … } }
 * (a revision name → its files; each revision gets a commit of its own). Returns { host, modes, log,
 * setRevision(id, rev, files), commit(id, rev), close() }.
 */
export async function startHub(repos = {}, { lfsOver = 1 << 20, port = 0 } = {}) {
  const commits = new Map();   // commit → { id, files: Map(path → { bytes, sha256, blobId, lfs }) }
  const refs = new Map();      // 'id@rev' → commit
  const blobs = new Map();     // sha256 → bytes
  let n = 0;
  const setRevision = (id, rev, files) => {
    const commit = commitOf(`${id}@${rev}#${n++}`);
    const m = new Map();
    for (const [path, b] of Object.entries(files)) {
      const bytes = b instanceof Uint8Array ? b : new TextEncoder().encode(typeof b === 'string' ? b : JSON.stringify(b));
      const lfs = path.endsWith('.safetensors') || bytes.byteLength > lfsOver;
      const f = { bytes, sha256: sha256(bytes), blobId: gitBlobId(bytes), lfs };
      m.set(path, f);
      blobs.set(f.sha256, bytes);
    }
    commits.set(commit, { id, files: m });
    refs.set(`${id}@${rev}`, commit);
    return commit;
  };
  for (const [id, revs] of Object.entries(repos)) for (const [rev, files] of Object.entries(revs)) setRevision(id, rev, files);

  const modes = {};
  const log = [];
  const dropped = new Set();
  const cors = {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'ETag, X-Repo-Commit, X-Linked-Size, X-Linked-Etag, Content-Range, Content-Length, Accept-Ranges',
  };
  const resolveRev = (id, rev) => (commits.get(rev)?.id === id ? rev : refs.get(`${id}@${rev}`));

  async function sendBytes(req, res, bytes, { etag, sha, lfs }) {
    let start = 0, status = 200;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (range && !modes.ignoreRange) {
      start = Number(range[1]);
      if (start >= bytes.byteLength) { res.writeHead(416, { ...cors, 'content-range': `bytes */${bytes.byteLength}` }).end(); return; }
      status = 206;
    }
    if (modes.failAfterDrop && dropped.has(sha)) { res.writeHead(503, cors).end('busy'); return; }
    // extraBytes: a body longer than the file, sent chunked (no Content-Length to contradict the listing).
    const extra = lfs ? modes.extraBytes ?? 0 : 0;
    let body = bytes.subarray(start);
    if (extra) body = Buffer.concat([body, Buffer.alloc(extra, 7)]);
    const headers = { ...cors, 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes', etag: `"${etag}"`, ...(extra ? {} : { 'content-length': String(body.byteLength) }) };
    if (status === 206) headers['content-range'] = `bytes ${start}-${bytes.byteLength - 1}/${bytes.byteLength}`;
    res.writeHead(status, headers);
    if (req.method === 'HEAD') { res.end(); return; }
    let limit = body.byteLength;
    let drop = false;
    if (modes.dropAt !== undefined && lfs && start === 0 && !dropped.has(sha)) {
      limit = Math.floor(bytes.byteLength * modes.dropAt);
      drop = true;
      dropped.add(sha);
    }
    if (modes.truncateAfter !== undefined) limit = Math.min(limit, modes.truncateAfter);
    for (let at = 0; at < limit; at += PIECE) {
      if (res.destroyed) return;
      const ok = res.write(body.subarray(at, Math.min(limit, at + PIECE)));
      if (!ok) await new Promise((r) => res.once('drain', r));
      if (modes.chunkDelayMs) await new Promise((r) => setTimeout(r, modes.chunkDelayMs));
    }
    if (drop || limit < body.byteLength) {
      // A dropped connection: the socket goes before the promised bytes do (a truncation without a drop
      // would leave the client waiting for them: the end of a short answer is a closed connection too).
      // A drop waits 200 ms first, so that the bytes sent have reached the client: under load a browser could
      // otherwise see the reset before any of them, have nothing to resume from, and ask again from byte 0 (seen
      // once in CI: the resumed request had no Range).
      if (drop) await new Promise((r) => setTimeout(r, 200));
      res.socket?.destroy();
      return;
    }
    res.end();
  }

  const server = createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    log.push({ method: req.method, path: decodeURIComponent(url.pathname), range: req.headers.range ?? null });
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'access-control-allow-headers': 'range, accept', 'access-control-allow-methods': 'GET, HEAD' }).end();
      return;
    }
    let m = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(url.pathname);
    if (m) {
      const id = m[1], rev = decodeURIComponent(m[2]);
      const commit = resolveRev(id, rev);
      if (!commit) { res.writeHead(404, { ...cors, 'content-type': 'application/json' }).end('{"error":"Repository not found"}'); return; }
      const siblings = [...commits.get(commit).files].map(([path, f]) => {
        const size = f.bytes.byteLength + (f.lfs && modes.lieSize ? modes.lieSize : 0);
        return { rfilename: path, size, blobId: f.blobId,
          ...(f.lfs ? { lfs: { sha256: modes.lieHash ? sha256(Buffer.from(f.sha256)) : f.sha256, size, pointerSize: 134 } } : {}) };
      });
      if (modes.badSibling) siblings.push({ rfilename: '../../escape.txt', size: 3, blobId: gitBlobId(Buffer.from('bad')) });
      res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify({ id, sha: commit, siblings }));
      return;
    }
    m = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (m) {
      const id = m[1], commit = resolveRev(id, decodeURIComponent(m[2]));
      const f = commit && commits.get(commit).files.get(decodeURIComponent(m[3]));
      if (!f) { res.writeHead(404, { ...cors, 'x-error-code': 'EntryNotFound' }).end('Entry not found'); return; }
      if (f.lfs) {
        res.writeHead(302, { ...cors, location: `http://${req.headers.host}/cdn/${f.sha256}`, 'x-linked-size': String(f.bytes.byteLength),
          'x-linked-etag': `"${f.sha256}"`, etag: `"${f.blobId}"`, 'x-repo-commit': commit }).end();
        return;
      }
      res.setHeader('x-repo-commit', commit);
      await sendBytes(req, res, f.bytes, { etag: f.blobId, sha: f.sha256 });
      return;
    }
    m = /^\/cdn\/([0-9a-f]{64})$/.exec(url.pathname);
    if (m && blobs.has(m[1])) {
      await sendBytes(req, res, blobs.get(m[1]), { etag: m[1], sha: m[1], lfs: true });
      return;
    }
    res.writeHead(404, cors).end('not found');
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  const host = `http://127.0.0.1:${server.address().port}`;
  return {
    host, modes, log, server,
    setRevision,
    commit: (id, rev) => refs.get(`${id}@${rev}`),
    /** Forgets which files were dropped once (dropAt drops each file's first full GET). */
    resetDrops: () => dropped.clear(),
    close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(() => r()); }),
  };
}
