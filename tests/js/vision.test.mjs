// The vision encoders (issue 39): ViT, DeiT and DINOv2 hub folders written by transformers v4.40.2 itself
// (tests/data/make_vision_goldens.py: ViTModel with its pooler, ViTForImageClassification, DeiT with its
// distillation token and teacher head, DeiTModel, Dinov2Model with layer scale, Dinov2ForImageClassification),
// checked against the transformers models run in float64 on the same float32 pixel_values: within 1e-4 + 1e-4·|x|.
// From the images themselves (PNG, JPEG through the folder's preprocessor_config.json), the same logits. DINOv2 at a
// 48 × 40 input checks the bicubic position interpolation (current transformers' size= form). Wrong inputs are
// refused by name, and the model keeps working.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';

const DIR = fileURLToPath(new URL('../data/goldens/vision/', import.meta.url));
const FIX = fileURLToPath(new URL('../data/goldens/images/fixtures/', import.meta.url));
const x = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8'));
const bin = readFileSync(join(DIR, 'pixels.bin'));
const pixelsAll = new Float32Array(bin.buffer, bin.byteOffset, bin.byteLength / 4);
const aw = await init({ threads: 1 });
after(() => aw.close());

const pixelsOf = (c) => {
  const n = c.shape.reduce((a, b) => a * b, 1);
  return { data: pixelsAll.slice(c.pixels, c.pixels + n), shape: c.shape };
};

/** The worst |got − want| / (atol + rtol·|want|). */
function worst(got, want) {
  assert.equal(got.length, want.length);
  let w = 0;
  for (let i = 0; i < want.length; i++) w = Math.max(w, Math.abs(got[i] - want[i]) / (x.atol + x.rtol * Math.abs(want[i])));
  return w;
}

for (const c of x.cases) {
  const what = `${c.folder} ${c.shape.join('×')}${c.interpolate ? ' interpolatePosEncoding' : ''}`;
  test(`${what}: transformers' numbers from its pixel_values`, async (t) => {
    const m = await aw.loadModel(join(DIR, c.folder));
    try {
      const out = m.forward({ pixelValues: pixelsOf(c), ...(c.interpolate ? { interpolatePosEncoding: true } : {}), ...(c.attentions ? { outputAttentions: true } : {}) });
      if (c.attentions) {
        const [B, T] = c.hidden_shape;
        assert.deepEqual(out.attentions.shape, [B, m.numLayers, m.config.num_attention_heads, T, T]);
        const a = worst(out.attentions.data, c.attentions);
        t.diagnostic(`attentions: worst ${a.toFixed(4)} of the tolerance`);
        assert.ok(a <= 1, `attentions off by ${a} tolerances`);
      }
      if (c.logits) {
        assert.ok(m instanceof aw.ImageClassifier);
        assert.deepEqual(out.logits.shape, c.logits_shape);
        const w = worst(out.logits.data, c.logits);
        t.diagnostic(`logits: worst ${w.toFixed(4)} of the tolerance`);
        assert.ok(w <= 1, `logits off by ${w} tolerances`);
      } else {
        assert.ok(m instanceof aw.VisionModel && !(m instanceof aw.ImageClassifier));
        assert.deepEqual(out.lastHiddenState.shape, c.hidden_shape);
        const w = worst(out.lastHiddenState.data, c.last_hidden_state);
        const p = worst(out.poolerOutput.data, c.pooler_output);
        t.diagnostic(`lastHiddenState: worst ${w.toFixed(4)}, poolerOutput: ${p.toFixed(4)} of the tolerance`);
        assert.ok(w <= 1 && p <= 1, `off by ${w} / ${p} tolerances`);
      }
    } finally {
      m.dispose();
    }
  });
}

