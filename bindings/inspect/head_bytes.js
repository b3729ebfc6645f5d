// A weight file's header bytes — its first 8 + N — read from any source loadModel takes, without its data: a
// Node file is read at those offsets (a file over 2 GiB too), a Blob or File is sliced, bytes are viewed, a URL
// is asked for a byte range (a server that ignores Range answers the whole file: its body is cancelled once
// the header is in), a Response or a stream is read that far and cancelled, a hub file is read from the cache
// when it holds the file whole, else by a range of its URL (nothing is written to the cache). Not here: what
// the bytes say (header.js).
import { AttnWasmError } from '../errors.js';
import { isNode } from '../checks.js';
import { openSource, nodeFs, nodePath, bounded } from '../sources.js';
import { headerLength } from './header.js';

/** A lazy source's description (hub/folder.js DESCRIBE) and its opener (sources.js). */
const DESCRIBE = Symbol.for('attnwasm.describe');
const OPEN = Symbol.for('attnwasm.open');
/** Bytes a URL is first asked for: a header of a few thousand tensors fits; a longer one takes a second range. */
const FIRST_RANGE = 64 * 1024;

/**
 * The first 8 + N bytes of the weight file `source` (named `name` in messages): { head (fewer bytes only when
 * the file is shorter; its header then fails its check), size (the file's bytes when sure, else null: a
 * download's length is the server's word, checked by the loader when it reads the data), bytes (its size as
 * best known, for the listing: the server's word too; null when not said) }. A header length the first 8 bytes
 * make impossible is refused here (header.js headerLength). io: { signal, readTimeoutMs } (0: no bound).
 * @returns {Promise<{head: Uint8Array, size: number|null, bytes: number|null}>}
 */
export async function readHead(source, name, io) {
  if (io.signal?.aborted) throw io.signal.reason;
  if (source !== null && typeof source === 'object' && source[DESCRIBE]) {
    const d = source[DESCRIBE];
    const cached = await d.cached();
    const r = await readHead(cached ?? d.url, name, io);
    return { ...r, bytes: r.bytes ?? d.size };
  }
  if (source !== null && typeof source === 'object' && typeof source[OPEN] === 'function') return readHead(await source[OPEN](), name, io);
  if (typeof source === 'string' || source instanceof URL) {
    const s = String(source);
    // A single file is named in a read's message by its path (sources.js openSource names it so too).
    if (isNode && !/^(https?|blob|data):/i.test(s)) return fileHead(await nodePath(s), name === 'source' ? `'${s}'` : name);
    return /^https?:/i.test(s) ? urlHead(s, name, io) : streamHead(await openSource(s, name, io), io);
  }
  if (typeof Blob === 'function' && source instanceof Blob) {
    const first = new Uint8Array(await source.slice(0, 8).arrayBuffer());
    const n = headerLength(first, source.size);
    return { head: new Uint8Array(await source.slice(0, 8 + n).arrayBuffer()), size: source.size, bytes: source.size };
  }
  const bytes = source instanceof ArrayBuffer ? new Uint8Array(source)
    : ArrayBuffer.isView(source) ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength) : null;
  if (bytes) {
    const n = headerLength(bytes.subarray(0, 8), bytes.byteLength);
    return { head: bytes.subarray(0, 8 + n), size: bytes.byteLength, bytes: bytes.byteLength };
  }
  return streamHead(await openSource(source, name, io), io);  // a Response, a ReadableStream (else its TypeError)
}

/** A Node file's header, read at its offsets (never the file: it may be over 2 GiB). */
async function fileHead(path, name) {
  const fs = await nodeFs();
  let fh;
  try {
    fh = await fs.open(path, 'r');
  } catch (e) {
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `source: ${name}: cannot read '${path}': ${e.message}`, { cause: e });
  }
  try {
    const { size } = await fh.stat();
    const first = await readAt(fh, Math.min(8, size), 0);
    const n = headerLength(first, size);
    const head = new Uint8Array(8 + n);
    head.set(first);
    head.set(await readAt(fh, n, 8), 8);
    return { head, size, bytes: size };
  } finally {
    await fh.close();
  }
}

