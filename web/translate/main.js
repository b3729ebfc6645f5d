// Number translator demo: English number words → French / German with the
// attnwasm Translator, and a heatmap of the decoder's cross-attention.
// Imports the package the way a user would (import map: attnwasm → /bindings/index.js).

import { init } from 'attnwasm';
import { mountPanel, startDemo, formatMs } from '../shared/panel.js';
import { blues, css, textOn } from '../shared/colormap.js';

const MODEL_URL = '/models/translator/translator.safetensors';
const TRAIN_COMMAND = '/usr/bin/python3 tools/models/train_translator.py';
// Plain spellings, spellings as people type them, digits, and one text that is
// not a number (it is refused: the demo shows why and a suggestion).
const EXAMPLES = [
  'seventy-one',
  'three hundred seventy-one',
  'Forty two',
  'one hundred and five',
  'a thousand and one',
  'nineteen hundred and eighty-four',
  '1,234',
  'two hundred thousand eighty-one',
  'twenty twenty',
];
const LANGUAGE_NAMES = { fr: 'French', de: 'German' };

const $ = (id) => document.getElementById(id);
const panel = mountPanel($('panel'));
const form = $('form');
const input = $('text');
const langSelect = $('lang');
const beamSelect = $('beam');
const goButton = $('go');
const errorBox = $('error');
const suggestionButton = $('suggestion');
const resultCard = $('result-card');
const layerSelect = $('layer');
const headSelect = $('head');
const canvas = $('heatmap');
const hover = $('heat-hover');

let aw = null;
let translator = null;
/** The last successful result (for redrawing the heatmap on selector changes). */
let last = null;
let runs = 0;

// ---------------------------------------------------------------- examples and URL state
for (const text of EXAMPLES) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'chip';
  b.textContent = text;
  b.disabled = true;
  b.addEventListener('click', () => {
    input.value = text;
    translate();
  });
  $('examples').append(b);
}
suggestionButton.addEventListener('click', () => {
  input.value = suggestionButton.dataset.text;
  translate();
});

const params = new URLSearchParams(location.search);
if (params.get('q')) input.value = params.get('q');
if (params.get('to')) langSelect.value = params.get('to');
if (params.get('beam')) beamSelect.value = params.get('beam');

form.addEventListener('submit', (e) => {
  e.preventDefault();
  translate();
});
langSelect.addEventListener('change', () => translator && translate());
beamSelect.addEventListener('change', () => translator && translate());
layerSelect.addEventListener('change', drawHeatmap);
headSelect.addEventListener('change', drawHeatmap);
window.addEventListener('resize', drawHeatmap);

// ---------------------------------------------------------------- loading
async function start() {
  const started = await startDemo({
    init, panel, what: 'the translation model', modelUrl: MODEL_URL, trainCommand: TRAIN_COMMAND,
    load: (rt, onProgress) => rt.loadTranslator(MODEL_URL, { onProgress }),
  });
  if (!started) return;
  ({ aw, model: translator } = started);

  const langs = translator.languages;
  const wanted = langSelect.value;
  langSelect.replaceChildren(...langs.map((l) => new Option(LANGUAGE_NAMES[l] ?? l, l)));
  langSelect.value = langs.includes(wanted) ? wanted : langs[0];
  const { numDecoderLayers, nhead } = translator.config;
  layerSelect.replaceChildren(...Array.from({ length: numDecoderLayers }, (_, i) => new Option(`${i + 1}`, String(i))));
  layerSelect.value = String(numDecoderLayers - 1);
  headSelect.replaceChildren(new Option('average over heads', 'avg'),
    ...Array.from({ length: nhead }, (_, i) => new Option(`${i + 1}`, String(i))));

  for (const el of [goButton, ...document.querySelectorAll('#examples button')]) el.disabled = false;
  document.body.dataset.ready = 'true';
  translate();
}

