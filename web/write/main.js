// Fortune writer demo: a tiny character-level Llama (models/lm/) writes after a
// prompt, token by token, with the attention of the newest token over the whole
// context shown as a heatmap over the characters (layer and head selectable).
// The model runs in a worker ('attnwasm/worker'): the page only draws. With
// ?runtime=page it runs in the page instead (init() from 'attnwasm'), to compare:
// the page's code is the same either way, since it awaits every call of the model
// (a worker's proxies return promises; awaiting the page's own values is a no-op).
// Imports the package the way a user would (import map: attnwasm/worker →
// /bindings/worker.js, attnwasm → /bindings/index.js).
//
// Keeping the page responsive: the model writes about 2 000 tokens/s here in the
// worker (headless Chromium, 2 cores, drawing included; 1 600-1 700 in the page), so a
// token does only bookkeeping (its id, time, text and a copy of its attention's
// window into preallocated arrays); everything visible is drawn at most 25 times
// a second (render()), whatever number of tokens arrived meanwhile. The
// vocabulary (98 characters and <eos>) is copied into the page once after the
// load, so drawing never waits for the worker. The first token shows one frame
// later than in the page (15 ms after Write here, against 2 ms): Chromium runs
// the frame that follows a click before any message, and a token is a message.

import { createWorker } from 'attnwasm/worker';
import { mountPanel, startDemo, formatMs } from '../shared/panel.js';
import { blues, css, textOn } from '../shared/colormap.js';

const MODEL_URL = '/models/lm/lm.safetensors';
const TRAIN_COMMAND = '/usr/bin/python3 tools/models/train_lm.py';
const EXAMPLES = ['', 'The ', 'Q: What is ', 'A penny saved ', 'Love is ', 'Computers are ', 'Never trust '];
/** What phones and word processors type instead of ASCII, and the ASCII the model knows. */
const TYPOGRAPHIC = new Map([
  ...[...'\u2018\u2019\u201A\u201B\u2032'].map((c) => [c, "'"]),
  ...[...'\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB'].map((c) => [c, '"']),
  ...[...'\u2010\u2011\u2012\u2013\u2212'].map((c) => [c, '-']),
  ['\u2014', '--'], ['\u2015', '--'], ['\u2026', '...'],
  ...[...'\u00A0\u2007\u2009\u202F'].map((c) => [c, ' ']),
]);
const MAX_TOKENS_LIMIT = 1000;
const CELL_FONT = '13px "DejaVu Sans Mono", ui-monospace, Menlo, Consolas, monospace';
const LINE_H = 20;        // heatmap row height (px)
const PAD_X = 2;          // heatmap left padding (px)

const $ = (id) => document.getElementById(id);
const panel = mountPanel($('panel'));
const form = $('form');
const promptInput = $('prompt');
const writeButton = $('write');
const stopButton = $('stop');
const errorBox = $('error');
const fixButton = $('fix');
const resultCard = $('result-card');
const outPrompt = $('out-prompt');
const outGen = $('out-gen');
const layerSelect = $('layer');
const headSelect = $('head');
const followBox = $('follow');
const heat = $('heatmap');
const heatText = $('heat-text');
const heatWrap = heat.parentElement;
const stepsCanvas = $('steps');
/** The stats line's elements. */
const statEl = {
  ...Object.fromEntries([...resultCard.querySelectorAll('[data-stat]')].map((e) => [e.dataset.stat, e.querySelector('b') ?? e])),
  reuse: $('reuse-seed'),
  link: $('permalink'),
};
const inputs = {
  maxTokens: $('max-tokens'), temperature: $('temperature'), topK: $('top-k'), topP: $('top-p'), seed: $('seed'),
  stopAtEnd: $('stop-at-end'),
};

/** Where the model runs: 'worker' (the default) or 'page' (?runtime=page). */
const RUNTIME = new URLSearchParams(location.search).get('runtime') === 'page' ? 'page' : 'worker';
/** The runtime (a WorkerRuntime, or init()'s runtime) and the model (a proxy, or the CausalLM). */
let aw = null;
let lm = null;
/** The model's vocabulary, copied once after the load: { token: string[], special: boolean[], ids: Map<char, id> }. */
let vocab = null;
/** The run on show (the one writing, or the last one): see newRun(). */
let run = null;
/** The Write being handled now: { controller }, or null. */
let active = null;
/** Each Write waits for the one before it to end (never two at once). */
let writes = Promise.resolve();
let writeRequests = 0;
let runs = 0;

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
    checkPrompt();
    startWrite(e.timeStamp);
  });
  $('examples').append(b);
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  startWrite(e.timeStamp);
});
promptInput.addEventListener('keydown', (e) => {
  // Ctrl/Cmd+Enter writes (Enter alone is a newline: the model writes newlines too).
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    startWrite(e.timeStamp);
  }
});
stopButton.addEventListener('click', () => active?.controller.abort());
promptInput.addEventListener('input', () => { checkPrompt(); });
fixButton.addEventListener('click', () => {
  promptInput.value = replaceTypographic(promptInput.value);
  checkPrompt();
  promptInput.focus();
});
inputs.temperature.addEventListener('input', updateSamplingNote);
statEl.reuse.addEventListener('click', () => {
  if (!run) return;
  inputs.seed.value = String(run.seed);
  scheduleRender(false);  // the button hides once the field holds the seed
});
layerSelect.addEventListener('change', () => scheduleRender(true));
headSelect.addEventListener('change', () => scheduleRender(true));
followBox.addEventListener('change', () => {
  if (followBox.checked && run) run.shown = null;
  scheduleRender(true);
});
// The canvases' widths, read when they change rather than in every frame (a read forces a layout).
const widths = { heat: 700, steps: 600 };
const resized = new ResizeObserver((entries) => {
  for (const e of entries) widths[e.target === heatWrap ? 'heat' : 'steps'] = Math.floor(e.contentRect.width);
  scheduleRender(true);
});
resized.observe(heatWrap);
resized.observe(stepsCanvas.parentElement);

