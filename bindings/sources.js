// Where a model's bytes come from, read in pieces: a Node path, a URL (fetch), a Response, a Blob or File,
// a ReadableStream, or bytes. Every source becomes a ByteSource: read(n) for the first bytes (a header), then
// chunks() for the rest, so a file of any size (a 2.5 GB checkpoint: Node's readFile refuses files over
// 2 GiB) passes through without ever being whole in memory. Checkpoint folders (a path, a base URL, or a
// map of names to sources, as a page gets from a folder picker) are resolved by checkpoint.js.
// Every read ends: it settles, or an AbortSignal ends it (its reason is thrown), or no bytes arrive for
// `readTimeoutMs` (ERR_TIMEOUT naming the source and the bytes read so far).
import { AttnWasmError, typeError, describe } from './errors.js';
import { isNode } from './checks.js';

// Held in a variable so bundlers do not resolve a Node built-in for the browser.
const NODE_FS = 'node:fs/promises';
const NODE_URL = 'node:url';
const CHUNK = 8 << 20;  // bytes read from a file at a time
const BYOB_CHUNK = 4 << 20;  // the most bytes one read of a byte stream gives
/** How long a read may wait for its next bytes by default before it fails with ERR_TIMEOUT. */
export const READ_TIMEOUT_MS = 60000;

// A download's own codes (hub/: the network failed, the bytes are not the hub's) survive the wrapping.
const KEPT_CODES = ['ERR_NETWORK', 'ERR_INTEGRITY'];
const sourceError = (name, message, cause) => new AttnWasmError(KEPT_CODES.includes(cause?.code) ? cause.code : 'ERR_INVALID_ARGUMENT',
  `source: ${name}: ${message}`, cause ? { cause } : {});

/** A Node fs module, or null outside Node. */
export async function nodeFs() {
  return isNode ? import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS) : null;
}

/** A Node path: `s` itself, or a file: URL's path (percent-decoded: a folder 'my model' is 'my%20model' in its URL). */
export async function nodePath(s) {
  if (!/^file:/i.test(s)) return s;
  const { fileURLToPath } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_URL);
  return fileURLToPath(s);
}

/** The method of a source that opens it lazily: `{ [OPEN]: async () => source }`. */
const OPEN = Symbol.for('attnwasm.open');

const isRemote = (s) => /^(https?|blob|data):/i.test(s);

/**
 * Bytes read in order from an async iterator of Uint8Array chunks, with what a caller took with read() kept
 * out of chunks().
 */
class ByteSource {
  constructor(name, size, iterator, close = async () => {}, { exact = true, signal = null, readTimeoutMs = READ_TIMEOUT_MS } = {}) {
    /** The source's name in messages. */
    this.name = name;
    /** Its size in bytes, or null when a stream does not say. */
    this.size = size;
    /** Whether `size` is surely the bytes it gives (not so a Response's Content-Length: the server's word). */
    this.exact = exact && size !== null;
    this._it = iterator;
    this._pending = [];   // chunks read ahead
    this._close = close;
    this._signal = signal;
    this._timeout = readTimeoutMs;
    this.loaded = 0;      // bytes handed out
  }

  async _next() {
    if (this._pending.length) return this._pending.shift();
    let r;
    try {
      r = await bounded(this._it.next(), this._signal, this._timeout,
        () => new AttnWasmError('ERR_TIMEOUT', `source: ${this.name}: no bytes arrived for ${this._timeout / 1000} s after ${this.loaded} bytes (a stalled read; the readTimeoutMs option sets the wait)`));
    } catch (e) {
      if (e?.code === 'ERR_TIMEOUT' || (this._signal?.aborted && e === this._signal.reason)) throw e;
      throw sourceError(this.name, `reading failed after ${this.loaded} bytes: ${e?.message ?? e}`, e);
    }
    return r.done ? null : r.value;
  }

  /** The next n bytes (fewer only at the end). */
  async read(n) {
    const out = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const c = await this._next();
      if (!c) break;
      const take = Math.min(c.byteLength, n - at);
      out.set(c.subarray(0, take), at);
      if (take < c.byteLength) this._pending.unshift(c.subarray(take));
      at += take;
    }
    this.loaded += at;
    return at === n ? out : out.subarray(0, at);
  }

  /** The rest of the bytes, in chunks. */
  async *chunks() {
    for (;;) {
      const c = await this._next();
      if (!c) return;
      this.loaded += c.byteLength;
      yield c;
    }
  }

  /** Ends the source: what was not read is cancelled (a stream) or closed (a file). Idempotent. */
  async close() {
    const close = this._close;
    this._close = async () => {};
    await this._it.return?.();
    await close();
  }
}

/**
 * `promise`, or the signal's reason once it aborts, or `onTimeout()` once `ms` pass first (0: no bound). The
 * promise left behind is the caller's to end (ByteSource.close cancels the stream it reads).
 */
