// Determinism: the same inputs give bit-identical outputs across repeated
// calls, fresh runtime instances, the single-thread and pthreads builds, and
// processes (the browser
// test tests/browser/soak.test.mjs also checks Chromium against Node).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { workload } from './determinism_workload.mjs';

const translatorBytes = readFileSync(new URL('../../models/translator/translator.safetensors', import.meta.url));
const vitBytes = readFileSync(new URL('../../models/vit/vit.safetensors', import.meta.url));

test('determinism: repeated runs, a second instance and a second process agree bit for bit', async () => {
  const aw = await init();
  const first = await workload(aw, translatorBytes, vitBytes);
  assert.ok(first.bytes > 100000, `workload too small: ${first.bytes} bytes`);
  for (let i = 0; i < 3; i++) assert.deepEqual(await workload(aw, translatorBytes, vitBytes), first, `run ${i + 2} differs`);
  assert.deepEqual(await workload(await init(), translatorBytes, vitBytes), first, 'a second instance differs');
  // The default instance runs the pthreads build where it can ('auto'); the single-thread build agrees.
  const one = await init({ threads: 1 });
  assert.equal(one.capabilities().build, 'single-thread');
  assert.deepEqual(await workload(one, translatorBytes, vitBytes), first, 'the single-thread build differs');
  const script = `
    import { readFileSync } from 'node:fs';
    import { init } from ${JSON.stringify(new URL('../../bindings/index.js', import.meta.url).href)};
    import { workload } from ${JSON.stringify(new URL('./determinism_workload.mjs', import.meta.url).href)};
    const r = await workload(await init(), readFileSync(${JSON.stringify(fileURLToPath(new URL('../../models/translator/translator.safetensors', import.meta.url)))}),
      readFileSync(${JSON.stringify(fileURLToPath(new URL('../../models/vit/vit.safetensors', import.meta.url)))}));
    process.stdout.write(JSON.stringify(r));`;
  // The same Node flags (--experimental-wasm-relaxed-simd or not): the same build.
  const other = JSON.parse(execFileSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], { encoding: 'utf8' }));
  assert.deepEqual(other, first, 'another process differs');
  console.log(`# determinism: ${first.outputs.length} outputs, ${first.bytes} bytes, sha256 ${first.digest.slice(0, 16)}…`);
});
