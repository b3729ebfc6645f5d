#!/usr/bin/env node
// Static server for the browser demos (npm run demo), with no dependencies.
//
// Serves only the repository's web/, bindings/, dist/ and models/ folders on
// 127.0.0.1, and the packages the tokenizer, chat templates, image decoders and
// FLAC decoder import (node_modules/@huggingface/jinja and @huggingface/tokenizers,
// fflate, @jsquash/jpeg, @wasm-audio-decoders/flac and its own); everything
// else is 404. Every response carries COOP/COEP/CORP headers so pages are
// cross-origin isolated (SharedArrayBuffer, threads). A worker has no import
// map, so the package's bare imports of those ('@huggingface/jinja') are
// rewritten to their paths in the bindings/ files (and the FLAC decoder's) served (what a bundler or
// a CDN's ESM build does for a page). It is a development server, not a
// production one: no caching, no gzip, no ranges.
//
//   node tools/serve.mjs [--port N]      (or PORT=N; default 8080; 0 = any free port)
//
// Tests import startServer({ port }) → Promise<{ url, port, close }>.

import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { readFile, stat, realpath } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Top-level folders the server exposes; nothing outside them is reachable. */
const SERVED = ['web', 'bindings', 'dist', 'models', 'node_modules'];
/** The packages of node_modules/ served: the dependencies bindings/ imports by bare name, and their entries. */
const PACKAGES = {
  '@huggingface/jinja': '/node_modules/@huggingface/jinja/dist/index.js',
  '@huggingface/tokenizers': '/node_modules/@huggingface/tokenizers/dist/tokenizers.mjs',
  // attnwasm/image's decoders, which the worker runs on the open page's images: PNG's inflate, and the JPEG
  // decoder (imported by its subpath, '@jsquash/jpeg/codec/dec/mozjpeg_dec.js', which fetches its .wasm beside it).
  fflate: '/node_modules/fflate/esm/browser.js',
  '@jsquash/jpeg': '/node_modules/@jsquash/jpeg/index.js',
  // attnwasm/audio's FLAC decoder, which the worker runs on the open page's FLAC files, and its own bare imports
  // (rewritten in its files too); @eshaz/web-worker's browser entry is the global Worker.
  '@wasm-audio-decoders/flac': '/node_modules/@wasm-audio-decoders/flac/index.js',
  '@wasm-audio-decoders/common': '/node_modules/@wasm-audio-decoders/common/index.js',
  'codec-parser': '/node_modules/codec-parser/index.js',
  'simple-yenc': '/node_modules/simple-yenc/dist/esm.js',
  '@eshaz/web-worker': '/node_modules/@eshaz/web-worker/browser.js',
};
/** The served files whose bare imports of PACKAGES are rewritten: bindings/, and the FLAC decoder's packages. */
const REWRITTEN = /^\/(bindings\/|node_modules\/(@wasm-audio-decoders\/|codec-parser\/))/;
/**
 * A bare import of one of PACKAGES in a served bindings/ file: 'name' or "name" after from / import(, or a path in
 * it ('name/sub/file.js').
 */
const BARE = new RegExp(`(\\bfrom\\s*|\\bimport\\s*\\(\\s*)(['"])(${Object.keys(PACKAGES).map((k) => k.replace(/[/.]/g, '\\$&')).join('|')})(/[^'"]+)?\\2`, 'g');

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.safetensors': 'application/octet-stream',
};

const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-cache',
};

