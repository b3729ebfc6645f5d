// aw.inspect: attnwasm/inspect with the runtime's own provider (bindings/boundary.js inspector: the native header
// reader and ModelLoader::PlanOnly, a dry run of the loader's Begin). On every golden folder: what inspect says is
// what loadModel then does — the same refusal (code and words) before any tensor data is read, or, for a
// checkpoint it loads, the family, and for each dtype the loaded model's exact weightBytes and weightTypes
// (memoryExact). A config whose values the family refuses (a range standalone inspect cannot check) is refused
// with the loader's words; nothing a plan does stays in the heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { SIZED } from '../../bindings/inspect/memory.js';

const aw = await init({ threads: 1 });
test.after(() => aw.close());
const GOLDENS = fileURLToPath(new URL('../data/goldens/', import.meta.url));
const folders = ['lm/models', 'lm/quant', 'lm/refusals', 'encoders', 'families']
  .flatMap((d) => (existsSync(join(GOLDENS, d)) ? readdirSync(join(GOLDENS, d)).map((f) => join(GOLDENS, d, f)) : []))
  .filter((f) => existsSync(join(f, 'model.safetensors')) && existsSync(join(f, 'config.json')));

test('every golden folder: aw.inspect refuses what loadModel refuses, in its words, and gives its exact bytes per dtype', async (t) => {
  assert.ok(folders.length >= 40, `${folders.length} folders`);
  const seen = { loaded: 0, refused: 0 };
  for (const dir of folders) {
    const what = dir.slice(GOLDENS.length);
    const before = aw.memory().inUseBytes;
    const r = await aw.inspect(dir);
    assert.equal(aw.memory().inUseBytes, before, `${what}: the plan left nothing in the heap`);
    let model;
    try {
      model = await aw.loadModel(dir);
    } catch (e) {
      assert.ok(r.refused, `${what}: loadModel refused (${e.message}), inspect did not`);
      assert.equal(r.refused.code, e.code, what);
      assert.equal(r.refused.message, e.message, what);
      seen.refused++;
      continue;
    }
    assert.equal(r.refused, null, `${what}: ${r.refused?.message}`);
    assert.equal(r.memoryExact, true, what);
    assert.equal(r.family.className, model.constructor.name, what);
    model.dispose();
    const dtypes = /quant|bert_mean|qwen2_tied/.test(what) ? SIZED : ['stored', 'q8'];
    for (const as of dtypes) {
      const m = await aw.loadModel(dir, as === 'stored' ? {} : { dtype: as });
      assert.deepEqual(r.memory[as], { weightBytes: m.weightBytes, weightTypes: m.weightTypes }, `${what} as ${as}`);
      m.dispose();
    }
    seen.loaded++;
  }
  t.diagnostic(`${folders.length} folders: ${seen.loaded} loaded, ${seen.refused} refused`);
  assert.ok(seen.loaded >= 20 && seen.refused >= 15, JSON.stringify(seen));
});

test('a range only the family checks: refused as the loader refuses it; standalone inspect finds the family only', async () => {
  const dir = folders.find((f) => f.includes('lm/models'));
  const { readFileSync } = await import('node:fs');
  const config = { ...JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')), rms_norm_eps: -1 };
  const r = await aw.inspect(dir, { config });
  const e = await aw.loadModel(dir, { config }).then(() => null, (x) => x);
  assert.ok(e && r.refused, `${e?.message}`);
  assert.deepEqual(r.refused, { code: e.code, message: e.message });
  const { inspect } = await import('../../bindings/inspect/index.js');
  const alone = await inspect(dir, { config });
  assert.equal(alone.refused, null);
  assert.equal(alone.family.kind, 'causal_lm');
});

test('aw.inspect takes inspect\'s options but its provider, and throws ERR_CLOSED once the runtime is closed', async () => {
  assert.throws(() => aw.inspect(folders[0], { native: {} }), (e) => e instanceof TypeError && /native/.test(e.message));
  const other = await init();
  await other.close();
  assert.throws(() => other.inspect(folders[0]), (e) => e.code === 'ERR_CLOSED');
});
