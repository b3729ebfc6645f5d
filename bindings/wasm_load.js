// Loading a build's .wasm: read it (a file: URL in Node) or fetch it, check
// the WebAssembly magic number, compile it, and start an Emscripten glue with
// the compiled module through the glue's instantiateWasm hook. Every failure
// is described (where, HTTP status, what the bytes were) so that init() can
// throw an AttnWasmError ERR_WASM_LOAD that says how to fix it; no Emscripten
// abort message reaches the user. Not here: which URLs to try (the entries,
// index.js and inline.js) and the fix sentences (loader.js, which knows
// where a URL came from).
//
// Streaming compilation stays where Emscripten's own loader used it: a
// response served as application/wasm compiles while it downloads
// (WebAssembly.compileStreaming); anything else is read, checked, compiled.

import { isNode } from './checks.js';

const MAGIC = [0x00, 0x61, 0x73, 0x6d]; // "\0asm"
// Held in a variable so bundlers do not resolve a Node built-in for the browser.
const NODE_FS = 'node:fs/promises';

/**
 * Why one place did not give a usable module: `where` (a URL, or a phrase
 * such as 'init({ wasmBinary })'), `problem` (a short phrase for messages),
 * the HTTP `status` if there was one, and `kind`: 'missing' (no file: a
 * network error, an HTTP error, no such file), 'not-wasm' (bytes that are not
 * WebAssembly), 'no-simd' (this engine cannot run SIMD128), 'damaged' (does
 * not compile), 'mismatch' (compiles, but is not this glue's build).
 */
export class WasmLoadFailure extends Error {
  constructor(where, kind, problem, { status, cause } = {}) {
    super(`${where}: ${problem}`, cause === undefined ? undefined : { cause });
    this.where = where;
    this.kind = kind;
    this.problem = problem;
    this.status = status;
  }
}

/** A URL for messages: data: URLs (a bundler's inlined asset) are cut short. */
export function showUrl(url) {
  const s = String(url);
  return s.startsWith('data:') ? `${s.slice(0, s.indexOf(',') + 1)}… (${s.length} characters)` : s;
}

const messageOf = (e) => (e && e.message ? e.message : String(e));

/**
 * What the first bytes of a non-wasm file were: text (an HTML page, a JSON
 * error) or hex. `noun`: 'the body', 'the file' or 'the bytes'.
 */
function describeStart(bytes, noun) {
  if (bytes.length === 0) return `${noun} ${noun === 'the bytes' ? 'are' : 'is'} empty`;
  const starts = `${noun} ${noun === 'the bytes' ? 'start' : 'starts'} with`;
  const head = bytes.subarray(0, 64);
  if (head.every((b) => b === 9 || b === 10 || b === 13 || (b >= 32 && b < 127))) {
    const text = String.fromCharCode(...head).replace(/\s+/g, ' ').trim();
    return `${starts} "${text.slice(0, 40)}${text.length > 40 || bytes.length > 64 ? '…' : ''}"`;
  }
  return `${starts} ${Array.from(bytes.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ')}`;
}

// (module (func (result v128) (v128.const i32x4 0 0 0 0))) — validates only with SIMD128.
export const SIMD_SUPPORTED = WebAssembly.validate(new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 22, 1, 20, 0,
  253, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11,
]));

// (module (func (param v128) (result v128) local.get 0 local.get 0 local.get 0 f32x4.relaxed_madd))
// — validates only where the engine runs relaxed SIMD (Chromium ≥ 114, Firefox ≥ 146;
// Node 20 with --experimental-wasm-relaxed-simd; not Safari). init() then loads
// the relaxed-SIMD build (index.js, attnwasm_core_rs / attnwasm_core_mt_rs).
export const RELAXED_SIMD_SUPPORTED = WebAssembly.validate(new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0,
  32, 0, 32, 0, 32, 0, 253, 133, 2, 11,
]));

function compileFailure(where, e) {
  if (!SIMD_SUPPORTED) {
    return new WasmLoadFailure(where, 'no-simd', 'this JavaScript engine has no WebAssembly SIMD128, which attnwasm needs', { cause: e });
  }
  return new WasmLoadFailure(where, 'damaged', `the module does not compile (${messageOf(e)})`, { cause: e });
}

/**
 * Checks the magic number, then compiles. `noun` names the bytes in messages
 * ('the body', 'the file'); `served` describes the response.
 */
async function compileBytes(bytes, where, noun, served = '') {
  if (bytes.length < 8 || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new WasmLoadFailure(where, 'not-wasm',
      `${served}not WebAssembly: ${describeStart(bytes, noun)} where a .wasm starts with \\0asm`);
  }
  try {
    return await WebAssembly.compile(bytes);
  } catch (e) {
    throw compileFailure(where, e);
  }
}

