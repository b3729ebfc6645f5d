// A small static server on 127.0.0.1 for the browser tests: files under
// `root` with the right MIME types (.wasm as application/wasm), optional
// COOP/COEP headers (a cross-origin-isolated page), and `routes` that answer
// exact paths with a file, a fixed response, or a handler. Records every
// requested path.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

export const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.map': 'application/json',
  '.safetensors': 'application/octet-stream',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.gif': 'image/gif',
};

export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * Starts a server. `routes` maps an exact path to a file path (string), to
 * { status, type, body, headers } or to a handler (req, res, headers) =>
 * void. Paths outside `root` (or outside `allow`, a list of its top-level
 * folders, when given) are 403. Resolves to { url (ending in /), requests,
 * close() }.
 */
export async function startStatic({ root, allow = null, isolated = false, routes = {} }) {
  const requests = [];
  const base = isolated ? { ...ISOLATION_HEADERS } : {};
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(path);
    const route = routes[path];
    if (typeof route === 'function') return route(req, res, base);
    if (route && typeof route === 'object') {
      res.writeHead(route.status ?? 200, { ...base, 'Content-Type': route.type ?? 'text/plain', ...route.headers });
      return res.end(route.body);
    }
    const file = route ?? normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
    const inside = file.startsWith(root + sep) && (!allow || allow.some((d) => file.startsWith(join(root, d) + sep)));
    if (!route && !inside) {
      res.writeHead(403, base).end();
      return undefined;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { ...base, 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404, { ...base, 'Content-Type': 'text/plain' }).end('not found');
    }
    return undefined;
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    requests,
    close() {
      server.closeAllConnections?.();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}
