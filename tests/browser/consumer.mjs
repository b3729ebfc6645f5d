// A consumer project as a user makes one: a fresh folder with a package.json
// and the packed tarball (tests/tarball.mjs) installed by npm. Shared by the
// browser tests that use the package from outside the repository.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packedTarball } from '../tarball.mjs';

const run = promisify(execFile);

/** Runs a command; on failure throws with its output and `what` failed. */
export async function sh(cmd, args, opts, what) {
  try {
    return await run(cmd, args, { maxBuffer: 64 << 20, ...opts });
  } catch (e) {
    throw new Error(`${what} failed (exit ${e.code}): ${cmd} ${args.join(' ')}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/**
 * Makes a consumer project in a new folder under `parent` and installs the
 * tarball into it. Resolves to { dir, tarball }.
 */
export async function consumerProject(parent) {
  const tarball = await packedTarball();
  const dir = await mkdtemp(join(parent, 'consumer-'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball.path], { cwd: dir },
    'npm install of the packed tarball');
  return { dir, tarball };
}
