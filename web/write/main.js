// Fortune writer demo (web/write/): a tiny character-level Llama (models/lm/) writes after a prompt, token by
// token, with the newest token's attention over the context drawn as a heatmap (layer and head selectable).
// This file wires the page: its elements, the modules, the start-up and window.writeDemo; it draws nothing.
// runtime.js: worker or page · prompt_check.js, options.js: the controls · writer.js, run.js: a Write ·
// frames.js: drawing once per frame · result.js, steps.js, heatmap.js: what is drawn · vocabulary.js, canvas.js.
// Imports the package the way a user would (import map: attnwasm/worker, attnwasm → /bindings/).

import { mountPanel, startDemo } from '../shared/panel.js';
import { RUNTIME, startRuntime, showRunsIn } from './runtime.js';
import { readVocabulary } from './vocabulary.js';
import { mountPromptCheck } from './prompt_check.js';
import { updateSamplingNote, limitTokens, fillFromUrl } from './options.js';
import { runFigures } from './run.js';
import { createWriter, warmUp } from './writer.js';
import { createFrames } from './frames.js';
import { mountResult } from './result.js';
import { mountSteps } from './steps.js';
import { mountHeatmap } from './heatmap.js';

const MODEL_URL = '/models/lm/lm.safetensors';
const TRAIN_COMMAND = '/usr/bin/python3 tools/models/train_lm.py';
const EXAMPLES = ['', 'The ', 'Q: What is ', 'A penny saved ', 'Love is ', 'Computers are ', 'Never trust '];

const $ = (id) => document.getElementById(id);
const panel = mountPanel($('panel'));
const promptInput = $('prompt');
const writeButton = $('write');
const outGen = $('out-gen');
const inputs = {
  maxTokens: $('max-tokens'), temperature: $('temperature'), topK: $('top-k'), topP: $('top-p'), seed: $('seed'),
  stopAtEnd: $('stop-at-end'),
};

/**
 * What the modules share: the runtime (a WorkerRuntime, or init()'s runtime) and the model (a proxy, or
 * the CausalLM), set once loaded; the model's vocabulary (vocabulary.js), copied once after the load; and
 * the run on show (run.js: the one writing, or the last one), set by the writer.
 */
const page = { aw: null, lm: null, vocab: null, run: null };

// The drawn parts ask for a frame through this (frames is made below, before any event can call it).
const schedule = (heatChanged) => frames.schedule(heatChanged);
const promptCheck = mountPromptCheck({ input: promptInput, errorBox: $('error'), errorText: $('error-text'), fixButton: $('fix'), page });
const result = mountResult({
  card: $('result-card'), outPrompt: $('out-prompt'), outGen, inputs, panel, page, runtime: RUNTIME, schedule,
});
const steps = mountSteps({ canvas: $('steps'), hover: $('steps-hover'), page, schedule });
const heatmap = mountHeatmap({
  canvas: $('heatmap'), textCanvas: $('heat-text'), layerSelect: $('layer'), headSelect: $('head'), followBox: $('follow'),
  caption: $('heat-caption'), hover: $('heat-hover'), page, schedule,
});
const frames = createFrames({ page, result, steps, heatmap });
const writer = createWriter({
  page, promptInput, promptCheck, inputs, stopButton: $('stop'), resultCard: $('result-card'), frames,
});

// ---------------------------------------------------------------- controls
for (const text of EXAMPLES) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'chip';
  b.textContent = text === '' ? '(empty: a new fortune)' : JSON.stringify(text).slice(1, -1);
  b.title = text === '' ? 'an empty prompt: the model starts a fortune of its own' : `“${text}”`;
  b.disabled = true;
  b.addEventListener('click', (e) => {
    promptInput.value = text;
    promptCheck.check();
    writer.start(e.timeStamp);
  });
  $('examples').append(b);
}

$('form').addEventListener('submit', (e) => {
  e.preventDefault();
  writer.start(e.timeStamp);
});
promptInput.addEventListener('keydown', (e) => {
  // Ctrl/Cmd+Enter writes (Enter alone is a newline: the model writes newlines too).
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    writer.start(e.timeStamp);
  }
});
$('stop').addEventListener('click', () => writer.stop());
inputs.temperature.addEventListener('input', () => updateSamplingNote(inputs, $('sampling-note')));

// URL state: ?p=prompt&n=&t=&k=&topp=&seed=&end=0 fills the controls (and writes on load when p is given).
const writeOnLoad = fillFromUrl(new URLSearchParams(location.search), promptInput, inputs);
updateSamplingNote(inputs, $('sampling-note'));

// ---------------------------------------------------------------- loading
async function start() {
  showRunsIn($('runs-in'));
  const started = await startDemo({
    init: startRuntime, panel, what: 'the language model', modelUrl: MODEL_URL, trainCommand: TRAIN_COMMAND,
    load: (s, onProgress) => s.runtime.loadModel(MODEL_URL, { onProgress }),
  });
  if (!started) return;
  page.aw = started.aw.runtime;
  page.lm = started.model;
  page.vocab = await readVocabulary(page.lm);
  heatmap.setModel(page.lm.numLayers, page.lm.numHeads);
  limitTokens(inputs, page.lm.maxPositions);
  await warmUp(page.lm);  // so that the first Write is as fast as the next ones (writer.js)
  for (const el of [writeButton, ...document.querySelectorAll('#examples button')]) el.disabled = false;
  await promptCheck.check();
  document.body.dataset.ready = 'true';
  if (writeOnLoad) writer.start(performance.now());
}

start();

/** For tests and the console: the page's state and figures; wasm memory. */
window.writeDemo = {
  /** Where the model runs: 'worker' or 'page'. */
  runtime: RUNTIME,
  /** The run on show's figures (run.js runFigures), or null before the first Write. */
  get state() {
    return page.run ? runFigures(page.run, outGen.textContent) : null;
  },
  /** The heatmap cell of context position p in client coordinates: { x, y, width, height }, or null. */
  cellBox(p) {
    return heatmap.cellBox(p);
  },
  /** The runtime's memory() (a promise from the worker). */
  memory: async () => (page.aw ? page.aw.memory() : null),
};
