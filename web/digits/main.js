// Digit classifier demo: draw a digit (or take a held-out MNIST digit), see the
// attnwasm ViT classify it live, with the class token's attention per layer and
// head and the attention rollout over the 7×7 patch grid.
// Imports the package the way a user would (import map: attnwasm → /bindings/index.js).

import { init } from 'attnwasm';
import { mountPanel, startDemo, formatMs } from '../shared/panel.js';
import { magma, css } from '../shared/colormap.js';
import { inkFromRgba, mnistPreprocess } from 'attnwasm/helpers';

const MODEL_URL = '/models/vit/vit.safetensors';
const HELDOUT_URL = '/models/vit/heldout.safetensors';
const TRAIN_COMMAND = '/usr/bin/python3 tools/models/train_vit.py';
const N = 28;              // model input side
const STROKE = 20;         // pen width on the 280×280 pad: ~2 px after scaling the digit to 20×20
const THROTTLE_MS = 70;    // live prediction at most this often while drawing

const $ = (id) => document.getElementById(id);
const panel = mountPanel($('panel'));
const pad = $('pad');
const padCtx = pad.getContext('2d', { willReadFrequently: true });
const overlay = $('overlay');
const layerSelect = $('layer');
const headSelect = $('head');
const predictionCard = $('prediction-card');

let aw = null;
let classifier = null;
/** Held-out set, loaded on first use: { images: Uint8Array (n, 28, 28), labels: Int32Array (n,), count }. */
let heldout = null;
let heldoutLoading = null;
/** What was classified last: { input: Float32Array(784), result, truth: number|null }. */
let last = null;
let runs = 0;

// ---------------------------------------------------------------- the drawing pad
function clearPad() {
  padCtx.fillStyle = '#000';
  padCtx.fillRect(0, 0, pad.width, pad.height);
}
clearPad();

let drawing = false;
let lastPoint = null;
let fromHeldout = false;

function padPoint(e) {
  const r = pad.getBoundingClientRect();
  return [(e.clientX - r.left) * (pad.width / r.width), (e.clientY - r.top) * (pad.height / r.height)];
}

function strokeTo([x, y]) {
  padCtx.strokeStyle = '#fff';
  padCtx.fillStyle = '#fff';
  padCtx.lineWidth = STROKE;
  padCtx.lineCap = 'round';
  padCtx.lineJoin = 'round';
  if (!lastPoint) {
    padCtx.beginPath();
    padCtx.arc(x, y, STROKE / 2, 0, 2 * Math.PI);
    padCtx.fill();
  } else {
    padCtx.beginPath();
    padCtx.moveTo(lastPoint[0], lastPoint[1]);
    padCtx.lineTo(x, y);
    padCtx.stroke();
  }
  lastPoint = [x, y];
}

pad.addEventListener('pointerdown', (e) => {
  if (e.button !== 0) return;
  e.preventDefault();
  pad.setPointerCapture(e.pointerId);
  drawing = true;
  lastPoint = null;
  if (fromHeldout) {
    // Drawing over a held-out digit turns it into a drawing.
    fromHeldout = false;
    setSource('Drawing.');
    history.replaceState(null, '', location.pathname + location.search);
  }
  strokeTo(padPoint(e));
  schedulePredict();
});
pad.addEventListener('pointermove', (e) => {
  if (!drawing) return;
  const events = e.getCoalescedEvents ? e.getCoalescedEvents() : [e];
  for (const ev of events.length ? events : [e]) strokeTo(padPoint(ev));
  schedulePredict();
});
function endStroke() {
  if (!drawing) return;
  drawing = false;
  lastPoint = null;
  predictDrawing();
}
pad.addEventListener('pointerup', endStroke);
pad.addEventListener('pointercancel', endStroke);

$('clear').addEventListener('click', () => {
  clearPad();
  fromHeldout = false;
  history.replaceState(null, '', location.pathname + location.search);
  setSource('Draw with the mouse, a pen or a finger.');
  showResult(null);
});

let timer = null;
let lastRun = 0;
function schedulePredict() {
  if (timer !== null) return;
  const wait = Math.max(0, THROTTLE_MS - (performance.now() - lastRun));
  timer = setTimeout(() => {
    timer = null;
    predictDrawing();
  }, wait);
}

