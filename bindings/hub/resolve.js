// The hub's URLs and its file listing. A hub id and a revision become one API request —
// GET <host>/api/models/<org/name>/revision/<revision>?blobs=true, which names the commit the revision points
// at and every file of it with its size and hash (an LFS file's sha256, a small file's git blob id) — and one
// URL per file: <host>/<org/name>/resolve/<commit>/<path>, which the hub answers itself (small files) or by
// a redirect to its content host (LFS files), both followed by fetch. A file the listing gives no size is
// asked with a HEAD (X-Linked-Size, X-Linked-Etag, ETag, X-Repo-Commit, as huggingface_hub reads them).
// Not here: downloading (download.js) and keeping (cache.js).
import { AttnWasmError, typeError, describe } from '../errors.js';
import { isNode } from '../checks.js';
import { isSafeRepoPath, expectedHash, isCommit } from './ids.js';

/** The hub itself; HF_ENDPOINT (Node) or the `host` option name a mirror or a local server. */
export const DEFAULT_HOST = 'https://huggingface.co';
/** How long the listing request may take before the cache is used instead (a network that hangs). */
const LISTING_TIMEOUT_MS = 15000;

/** The host to use: the option, else HF_ENDPOINT in Node, else the hub; an http(s) URL without a trailing '/'. */
export function hubHost(host) {
  const h = host ?? (isNode ? process.env.HF_ENDPOINT : undefined) ?? DEFAULT_HOST;
  if (typeof h !== 'string' && !(h instanceof URL)) throw typeError(`host: expected the hub's URL (a string), got ${describe(h)}`);
  let u;
  try {
    u = new URL(String(h));
  } catch {
    u = null;
  }
  if (!u || !/^https?:$/.test(u.protocol) || u.search || u.hash || u.username || u.password) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `host: expected an http(s) URL such as '${DEFAULT_HOST}' (no query, no credentials), got '${h}'`);
  }
  return u.href.replace(/\/+$/, '');
}

const encodePath = (p) => p.split('/').map(encodeURIComponent).join('/');

/** The URL of one file of a repository at a commit (or revision). */
export const fileUrl = (host, id, rev, path) => `${host}/${id}/resolve/${encodeURIComponent(rev)}/${encodePath(path)}`;

/** The URL of a revision's listing. */
export const listingUrl = (host, id, rev) => `${host}/api/models/${id}/revision/${encodeURIComponent(rev)}?blobs=true`;

/** An error of the network (unreachable, a timeout, a 5xx): the cache may stand in for the hub. */
export const networkError = (message, cause, status) => new AttnWasmError('ERR_NETWORK', message, { cause, ...(status ? { status } : {}) });

/**
 * A revision's listing from the hub: { id, revision, commit, files: { path: { size, hash } } } (size null
 * when the hub gave none; hash { kind, hex } or null). Paths that could leave the repository's folder are
 * left out. Rejects with ERR_NETWORK when the hub cannot be reached or answers 5xx / 429 (the caller may use
 * its cache), ERR_INVALID_ARGUMENT when it answers that there is no such repository or revision.
 */
export async function fetchListing(host, id, revision, { signal, fetchImpl = fetch } = {}) {
  const url = listingUrl(host, id, revision);
  const timeout = AbortSignal.timeout(LISTING_TIMEOUT_MS);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res;
  try {
    res = await fetchImpl(url, { signal: both, headers: { accept: 'application/json' } });
  } catch (e) {
    if (signal?.aborted) throw signal.reason ?? e;
    throw networkError(`hub: cannot reach ${host} for '${id}' (${timeout.aborted ? `no answer within ${LISTING_TIMEOUT_MS / 1000} s` : e?.cause?.message ?? e?.message ?? e})`, e);
  }
  if (res.status >= 500 || res.status === 429) {
    await res.body?.cancel().catch(() => {});
    throw networkError(`hub: ${host} answered HTTP ${res.status} for '${id}'`, undefined, res.status);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    const why = res.status === 401 || res.status === 403 || res.status === 404
      ? `no repository '${id}' with a revision '${revision}' there (a private or gated repository needs a token, which attnwasm does not send)`
      : 'an error';
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `hub: ${url} answered HTTP ${res.status}: ${why}`, { url, status: res.status });
  }
  let body;
  try {
    body = await res.json();
  } catch (e) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `hub: ${url} did not answer with JSON (${e.message}); is '${host}' a hub or a mirror of one?`, { url, cause: e });
  }
  return listingOf(body, id, revision, url);
}

/** The listing of an API answer, checked: the commit is 40 hex digits, every file a safe path with a size. */
export function listingOf(body, id, revision, where) {
  const commit = body?.sha;
  if (!isCommit(commit)) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `hub: ${where} names no commit (sha: expected 40 hex digits, got ${JSON.stringify(commit)?.slice(0, 80)})`);
  if (!Array.isArray(body.siblings)) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `hub: ${where} lists no files (siblings: expected an array, got ${describe(body.siblings)})`);
  const files = {};
  for (const s of body.siblings) {
    const path = s?.rfilename;
    if (!isSafeRepoPath(path)) continue;  // never asked for, never written: it could leave the folder
    const size = Number.isSafeInteger(s.lfs?.size) && s.lfs.size >= 0 ? s.lfs.size : Number.isSafeInteger(s.size) && s.size >= 0 ? s.size : null;
    files[path] = { size, hash: expectedHash(s) };
  }
  return { id, revision, commit, files };
}

/** The ETag's hash: the hub's ETag (quoted, maybe weak) when it is a sha256 or a git blob id, else null. */
export function etagHash(v) {
  const m = /^(?:W\/)?"?([0-9a-f]{40}|[0-9a-f]{64})"?$/.exec((v ?? '').trim());
  if (!m) return null;
  return { kind: m[1].length === 64 ? 'sha256' : 'git-sha1', hex: m[1] };
}

/**
 * A file's size and hash from a HEAD of its URL, for a listing that gave none: the hub's X-Linked-Size and
 * X-Linked-Etag (on the redirect of an LFS file, which Node can read: redirect 'manual'), else the final
 * answer's Content-Length and ETag. { size, hash, commit } (each null when not said).
 */
export async function headMeta(url, { signal, fetchImpl = fetch } = {}) {
  let res;
  try {
    res = await fetchImpl(url, { method: 'HEAD', redirect: isNode ? 'manual' : 'follow', signal });
  } catch (e) {
    if (signal?.aborted) throw signal.reason ?? e;
    throw networkError(`hub: HEAD ${url} failed (${e?.cause?.message ?? e?.message ?? e})`, e);
  }
  if (res.status >= 500 || res.status === 429) throw networkError(`hub: HEAD ${url} answered HTTP ${res.status}`, undefined, res.status);
  if (!(res.ok || (res.status >= 300 && res.status < 400))) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `hub: HEAD ${url} answered HTTP ${res.status}`, { url, status: res.status });
  }
  const h = res.headers;
  const linked = h.get('x-linked-size');
  const length = res.status >= 300 ? null : h.get('content-encoding') ? null : h.get('content-length');
  const size = [linked, length].map((v) => (v !== null && /^\d+$/.test(v) ? Number(v) : null)).find((v) => v !== null) ?? null;
  return { size, hash: etagHash(h.get('x-linked-etag') ?? h.get('etag')), commit: h.get('x-repo-commit') };
}
