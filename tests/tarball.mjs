// The package as npm publishes it, packed once per change and shared by the
// tests that install it (tests/js/package.test.mjs, tests/browser/*): `npm
// pack` runs only when something the tarball holds has changed since the last
// pack. Cached in build/pack/ under a hash of package.json and every file its
// "files" list names (plus the README, LICENSE and CHANGELOG npm adds).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CACHE = join(ROOT, 'build/pack');

async function listFiles(path) {
  if (!(await stat(path)).isDirectory()) return [path];
  const out = [];
  for (const e of (await readdir(path)).sort()) out.push(...(await listFiles(join(path, e))));
  return out;
}

/** The paths an entry of "files" names: a path, or a glob whose last segment has * ("bindings/*.js"). */
async function expand(entry) {
  if (!entry.includes('*')) return [join(ROOT, entry)];
  const slash = entry.lastIndexOf('/');
  const dir = join(ROOT, entry.slice(0, slash));
  const re = new RegExp(`^${entry.slice(slash + 1).split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^/]*')}$`);
  return existsSync(dir) ? (await readdir(dir)).filter((n) => re.test(n)).sort().map((n) => join(dir, n)) : [];
}

async function contentKey() {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
  const hash = createHash('sha256');
  for (const entry of ['package.json', 'README.md', 'LICENSE', ...pkg.files]) {
    const paths = await expand(entry);
    if (!paths.length || !paths.every((p) => existsSync(p))) {
      throw new Error(`package.json "files" names ${entry}, which does not exist (build first: npm run build)`);
    }
    for (const path of paths) {
      for (const f of await listFiles(path)) hash.update(f.slice(ROOT.length)).update('\0').update(await readFile(f)).update('\0');
    }
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Packs the repository (or reuses the tarball of the same contents). Resolves
 * to { path, files (paths in the tarball), entryCount, size, unpackedSize }.
 */
export async function packedTarball() {
  const key = await contentKey();
  const meta = join(CACHE, `${key}.json`);
  if (existsSync(meta)) {
    const info = JSON.parse(await readFile(meta, 'utf8'));
    if (existsSync(info.path)) return info;
  }
  await mkdir(CACHE, { recursive: true });
  // Pack into a fresh folder, then move into place: concurrent test files never see half a tarball.
  const tmp = await mkdtemp(join(CACHE, 'tmp-'));
  try {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', tmp, '--loglevel=error'], { cwd: ROOT, maxBuffer: 64 << 20 });
    const packed = JSON.parse(stdout)[0];
    const path = join(CACHE, `${key}.tgz`);
    await rename(join(tmp, packed.filename), path);
    const info = {
      path, filename: packed.filename, files: packed.files.map((f) => f.path).sort(),
      entryCount: packed.entryCount, size: packed.size, unpackedSize: packed.unpackedSize,
    };
    await writeFile(`${meta}.tmp`, JSON.stringify(info));
    await rename(`${meta}.tmp`, meta);
    // Only the newest tarball is kept.
    for (const f of await readdir(CACHE)) if (/^[0-9a-f]{16}\.(tgz|json)$/.test(f) && !f.startsWith(key)) await rm(join(CACHE, f), { force: true });
    return info;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