// ---------------------------------------------------------------- translate
function translate() {
  if (!translator) return;
  const text = input.value;
  const to = langSelect.value;
  const beamSize = Number(beamSelect.value);
  runs += 1;
  let r;
  try {
    r = translator.translate(text, { to, beamSize });
  } catch (e) {
    // Text that is not a number is the user's to fix: show why (and a suggestion), don't log.
    last = null;
    $('error-text').textContent = ['ERR_NOT_A_NUMBER', 'ERR_INVALID_ARGUMENT', 'ERR_OUT_OF_RANGE'].includes(e.code)
      ? e.message.replace(/^text: /, '').replace(/^./, (c) => c.toUpperCase())
      : `Translation failed: ${e.message}`;
    suggestionButton.dataset.text = e.suggestion ?? '';
    suggestionButton.textContent = e.suggestion ? `Try “${e.suggestion}”` : '';
    suggestionButton.classList.toggle('hidden', !e.suggestion);
    errorBox.classList.remove('hidden');
    $('normalized').innerHTML = '&nbsp;';
    $('output').textContent = '—';
    $('output').classList.add('pending');
    $('tokens').replaceChildren();
    $('steps').replaceChildren();
    $('steps').parentElement.classList.add('hidden');
    $('timing').textContent = '';
    clearHeatmap();
    resultCard.dataset.state = 'error';
    resultCard.dataset.run = String(runs);
    return;
  }
  errorBox.classList.add('hidden');
  last = r;
  panel.setLastInference(r.totalMs);
  renderResult(r);
  drawHeatmap();
  resultCard.dataset.state = 'done';
  resultCard.dataset.run = String(runs);
  const q = new URLSearchParams({ q: text.trim(), to, beam: String(beamSize) });
  history.replaceState(null, '', `?${q}`);
}

function chip(text, cls) {
  const s = document.createElement('span');
  s.textContent = text;
  if (cls) s.className = cls;
  return s;
}

function renderResult(r) {
  const out = $('output');
  out.textContent = r.text;
  out.classList.remove('pending');
  // What the model was given: the input normalised (case, spaces, digits → words, the comma after "thousand").
  $('normalized').textContent = `Translated: “${r.input}” = ${r.value.toLocaleString('en-US')}`;
  $('tokens').replaceChildren(
    ...r.sourceTokens.map((t) => chip(t, 'src')),
    chip('→', 'arrow'),
    ...r.tokens.map((t) => chip(t)),
  );
  const steps = r.stepMs.length;
  const mean = r.stepMs.reduce((a, b) => a + b, 0) / Math.max(1, steps);
  $('timing').textContent = `${r.tokens.length} output tokens · ${formatMs(mean)} per token · total ${formatMs(r.totalMs)}`;
  // One bar per decoder step; under it the token that step produced (greedy: one
  // step per output token; beam search may run more steps than the kept beam has tokens).
  $('steps').parentElement.classList.remove('hidden');
  const max = Math.max(...r.stepMs, 1e-6);
  const labels = steps === r.crossAttention.targetLength ? rowLabels(r) : null;
  $('steps').replaceChildren(...r.stepMs.map((ms, i) => {
    const step = document.createElement('div');
    step.className = 'step';
    step.title = `decoding step ${i + 1}${labels ? ` (${labels[i]})` : ''}: ${formatMs(ms)}`;
    step.innerHTML = '<span class="ms"></span><div class="col"><div class="bar"></div></div><span class="tok"></span>';
    step.querySelector('.ms').textContent = ms < 10 ? ms.toFixed(2) : ms.toFixed(1);
    step.querySelector('.bar').style.height = `${Math.max(2, (ms / max) * 36)}px`;
    step.querySelector('.tok').textContent = labels ? labels[i] : `${i + 1}`;
    return step;
  }));
}

// ---------------------------------------------------------------- heatmap
/** Target-axis labels: the output tokens, plus <eos> when the model emitted it. */
function rowLabels(r) {
  const labels = [...r.tokens];
  while (labels.length < r.crossAttention.targetLength) labels.push('<eos>');
  return labels;
}

/** (T, S) weights for the selected layer and head (or the mean over heads). */
function selectedWeights(r) {
  const { heads, targetLength: T, sourceLength: S, data } = r.crossAttention;
  const l = Number(layerSelect.value);
  const h = headSelect.value;
  const out = new Float32Array(T * S);
  const hs = h === 'avg' ? Array.from({ length: heads }, (_, i) => i) : [Number(h)];
  for (const hh of hs) {
    const base = (l * heads + hh) * T * S;
    for (let i = 0; i < T * S; i++) out[i] += data[base + i] / hs.length;
  }
  return out;
}

let geometry = null;