function updateSamplingNote() {
  const greedy = Number(inputs.temperature.value) === 0;
  for (const el of [inputs.topK, inputs.topP, inputs.seed]) el.disabled = greedy;
  $('sampling-note').textContent = greedy
    ? 'Temperature 0: greedy, always the most likely character (top-k, top-p and seed do not apply).'
    : '';
}

// URL state: ?p=prompt&n=&t=&k=&topp=&seed=&end=0 fills the controls (and writes on load when p is given).
const params = new URLSearchParams(location.search);
if (params.has('p')) promptInput.value = params.get('p');
for (const [key, el] of [['n', inputs.maxTokens], ['t', inputs.temperature], ['k', inputs.topK], ['topp', inputs.topP], ['seed', inputs.seed]]) {
  if (params.has(key)) el.value = params.get(key);
}
if (params.get('end') === '0') inputs.stopAtEnd.checked = false;
updateSamplingNote();

// ---------------------------------------------------------------- the prompt: what the model cannot write
function replaceTypographic(text) {
  let out = '';
  for (const ch of text) out += TYPOGRAPHIC.get(ch) ?? ch;
  return out;
}

/** The distinct characters of `text` the model's vocabulary lacks, in order. */
function unsupportedChars(text) {
  const seen = new Set();
  for (const ch of text) if (!vocab.ids.has(ch)) seen.add(ch);
  return [...seen];
}

function showError(message, fixable = []) {
  $('error-text').textContent = message;
  fixButton.classList.toggle('hidden', fixable.length === 0);
  fixButton.textContent = fixable.length
    ? `Replace ${fixable.join(' ')} with ${[...new Set(fixable.map((c) => TYPOGRAPHIC.get(c)))].map((c) => (c === ' ' ? 'a space' : c)).join(' ')}`
    : '';
  errorBox.classList.remove('hidden');
}

function hideError() {
  errorBox.classList.add('hidden');
}