async function fetchModule(url, where, streaming) {
  let res;
  try {
    res = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    throw new WasmLoadFailure(where, 'missing', `the request failed (${messageOf(e)})`, { cause: e });
  }
  if (!res.ok) {
    throw new WasmLoadFailure(where, 'missing', `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`, { status: res.status });
  }
  const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (streaming && type === 'application/wasm' && typeof WebAssembly.compileStreaming === 'function') {
    try {
      return await WebAssembly.compileStreaming(res);
    } catch {
      // The streamed body is used up: fetch again to say what the bytes were.
      return fetchModule(url, where, false);
    }
  }
  let bytes;
  try {
    bytes = new Uint8Array(await res.arrayBuffer());
  } catch (e) {
    throw new WasmLoadFailure(where, 'missing', `the download broke off (${messageOf(e)})`, { cause: e });
  }
  return compileBytes(bytes, where, 'the body', `the server answered ${res.status} with ${type || 'no Content-Type'}, `);
}

async function readModule(path, where) {
  const { readFile } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_FS);
  let bytes;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (e) {
    throw new WasmLoadFailure(where, 'missing', e.code === 'ENOENT' ? 'no such file' : messageOf(e), { cause: e });
  }
  return compileBytes(bytes, where, 'the file');
}

/**
 * Where a source's bytes come from: { bytes } as given, a file (Node: a
 * file: URL, or a string without a scheme, which is a path), or a URL to
 * fetch; `where` names it in messages (absolute URL, path, or source.where).
 */
function resolveSource(source) {
  if (source.bytes) return { how: 'bytes', where: source.where };
  const s = String(source.url);
  if (isNode && !(source.url instanceof URL) && !/^[a-z][a-z0-9+.-]*:/i.test(s)) return { how: 'file', target: s, where: s };
  let url;
  try {
    url = new URL(s, globalThis.location?.href);
  } catch (e) {
    return { how: 'invalid', where: showUrl(s), cause: e };
  }
  return { how: isNode && url.protocol === 'file:' ? 'file' : 'fetch', target: url, where: showUrl(url) };
}

/**
 * Compiles a .wasm from `source`: { url } (fetched; read from disk for file:
 * URLs and paths in Node) or { bytes, where }. Resolves to
 * { module: WebAssembly.Module, where }; rejects with a WasmLoadFailure.
 */
export async function compileWasm(source) {
  const r = resolveSource(source);
  let module;
  if (r.how === 'bytes') module = await compileBytes(source.bytes, r.where, 'the bytes');
  else if (r.how === 'file') module = await readModule(r.target, r.where);
  else if (r.how === 'fetch') module = await fetchModule(r.target, r.where, true);
  else throw new WasmLoadFailure(r.where, 'missing', 'not a valid URL', { cause: r.cause });
  return { module, where: r.where };
}

/**
 * Compiles the first source of `sources` that gives a module. Resolves to
 * { module, where, index }; rejects with an Error whose `failures` lists
 * every attempt (WasmLoadFailure), in order.
 */
export async function compileFirst(sources) {
  const failures = [];
  for (let i = 0; i < sources.length; i++) {
    try {
      return { ...(await compileWasm(sources[i])), index: i };
    } catch (e) {
      if (!(e instanceof WasmLoadFailure)) throw e;
      failures.push(e);
    }
  }
  throw Object.assign(new Error(failures.map((f) => f.message).join('; ')), { failures });
}

/**
 * Runs an Emscripten glue factory (MODULARIZE) with `moduleArg` and an
 * already compiled module, which the glue's instantiateWasm hook
 * instantiates. Resolves to the glue's Module; rejects with a
 * WasmLoadFailure ('mismatch') when the module does not link with this glue
 * (another build or version). The factory runs synchronously inside this
 * call (the pthreads glue creates its pool workers there).
 */
export function startGlue(factory, moduleArg, wasmModule, where) {
  return new Promise((resolve, reject) => {
    moduleArg.instantiateWasm = (imports, receiveInstance) => {
      // A pthreads glue hands the module a shared memory; a single-thread
      // .wasm has its own. The other imports of the two builds of one
      // toolchain can line up (a relaxed single-thread .wasm links with the
      // relaxed pthreads glue, then fails inside embind), so check this first.
      const glueMemory = Object.values(imports).some((o) => Object.values(o).some((v) => v instanceof WebAssembly.Memory));
      const wasmMemory = WebAssembly.Module.imports(wasmModule).some((i) => i.kind === 'memory');
      if (glueMemory !== wasmMemory) {
        reject(new WasmLoadFailure(where, 'mismatch', 'it is WebAssembly, but of another build or attnwasm version '
          + `(${wasmMemory ? "it imports a memory: a pthreads build's .wasm" : "it has its own memory: a single-thread build's .wasm"})`));
        return {};
      }
      WebAssembly.instantiate(wasmModule, imports).then(
        (instance) => receiveInstance(instance, wasmModule),
        (e) => reject(new WasmLoadFailure(where, 'mismatch',
          `it is WebAssembly, but of another build or attnwasm version (${messageOf(e)})`, { cause: e })),
      );
      return {}; // the exports arrive through receiveInstance
    };
    factory(moduleArg).then(resolve, reject);
  });
}