/** Classifies what is on the pad (MNIST-style preprocessing first). */
function predictDrawing() {
  if (!classifier) return;
  if (timer !== null) { clearTimeout(timer); timer = null; }
  lastRun = performance.now();
  const { data } = padCtx.getImageData(0, 0, pad.width, pad.height);
  const input = mnistPreprocess(inkFromRgba(data, pad.width, pad.height), pad.width, pad.height);
  if (!input) { showResult(null); return; }
  classifyInput(input, null);
}

function classifyInput(input, truth) {
  let result;
  try {
    result = classifier.classify(input);
  } catch (e) {
    setSource(`Classification failed: ${e.message}`, true);
    return;
  }
  panel.setLastInference(result.totalMs);
  showResult({ input, result, truth });
}

function setSource(text, isError = false) {
  const el = $('source');
  el.textContent = text;
  el.className = isError ? 'error' : 'muted';
}

// ---------------------------------------------------------------- held-out digits
async function loadHeldout() {
  if (heldout) return heldout;
  heldoutLoading ??= (async () => {
    const res = await fetch(HELDOUT_URL);
    if (!res.ok) throw new Error(`fetching ${HELDOUT_URL} gave HTTP ${res.status}`);
    const t = aw.loadSafetensors(new Uint8Array(await res.arrayBuffer()));
    const [count, h, w] = t.images.shape;
    if (h !== N || w !== N) throw new Error(`heldout images: expected (n, ${N}, ${N}), got (${t.images.shape.join(', ')})`);
    heldout = { images: t.images.data, labels: t.labels.data, count };
    return heldout;
  })();
  try {
    return await heldoutLoading;
  } catch (e) {
    heldoutLoading = null;
    throw e;
  }
}

async function showHeldout(index) {
  let set;
  try {
    set = await loadHeldout();
  } catch (e) {
    setSource(`Could not load the held-out digits: ${e.message}`, true);
    return;
  }
  const i = ((index % set.count) + set.count) % set.count;
  const pixels = set.images.subarray(i * N * N, (i + 1) * N * N);
  // Show it on the pad, smoothly enlarged (white ink on black, like MNIST).
  const small = document.createElement('canvas');
  small.width = N;
  small.height = N;
  const img = new ImageData(N, N);
  for (let k = 0; k < N * N; k++) {
    img.data[4 * k] = img.data[4 * k + 1] = img.data[4 * k + 2] = pixels[k];
    img.data[4 * k + 3] = 255;
  }
  small.getContext('2d').putImageData(img, 0, 0);
  clearPad();
  padCtx.imageSmoothingEnabled = true;
  padCtx.imageSmoothingQuality = 'high';
  padCtx.drawImage(small, 0, 0, pad.width, pad.height);
  fromHeldout = true;
  const truth = set.labels[i];
  setSource(`Held-out digit #${i} of ${set.count} (never seen in training), true label ${truth}.`);
  // Held-out digits are already MNIST-normalised: feed the pixels as they are.
  classifyInput(Float32Array.from(pixels, (p) => p / 255), truth);
}

$('random').addEventListener('click', async () => {
  const set = await loadHeldout().catch((e) => {
    setSource(`Could not load the held-out digits: ${e.message}`, true);
    return null;
  });
  if (!set) return;
  const i = Math.floor(Math.random() * set.count);
  history.replaceState(null, '', `#heldout=${i}`);
  showHeldout(i);
});

function heldoutFromHash() {
  const m = /^#heldout=(\d+)$/.exec(location.hash);
  return m ? Number(m[1]) : null;
}
window.addEventListener('hashchange', () => {
  const i = heldoutFromHash();
  if (i !== null && classifier) showHeldout(i);
});

// ---------------------------------------------------------------- results
function buildBars(labels) {
  $('bars').replaceChildren(...labels.map((label) => {
    const row = document.createElement('div');
    row.className = 'bar';
    row.innerHTML = `<span></span><div class="track"><div class="fill"></div></div><span class="pct">–</span>`;
    row.firstChild.textContent = label;
    return row;
  }));
}

