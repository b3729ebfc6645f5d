// Soak: 10 000 mixed calls — create, forward, dispose, errors, models — leave
// the wasm heap flat after warm-up: the same malloc'd bytes and the same
// memory size. The figures are printed for the README / resolve note.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../bindings/index.js';
import { randomTensor } from './helpers.mjs';

const aw = await init();
const translatorBytes = readFileSync(new URL('../../models/translator/translator.safetensors', import.meta.url));
const vitBytes = readFileSync(new URL('../../models/vit/vit.safetensors', import.meta.url));

test('soak: 10 000 mixed calls keep the wasm heap flat', async () => {
  const f32 = (shape, seed) => randomTensor(shape, seed);
  const mha = new aw.MultiheadAttention(32, 4, { batchFirst: true });
  const enc = new aw.TransformerEncoderLayer(32, 4, { dimFeedforward: 64, batchFirst: true, activation: 'gelu' });
  const translator = await aw.loadTranslator(translatorBytes);
  const classifier = await aw.loadClassifier(vitBytes);
  const x = f32([2, 9, 32], 1), mem = f32([2, 13, 32], 2);
  const kpm = { data: Uint8Array.from({ length: 26 }, (_, i) => (i % 13 > 10 ? 1 : 0)), shape: [2, 13] };
  const q = f32([2, 4, 9, 8], 3);
  const digit = Float32Array.from({ length: 784 }, (_, i) => ((i % 28) > 10 && (i % 28) < 16 ? 1 : 0));
  const words = ['seven', 'forty-two', 'three hundred eleven', 'nine thousand nine hundred ninety-nine'];
  const kinds = {};
  const expectThrow = (f) => { try { f(); } catch (e) { if (!e.code) throw e; return; } throw new Error('expected an error'); };

  const calls = [
    () => mha.forward(x, mem, mem, { keyPaddingMask: kpm, needWeights: true }),
    () => mha.forward(x, x, x, { needWeights: false }),
    () => aw.scaledDotProductAttention(q, q, q, { isCausal: true }),
    () => enc.forward(x, { srcKeyPaddingMask: { data: new Uint8Array(18).fill(0), shape: [2, 9] } }),
    () => expectThrow(() => mha.forward(x, x, f32([2, 8, 32], 4))),
    () => expectThrow(() => aw.scaledDotProductAttention(q, f32([2, 4, 9, 7], 5), q)),
    () => expectThrow(() => new aw.MultiheadAttention(2 ** 20, 1)),
    () => expectThrow(() => aw.loadSafetensors(translatorBytes.subarray(0, 5000))),
    () => { const m = new aw.Linear(16, 8); m.forward(f32([3, 16], 6)); m.dispose(); expectThrow(() => m.forward(f32([3, 16], 6))); },
    () => { const m = new aw.TransformerDecoderLayer(16, 2, { dimFeedforward: 32 }); m.forward(f32([3, 1, 16], 7), f32([4, 1, 16], 8)); m.dispose(); },
    () => { const m = new aw.LayerNorm(16); m.loadStateDict(m.stateDict()); m.forward(f32([2, 16], 9)); m.dispose(); },
    (i) => translator.translate(words[(i >> 4) % words.length], { to: (i >> 5) % 2 ? 'fr' : 'de' }),
    () => classifier.classify(digit),
    () => expectThrow(() => translator.translate('banana', { to: 'fr' })),
  ];
  // Rarer, heavier calls: a whole model load and dispose.
  const heavy = [
    async () => { const t = await aw.loadTranslator(translatorBytes); t.translate('twelve', { to: 'de' }); t.dispose(); },
    async () => { const c = await aw.loadClassifier(vitBytes); c.classify(digit); c.dispose(); },
    () => Object.keys(aw.loadSafetensors(vitBytes)).length,
  ];
  let n = 0;
  const round = async (i) => {
    const k = i % calls.length;
    calls[k](i);
    kinds[k] = (kinds[k] ?? 0) + 1;
    n++;
    if (i % 250 === 0) { await heavy[(i / 250) % heavy.length](); n++; }
  };
  for (let i = 0; i < 300; i++) await round(i);
  const before = aw.memory();
  n = 0;
  const t0 = performance.now();
  for (let i = 0; i < 10000; i++) await round(i);
  const seconds = (performance.now() - t0) / 1000;
  const after = aw.memory();
  console.log(`# soak: ${n} calls in ${seconds.toFixed(1)} s; wasm memory ${before.heapBytes} → ${after.heapBytes} bytes; ` +
    `malloc'd ${before.inUseBytes} → ${after.inUseBytes} bytes`);
  mha.dispose(); enc.dispose(); translator.dispose(); classifier.dispose();
  assert.ok(n >= 10000);
  assert.equal(after.heapBytes, before.heapBytes, 'wasm memory grew');
  assert.equal(after.inUseBytes, before.inUseBytes, `malloc'd bytes changed from ${before.inUseBytes} to ${after.inUseBytes}`);
});
