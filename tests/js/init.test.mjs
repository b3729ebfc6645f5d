// init() and the Node process: the runtime installs no process-wide handlers.
// (The error tables that used to live here, errors.test.mjs, are in the layer
// files: tests/js/layers/scaled_dot_product_attention.test.mjs and
// tests/js/layers/multihead_attention.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';

test('init() leaves the Node process alone: no uncaughtException/unhandledRejection handlers', async () => {
  // Emscripten's default glue installs handlers that rethrow from inside the
  // minified module; the build turns them off (NODEJS_CATCH_EXIT/REJECTION=0).
  // Checked in a fresh process: the test runner has handlers of its own.
  const { execFileSync } = await import('node:child_process');
  const entry = new URL('../../bindings/index.js', import.meta.url).href;
  const out = execFileSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', `
    const counts = () => [process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')];
    const before = counts();
    const { init } = await import(${JSON.stringify(entry)});
    await init();
    console.log(JSON.stringify([before, counts()]));`], { encoding: 'utf8' });
  const [before, after] = JSON.parse(out);
  assert.deepEqual(after, before);
});