/** n bytes of a Node file handle from `position` (fewer at its end). */
async function readAt(fh, n, position) {
  const out = new Uint8Array(n);
  let at = 0;
  while (at < n) {
    const { bytesRead } = await fh.read(out, at, n - at, position + at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return at === n ? out : out.subarray(0, at);
}

/** The first 8 + N bytes of an opened ByteSource (sources.js), which is then closed (a stream: cancelled). */
async function streamHead(src, io) {
  try {
    const first = await src.read(8);
    const n = headerLength(first, src.exact ? src.size : null);
    const rest = await src.read(n);
    const head = new Uint8Array(first.byteLength + rest.byteLength);
    head.set(first);
    head.set(rest, first.byteLength);
    return { head, size: src.exact ? src.size : null, bytes: src.size };
  } finally {
    await src.close();
    if (io.signal?.aborted) throw io.signal.reason;  // eslint-disable-line no-unsafe-finally
  }
}

/** fetch(url, init), bounded by the signal and the read timeout, a failure named as the loader names it. */
async function fetchBounded(url, init, name, io) {
  try {
    return await bounded(fetch(url, { ...init, ...(io.signal ? { signal: io.signal } : {}) }), io.signal, io.readTimeoutMs,
      () => new AttnWasmError('ERR_TIMEOUT', `source: ${name}: '${url}' did not answer within ${io.readTimeoutMs / 1000} s (the readTimeoutMs option sets the wait)`));
  } catch (e) {
    if (e?.code === 'ERR_TIMEOUT' || (io.signal?.aborted && e === io.signal.reason)) throw e;
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `source: ${name}: cannot fetch '${url}': ${e.message}`, { cause: e });
  }
}

const httpError = (res, url, name) => new AttnWasmError('ERR_INVALID_ARGUMENT', `source: ${name}: fetching '${url}' gave HTTP ${res.status}`, { url, status: res.status });

/** The total of a Content-Range ('bytes 0-65535/2471000000'), or null. */
const rangeTotal = (v) => {
  const m = /\/(\d+)\s*$/.exec(v ?? '');
  return m ? Number(m[1]) : null;
};

/** The body of a ranged answer (a few KB), bounded by the read timeout. */
const body = async (res, io) => new Uint8Array(await bounded(res.arrayBuffer(), io.signal, io.readTimeoutMs, () => new AttnWasmError('ERR_TIMEOUT', 'a ranged read stalled')));

/**
 * A URL's header: a Range request of its first FIRST_RANGE bytes (and one more for a longer header). A server
 * that answers 200 to it sends the file: its body is read as far as the header and cancelled.
 */
async function urlHead(url, name, io) {
  let res;
  try {
    res = await fetchBounded(url, { headers: { Range: `bytes=0-${FIRST_RANGE - 1}` } }, name, io);
  } catch (e) {
    // A cross-origin server that refuses the Range header's preflight: ask without it.
    if (e?.code !== 'ERR_INVALID_ARGUMENT' || !(e.cause instanceof TypeError)) throw e;
    res = await fetchBounded(url, {}, name, io);
  }
  if (res.status === 416) return { head: new Uint8Array(0), size: null, bytes: rangeTotal(res.headers.get('content-range')) ?? 0 };
  if (!res.ok) throw httpError(res, url, name);
  if (res.status !== 206) return streamHead(await openSource(res, name, io), io);
  const total = rangeTotal(res.headers.get('content-range'));
  let head = await body(res, io);
  const n = headerLength(head.subarray(0, 8), null);
  if (8 + n > head.byteLength && head.byteLength === FIRST_RANGE) {
    const more = await fetchBounded(url, { headers: { Range: `bytes=${FIRST_RANGE}-${8 + n - 1}` } }, name, io);
    if (more.status !== 206) {
      await more.body?.cancel().catch(() => {});
      throw new AttnWasmError('ERR_INVALID_ARGUMENT', `source: ${name}: '${url}' answered a byte range with HTTP ${more.status}`, { url, status: more.status });
    }
    const rest = await body(more, io);
    const all = new Uint8Array(head.byteLength + rest.byteLength);
    all.set(head);
    all.set(rest, head.byteLength);
    head = all;
  }
  return { head: head.subarray(0, 8 + n), size: null, bytes: total };
}