const codePoint = (ch) => `U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * Checks the prompt with the model's tokenizer as it is typed. A character the
 * model never saw is refused by the tokenizer (ERR_INVALID_ARGUMENT naming it):
 * show that message, every other such character, and offer to replace the
 * typographic ones (’ “ ” – — …) with their ASCII. Resolves to the prompt's ids
 * or null. The tokenizer is the worker's, so the answer comes a message later:
 * only the newest check touches the page, and #prompt[data-check="pending"]
 * says one is on its way.
 */
let checks = 0;
/** The newest check's answer: { text, ids } (ids null: refused), so that Write need not ask again. */
let checked = null;
async function checkPrompt() {
  if (!lm) return null;
  const n = ++checks;
  const text = promptInput.value;
  promptInput.dataset.check = 'pending';
  let ids = null;
  let error = null;
  try {
    ids = await lm.encode(text);
  } catch (e) {
    error = e;
  }
  if (n !== checks) return ids;  // a newer check shows its own answer
  delete promptInput.dataset.check;
  checked = { text, ids };
  if (ids) {
    hideError();
    promptInput.removeAttribute('aria-invalid');
    return ids;
  }
  if (error.code !== 'ERR_INVALID_ARGUMENT') {
    showError(`The prompt could not be read: ${error.message}`);  // the worker ended, say
    return null;
  }
  const bad = unsupportedChars(text);
  const fixable = bad.filter((c) => TYPOGRAPHIC.has(c));
  const others = bad.length > 1 ? ` Characters it cannot write here: ${bad.map((c) => `${c} (${codePoint(c)})`).join(', ')}.` : '';
  const hint = fixable.length ? ' Typographic quotes and dashes can be replaced with ASCII:' : ' Remove or replace it.';
  showError(`${sentence(error.message.replace(/^text: /, ''))}.${others}${hint}`, fixable);
  promptInput.setAttribute('aria-invalid', 'true');
  return null;
}

const sentence = (s) => s.replace(/^./, (c) => c.toUpperCase()).replace(/\.$/, '');

// ---------------------------------------------------------------- loading
/**
 * The runtime, for startDemo: createWorker() (the runtime in a Web Worker; in a page
 * without COOP/COEP it runs one thread, as the page would), or init() in the page
 * with ?runtime=page. `capabilities()` as startDemo reads it.
 */
async function startRuntime() {
  if (RUNTIME === 'page') {
    const { init } = await import('attnwasm');
    const runtime = await init();
    return { runtime, capabilities: () => runtime.capabilities() };
  }
  const runtime = await createWorker();
  return { runtime, capabilities: () => runtime.startCapabilities };
}

/** The vocabulary as the page draws it, asked of the model's tokenizer once (a few ms through the worker). */
async function readVocabulary() {
  const ids = Array.from({ length: lm.vocabSize }, (_, i) => i);
  const [token, special] = await Promise.all([
    Promise.all(ids.map((i) => lm.tokenizer.idToToken(i))),
    Promise.all(ids.map((i) => lm.tokenizer.isSpecial(i))),
  ]);
  return { token, special, ids: new Map(ids.filter((i) => !special[i]).map((i) => [token[i], i])) };
}

async function start() {
  const runsIn = $('runs-in');
  runsIn.querySelector('span').textContent = RUNTIME === 'page'
    ? 'The model runs in this page, on its main thread, between the frames it draws.'
    : 'The model runs in a Web Worker; this page only draws what it writes.';
  const other = runsIn.querySelector('a');
  const q = new URLSearchParams(location.search);
  if (RUNTIME === 'page') q.delete('runtime');
  else q.set('runtime', 'page');
  other.href = `?${q}`;
  other.textContent = RUNTIME === 'page' ? 'run it in a worker' : 'run it in the page instead';
  const started = await startDemo({
    init: startRuntime, panel, what: 'the language model', modelUrl: MODEL_URL, trainCommand: TRAIN_COMMAND,
    load: (s, onProgress) => s.runtime.loadModel(MODEL_URL, { onProgress }),
  });
  if (!started) return;
  aw = started.aw.runtime;
  lm = started.model;
  vocab = await readVocabulary();
  layerSelect.replaceChildren(...Array.from({ length: lm.numLayers }, (_, i) => new Option(`${i + 1}`, String(i))));
  layerSelect.value = String(lm.numLayers - 1);
  headSelect.replaceChildren(new Option('mean over heads', 'mean'),
    ...Array.from({ length: lm.numHeads }, (_, i) => new Option(`${i + 1}`, String(i))));
  inputs.maxTokens.max = String(Math.min(MAX_TOKENS_LIMIT, lm.maxPositions - 1));
  // Warm up: the first calls of each wasm function run baseline code (V8's Liftoff) until the
  // optimised code is ready, so a prompt's prefill and a few hundred steps here make the first
  // Write as fast as the next ones (measured in headless Chromium, 20-character prompt: first
  // token 43-101 ms after a cold page's first Write, 3-5 ms after this warm-up).
  await warmUp();
  for (const el of [writeButton, ...document.querySelectorAll('#examples button')]) el.disabled = false;
  await checkPrompt();
  document.body.dataset.ready = 'true';
  if (params.has('p')) startWrite(performance.now());
}

async function warmUp() {
  const g = lm.generate('Computers are the best of friends', {
    maxNewTokens: 300, temperature: 0.8, topP: 0.95, seed: 1, stopTokens: [], attention: true,
  });
  for await (const token of g) void token;  // only the time it takes
}

// ---------------------------------------------------------------- writing
function readOptions() {
  const num = (el, name, fallback) => {
    if (el.value.trim() === '') return fallback;
    const v = Number(el.value);
    if (!Number.isFinite(v)) throw new RangeError(`${name}: expected a number, got '${el.value}'`);
    return v;
  };
  const maxNewTokens = num(inputs.maxTokens, 'tokens', 200);
  if (!(Number.isInteger(maxNewTokens) && maxNewTokens >= 1 && maxNewTokens <= Number(inputs.maxTokens.max))) {
    throw new RangeError(`tokens: expected a whole number from 1 to ${inputs.maxTokens.max}, got ${inputs.maxTokens.value}`);
  }
  const temperature = num(inputs.temperature, 'temperature', 0);
  const o = { maxNewTokens, temperature };
  if (temperature > 0) {
    o.topK = num(inputs.topK, 'top-k', 0);
    o.topP = num(inputs.topP, 'top-p', 1);
    const s = inputs.seed.value.trim();
    if (s !== '') {
      if (!/^-?\d+$/.test(s) || !Number.isSafeInteger(Number(s))) {
        throw new RangeError(`seed: expected a whole number (or nothing, for a random seed), got '${s}'`);
      }
      o.seed = Number(s);
    }
  }
  if (!inputs.stopAtEnd.checked) o.stopTokens = [];
  return o;
}

/**
 * Write pressed (or Ctrl+Enter, or an example) at time `t0` (the event's
 * timeStamp, on performance.now()'s clock). Stops the Write being handled
 * first and waits for it to end: never two at once; of several pressed
 * meanwhile, only the last writes.
 */
function startWrite(t0) {
  if (!lm) return;
  const request = ++writeRequests;
  active?.controller.abort();
  const next = writes.then(() => (request === writeRequests ? write(t0) : undefined));
  writes = next.catch(() => {});  // (an error still reaches the console through `next`)
}

/** One Write: check the prompt, start the generation, take its tokens until it ends or `active` is aborted. */
async function write(t0) {
  const controller = new AbortController();
  active = { controller };
  try {
    const text = promptInput.value;
    // The prompt as typed was checked already (unless a check is on its way): no round trip to the worker.
    const known = checked?.text === text && promptInput.dataset.check === undefined;
    if (!(known ? checked.ids : await checkPrompt())) {
      promptInput.focus();
      return;
    }
    if (controller.signal.aborted) return;
    let options;
    let g;
    try {
      options = readOptions();
      // In the worker: the options are checked there, and a bad one rejects here with the API's message.
      g = await lm.generate(text, { ...options, signal: controller.signal, attention: true });
    } catch (e) {
      showError(e.message);  // a setting out of range: the API's message names it
      return;
    }
    hideError();
    run = newRun(g, text, options, t0);
    writing(true);
    try {
      // Each token arrives as a message from the worker (a task of its own), so the page paints
      // between them; in the page, generate() waits for a frame after ~40 ms of writing.
      for await (const t of g) onToken(run, t);
    } catch (e) {
      run.error = e;
    }
    run.stopReason = g.stopReason;
    // Draw the end now, so that when the page says "done" the whole text is on it.
    heatDirty = true;
    render();
    writing(false);
  } finally {
    active = null;
  }
}

function writing(on) {
  stopButton.disabled = !on;
  resultCard.dataset.state = on ? 'writing' : run?.error ? 'error' : 'done';
  resultCard.classList.toggle('is-writing', on);
}

/** A generation and everything the page draws from it; arrays sized for the whole run up front. */
function newRun(g, prompt, options, t0) {
  runs += 1;
  const P0 = g.promptIds.length;
  const L = lm.numLayers, H = lm.numHeads;
  const cap = P0 + options.maxNewTokens;
  const W = Math.min(lm.attentionWindow ?? cap, cap);
  const r = {
    number: runs,
    prompt,
    options,
    seed: g.seed,
    t0,
    P0,
    L,
    H,
    W,
    ids: new Int32Array(cap),        // the context: prompt ids (with the leading <eos>), then generated ids
    ms: new Float32Array(options.maxNewTokens),  // each token's step time
    n: 0,                            // tokens so far
    // The attention that chose token i: (L, H, W) floats at i·L·H·W, over positions
    // start(i) … start(i) + W − 1 where start(i) = max(0, P0 + i − W); the weights
    // outside the model's window are zeros, so nothing is lost.
    att: new Float32Array(options.maxNewTokens * L * H * W),
    pending: [],                     // text pieces not yet in the DOM: strings, or null for an <eos>
    firstAt: null,
    lastAt: null,
    firstPaintAt: null,
    maxStepMs: 0,                    // the slowest step after the first (the strip's scale)
    stopReason: null,
    error: null,
    shown: null,                     // the token whose attention is on show (null: follow the newest)
    layout: null,                    // layoutCells(): where each position's cell is
    heatGeometry: null,              // what the heatmap shows (for hovering and clicking)
    stepsGeometry: null,             // the per-token strip's bar width (for hovering)
    linkWritten: false,
    renders: 0,                      // frames drawn, their total and largest time (ms)
    renderMs: 0,
    renderMaxMs: 0,
  };
  r.ids.set(g.promptIds);
  followBox.checked = true;
  resetOutput(r);
  return r;
}

/** One token: bookkeeping only (see the file header); render() draws. */
function onToken(r, t) {
  const now = performance.now();
  const i = t.index;
  r.ids[r.P0 + i] = t.id;
  r.ms[i] = t.ms;
  if (i > 0 && t.ms > r.maxStepMs) r.maxStepMs = t.ms;
  r.n = i + 1;
  if (r.firstAt === null) r.firstAt = now;
  r.lastAt = now;
  r.pending.push(vocab.special[t.id] ? null : t.text);
  const { layers, heads, positions, data } = t.attention;
  const w = Math.min(positions, r.W);
  const base = i * r.L * r.H * r.W;
  for (let lh = 0; lh < layers * heads; lh++) {
    r.att.set(data.subarray(lh * positions + positions - w, (lh + 1) * positions), base + lh * r.W);
  }
  scheduleRender(false);
}

// ---------------------------------------------------------------- drawing, once per frame
let frameRequested = false;
let heatDirty = true;
/**
 * While tokens arrive, the page draws at most once per WRITING_FRAME_MS (25 frames a second, as generate()
 * paints when it runs in the page). A frame keeps the main thread from taking tokens for its drawing (1 ms
 * here) and the browser's style, layout and paint, and the worker computes only two tokens ahead of the page
 * (worker.js, AHEAD): drawing every frame (60 a second) cost 10-20 % of the tokens/s, in the worker and in
 * the page alike (headless Chromium, 2 cores).
 */
const WRITING_FRAME_MS = 40;
let renderedAt = -Infinity;

/** Draws in the next frame: at once when the view changed (`heatChanged`), else WRITING_FRAME_MS after the last. */
function scheduleRender(heatChanged) {
  if (heatChanged) heatDirty = true;
  if (frameRequested) return;
  frameRequested = true;
  const wait = heatChanged ? 0 : renderedAt + WRITING_FRAME_MS - performance.now();
  if (wait > 1) setTimeout(() => requestAnimationFrame(render), wait);
  else requestAnimationFrame(render);
}

function render() {
  frameRequested = false;
  renderedAt = performance.now();
  const r = run;
  if (!r) return;
  const t0 = performance.now();
  if (r.pending.length) {
    appendOutput(r.pending);
    r.pending = [];
    heatDirty = true;
    if (r.firstPaintAt === null) r.firstPaintAt = performance.now();
  }
  renderStats(r);
  drawSteps(r);
  if (heatDirty) drawHeatmap(r);
  heatDirty = false;
  const ms = performance.now() - t0;
  r.renders += 1;
  r.renderMs += ms;
  if (ms > r.renderMaxMs) r.renderMaxMs = ms;
}

function resetOutput(r) {
  outPrompt.textContent = r.prompt;
  outPrompt.classList.toggle('empty', r.prompt === '');
  outPrompt.title = r.prompt === '' ? 'empty prompt: the model starts a new fortune' : 'the prompt';
  outGen.replaceChildren(document.createTextNode(''));
  statEl.reuse.classList.add('hidden');
  statEl.link.classList.add('hidden');
  $('steps-hover').innerHTML = '&nbsp;';
  $('heat-hover').innerHTML = '&nbsp;';
  resultCard.dataset.run = String(r.number);
  delete resultCard.dataset.stopReason;
  heatDirty = true;
}

/** Appends text pieces to the output: one text node per stretch between <eos> marks. */
function appendOutput(pieces) {
  let text = '';
  const flush = () => {
    if (text) outGen.lastChild.appendData(text);
    text = '';
  };
  for (const p of pieces) {
    if (p !== null) { text += p; continue; }
    flush();
    const eos = document.createElement('span');
    eos.className = 'eos';
    eos.textContent = '<eos>';
    eos.title = 'end of a fortune (the model goes on with a new one)';
    outGen.append(eos, document.createTextNode('\n'));
  }
  flush();
}

const STOP_TEXT = {
  stop: 'ended: the fortune is complete (<eos>)',
  length: 'ended: the token limit',
  context: 'ended: the context is full',
  aborted: 'stopped',
  error: 'failed',
};

function renderStats(r) {
  const set = (k, v) => { if (statEl[k].textContent !== v) statEl[k].textContent = v; };
  set('first', r.firstAt === null ? '…' : formatMs(r.firstAt - r.t0));
  const rate = r.n >= 2 ? (r.n - 1) / ((r.lastAt - r.firstAt) / 1000) : null;
  set('rate', rate === null ? '—' : `${Math.round(rate).toLocaleString('en-US')} tokens/s`);
  set('last', r.n ? formatMs(r.ms[r.n - 1]) : '—');
  set('count', String(r.n));
  if (r.n) panel.setLastInference(r.ms[r.n - 1]);
  const { end, seed } = statEl;
  resultCard.dataset.tokens = String(r.n);
  if (r.stopReason) {
    end.textContent = r.error ? `failed: ${r.error.message}` : STOP_TEXT[r.stopReason] ?? r.stopReason;
    end.className = r.error ? 'error-inline' : '';
    resultCard.dataset.stopReason = r.stopReason;
  } else {
    end.textContent = 'writing…';
    end.className = '';
  }
  if (r.options.temperature > 0) {
    seed.textContent = `seed ${r.seed}`;
    seed.title = 'the same seed, prompt and settings write the same text';
    resultCard.dataset.seed = String(r.seed);
    statEl.reuse.classList.toggle('hidden', !r.stopReason || inputs.seed.value.trim() === String(r.seed));
  } else {
    seed.textContent = 'greedy';
    seed.title = 'temperature 0: the most likely character every time';
    delete resultCard.dataset.seed;
  }
  if (r.stopReason && !r.linkWritten) {
    // A link that writes the same text again (history.replaceState took up to 14 ms here: a link costs nothing).
    r.linkWritten = true;
    const q = new URLSearchParams({ p: r.prompt, n: String(r.options.maxNewTokens), t: String(r.options.temperature) });
    if (r.options.temperature > 0) {
      q.set('k', String(r.options.topK));
      q.set('topp', String(r.options.topP));
      q.set('seed', String(r.seed));
    }
    if (r.options.stopTokens) q.set('end', '0');
    if (RUNTIME === 'page') q.set('runtime', 'page');
    statEl.link.href = `?${q}`;
    statEl.link.classList.remove('hidden');
  }
}

/** Canvas sized to its CSS box at the device pixel ratio; returns its 2D context in CSS pixels. */
function fitCanvas(canvas, width, height) {
  const dpr = window.devicePixelRatio || 1;
  const w = Math.round(width * dpr), h = Math.round(height * dpr);
  if (canvas.width !== w || canvas.height !== h) {
    canvas.width = w;
    canvas.height = h;
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/** One bar per token, as wide as 1/maxNewTokens of the strip (so it fills as the run goes). */
function drawSteps(r) {
  const width = widths.steps;
  const height = 48;
  const ctx = fitCanvas(stepsCanvas, width, height);
  ctx.clearRect(0, 0, width, height);
  ctx.fillStyle = '#eef0f4';
  ctx.fillRect(0, height - 1, width, 1);
  const bw = width / r.options.maxNewTokens;
  const scale = Math.max(r.maxStepMs, r.n === 1 ? r.ms[0] : 0, 1e-3);
  for (let i = 0; i < r.n; i++) {
    const h = Math.max(1, Math.min(1, r.ms[i] / scale) * (height - 2));
    ctx.fillStyle = i === 0 ? '#f2a65a' : '#9fb3ef';
    ctx.fillRect(i * bw, height - 1 - h, Math.max(1, bw - (bw > 3 ? 1 : 0)), h);
  }
  r.stepsGeometry = { bw, width };
}

stepsCanvas.addEventListener('mousemove', (e) => {
  const r = run;
  if (!r?.stepsGeometry) return;
  const i = Math.floor((e.clientX - stepsCanvas.getBoundingClientRect().left) / r.stepsGeometry.bw);
  $('steps-hover').textContent = i >= 0 && i < r.n
    ? `token ${i + 1} ${charLabel(r.ids[r.P0 + i])}: ${formatMs(r.ms[i])}${i === 0 ? ' (with the prompt\'s prefill)' : ''}`
    : '\u00a0';
});
stepsCanvas.addEventListener('mouseleave', () => { $('steps-hover').innerHTML = '&nbsp;'; });

// ---------------------------------------------------------------- the attention heatmap
/** How a context position is drawn: <eos> as a 3-cell "eos" mark, tab and newline as arrows, space as a dot. */
function glyph(id) {
  if (vocab.special[id]) return 'eos';
  const c = vocab.token[id];
  return c === '\n' ? '↵' : c === '\t' ? '⇥' : c === ' ' ? '·' : c;
}

function charLabel(id) {
  if (vocab.special[id]) return '<eos>';
  const c = vocab.token[id];
  return c === '\n' ? '“\\n”' : c === '\t' ? '“\\t”' : `“${c}”`;
}

/**
 * Cell positions of the context, computed as positions arrive (append-only):
 * col[p], row[p], width[p] in cells; a newline ends its row; an <eos> after the
 * start ends its row too (a new fortune starts on a new line).
 */
function layoutCells(r, count, cols) {
  let lay = r.layout;
  if (!lay || lay.cols !== cols) {
    const cap = r.ids.length;
    lay = r.layout = { cols, n: 0, col: 0, row: 0, cellCol: new Int16Array(cap), cellRow: new Int32Array(cap), cellW: new Uint8Array(cap), drawn: 0 };
  }
  for (let p = lay.n; p < count; p++) {
    const id = r.ids[p];
    const special = vocab.special[id];
    const w = special ? 3 : 1;
    if (lay.col + w > cols) { lay.row++; lay.col = 0; }
    lay.cellCol[p] = lay.col;
    lay.cellRow[p] = lay.row;
    lay.cellW[p] = w;
    lay.col += w;
    if ((special && p > 0) || (!special && vocab.token[id] === '\n')) { lay.row++; lay.col = 0; }
  }
  lay.n = count;
  return lay;
}

/** The token whose attention is shown: the one clicked, or the newest. */
function shownToken(r) {
  if (r.shown !== null && r.shown < r.n) return r.shown;
  return r.n - 1;
}

/** The shown attention over positions start … start + w − 1 for the selected layer and head (or the head mean). */
function selectedAttention(r, i) {
  const P = r.P0 + i;               // positions the token's query saw
  const w = Math.min(P, r.W);
  const l = Number(layerSelect.value);
  const h = headSelect.value;
  const heads = h === 'mean' ? Array.from({ length: r.H }, (_, k) => k) : [Number(h)];
  const out = new Float32Array(w);
  for (const hh of heads) {
    const base = i * r.L * r.H * r.W + (l * r.H + hh) * r.W;
    for (let j = 0; j < w; j++) out[j] += r.att[base + j] / heads.length;
  }
  return { start: P - w, weights: out, P };
}

let cellW = 0;
const ROW_CHUNK = 6;  // the canvases grow by this many rows (growing clears them: the glyphs are redrawn)

/**
 * Two stacked canvases: #heat-text holds every character's glyph, drawn once
 * (new characters appended per frame); #heatmap on top is redrawn per frame
 * but paints only the attended cells (at most the window, 128), each with its
 * colour and its glyph. So a frame costs ~130 cells whatever the context's length.
 */
function drawHeatmap(r) {
  const width = widths.heat;
  if (!cellW) {
    const measure = heatText.getContext('2d');
    measure.font = CELL_FONT;
    cellW = Math.ceil(measure.measureText('M').width) + 1;
  }
  const cols = Math.max(8, Math.floor((width - 2 * PAD_X) / cellW));
  const count = r.P0 + r.n;
  const lay = layoutCells(r, count, cols);
  if (!lay.rows || lay.row + 2 > lay.rows || lay.width !== width) {
    lay.rows = lay.row + 2 + ROW_CHUNK;
    lay.width = width;
    lay.drawn = 0;
  }
  const height = lay.rows * LINE_H + 4;
  const x = (p) => PAD_X + lay.cellCol[p] * cellW;
  const y = (p) => lay.cellRow[p] * LINE_H;

  // The glyph layer: characters not drawn yet.
  const tctx = fitCanvas(heatText, width, height);
  if (lay.drawn === 0) tctx.clearRect(0, 0, width, height);
  tctx.font = CELL_FONT;
  tctx.textAlign = 'center';
  tctx.textBaseline = 'middle';
  for (let p = lay.drawn; p < count; p++) drawCell(tctx, r, p, x(p), y(p), lay.cellW[p] * cellW, null);
  lay.drawn = count;

  // The attention layer.
  const ctx = fitCanvas(heat, width, height);
  ctx.clearRect(0, 0, width, height);
  ctx.font = CELL_FONT;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  const i = r.n ? shownToken(r) : -1;
  const att = i >= 0 ? selectedAttention(r, i) : { start: count, weights: new Float32Array(0), P: count };
  let max = 0, argmax = -1;
  for (let j = 0; j < att.weights.length; j++) if (att.weights[j] > max) { max = att.weights[j]; argmax = att.start + j; }
  for (let j = 0; j < att.weights.length; j++) {
    const p = att.start + j;
    drawCell(ctx, r, p, x(p), y(p), lay.cellW[p] * cellW, blues(max > 0 ? att.weights[j] / max : 0));
  }
  if (i >= 0) {
    const p = att.P;  // the character this attention chose, outlined
    ctx.strokeStyle = '#f2a65a';
    ctx.lineWidth = 2;
    ctx.strokeRect(x(p) + 0.5, y(p) + 1, lay.cellW[p] * cellW - 2, LINE_H - 5);
    ctx.lineWidth = 1;
    if (att.start > 0) {
      // Where the window starts: a bar before its first cell.
      ctx.fillStyle = '#3457d5';
      ctx.fillRect(x(att.start) - 1.5, y(att.start) + 1, 2, LINE_H - 5);
    }
  }
  // The canvases are allocated ROW_CHUNK rows ahead; show the rows in use.
  const shownHeight = `${(lay.row + (lay.col > 0 ? 1 : 0) + (r.stopReason ? 0 : 1)) * LINE_H + 4}px`;
  if (heatWrap.style.height !== shownHeight) heatWrap.style.height = shownHeight;
  r.heatGeometry = { lay, count, att };
  heat.dataset.token = String(i);
  heat.dataset.view = `${layerSelect.value}/${headSelect.value}`;
  heatCaption(r, i, att, max, argmax);
}

/**
 * One context cell at (cx, cy), cw wide: on the glyph layer (rgb null) a muted
 * glyph and the prompt's underline; on the attention layer its colour and a
 * glyph readable on it.
 */
function drawCell(ctx, r, p, cx, cy, cw, rgb) {
  if (rgb) {
    ctx.fillStyle = css(rgb);
    ctx.fillRect(cx, cy + 1, cw - 1, LINE_H - 5);
  } else if (p < r.P0) {
    ctx.fillStyle = '#b8c3dd';
    ctx.fillRect(cx, cy + LINE_H - 3, cw - 1, 2);
  }
  const g = glyph(r.ids[p]);
  const ink = rgb ? textOn(rgb) : '#7a8396';
  if (g === 'eos') {
    ctx.strokeStyle = rgb ? ink : '#9aa3b5';
    ctx.strokeRect(cx + 1.5, cy + 3.5, cw - 4, LINE_H - 9);
    ctx.font = '10px system-ui, sans-serif';
    ctx.fillStyle = ink;
    ctx.fillText('eos', cx + cw / 2, cy + LINE_H / 2 - 1);
    ctx.font = CELL_FONT;
    return;
  }
  const faint = g === '·' || g === '↵' || g === '⇥';
  ctx.fillStyle = faint && ink !== '#ffffff' ? '#b3b9c6' : ink;
  ctx.fillText(g, cx + cw / 2, cy + LINE_H / 2 - 1);
}

function heatCaption(r, i, att, max, argmax) {
  const caption = $('heat-caption');
  if (i < 0) {
    caption.textContent = 'Each cell is a position of the context; darker = more attention (scaled to the largest weight). Press Write.';
    return;
  }
  const head = headSelect.value === 'mean' ? 'the mean over heads' : `head ${Number(headSelect.value) + 1}`;
  const windowNote = att.start > 0
    ? ` It attends to the last ${r.W} positions only (the model's window, from the blue bar); those before get no attention.` : '';
  caption.textContent = `Token ${i + 1}, ${charLabel(r.ids[att.P])} (outlined), was chosen looking at positions 0–${att.P - 1}: ` +
    `layer ${Number(layerSelect.value) + 1}, ${head}. Darker = more attention; the largest weight, ${max.toFixed(3)}, ` +
    `is on position ${argmax} ${charLabel(r.ids[argmax])}.${windowNote} ` +
    (r.shown === null ? 'Click a written character to see the attention that chose it.' : '');
}

