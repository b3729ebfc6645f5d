// The typings of 'attnwasm/audio' (bindings/audio/index.d.ts) compile under `tsc --noEmit --strict` against a usage
// file that touches its whole API (tests/types/audio/usage.ts), resolved through the package's "exports" by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('tsc --noEmit --strict passes on tests/types/audio/usage.ts', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tests/types/audio/tsconfig.json'], { cwd: root, encoding: 'utf8' });
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`);
  }
});