function clearHeatmap() {
  geometry = null;
  const ctx = canvas.getContext('2d');
  canvas.width = 1;
  canvas.height = 1;
  canvas.style.width = '1px';
  canvas.style.height = '1px';
  ctx.clearRect(0, 0, 1, 1);
  hover.innerHTML = '&nbsp;';
}

function drawHeatmap() {
  if (!last) return;
  const r = last;
  const { targetLength: T, sourceLength: S } = r.crossAttention;
  const w = selectedWeights(r);
  const rows = rowLabels(r);
  const cols = r.sourceTokens;

  const font = '13px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
  const ctx = canvas.getContext('2d');
  ctx.font = font;
  const textW = (s) => ctx.measureText(s).width;
  const left = Math.ceil(Math.max(...rows.map(textW))) + 18;
  const maxCol = Math.max(...cols.map(textW));
  const avail = (canvas.parentElement.clientWidth || 700) - left - 60;
  const colW = Math.max(34, Math.min(90, Math.ceil(maxCol) + 14, Math.floor(avail / S)));
  const rotate = maxCol + 8 > colW;
  const top = rotate ? Math.ceil(maxCol * 0.72) + 18 : 26;
  const rowH = 26;
  const legendW = 44;
  const width = left + S * colW + legendW;
  const height = top + T * rowH + 4;

  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  ctx.font = font;

  // column labels (source tokens)
  ctx.fillStyle = '#5d6678';
  ctx.textBaseline = 'alphabetic';
  cols.forEach((t, j) => {
    const cx = left + j * colW + colW / 2;
    if (rotate) {
      ctx.save();
      ctx.translate(cx - 4, top - 6);
      ctx.rotate(-Math.PI / 4);
      ctx.textAlign = 'left';
      ctx.fillText(t, 0, 0);
      ctx.restore();
    } else {
      ctx.textAlign = 'center';
      ctx.fillText(t, cx, top - 8);
    }
  });
  // row labels (target tokens)
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  ctx.fillStyle = '#1d2330';
  rows.forEach((t, i) => ctx.fillText(t, left - 10, top + i * rowH + rowH / 2));

  // cells
  ctx.textAlign = 'center';
  ctx.font = '11px ui-monospace, Menlo, Consolas, monospace';
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < S; j++) {
      const v = w[i * S + j];
      const rgb = blues(v);
      const x = left + j * colW, y = top + i * rowH;
      ctx.fillStyle = css(rgb);
      ctx.fillRect(x, y, colW - 1, rowH - 1);
      if (v >= 0.005 && colW >= 34) {
        ctx.fillStyle = textOn(rgb);
        ctx.fillText(v.toFixed(2), x + colW / 2, y + rowH / 2);
      }
    }
  }

  // legend: 0 (bottom) … 1 (top)
  const lx = left + S * colW + 14, ly = top, lh = Math.max(40, T * rowH - 1);
  for (let k = 0; k < lh; k++) {
    ctx.fillStyle = css(blues(1 - k / (lh - 1)));
    ctx.fillRect(lx, ly + k, 10, 1);
  }
  ctx.fillStyle = '#5d6678';
  ctx.textAlign = 'left';
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillText('1', lx + 14, ly + 5);
  ctx.fillText('0', lx + 14, ly + lh - 4);

  geometry = { left, top, colW, rowH, S, T, w, rows, cols };
  hover.innerHTML = '&nbsp;';
}

canvas.addEventListener('mousemove', (e) => {
  if (!geometry) return;
  const g = geometry;
  const rect = canvas.getBoundingClientRect();
  const j = Math.floor((e.clientX - rect.left - g.left) / g.colW);
  const i = Math.floor((e.clientY - rect.top - g.top) / g.rowH);
  if (i < 0 || j < 0 || i >= g.T || j >= g.S) {
    hover.innerHTML = '&nbsp;';
    return;
  }
  hover.textContent = `output “${g.rows[i]}” ← input “${g.cols[j]}”: ${g.w[i * g.S + j].toFixed(3)}`;
});
canvas.addEventListener('mouseleave', () => { hover.innerHTML = '&nbsp;'; });

start();

/** For tests and the console: translate through the page's own path; wasm memory figures. */
window.translateDemo = {
  translate(text, to) {
    input.value = text;
    if (to) langSelect.value = to;
    translate();
    return $('output').textContent;
  },
  memory: () => aw?.memory() ?? null,
};