function cellAt(e) {
  const r = run;
  const gm = r?.heatGeometry;
  if (!gm) return -1;
  const rect = heat.getBoundingClientRect();
  const col = Math.floor((e.clientX - rect.left - PAD_X) / cellW);
  const row = Math.floor((e.clientY - rect.top) / LINE_H);
  for (let p = 0; p < gm.count; p++) {
    if (gm.lay.cellRow[p] === row && col >= gm.lay.cellCol[p] && col < gm.lay.cellCol[p] + gm.lay.cellW[p]) return p;
  }
  return -1;
}

heat.addEventListener('mousemove', (e) => {
  const p = cellAt(e);
  const gm = run?.heatGeometry;
  if (p < 0 || !gm) {
    $('heat-hover').innerHTML = '&nbsp;';
    return;
  }
  const { att } = gm;
  const j = p - att.start;
  const where = p === 0 ? 'the start' : p < run.P0 ? 'prompt' : `written, token ${p - run.P0 + 1}`;
  const weight = p >= att.P ? 'chosen by this attention' : j >= 0 ? `attention ${att.weights[j].toFixed(4)}` : 'outside the window: attention 0';
  $('heat-hover').textContent = `position ${p} ${charLabel(run.ids[p])} (${where}): ${weight}`;
});
heat.addEventListener('mouseleave', () => { $('heat-hover').innerHTML = '&nbsp;'; });
heat.addEventListener('click', (e) => {
  const p = cellAt(e);
  if (!run || p < run.P0) return;
  run.shown = p - run.P0;
  followBox.checked = false;
  scheduleRender(true);
});

