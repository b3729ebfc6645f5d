// The hash a downloaded file is checked against, fed as its bytes arrive: an LFS file's sha256, or a small
// file's git blob id (sha1 of "blob <size>\0" + the bytes), as the hub lists them. Node hashes with
// node:crypto; browsers with sha256.js (incremental) and, for git blob ids, Web Crypto's SHA-1 over the
// whole file (the hub keeps files over 10 MB in LFS, so a git blob is small; past GIT_BLOB_MAX only the size
// is checked).
import { isNode } from '../checks.js';
import { Sha256 } from './sha256.js';

// Held in a variable so bundlers do not resolve a Node built-in for the browser.
const NODE_CRYPTO = 'node:crypto';
const GIT_BLOB_MAX = 64 << 20;

/**
 * A hasher for `hash` ({ kind: 'sha256' | 'git-sha1', hex }) of a file of `size` bytes: { update(bytes),
 * hex(): Promise<string|null> } (null: not hashed, the size alone is checked), or null when hash is null.
 */
export async function makeHasher(hash, size) {
  if (!hash) return null;
  if (isNode) {
    const { createHash } = await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_CRYPTO);
    const h = createHash(hash.kind === 'sha256' ? 'sha256' : 'sha1');
    if (hash.kind === 'git-sha1') h.update(`blob ${size}\0`);
    return { update: (b) => { h.update(b); }, hex: async () => h.digest('hex') };
  }
  if (hash.kind === 'sha256') {
    const h = new Sha256();
    return { update: (b) => { h.update(b); }, hex: async () => h.hex() };
  }
  if (size > GIT_BLOB_MAX || !globalThis.crypto?.subtle) return { update: () => {}, hex: async () => null };
  const parts = [new TextEncoder().encode(`blob ${size}\0`)];
  return {
    update: (b) => { parts.push(b.slice()); },
    hex: async () => {
      const all = new Uint8Array(parts.reduce((a, p) => a + p.byteLength, 0));
      let at = 0;
      for (const p of parts) { all.set(p, at); at += p.byteLength; }
      const d = new Uint8Array(await crypto.subtle.digest('SHA-1', all));
      return Array.from(d, (x) => x.toString(16).padStart(2, '0')).join('');
    },
  };
}