function send(res, status, body, headers = {}) {
  const buf = Buffer.from(body, 'utf8');
  res.writeHead(status, {
    ...ISOLATION_HEADERS,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': buf.byteLength,
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : buf);
}

function redirect(res, location) {
  send(res, 302, `see ${location}\n`, { Location: location });
}

/** True if `p` is `dir` or inside it (both absolute, resolved). */
function inside(p, dir) {
  return p === dir || p.startsWith(dir + sep);
}

/**
 * Maps a URL path to a file under one of SERVED, or null. Rejects encoded
 * slashes/backslashes/NULs and anything that resolves (also through
 * symlinks) outside the served folder.
 */
async function resolveFile(root, urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const parts = decoded.split('/').filter(Boolean);
  if (parts.length === 0 || !SERVED.includes(parts[0])) return null;
  if (parts[0] === 'node_modules' && !Object.keys(PACKAGES).includes(parts.slice(1, parts[1]?.startsWith('@') ? 3 : 2).join('/'))) return null;
  if (parts.some((p) => p === '..' || p === '.')) return null;
  const base = join(root, parts[0]);
  let file = resolve(root, ...parts);
  if (!inside(file, base)) return null;
  let st;
  try {
    file = await realpath(file);
    if (!inside(file, await realpath(base))) return null;
    st = await stat(file);
  } catch {
    return null;
  }
  if (st.isDirectory()) {
    if (!urlPath.endsWith('/')) return { redirect: `${urlPath}/` };
    file = join(file, 'index.html');
    try {
      st = await stat(file);
    } catch {
      return null;
    }
  }
  return st.isFile() ? { file, size: st.size } : null;
}

/** A file of a mounted folder ({ '/prefix/': dir }), or null. */
async function resolveMounted(mounts, urlPath) {
  for (const [prefix, dir] of Object.entries(mounts)) {
    if (!urlPath.startsWith(prefix)) continue;
    let rest;
    try {
      rest = decodeURIComponent(urlPath.slice(prefix.length));
    } catch {
      return null;
    }
    if (rest.includes('\0') || rest.includes('\\') || rest.split('/').some((p) => p === '..' || p === '.')) return null;
    const base = resolve(dir);
    const file = resolve(base, ...rest.split('/').filter(Boolean));
    if (!inside(file, base)) return null;
    try {
      const st = await stat(file);
      return st.isFile() ? { file, size: st.size } : null;
    } catch {
      return null;
    }
  }
  return null;
}

async function handle(root, req, res, { isolated, mounts }) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'method not allowed\n', { Allow: 'GET, HEAD' });
    return;
  }
  const url = new URL(req.url, 'http://localhost');
  if (url.pathname === '/') {
    redirect(res, '/web/');
    return;
  }
  const found = (await resolveMounted(mounts, url.pathname)) ?? (await resolveFile(root, url.pathname));
  const headers = isolated ? ISOLATION_HEADERS : { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-cache' };
  if (!found) {
    send(res, 404, 'not found\n', headers === ISOLATION_HEADERS ? {} : { 'Cross-Origin-Opener-Policy': 'unsafe-none', 'Cross-Origin-Embedder-Policy': 'unsafe-none' });
    return;
  }
  if (found.redirect) {
    redirect(res, found.redirect + url.search);
    return;
  }
  const type = MIME[extname(found.file).toLowerCase()] ?? 'application/octet-stream';
  if (REWRITTEN.test(url.pathname) && extname(found.file) === '.js') {
    const text = (await readFile(found.file, 'utf8')).replace(BARE, (_, lead, q, name, sub) => `${lead}${q}${sub ? `/node_modules/${name}${sub}` : PACKAGES[name]}${q}`);
    const body = Buffer.from(text, 'utf8');
    res.writeHead(200, { ...headers, 'Content-Type': type, 'Content-Length': body.byteLength });
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  res.writeHead(200, {
    ...headers,
    'Content-Type': type,
    'Content-Length': found.size,
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(found.file);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/**
 * Starts the server on 127.0.0.1.
 * @param {{port?: number, root?: string, isolated?: boolean, mounts?: Record<string, string>}} [options] port 0
 *   (the default here) picks a free port; root is the folder holding web/, bindings/, dist/, models/ (default:
 *   this repository); isolated: false leaves out COOP/COEP (tests of a page that is not cross-origin
 *   isolated); mounts serves other folders under URL prefixes ({ '/ckpt/': '/tmp/model' }: tests' checkpoints)
 * @returns {Promise<{url: string, port: number, close: () => Promise<void>}>}
 *   The caller owns the server and must close() it.
 */
export function startServer({ port = 0, root = ROOT, isolated = true, mounts = {} } = {}) {
  const server = createServer((req, res) => {
    handle(root, req, res, { isolated, mounts }).catch(() => {
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    });
  });
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const actual = server.address().port;
      resolvePromise({
        url: `http://127.0.0.1:${actual}/`,
        port: actual,
        close: () => new Promise((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
      });
    });
  });
}

function parsePort(argv, env) {
  const i = argv.indexOf('--port');
  const raw = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith('--port='))?.slice(7) ?? env.PORT ?? '8080';
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`--port: expected an integer in [0, 65535], got ${JSON.stringify(raw)}`);
  }
  return port;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let port;
  try {
    port = parsePort(process.argv.slice(2), process.env);
  } catch (e) {
    console.error(`serve: ${e.message}`);
    process.exit(2);
  }
  startServer({ port }).then(
    ({ url }) => console.log(`attnwasm demo: ${url}`),
    (e) => {
      console.error(`serve: cannot listen on 127.0.0.1:${port}: ${e.message}`);
      process.exit(1);
    },
  );
}
