// The two-tower models (issue 39): CLIP and SigLIP hub folders written by transformers v4.40.2 itself
// (tests/data/make_clip_goldens.py: CLIPModel, an old CLIP config (eos_token_id 2: argmax pooling; text_config_dict
// over text_config), CLIPVisionModelWithProjection, CLIPTextModel, SiglipModel, SiglipVisionModel), checked against
// the transformers models run in float64 on the same float32 pixel_values and input ids: within 1e-4 + 1e-4·|x|.
// Text batches: right padding with its mask (CLIP trims each row under its causal mask), a row whose pooled token lies
// in its padding, a left-padded row, SigLIP's max_length padding pooled at the last position. Wrong inputs are
// refused by name, and the model keeps working.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { ints } from './helpers.mjs';

const DIR = fileURLToPath(new URL('../data/goldens/clip/', import.meta.url));
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
const l2 = (v, D) => {
  const out = [];
  for (let i = 0; i < v.length; i += D) {
    const row = v.slice(i, i + D), n = Math.hypot(...row);
    out.push(...row.map((a) => a / n));
  }
  return out;
};

for (const c of x.cases.filter((k) => !k.zero_shot)) {
  test(`${c.folder}: transformers' numbers`, async (t) => {
    const m = await aw.loadModel(join(DIR, c.folder));
    try {
      assert.ok(m instanceof aw.CLIPModel);
      const report = [];
      const check = (name, got, want) => {
        const w = worst(got, want);
        report.push(`${name} ${w.toFixed(4)}`);
        assert.ok(w <= 1, `${name}: off by ${w} tolerances`);
      };
      const inputs = {};
      if (c.images) inputs.pixelValues = pixelsOf(c);
      if (c.input_ids) Object.assign(inputs, { inputIds: ints(c.input_ids), attentionMask: ints(c.attention_mask) });
      const out = m.forward(inputs);
      if (c.logits_per_image) {
        const [nI, nT] = [c.images.length, c.input_ids.length];
        assert.deepEqual(out.logitsPerImage.shape, [nI, nT]);
        assert.deepEqual(out.logitsPerText.shape, [nT, nI]);
        check('logitsPerImage', out.logitsPerImage.data, c.logits_per_image);
        if (c.vision_attentions) {
          const v = m.visionForward({ pixelValues: pixelsOf(c), outputAttentions: true });
          assert.deepEqual(v.attentions.shape, [nI, m.visionNumLayers, m.visionNumHeads, 17, 17]);
          assert.deepEqual([m.patchSize, m.extraTokens, m.imageSize], [8, 1, 32]);
          assert.deepEqual(v.lastHiddenState.shape, [nI, 17, 32]);
          check('vision attentions', v.attentions.data, c.vision_attentions);
          check('visionForward imageEmbeds', v.imageEmbeds.data, c.image_embeds);
        }
        check('imageEmbeds (normalized)', out.imageEmbeds.data, l2(c.image_embeds, m.imageEmbedDim));
        check('textEmbeds (normalized)', out.textEmbeds.data, l2(c.text_embeds, m.textEmbedDim));
        assert.equal(out.logitsPerText.data[1 * nI + 2], out.logitsPerImage.data[2 * nT + 1]);
        // Each text alone, unpadded: get_text_features of its own ids.
        c.input_ids.forEach((row, i) => {
          const n = c.attention_mask[i].reduce((a, b) => a + b);
          const one = m.forward({ inputIds: ints([row.slice(0, n)]), pixelValues: pixelsOf(c) });
          check(`text ${i} alone`, one.textEmbeds.data, l2(c.text_embeds_each[i], m.textEmbedDim));
        });
      } else {
        if (c.image_embeds) check('imageEmbeds', out.imageEmbeds.data, c.image_embeds);
        if (c.text_embeds) check('textEmbeds', out.textEmbeds.data, c.text_embeds);
        if (c.left_padded) {
          const lp = m.forward({ inputIds: ints(c.left_padded.input_ids), attentionMask: ints(c.left_padded.attention_mask) });
          check('left-padded textEmbeds', lp.textEmbeds.data, c.left_padded.text_embeds);
        }
      }
      t.diagnostic(`worst of the tolerance: ${report.join(', ')}`);
    } finally {
      m.dispose();
    }
  });
}

test('from the image files: embedImages gives get_image_features, normalized; one-tower models say what they lack', async () => {
  const c = x.cases.find((k) => k.folder === 'clip_model');
  const m = await aw.loadModel(join(DIR, 'clip_model'));
  try {
    const files = c.images.map((f) => join(FIX, f));
    const pv = await m.preprocess(files);
    assert.deepEqual(pv.shape, c.shape);
    const raw = await m.embedImages(files, { batchSize: 2, normalize: false });
    assert.deepEqual(raw.shape, [3, 24]);
    assert.ok(worst(raw.data, c.image_embeds) <= 1);
    const unit = await m.embedImages(files);
    assert.ok(worst(unit.data, l2(c.image_embeds, 24)) <= 1);
    // No tokenizer in this folder: texts are refused, ids are not.
    await assert.rejects(m.embedTexts(['a cat']), /no tokenizer/);
    assert.throws(() => m.forward({ pixelValues: pv }), /inputIds: expected/);
    assert.throws(() => m.forward({ inputIds: ints([[97, 5, 98]]) }), /pixelValues: expected/);
  } finally {
    m.dispose();
  }
  const v = await aw.loadModel(join(DIR, 'clip_vision_proj'));
  try {
    assert.equal(v.hasText, false);
    await assert.rejects(v.embedTexts(['a cat']), /texts: this model \(model_type "clip_vision_model"\) has no text tower/);
    await assert.rejects(v.zeroShot([join(FIX, c.images[0])], ['cat']), /needs both towers/);
  } finally {
    v.dispose();
  }
});

