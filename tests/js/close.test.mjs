// aw.close() (runtime.js): the runtime and every object made from it throw
// ERR_CLOSED afterwards, close() is idempotent, init() gives a fresh runtime,
// and the wasm memory goes back to the system (RSS measured in a child
// process with --expose-gc). In Chromium: tests/browser/memory.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { randomTensor } from './helpers.mjs';

const closed = (e) => e.name === 'AttnWasmError' && e.code === 'ERR_CLOSED' && /runtime was closed/.test(e.message);

for (const threads of [1, 2]) {
  test(`close() with ${threads} thread(s): every call throws ERR_CLOSED, close() again is a no-op, init() works again`, async () => {
    const aw = await init({ threads });
    const mha = new aw.MultiheadAttention(16, 2);
    const lin = new aw.Linear(4, 3);
    const disposed = new aw.LayerNorm(8);
    disposed.dispose();
    const x = randomTensor([3, 2, 16], 1);
    mha.forward(x, x, x);
    const tr = await aw.loadTranslator(fileURLToPath(new URL('../../models/translator/translator.safetensors', import.meta.url)));
    assert.equal(tr.translate('forty two').text, 'quarante-deux');
    const before = aw.memory().inUseBytes;
    assert.ok(before > 0);
    const p = aw.close();
    assert.ok(p instanceof Promise);
    await p;
    assert.throws(() => aw.memory(), closed);
    assert.throws(() => aw.scaledDotProductAttention(x, x, x), closed);
    assert.throws(() => aw.capabilities(), closed);
    assert.throws(() => new aw.Linear(4, 3), closed);
    assert.throws(() => mha.forward(x, x, x), closed);
    assert.throws(() => lin.stateDict(), closed);
    assert.throws(() => disposed.forward(randomTensor([8], 2)), closed, 'closed comes before disposed');
    assert.throws(() => tr.translate('forty two'), closed);
    await assert.rejects(aw.loadTranslator(new Uint8Array(8)), closed);
    mha.dispose(); // disposing after close is harmless
    await aw.close(); // idempotent
    const again = await init({ threads });
    const y = again.scaledDotProductAttention(x, x, x).output;
    assert.equal(y.data.length, x.data.length);
    await again.close();
  });
}

for (const threads of [1, 2]) {
  test(`close() returns the wasm memory: RSS back within 96 MiB of before init() (${threads} thread(s))`, () => {
    const child = fileURLToPath(new URL('./close_rss_child.mjs', import.meta.url));
    const out = execFileSync(process.execPath, ['--expose-gc', child, String(threads), '400'], { encoding: 'utf8' });
    const { before, during, after, heap } = JSON.parse(out);
    const MiB = 2 ** 20;
    assert.ok(heap >= 390 * MiB, `the call should grow the heap to ~400 MiB, got ${heap / MiB} MiB`);
    assert.ok(during - before >= 350 * MiB, `RSS should grow with the heap: +${((during - before) / MiB).toFixed(0)} MiB`);
    assert.ok(after - before <= 96 * MiB,
      `RSS after close() + gc: +${((after - before) / MiB).toFixed(0)} MiB over before init() (during: +${((during - before) / MiB).toFixed(0)} MiB)`);
  });
}