function showResult(r) {
  last = r;
  runs += 1;
  const rows = [...$('bars').children];
  if (!r) {
    $('predicted').textContent = '–';
    $('confidence').innerHTML = '&nbsp;';
    $('truth').innerHTML = '&nbsp;';
    $('truth').className = 'muted';
    for (const row of rows) {
      row.classList.remove('top');
      row.querySelector('.fill').style.width = '0';
      row.querySelector('.pct').textContent = '–';
    }
    delete predictionCard.dataset.prediction;
    delete predictionCard.dataset.truth;
    predictionCard.dataset.run = String(runs);
    drawAttention();
    return;
  }
  const { result, truth } = r;
  $('predicted').textContent = result.label;
  $('confidence').textContent = `${(100 * result.probabilities[result.index]).toFixed(1)}% sure · ${formatMs(result.totalMs)}`;
  const t = $('truth');
  if (truth === null) {
    t.innerHTML = '&nbsp;';
    t.className = 'muted';
  } else {
    const ok = classifier.labels[truth] === result.label;
    t.textContent = `true label ${classifier.labels[truth]} ${ok ? '✓ correct' : '✗ wrong'}`;
    t.className = ok ? 'ok' : 'bad';
  }
  rows.forEach((row, i) => {
    const p = result.probabilities[i];
    row.classList.toggle('top', i === result.index);
    row.querySelector('.fill').style.width = `${(100 * p).toFixed(1)}%`;
    row.querySelector('.pct').textContent = `${(100 * p).toFixed(1)}%`;
  });
  predictionCard.dataset.prediction = result.label;
  if (truth === null) delete predictionCard.dataset.truth;
  else predictionCard.dataset.truth = classifier.labels[truth];
  predictionCard.dataset.run = String(runs);
  drawAttention();
}

// ---------------------------------------------------------------- attention maps
/** The selected 7×7 map: rollout, or layer l with head h or the mean over heads. */
function attentionMap(result, layer, head) {
  if (layer === 'rollout') return result.rollout;
  const { heads, grid, data } = result.attention;
  const P = grid * grid, l = Number(layer);
  const hs = head === 'avg' ? Array.from({ length: heads }, (_, i) => i) : [Number(head)];
  const out = new Float32Array(P);
  for (const h of hs) for (let p = 0; p < P; p++) out[p] += data[(l * heads + h) * P + p] / hs.length;
  return out;
}

/**
 * Draws a 7×7 map (colour, scaled to its maximum) with the 28×28 input on top
 * as translucent white ink, so both the digit and the attention stay visible.
 * @param {HTMLCanvasElement} c square canvas
 */
function drawMap(c, input, map, grid, { gridLines = true } = {}) {
  const ctx = c.getContext('2d');
  const s = c.width;
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, s, s);
  if (!input) return;
  if (map) {
    let max = 0;
    for (const v of map) max = Math.max(max, v);
    const cell = s / grid;
    for (let gy = 0; gy < grid; gy++) {
      for (let gx = 0; gx < grid; gx++) {
        ctx.fillStyle = css(magma(max > 0 ? map[gy * grid + gx] / max : 0));
        ctx.fillRect(Math.round(gx * cell), Math.round(gy * cell), Math.ceil(cell), Math.ceil(cell));
      }
    }
    if (gridLines) {
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.15)';
      ctx.lineWidth = 1;
      for (let k = 1; k < grid; k++) {
        const p = Math.round(k * cell) + 0.5;
        ctx.beginPath();
        ctx.moveTo(p, 0); ctx.lineTo(p, s);
        ctx.moveTo(0, p); ctx.lineTo(s, p);
        ctx.stroke();
      }
    }
  }
  const px = s / N;
  for (let y = 0; y < N; y++) {
    for (let x = 0; x < N; x++) {
      const v = input[y * N + x];
      if (v > 0.02) {
        ctx.fillStyle = `rgba(255, 255, 255, ${(map ? 0.6 : 1) * v})`;
        ctx.fillRect(Math.floor(x * px), Math.floor(y * px), Math.ceil(px), Math.ceil(px));
      }
    }
  }
}

