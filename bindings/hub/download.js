// One file's bytes from the hub, from an offset to its end, whatever the connection does: a body that ends
// early, a connection that drops or stalls, a 5xx, are picked up again with a Range request from the byte
// reached (the hub's content host answers 206 with Content-Range; a server that ignores Range and answers
// 200 is skipped forward). What the server says is checked against what the hub's listing says: a
// Content-Length, Content-Range or X-Repo-Commit that disagrees, a body longer than the file, or a 416, is
// ERR_INTEGRITY — the file is not what the listing names, and retrying would not change it.
// Not here: hashing and keeping the bytes (folder.js, cache_*.js).
import { AttnWasmError } from '../errors.js';
import { networkError } from './resolve.js';

/** Reconnections in a row that bring no new byte before the download is given up. */
const MAX_STALLED = 4;
/** Reconnections in all (a server that drops every connection after a few bytes ends, too). */
const MAX_RECONNECTS = 64;
/** A read that brings nothing for this long is taken for a dropped connection. */
const READ_TIMEOUT_MS = 60000;

const integrity = (message, url) => new AttnWasmError('ERR_INTEGRITY', message, { url });

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); reject(signal.reason); }, { once: true });
  });
}

/** reader.read(), or a rejection after `ms` with nothing read (the reader is then cancelled). */
async function readWithin(reader, ms) {
  let timer;
  try {
    return await Promise.race([reader.read(), new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no byte for ${ms / 1000} s`)), ms);
    })]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The bytes of `url` from byte `from` to `size` (the listing's size; null: up to the end of the first
 * answer, with no resumption), in chunks. `commit`: the commit the URL names (an X-Repo-Commit that
 * differs is refused). `onReconnect({ at, reason })` is told of each reconnection. Rejects with
 * ERR_INTEGRITY (the server's answer contradicts the listing), ERR_NETWORK (it cannot be reached, or
 * stalls MAX_STALLED times in a row), ERR_INVALID_ARGUMENT (a 4xx: the file is not there), or the signal's
 * reason once aborted.
 * @returns {AsyncGenerator<Uint8Array>}
 */
export async function* fetchBytes(url, { from = 0, size = null, commit = null, signal, fetchImpl = fetch, onReconnect, readTimeoutMs = READ_TIMEOUT_MS } = {}) {
  let at = from, stalled = 0, reconnects = 0;
  const retry = async (reason, cause) => {
    if (signal?.aborted) throw signal.reason;
    if (++stalled > MAX_STALLED || ++reconnects > MAX_RECONNECTS) {
      throw networkError(`hub: ${url}: ${reason}; gave up after ${reconnects} reconnection(s), at byte ${at}${size === null ? '' : ` of ${size}`}`, cause);
    }
    onReconnect?.({ at, reason });
    await sleep(Math.min(2000, 100 * 2 ** (stalled - 1)), signal);
  };
  while (size === null || at < size) {
    const ranged = at > 0;
    let res;
    try {
      res = await fetchImpl(url, { signal, cache: 'no-store', headers: ranged ? { range: `bytes=${at}-` } : {} });
    } catch (e) {
      await retry(`the request failed (${e?.cause?.message ?? e?.message ?? e})`, e);
      continue;
    }
    if (res.status >= 500 || res.status === 429) {
      await res.body?.cancel().catch(() => {});
      await retry(`HTTP ${res.status}`);
      continue;
    }
    if (res.status === 416) throw integrity(`hub: ${url}: the server has no byte ${at} (HTTP 416), but the hub's listing says the file has ${size} bytes`, url);
    if (!res.ok) {
      await res.body?.cancel().catch(() => {});
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `hub: ${url} answered HTTP ${res.status}`, { url, status: res.status });
    }
    const served = res.headers.get('x-repo-commit');
    if (commit && served && !res.redirected && served !== commit) {
      await res.body?.cancel().catch(() => {});
      throw integrity(`hub: ${url} answered with commit ${served}, not ${commit}`, url);
    }
    // Where this answer starts: a 206 says; a 200 starts at 0 (a server that ignored the Range).
    let skip = 0;
    if (res.status === 206) {
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(res.headers.get('content-range') ?? '');
      const total = m && m[3] !== '*' ? Number(m[3]) : null;
      if (!m || Number(m[1]) !== at || (size !== null && total !== null && total !== size)) {
        await res.body?.cancel().catch(() => {});
        throw integrity(`hub: ${url}: asked from byte ${at}${size === null ? '' : ` of ${size}`}, the server answered Content-Range '${res.headers.get('content-range')}'`, url);
      }
    } else {
      skip = at;
    }
    const identity = !res.headers.get('content-encoding') || res.headers.get('content-encoding') === 'identity';
    const length = identity && /^\d+$/.test(res.headers.get('content-length') ?? '') ? Number(res.headers.get('content-length')) : null;
    if (size === null && !ranged) size = length;
    const expect = size === null ? null : size - at + skip;
    if (length !== null && expect !== null && length !== expect) {
      await res.body?.cancel().catch(() => {});
      throw integrity(`hub: ${url}: the server says ${length} bytes${ranged ? ` from byte ${at - skip}` : ''}, the hub's listing ${size} bytes in all`, url);
    }
    const reader = res.body.getReader();
    let got = 0, failure = null;
    try {
      for (;;) {
        let r;
        try {
          r = await readWithin(reader, readTimeoutMs);
        } catch (e) {
          if (signal?.aborted) throw signal.reason;
          failure = e;
          break;
        }
        if (r.done) break;
        let c = r.value;
        if (skip) {
          const drop = Math.min(skip, c.byteLength);
          skip -= drop;
          c = c.subarray(drop);
          if (!c.byteLength) continue;
        }
        if (size !== null && at + c.byteLength > size) throw integrity(`hub: ${url}: the server sent more than the ${size} bytes the hub's listing says`, url);
        at += c.byteLength;
        got += c.byteLength;
        yield c;
      }
    } finally {
      reader.cancel().catch(() => {});
    }
    if (got) stalled = 0;
    if (size === null) {
      if (failure) throw networkError(`hub: ${url}: the connection failed after ${at} bytes and the file's size is not known, so it cannot be resumed`, failure);
      return;
    }
    if (at < size) await retry(failure ? `the connection failed (${failure.message})` : `the answer ended at byte ${at}`, failure);
  }
}
