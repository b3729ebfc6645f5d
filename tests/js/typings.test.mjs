// The typings (bindings/index.d.ts) compile under `tsc --noEmit --strict`
// against a usage file that touches the whole public API, resolved through the
// package's own "exports" (self-reference by package name).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('tsc --noEmit --strict passes on tests/types/usage.ts', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tests/types/tsconfig.json'], { cwd: root, encoding: 'utf8' });
  } catch (e) {
    assert.fail(`tsc failed:\n${e.stdout}${e.stderr}`);
  }
});