function setupAttentionControls() {
  const { numLayers, nhead } = classifier.config;
  layerSelect.replaceChildren(new Option('rollout', 'rollout'),
    ...Array.from({ length: numLayers }, (_, i) => new Option(`layer ${i + 1}`, String(i))));
  headSelect.replaceChildren(new Option('average over heads', 'avg'),
    ...Array.from({ length: nhead }, (_, i) => new Option(`${i + 1}`, String(i))));
  layerSelect.value = 'rollout';
  const sync = () => {
    headSelect.disabled = layerSelect.value === 'rollout';
    drawAttention();
  };
  layerSelect.addEventListener('change', sync);
  headSelect.addEventListener('change', drawAttention);
  sync();

  // Small multiples: one row per layer (average, then each head), plus rollout.
  const thumbs = $('thumbs');
  thumbs.style.gridTemplateColumns = `auto repeat(${nhead + 1}, var(--thumb))`;
  const cells = [document.createElement('span')];
  for (const h of ['avg', ...Array.from({ length: nhead }, (_, i) => String(i))]) {
    const s = document.createElement('span');
    s.className = 'colhead';
    s.textContent = h === 'avg' ? 'avg' : `h${Number(h) + 1}`;
    cells.push(s);
  }
  const thumb = (layer, head) => {
    const c = document.createElement('canvas');
    c.width = 56;
    c.height = 56;
    c.dataset.layer = layer;
    c.dataset.head = head;
    c.title = layer === 'rollout' ? 'rollout' : `layer ${Number(layer) + 1}, ${head === 'avg' ? 'average over heads' : `head ${Number(head) + 1}`}`;
    c.addEventListener('click', () => {
      layerSelect.value = layer;
      if (layer !== 'rollout') headSelect.value = head;
      sync();
    });
    return c;
  };
  for (let l = 0; l < numLayers; l++) {
    const lbl = document.createElement('span');
    lbl.className = 'lbl';
    lbl.textContent = `layer ${l + 1}`;
    cells.push(lbl, thumb(String(l), 'avg'), ...Array.from({ length: nhead }, (_, h) => thumb(String(l), String(h))));
  }
  const lbl = document.createElement('span');
  lbl.className = 'lbl';
  lbl.textContent = 'rollout';
  cells.push(lbl, thumb('rollout', 'avg'));
  thumbs.replaceChildren(...cells);
}

function drawAttention() {
  if (!classifier) return;
  const layer = layerSelect.value, head = headSelect.value;
  const grid = classifier.grid;
  const map = last ? attentionMap(last.result, layer, head) : null;
  drawMap(overlay, last?.input ?? null, map, grid);
  const cap = $('overlay-caption');
  if (!last) {
    cap.innerHTML = '&nbsp;';
  } else if (layer === 'rollout') {
    cap.textContent = 'Attention rollout over all layers (scaled to its maximum).';
  } else {
    let max = 0;
    for (const v of map) max = Math.max(max, v);
    cap.textContent = `Layer ${Number(layer) + 1}, ${head === 'avg' ? 'average over heads' : `head ${Number(head) + 1}`}: largest patch weight ${max.toFixed(3)}.`;
  }
  for (const c of $('thumbs').querySelectorAll('canvas')) {
    const selected = c.dataset.layer === layer && (layer === 'rollout' || c.dataset.head === head);
    c.classList.toggle('selected', selected);
    drawMap(c, last?.input ?? null, last ? attentionMap(last.result, c.dataset.layer, c.dataset.head) : null, grid, { gridLines: false });
  }
}

// ---------------------------------------------------------------- start
async function start() {
  const started = await startDemo({
    init, panel, what: 'the digit model', modelUrl: MODEL_URL, trainCommand: TRAIN_COMMAND,
    load: (rt, onProgress) => rt.loadClassifier(MODEL_URL, { onProgress }),
  });
  if (!started) return;
  ({ aw, model: classifier } = started);
  buildBars(classifier.labels);
  setupAttentionControls();
  $('random').disabled = false;
  document.body.dataset.ready = 'true';
  const i = heldoutFromHash();
  if (i !== null) await showHeldout(i);
}

/** For tests and the console: classify whatever is on the pad now. */
window.digitsDemo = { predictDrawing, showHeldout, memory: () => aw?.memory() ?? null };

start();