test('bad inputs are refused by name and the model keeps working', async () => {
  const c = x.cases.find((k) => k.folder === 'clip_model');
  const m = await aw.loadModel(join(DIR, 'clip_model'));
  try {
    const good = { inputIds: ints(c.input_ids), attentionMask: ints(c.attention_mask), pixelValues: pixelsOf(c) };
    const first = m.forward(good).logitsPerImage.data;
    assert.throws(() => m.forward({ ...good, inputIds: ints([[97, 5, 99]]), attentionMask: undefined }), /inputIds.*99/);
    assert.throws(() => m.forward({ ...good, inputIds: ints([Array(17).fill(5)]), attentionMask: undefined }), /inputIds.shape\[1\] \(tokens\).*16/);
    assert.throws(() => m.forward({ ...good, attentionMask: ints([[1, 1]]) }), /attentionMask: expected the shape of inputIds/);
    assert.throws(() => m.forward({ ...good, attentionMask: ints(c.attention_mask.map((r) => r.map((v) => v * 2))) }), /attentionMask: expected 0s and 1s/);
    assert.throws(() => m.forward({ ...good, pixelValues: { data: new Float32Array(3 * 16 * 16), shape: [1, 3, 16, 16] } }), /pixelValues: expected images of 32 × 32/);
    assert.throws(() => m.forward({ ...good, pixelValues: { data: new Float32Array(3 * 32 * 32).fill(NaN), shape: [1, 3, 32, 32] } }), /pixelValues: expected finite values/);
    assert.throws(() => m.forward({ ...good, extra: 1 }), /extra/);
    await assert.rejects(m.zeroShot([join(FIX, c.images[0])], []), /labels: expected a non-empty array/);
    assert.deepEqual(m.forward(good).logitsPerImage.data, first);
  } finally {
    m.dispose();
  }
});

test('a config the family cannot run exactly is refused by key; inspect names the face', async () => {
  const base = JSON.parse(readFileSync(join(DIR, 'clip_model', 'config.json'), 'utf8'));
  const files = (cfg) => new Map([['config.json', new TextEncoder().encode(JSON.stringify(cfg))],
    ['model.safetensors', readFileSync(join(DIR, 'clip_model', 'model.safetensors'))]]);
  await assert.rejects(aw.loadModel(files({ ...base, text_config: { ...base.text_config, hidden_act: 'relu' } })),
    /config\.text_config\.hidden_act: expected "quick_gelu", "gelu", "gelu_pytorch_tanh" or "gelu_new", got "relu"/);
  await assert.rejects(aw.loadModel(files({ ...base, architectures: ['CLIPForImageClassification'] })), /config\.architectures: expected CLIPModel/);
  await assert.rejects(aw.loadModel(files({ ...base, vision_config: { ...base.vision_config, num_attention_heads: 5 } })),
    /config\.vision_config\.num_attention_heads: expected a divisor of hidden_size \(32\)/);
  await assert.rejects(aw.loadModel(files({ ...base, model_type: 'siglip2' })), /siglip2/);
  await assert.rejects(aw.loadModel(files({ ...base, text_config: 'quick_gelu' })), /config\.text_config: expected an object or null \(a tower's config\), got "quick_gelu"/);
  assert.equal((await aw.inspect(join(DIR, 'siglip_model'))).family.className, 'CLIPModel');
});

for (const [folder, tokenizerClass] of [['clip_zero_shot', 'CLIPTokenizer'], ['siglip_zero_shot', 'SiglipTokenizer']]) test(`zeroShot (${folder}): the zero-shot-image-classification pipeline's scores, from image files and label texts`, async () => {
  const c = x.cases.find((k) => k.folder === folder);
  const m = await aw.loadModel(join(DIR, folder));
  try {
    assert.equal(m.tokenizer.tokenizerClass, tokenizerClass);
    const files = c.images.map((f) => join(FIX, f));
    for (const z of c.zero_shot) {
      const texts = z.labels.map((l) => z.template.replace('{}', l));
      assert.deepEqual(Array.from(m.tokenize(texts).inputIds.data), z.ids.flat(), 'the processor\'s ids (CLIP: padding=True; SigLIP: max_length)');
      const got = await m.zeroShot(files, z.labels, z.template === 'This is a photo of {}.' ? undefined : { hypothesisTemplate: z.template });
      assert.equal(got.length, files.length);
      got.forEach((ranked, i) => {
        assert.deepEqual(ranked.map((r) => r.label), z.ranked[i].map((r) => r.label));
        ranked.forEach((r, k) => assert.ok(Math.abs(r.score - z.ranked[i][k].score) <= x.atol + x.rtol * z.ranked[i][k].score, `${r.label}: ${r.score} vs ${z.ranked[i][k].score}`));
      });
    }
    const top = await m.zeroShot(files[0], c.zero_shot[0].labels, { topK: 2 });
    assert.deepEqual(top[0].map((r) => r.label), c.zero_shot[0].ranked[0].slice(0, 2).map((r) => r.label));
    // embedTexts: the normalized text embeddings, batch by batch as one.
    const all = await m.embedTexts(['a cat', 'a dog', 'this is a red car'], { batchSize: 2 });
    const one = await m.embedTexts(['this is a red car']);
    assert.deepEqual(all.shape, [3, m.textEmbedDim]);
    assert.ok(all.data.slice(2 * m.textEmbedDim).every((v, i) => Math.abs(v - one.data[i]) < 1e-6));
  } finally {
    m.dispose();
  }
});
