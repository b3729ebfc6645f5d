// attnwasm classify-image and attnwasm embed-image (issue 39) on the vision goldens (tests/data/goldens/vision/):
// what they print equals what the API gives for the same folder and image files; --top-k, --json, --normalize;
// usage errors exit 2 naming what is missing, a folder of the wrong kind and an unreadable image exit 1.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';

const CLI = fileURLToPath(new URL('../../bin/attnwasm.mjs', import.meta.url));
const G = fileURLToPath(new URL('../data/goldens/vision/', import.meta.url));
const F = fileURLToPath(new URL('../data/goldens/images/fixtures/', import.meta.url));
const aw = await init({ threads: 1 });
after(() => aw.close());

const cli = (args) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
const near = (a, b) => Math.abs(a - b) < 5e-6 + 1e-6 * Math.abs(b);
const images = [join(F, 'rgb8_64x48.png'), join(F, 'j420_q90.jpg')];

test('classify-image: labels per image, as classify() gives them; --top-k, --json', async () => {
  const m = await aw.loadModel(join(G, 'deit_teacher'));
  const want = await m.classify(images, { topK: null });
  m.dispose();
  const r = cli(['classify-image', '--model', join(G, 'deit_teacher'), ...images, '--top-k', 'all']);
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trimEnd().split('\n').map((l) => l.split('\t'));
  assert.equal(lines.length, 2);
  lines.forEach(([file, ...cols], i) => {
    assert.equal(file, images[i]);
    assert.equal(cols.length, 2 * want[i].length);
    want[i].forEach((w, k) => { assert.equal(cols[2 * k], w.label); assert.ok(near(Number(cols[2 * k + 1]), w.score)); });
  });
  const j = cli(['classify-image', '--model', join(G, 'deit_teacher'), images[0], '--top-k', '2', '--json']);
  assert.equal(j.status, 0, j.stderr);
  const row = JSON.parse(j.stdout);
  assert.equal(row.file, images[0]);
  assert.deepEqual(row.labels.map((l) => l.label), want[0].slice(0, 2).map((l) => l.label));
});

test('embed-image: a vector per image, as embed() gives it; --normalize', async () => {
  const m = await aw.loadModel(join(G, 'dinov2_model'));
  const want = await m.embed(images, { normalize: true });
  m.dispose();
  const r = cli(['embed-image', '--model', join(G, 'dinov2_model'), ...images, '--normalize', '--json']);
  assert.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.equal(rows.length, 2);
  rows.flat().forEach((v, i) => assert.ok(near(v, want.data[i]), `${i}: ${v} vs ${want.data[i]}`));
});

test('classify-image / embed-image refuse what they cannot run, by name', () => {
  let r = cli(['classify-image', images[0]]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--model is needed/);
  r = cli(['embed-image', '--model', join(G, 'vit_model')]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /give one or more image files/);
  r = cli(['classify-image', '--model', join(G, 'dinov2_model'), images[0]]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /loads as a VisionModel; an image classifier/);
  r = cli(['classify-image', '--model', join(G, 'vit_classifier'), images[0], join(F, 'missing.png')]);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /images\[1\]/);
  r = cli(['classify-image', '--model', join(G, 'vit_classifier'), images[0], '--top-k', '0']);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--top-k/);
});

const C = fileURLToPath(new URL('../data/goldens/clip/', import.meta.url));

test('classify-image --labels: a CLIP model\'s zero-shot scores, as zeroShot() gives them; embed-image: its image embeddings', async () => {
  const labels = ['cat', 'dog', 'red car'];
  const r = cli(['classify-image', '--model', join(C, 'clip_zero_shot'), ...images, '--labels', labels.join(', '), '--json']);
  assert.equal(r.status, 0, r.stderr);
  const m = await aw.loadModel(join(C, 'clip_zero_shot'));
  try {
    const want = await m.zeroShot(images, labels);
    const got = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    got.forEach((g, i) => {
      assert.equal(g.file, images[i]);
      assert.deepEqual(g.labels.map((x) => x.label), want[i].map((x) => x.label));
      g.labels.forEach((x, k) => assert.ok(near(x.score, want[i][k].score)));
    });
    const e = cli(['embed-image', '--model', join(C, 'clip_zero_shot'), images[0], '--json']);
    assert.equal(e.status, 0, e.stderr);
    const v = JSON.parse(e.stdout), w = (await m.embedImages(images[0], { normalize: false })).data;
    assert.equal(v.length, 24);
    v.forEach((a, k) => assert.ok(near(a, w[k])));
  } finally {
    m.dispose();
  }
  let bad = cli(['classify-image', '--model', join(C, 'clip_zero_shot'), images[0]]);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /give its candidate labels with --labels/);
  bad = cli(['classify-image', '--model', join(G, 'vit_classifier'), images[0], '--labels', 'cat']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--labels is for CLIP and SigLIP models/);
  bad = cli(['classify-image', '--model', join(C, 'clip_vision_proj'), images[0], '--labels', 'cat']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /loads as a CLIPModel; an image classifier .* or a CLIP \/ SigLIP model with both towers/);
});