export function bounded(promise, signal, ms, onTimeout) {
  if (!signal && !ms) return promise;
  return new Promise((resolve, reject) => {
    let timer = null;
    const onAbort = () => { done(); reject(signal.reason); };
    const done = () => { clearTimeout(timer); signal?.removeEventListener('abort', onAbort); };
    if (signal?.aborted) { onAbort(); return; }
    signal?.addEventListener('abort', onAbort, { once: true });
    if (ms) timer = setTimeout(() => { done(); reject(onTimeout()); }, ms);
    promise.then((v) => { done(); resolve(v); }, (e) => { done(); reject(e); });
  });
}

/**
 * Streams with a read in flight. Chromium does not keep a Blob.stream()'s pending BYOB read alive: when the
 * stream, its reader and the code awaiting the read are reachable only from one another, a garbage collection
 * drops them and the read never settles (a picked file's load hung in 7-17 % of real-size loads; with a
 * collection forced every 2 ms in a worker, 8 reads of 8 hung, 0 of 8 with the stream held here, 0 of 8 with
 * the default reader: docs/reliability.md, "Reads that never settled"). So every stream is held here, from
 * the global scope, while one of its reads is pending.
 */
const reading = new Set();

/**
 * The chunks of a ReadableStream, locked from now on. return() (ByteSource.close, also after a failed load)
 * cancels what was not read — a fetch's connection, a file being read — and releases the lock.
 * A byte stream (a fetch body, Blob.stream()) is read with a BYOB reader into two buffers used in turn: a chunk
 * stays valid until the one after the next is asked for (model_loading.js reads one ahead; ByteSource.read
 * copies). The default reader's fresh buffer per chunk left a 0.5B checkpoint's load with 270 MiB of chunks
 * waiting for the garbage collector (1.67× the weights at the peak, 1.23× with the buffers reused).
 */
function streamChunks(stream) {
  let reader, buffers = null, turn = 0;
  try {
    reader = stream.getReader({ mode: 'byob' });
    buffers = [new ArrayBuffer(BYOB_CHUNK), new ArrayBuffer(BYOB_CHUNK)];
  } catch {
    reader = stream.getReader();  // not a byte stream
  }
  let open = true;
  const end = async (cancel) => {
    if (!open) return;
    open = false;
    if (cancel) await reader.cancel().catch(() => {});
    reader.releaseLock();
  };
  return {
    async next() {
      if (!open) return { done: true, value: undefined };
      let r;
      const held = { stream, reader };
      reading.add(held);
      try {
        r = buffers ? await reader.read(new Uint8Array(buffers[turn])) : await reader.read();
      } catch (e) {
        await end(false);
        throw e;
      } finally {
        reading.delete(held);
      }
      if (buffers && r.value) {  // the buffer comes back (transferred) with the bytes read into it
        buffers[turn] = r.value.buffer;
        turn ^= 1;
      }
      if (r.done) {
        await end(false);
        return { done: true, value: undefined };
      }
      const v = r.value;
      if (v instanceof Uint8Array) return { done: false, value: v };
      if (v instanceof ArrayBuffer) return { done: false, value: new Uint8Array(v) };
      if (ArrayBuffer.isView(v)) return { done: false, value: new Uint8Array(v.buffer, v.byteOffset, v.byteLength) };
      await end(true);
      throw new TypeError(`expected chunks of bytes (Uint8Array, ArrayBuffer), got ${describe(v)}`);
    },
    async return() {
      await end(true);
      return { done: true, value: undefined };
    },
  };
}

async function* bytesChunks(u8) {
  for (let at = 0; at < u8.byteLength; at += CHUNK) yield u8.subarray(at, Math.min(u8.byteLength, at + CHUNK));
}