start();

/** For tests and the console: the page's state and figures; wasm memory. */
window.writeDemo = {
  /** Where the model runs: 'worker' or 'page'. */
  runtime: RUNTIME,
  get state() {
    const r = run;
    if (!r) return null;
    return {
      run: r.number,
      prompt: r.prompt,
      promptIds: r.P0,
      tokens: r.n,
      text: outGen.textContent,
      seed: r.seed,
      stopReason: r.stopReason,
      firstTokenMs: r.firstAt === null ? null : r.firstAt - r.t0,
      firstPaintMs: r.firstPaintAt === null ? null : r.firstPaintAt - r.t0,
      tokensPerSecond: r.n >= 2 ? (r.n - 1) / ((r.lastAt - r.firstAt) / 1000) : null,
      writingMs: r.lastAt === null ? null : r.lastAt - r.t0,
      stepMs: Array.from(r.ms.subarray(0, r.n)),
      frames: r.renders,
      renderMeanMs: r.renders ? r.renderMs / r.renders : null,
      renderMaxMs: r.renderMaxMs,
    };
  },
  /** The heatmap cell of context position p in client coordinates: { x, y, width, height }, or null. */
  cellBox(p) {
    const gm = run?.heatGeometry;
    if (!gm || p < 0 || p >= gm.count) return null;
    const rect = heat.getBoundingClientRect();
    return { x: rect.left + PAD_X + gm.lay.cellCol[p] * cellW, y: rect.top + gm.lay.cellRow[p] * LINE_H, width: gm.lay.cellW[p] * cellW, height: LINE_H };
  },
  /** The runtime's memory() (a promise from the worker). */
  memory: async () => (aw ? aw.memory() : null),
};