test('from the image files: preprocess gives the processor\'s pixel_values, classify and embed transformers\' numbers', async () => {
  const c = x.cases.find((k) => k.folder === 'deit_teacher');
  const m = await aw.loadModel(join(DIR, 'deit_teacher'));
  const files = c.images.map((f) => join(FIX, f));
  const pv = await m.preprocess(files);
  assert.deepEqual(pv.shape, c.shape);
  assert.ok(worst(pv.data, Array.from(pixelsOf(c).data)) <= 0.01);
  const { data } = await m.logits(files, { batchSize: 2 });  // two batches: the second's index counts on
  assert.ok(worst(data, c.logits) <= 1);
  const ranked = await m.classify(files, { topK: null });
  assert.equal(ranked.length, 3);
  for (let i = 0; i < 3; i++) {
    const row = c.logits.slice(i * 4, i * 4 + 4), max = Math.max(...row);
    const e = row.map((v) => Math.exp(v - max)), s = e.reduce((a, b) => a + b);
    const want = e.map((v, k) => ({ label: m.labels[k], score: v / s })).sort((a, b) => b.score - a.score);
    assert.deepEqual(ranked[i].map((r) => r.label), want.map((r) => r.label));
    ranked[i].forEach((r, k) => assert.ok(Math.abs(r.score - want[k].score) < 1e-4));
  }
  assert.equal((await m.classify(files[0]))[0].length, 4);  // topK 5 by default, at most the labels
  assert.equal((await m.classify(files[0], { topK: 2 }))[0].length, 2);
  m.dispose();

  const v = x.cases.find((k) => k.folder === 'vit_model');
  const vm = await aw.loadModel(join(DIR, 'vit_model'));
  assert.equal(vm.pooling, 'pooler');
  const emb = await vm.embed(v.images.map((f) => join(FIX, f)));
  assert.deepEqual(emb.shape, [3, 32]);
  assert.ok(worst(emb.data, v.pooler_output) <= 1);
  const unit = await vm.embed(join(FIX, v.images[0]), { normalize: true });
  assert.ok(Math.abs(unit.data.reduce((a, b) => a + b * b, 0) - 1) < 1e-5);
  vm.dispose();
});

test('DINOv2 takes any size; ViT and DeiT only their image_size; bad inputs are refused by name and the model keeps working', async () => {
  const d = await aw.loadModel(join(DIR, 'dinov2_model'));
  assert.equal(d.anySize, true);
  assert.equal(d.pooling, 'cls');
  d.dispose();
  const c = x.cases.find((k) => k.folder === 'vit_classifier');
  const m = await aw.loadModel(join(DIR, 'vit_classifier'));
  assert.equal(m.anySize, false);
  assert.throws(() => m.forward({ pixelValues: { data: new Float32Array(3 * 48 * 40), shape: [1, 3, 48, 40] } }),
    (e) => e.code === 'ERR_SHAPE' && /pixelValues: expected images of 32 × 32 pixels.*interpolatePosEncoding: true/.test(e.message));
  assert.throws(() => m.forward({ pixelValues: pixelsOf(c), interpolatePosEncoding: 1 }), TypeError);
  assert.throws(() => m.forward({ pixelValues: { data: new Float32Array(32 * 32), shape: [1, 1, 32, 32] } }),
    (e) => e.code === 'ERR_SHAPE' && /pixelValues: expected \(batch, 3, height, width\)/.test(e.message));
  const nan = pixelsOf(c);
  nan.data[5] = NaN;
  assert.throws(() => m.forward({ pixelValues: nan }), (e) => e.code === 'ERR_INVALID_ARGUMENT' && /index 5/.test(e.message));
  assert.throws(() => m.forward({ pixelValues: { data: new Int32Array(4), shape: [4] } }), (e) => e.code === 'ERR_DTYPE');
  assert.throws(() => m.forward(pixelsOf(c)), TypeError);
  await assert.rejects(m.classify([join(FIX, 'rgb8.png'), new Uint8Array([1, 2, 3])]),
    (e) => e.index === 1 && /^images\[1\]/.test(e.message));
  await assert.rejects(m.classify([]), (e) => e.code === 'ERR_INVALID_ARGUMENT');
  const out = m.forward({ pixelValues: pixelsOf(c) });
  assert.ok(worst(out.logits.data, c.logits) <= 1);
  m.dispose();
});

test('inspect names the face each load gives', async () => {
  assert.equal((await aw.inspect(join(DIR, 'deit_teacher'))).family.className, 'ImageClassifier');
  assert.equal((await aw.inspect(join(DIR, 'dinov2_classifier'))).family.className, 'ImageClassifier');
  const r = await aw.inspect(join(DIR, 'dinov2_model'));
  assert.equal(r.family.className, 'VisionModel');
  assert.equal(r.refused, null);
});

test('configs the family cannot run exactly are refused by key', async () => {
  const base = join(DIR, 'vit_classifier');
  const files = (patch) => {
    const cfg = { ...JSON.parse(readFileSync(join(base, 'config.json'), 'utf8')), ...patch };
    return new Map([['config.json', new TextEncoder().encode(JSON.stringify(cfg))],
      ['model.safetensors', readFileSync(join(base, 'model.safetensors'))]]);
  };
  for (const [patch, key] of [[{ hidden_act: 'gelu_new' }, 'hidden_act'], [{ qkv_bias: false }, 'qkv_bias'],
    [{ architectures: ['ViTForMaskedImageModeling'] }, 'architectures'], [{ patch_size: 64 }, 'patch_size'],
    [{ use_swiglu_ffn: true }, 'use_swiglu_ffn']]) {
    await assert.rejects(aw.loadModel(files(patch)), (e) => e.message.includes(key), key);
  }
  await assert.rejects(aw.loadModel(files({ model_type: 'swin' })), (e) => /swin/.test(e.message));
});