/** A ByteSource over a Node file, read CHUNK bytes at a time. */
async function nodeFile(path, name, io) {
  const fs = await nodeFs();
  let fh;
  try {
    fh = await fs.open(path, 'r');
  } catch (e) {
    throw sourceError(name, `cannot read '${path}': ${e.message}`, e);
  }
  const { size } = await fh.stat();
  // Two buffers used in turn, as streamChunks reads a byte stream: a chunk stays valid until the one after next.
  const buffers = [new Uint8Array(Math.min(CHUNK, size)), new Uint8Array(Math.min(CHUNK, size))];
  async function* chunks() {
    for (let at = 0, turn = 0; at < size; turn ^= 1) {
      const { bytesRead, buffer } = await fh.read({ buffer: buffers[turn], offset: 0, length: Math.min(CHUNK, size - at), position: at });
      if (bytesRead === 0) break;
      at += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  }
  return new ByteSource(name, size, chunks(), () => fh.close(), io);
}

async function fetched(url, name, io) {
  let res;
  try {
    // The signal ends the connection too; the wait for the response's head is bounded like a read.
    res = await bounded(fetch(url, io.signal ? { signal: io.signal } : undefined), io.signal, io.readTimeoutMs ?? READ_TIMEOUT_MS,
      () => new AttnWasmError('ERR_TIMEOUT', `source: ${name}: '${url}' did not answer within ${(io.readTimeoutMs ?? READ_TIMEOUT_MS) / 1000} s (the readTimeoutMs option sets the wait)`));
  } catch (e) {
    if (e?.code === 'ERR_TIMEOUT' || (io.signal?.aborted && e === io.signal.reason)) throw e;
    throw sourceError(name, `cannot fetch '${url}': ${e.message}`, e);
  }
  return fromResponse(res, name, url, io);
}

function fromResponse(res, name, url = res.url, io = {}) {
  if (!res.ok) {
    const what = url ? `fetching '${url}' gave` : 'the Response has';  // a Response made in JS has no URL
    throw new AttnWasmError('ERR_INVALID_ARGUMENT', `source: ${name}: ${what} HTTP ${res.status}`, { url: url || undefined, status: res.status });
  }
  // Content-Length counts the bytes as sent: compressed (Content-Encoding gzip, br) they are not the file's,
  // and a cross-origin response may hide its encoding; so it only sizes the progress, and the loader checks
  // the file against its header as it does a stream's.
  const encoding = (res.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  const size = encoding === 'identity' ? Number(res.headers.get('content-length')) || null : null;
  const body = res.body ?? null;
  if (body && body.getReader) return new ByteSource(name, size, streamChunks(body), undefined, { ...io, exact: false });
  return new ByteSource(name, size, (async function* () { yield new Uint8Array(await res.arrayBuffer()); })(), undefined, { ...io, exact: false });
}

/**
 * Opens a source of one file's bytes. `name` names it in messages (a shard's file name, or 'source'). `io`:
 * { signal, readTimeoutMs } for every read (module header).
 * @param {string|URL|Uint8Array|ArrayBuffer|Blob|Response|ReadableStream} source
 * @param {string} [name] @param {{signal?: AbortSignal|null, readTimeoutMs?: number}} [io]
 * @returns {Promise<ByteSource>}
 */
export async function openSource(source, name = 'source', io = {}) {
  if (io.signal?.aborted) throw io.signal.reason;
  // A source opened only when read (a hub file: hub/folder.js), under a registered symbol so that nothing imports it.
  if (source !== null && typeof source === 'object' && typeof source[OPEN] === 'function') return openSource(await source[OPEN](), name, io);
  if (source instanceof Uint8Array) return new ByteSource(name, source.byteLength, bytesChunks(source), undefined, io);
  if (source instanceof ArrayBuffer) return new ByteSource(name, source.byteLength, bytesChunks(new Uint8Array(source)), undefined, io);
  if (ArrayBuffer.isView(source)) {
    return new ByteSource(name, source.byteLength, bytesChunks(new Uint8Array(source.buffer, source.byteOffset, source.byteLength)), undefined, io);
  }
  if (typeof Blob === 'function' && source instanceof Blob) return new ByteSource(name, source.size, streamChunks(source.stream()), undefined, io);
  if (typeof Response === 'function' && source instanceof Response) return fromResponse(source, name, undefined, io);
  if (typeof ReadableStream === 'function' && source instanceof ReadableStream) return new ByteSource(name, null, streamChunks(source), undefined, io);
  if (typeof source === 'string' || source instanceof URL) {
    const s = String(source);
    if (isNode && !isRemote(s)) return nodeFile(s.startsWith('file:') ? new URL(s) : s, name === 'source' ? `'${s}'` : name, io);
    return fetched(s, name, io);
  }
  throw typeError(`source: expected a path or URL, bytes (Uint8Array/ArrayBuffer), a Blob or File, a Response, a ReadableStream, or a checkpoint folder, got ${describe(source)}`);
}

/** The whole text of a small source (config.json, tokenizer.json, an index), or null when `optional` and absent. */
export async function readText(source, name, io = {}) {
  const bytes = await readBytes(source, name, io);
  return bytes === null ? null : new TextDecoder().decode(bytes);
}

/** The whole bytes of a small source (a tokenizer's vocab.txt or sentencepiece model), or null when `optional` and absent. */
export async function readBytes(source, name, { optional = false, ...io } = {}) {
  let src;
  try {
    src = await openSource(source, name, io);
  } catch (e) {
    // Absent: 404 or 410, or 403 as object stores answer for a key that is not there (S3 without list
    // permission); a 403 that is a real refusal shows again on the weights, which are not optional.
    if (optional && ([403, 404, 410].includes(e.status) || /ENOENT/.test(e.message))) return null;
    throw e;
  }
  const parts = [];
  try {
    for await (const c of src.chunks()) parts.push(c.slice());  // a chunk's buffer is used again
  } finally {
    await src.close();
  }
  const n = parts.reduce((a, c) => a + c.byteLength, 0);
  const all = new Uint8Array(n);
  let at = 0;
  for (const c of parts) { all.set(c, at); at += c.byteLength; }
  return all;
}
