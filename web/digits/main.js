// Digit classifier demo: draw a digit (or take a held-out MNIST digit), see the
// attnwasm ViT classify it live, with the class token's attention per layer and
// head and the attention rollout over the 7×7 patch grid.
// Imports the package the way a user would (import map: attnwasm → /bindings/index.js).
// This file wires the page: the runtime panel, the modules, the start-up and window.digitsDemo; it draws nothing.
// pad.js: the drawing pad · heldout.js: the held-out digits · results.js: a classification and its bars ·
// attention.js: the attention maps · state.js, dom.js: what they share.
import { init } from 'attnwasm';
import { mountPanel, startDemo } from '../shared/panel.js';
import { $ } from './dom.js';
import { page } from './state.js';
import { mountPad, predictDrawing } from './pad.js';
import { mountHeldout, showHeldout, heldoutFromHash } from './heldout.js';
import { buildBars } from './results.js';
import { setupAttentionControls } from './attention.js';

const MODEL_URL = '/models/vit/vit.safetensors';
const TRAIN_COMMAND = '/usr/bin/python3 tools/models/train_vit.py';

page.panel = mountPanel($('panel'));
mountPad();
mountHeldout();

async function start() {
  const { panel } = page;
  const started = await startDemo({
    init, panel, what: 'the digit model', modelUrl: MODEL_URL, trainCommand: TRAIN_COMMAND,
    load: (rt, onProgress) => rt.loadClassifier(MODEL_URL, { onProgress }),
  });
  if (!started) return;
  page.aw = started.aw;
  page.classifier = started.model;
  buildBars(page.classifier.labels);
  setupAttentionControls();
  $('random').disabled = false;
  document.body.dataset.ready = 'true';
  const i = heldoutFromHash();
  if (i !== null) await showHeldout(i);
}

/** For tests and the console: classify whatever is on the pad now. */
window.digitsDemo = { predictDrawing, showHeldout, memory: () => page.aw?.memory() ?? null };

start();
