// Open a model: a Hugging Face checkpoint from disk (a folder or files), a base URL, or one of this
// repository's models, run in a worker ('attnwasm/worker'): the page reads only the files' headers (to say
// what fits before the load), the worker reads the weights itself. A language model then chats (its chat
// template applied by CausalLM#chat) or completes a text, streaming; the page shows each token's time and
// the newest token's attention for every layer and head. What the runtime cannot run is refused with its
// error's text. Imports the package the way a user would (import map: attnwasm/worker → /bindings/worker.js).
//
// Keeping the page responsive: the model runs in the worker; a token here is bookkeeping only, and what is
// visible is drawn once per animation frame.
import { createWorker } from 'attnwasm/worker';
import { mountPanel, formatBytes, formatMs } from '../shared/panel.js';
import { blues } from '../shared/colormap.js';

const REPO_MODELS = [
  { label: 'fortune writer (causal LM)', url: '/models/lm/lm.safetensors' },
  { label: 'number translator', url: '/models/translator/translator.safetensors' },
  { label: 'digit classifier', url: '/models/vit/vit.safetensors' },
];
const INDEX = 'model.safetensors.index.json';
const GiB = 2 ** 30;
const WASM_LIMIT = 4 * GiB;
/** Bytes per weight-matrix element kept as each dtype (q8 / q4: groups of 32 with a float32 scale). */
const DTYPE_BYTES = { f32: 4, bf16: 2, f16: 2, q8: 36 / 32, q4: 20 / 32 };
const STORED_BYTES = { F32: 4, F16: 2, BF16: 2, F64: 8, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1 };
/** What a load needs beside the weights: the staging block, the working memory, a KV cache. */
const OVERHEAD = 96 * 2 ** 20;
const HEAT_COLUMNS = 256;

const $ = (id) => document.getElementById(id);
const panel = mountPanel($('panel'), { models: ['Model weights'] });
const show = (el, on = true) => el.classList.toggle('hidden', !on);

let rt = null;
let model = null;
/** The checkpoint chosen: { arg (what loadModel gets), label, weights: [{ name, header }], config } */
let chosen = null;
/** The generation running: { controller, finished } */
let active = null;
let messages = [];
const run = { ids: [], ms: [], first: null, firstAt: null, lastAt: null, end: '', attention: null, promptLength: 0, pending: '', target: null, n: 0 };

// ------------------------------------------------------------------ the checkpoint's headers

/** A safetensors header from the first bytes of a file: { tensors: [{ name, dtype, shape }] }. */
function parseHeader(text, name) {
  let h;
  try {
    h = JSON.parse(text);
  } catch (e) {
    throw new Error(`${name}: the safetensors header is not JSON (${e.message})`);
  }
  return Object.entries(h).filter(([k]) => k !== '__metadata__').map(([k, v]) => ({ name: k, dtype: v.dtype, shape: v.shape }));
}

async function blobHeader(file) {
  const n = Number(new DataView(await file.slice(0, 8).arrayBuffer()).getBigUint64(0, true));
  if (!(n > 0 && n < 100e6)) throw new Error(`${file.name}: not a safetensors file (its header length reads ${n})`);
  return parseHeader(await file.slice(8, 8 + n).text(), file.name);
}

/** The header of a file at `url`: its first bytes only (the rest of the download is cancelled). */
async function urlHeader(url, name) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${name}: fetching ${url} gave HTTP ${res.status}`);
  const reader = res.body.getReader();
  const parts = [];
  let have = 0, need = 8, n = null;
  while (have < need) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    have += value.byteLength;
    if (n === null && have >= 8) {
      const all = concat(parts);
      n = Number(new DataView(all.buffer, all.byteOffset).getBigUint64(0, true));
      if (!(n > 0 && n < 100e6)) throw new Error(`${name}: not a safetensors file (its header length reads ${n})`);
      need = 8 + n;
    }
  }
  reader.cancel().catch(() => {});
  return parseHeader(new TextDecoder().decode(concat(parts).subarray(8, need)), name);
}

function concat(parts) {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((a, p) => a + p.byteLength, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.byteLength; }
  return out;
}

const shardNames = (indexText) => [...new Set(Object.values(JSON.parse(indexText).weight_map ?? {}))];

/** The files picked: the weights (index and shards, model.safetensors, or one .safetensors) and config.json. */
async function inspectFiles(fileList) {
  const files = [...fileList];
  const byName = new Map(files.map((f) => [f.name, f]));
  let weights;
  if (byName.has(INDEX)) {
    weights = shardNames(await byName.get(INDEX).text()).map((n) => {
      if (!byName.has(n)) throw new Error(`${INDEX} names the shard ${n}, which is not among the files chosen`);
      return byName.get(n);
    });
  } else if (byName.has('model.safetensors')) weights = [byName.get('model.safetensors')];
  else {
    const st = files.filter((f) => f.name.endsWith('.safetensors'));
    if (st.length !== 1) throw new Error(`no model.safetensors or ${INDEX} among the files chosen (${files.map((f) => f.name).join(', ') || 'none'})`);
    weights = st;
  }
  const config = byName.has('config.json') ? JSON.parse(await byName.get('config.json').text()) : null;
  const list = [];
  for (const f of weights) list.push({ name: f.name, bytes: f.size, header: await blobHeader(f) });
  // A folder pick holds every file of the folder: only the checkpoint's go to the worker.
  const keep = new Set([...weights.map((f) => f.name), INDEX, 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json']);
  const sideFiles = files.filter((f) => keep.has(f.name));
  const arg = weights.length === 1 && weights[0].name !== 'model.safetensors' && !config ? weights[0] : sideFiles;
  return { arg, label: `${files.length} file(s): ${sideFiles.map((f) => f.name).join(', ')}`, weights: list, config };
}

async function inspectUrl(base) {
  const url = new URL(base, location.href);
  if (url.pathname.endsWith('.safetensors')) {
    return { arg: url.href, label: url.href, weights: [{ name: url.pathname.split('/').pop(), header: await urlHeader(url, url.pathname) }], config: null };
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  const optional = async (name) => {
    const res = await fetch(new URL(name, url));
    return res.ok ? res.text() : null;
  };
  const index = await optional(INDEX);
  const names = index ? shardNames(index) : ['model.safetensors'];
  const configText = await optional('config.json');
  const weights = [];
  for (const n of names) weights.push({ name: n, header: await urlHeader(new URL(n, url), n) });
  return { arg: url.href, label: url.href, weights, config: configText ? JSON.parse(configText) : null };
}

/** Bytes of the weights kept as each dtype: matrices in the dtype, vectors (norms, biases) in float32. */
function weightBytes(weights) {
  const out = { stored: 0 };
  for (const k of Object.keys(DTYPE_BYTES)) out[k] = 0;
  for (const w of weights) {
    for (const t of w.header) {
      const n = t.shape.reduce((a, b) => a * b, 1);
      const matrix = t.shape.length >= 2;
      out.stored += n * (matrix ? STORED_BYTES[t.dtype] ?? 4 : 4);
      for (const [k, b] of Object.entries(DTYPE_BYTES)) out[k] += n * (matrix ? b : 4);
    }
  }
  return out;
}

async function choose(what, inspect) {
  show($('source-error'), false);
  show($('load-error'), false);
  $('source-summary').textContent = `Reading the headers of ${what}…`;
  try {
    chosen = await inspect();
  } catch (e) {
    chosen = null;
    $('source-summary').textContent = 'No checkpoint chosen.';
    $('source-error').textContent = e.message;
    show($('source-error'));
    show($('fit-card'), false);
    return;
  }
  const tensors = chosen.weights.reduce((a, w) => a + w.header.length, 0);
  const type = chosen.config ? ` — config.json: model_type "${chosen.config.model_type}"` : '';
  $('source-summary').textContent = `${chosen.label}: ${chosen.weights.length} weight file(s), ${tensors} tensors${type}`;
  renderFits();
  $('load').disabled = !rt;
}

function renderFits() {
  const bytes = weightBytes(chosen.weights);
  const device = navigator.deviceMemory ? navigator.deviceMemory * GiB : null;
  const rows = [['as stored', '', bytes.stored], ...Object.keys(DTYPE_BYTES).map((k) => [k, k, bytes[k]])];
  const dtype = $('dtype');
  const keep = dtype.value;
  dtype.replaceChildren(...rows.map(([label, value]) => new Option(label, value)));
  dtype.value = keep && rows.some((r) => r[1] === keep) ? keep : '';
  $('fits').tBodies[0].replaceChildren(...rows.map(([label, value, b]) => {
    const tr = document.createElement('tr');
    const need = b + OVERHEAD;
    const fits = need <= WASM_LIMIT && (!device || need <= device / 2);
    const why = need > WASM_LIMIT ? 'no: over the 4 GiB of wasm memory' : device && need > device / 2 ? `no: over half of this device's ${navigator.deviceMemory} GiB` : 'yes';
    tr.innerHTML = `<td></td><td></td><td class="${fits ? 'yes' : 'no'}"></td>`;
    tr.cells[0].textContent = label + (value === 'q8' || value === 'q4' ? ' (≈)' : '');
    tr.cells[1].textContent = formatBytes(b);
    tr.cells[2].textContent = why;
    tr.dataset.dtype = value;
    return tr;
  }));
  $('fit-note').textContent = `A load needs the weights plus about ${formatBytes(OVERHEAD)} (the staging block, working memory, the KV cache). `
    + `WebAssembly memory ends at 4 GiB; this device reports ${device ? `${navigator.deviceMemory} GiB (navigator.deviceMemory, capped at 8)` : 'no memory size'}.`;
  show($('fit-card'));
}

// ------------------------------------------------------------------ loading

async function load() {
  if (!chosen || !rt) return;
  if (active) { active.controller.abort(); await active.finished; }
  show($('load-error'), false);
  for (const id of ['model-card', 'lm-card', 'attention-card']) show($(id), false);
  if (model) { await model.dispose(); model = null; }
  $('load').disabled = true;
  show($('progress-card'));
  const bar = $('progress-bar');
  const t0 = performance.now();
  const dtype = $('dtype').value;
  document.body.dataset.loaded = 'loading';
  try {
    model = await rt.loadModel(chosen.arg, {
      ...(dtype ? { dtype } : {}),
      onProgress: ({ loaded, total, file }) => {
        if (total) { bar.max = total; bar.value = loaded; } else bar.removeAttribute('value');
        const s = (performance.now() - t0) / 1000;
        $('progress-text').textContent = `Loading ${file}: ${formatBytes(loaded)}${total ? ` of ${formatBytes(total)}` : ''}`;
        $('progress-rate').textContent = `${(loaded / 2 ** 20 / Math.max(s, 1e-3)).toFixed(0)} MB/s · ${s.toFixed(1)} s`;
      },
    });
  } catch (e) {
    show($('progress-card'), false);
    $('load-error').textContent = `Cannot run this checkpoint: ${e.message}`;
    $('load-error').dataset.code = e.code ?? '';
    show($('load-error'));
    $('load').disabled = false;
    document.body.dataset.loaded = 'error';
    return;
  }
  const seconds = (performance.now() - t0) / 1000;
  $('progress-text').textContent = `Loaded ${formatBytes(model.fileBytes)} in ${seconds.toFixed(1)} s`;
  $('progress-rate').textContent = `${(model.fileBytes / 2 ** 20 / seconds).toFixed(0)} MB/s`;
  bar.max = 1;
  bar.value = 1;
  panel.setModelSize(model.weightBytes);
  $('load').disabled = false;
  showModel(seconds);
  document.body.dataset.loaded = 'true';
}

function showModel(seconds) {
  const facts = [['kind', model.kind], ['weights in memory', `${formatBytes(model.weightBytes)} (${Object.keys(model.weightTypes ?? {}).join(', ')})`],
    ['read', `${formatBytes(model.fileBytes)} in ${seconds.toFixed(1)} s`]];
  if (model.kind === 'CausalLM') {
    facts.push(['model_type', model.modelType], ['layers × heads', `${model.numLayers} × ${model.numHeads}`], ['vocabulary', String(model.vocabSize)],
      ['positions', String(model.maxPositions)], ['tokenizer', model.tokenizer ? `${model.tokenizer.kind}, ${model.tokenizer.vocabSize} ids` : 'none (ids only)']);
  }
  $('facts').replaceChildren(...facts.flatMap(([k, v]) => {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    return [dt, dd];
  }));
  $('model-title').textContent = model.kind === 'CausalLM' ? `A ${model.modelType} language model` : `A ${model.kind}`;
  const other = model.kind !== 'CausalLM';
  $('other-note').innerHTML = other
    ? `This page runs language models; see this model at work on the <a href="${model.kind === 'Translator' ? '/web/translate/' : '/web/digits/'}">${model.kind === 'Translator' ? 'Translate' : 'Digits'} page</a>.` : '';
  show($('other-note'), other);
  show($('model-card'));
  if (other) return;
  const canChat = typeof model.chat === 'function' && !!model.tokenizer?.config?.chat_template;
  $('mode-chat').disabled = !canChat;
  $('mode-note').textContent = canChat ? '' : !model.tokenizer ? 'No tokenizer: nothing to chat or write with.'
    : typeof model.chat !== 'function' ? 'This runtime has no CausalLM#chat.' : 'No chat template in tokenizer_config.json: plain completion only.';
  if (!canChat) $('mode-complete').checked = true;
  $('send').disabled = !model.tokenizer;
  $('layer').replaceChildren(...Array.from({ length: model.numLayers }, (_, i) => new Option(String(i + 1), String(i))));
  $('head').replaceChildren(...Array.from({ length: model.numHeads }, (_, i) => new Option(String(i + 1), String(i))));
  $('max-tokens').max = String(Math.min(4096, model.maxPositions - 1));
  messages = [];
  renderMode();
  show($('lm-card'));
}

// ------------------------------------------------------------------ chat and completion

function renderMode() {
  const chat = $('mode-chat').checked;
  show($('chat-log'), chat);
  show($('completion'), !chat);
  show($('clear'), chat);
  $('send').textContent = chat ? 'Send' : 'Write';
  $('prompt').placeholder = chat ? 'Say something to the model' : 'A text for the model to go on with';
}

function bubble(role, text) {
  const div = document.createElement('div');
  div.className = `msg ${role}`;
  div.textContent = text;
  $('chat-log').append(div);
  return div;
}

async function send() {
  if (!model || model.kind !== 'CausalLM') return;
  if (active) { active.controller.abort(); await active.finished; }
  const text = $('prompt').value;
  const chat = $('mode-chat').checked;
  const num = (id, d) => ($(id).value.trim() === '' ? d : Number($(id).value));
  const options = { maxNewTokens: num('max-tokens', 64), temperature: num('temperature', 0), attention: true };
  if (options.temperature > 0 && $('seed').value.trim() !== '') options.seed = Number($('seed').value);
  const controller = new AbortController();
  let done;
  active = { controller, finished: new Promise((r) => { done = r; }) };
  Object.assign(run, { ids: [], ms: [], firstAt: null, lastAt: null, end: '', attention: null, pending: '', n: 0, t0: performance.now(), stopReason: null });
  let g;
  if (chat) {
    messages.push({ role: 'user', content: text });
    bubble('user', text);
    run.target = bubble('assistant', '');
    g = model.chat(messages, { ...options, signal: controller.signal });
    $('prompt').value = '';
  } else {
    $('completion-prompt').textContent = text;
    $('completion-gen').textContent = '';
    run.target = $('completion-gen');
    g = model.generate(text, { ...options, signal: controller.signal });
  }
  $('stop').disabled = false;
  $('send').disabled = true;
  $('stats').dataset.state = 'writing';
  show($('attention-card'));
  try {
    for await (const t of g) onToken(t);
    run.stopReason = g.stopReason;
  } catch (e) {
    run.stopReason = 'error';
    run.end = `failed: ${e.message}`;
  }
  run.promptLength = g.promptIds?.length ?? 0;
  run.contextIds = [...(g.promptIds ?? []), ...run.ids];
  if (chat) messages.push(g.message ?? { role: 'assistant', content: g.text });
  render();
  $('stats').dataset.state = run.stopReason === 'error' ? 'error' : 'done';
  $('stats').dataset.stopReason = run.stopReason ?? '';
  $('stop').disabled = true;
  $('send').disabled = false;
  active = null;
  done();
  updateTopPositions();
}

function onToken(t) {
  const now = performance.now();
  run.ids.push(t.id);
  run.ms.push(t.ms);
  run.n += 1;
  run.firstAt ??= now;
  run.lastAt = now;
  run.pending += t.text ?? '';
  if (t.attention) run.attention = t.attention;
  scheduleRender();
}

let frame = false;
function scheduleRender() {
  if (frame) return;
  frame = true;
  requestAnimationFrame(() => { frame = false; render(); });
}

const STOP_TEXT = { stop: 'ended: the end of the turn', length: 'ended: the token limit', context: 'ended: the context is full', aborted: 'stopped', error: 'failed' };

function render() {
  if (run.pending && run.target) {
    run.target.append(run.pending);
    run.pending = '';
    if (run.target.classList.contains('msg')) $('chat-log').scrollTop = $('chat-log').scrollHeight;
  }
  const b = (k, v) => { const el = $('stats').querySelector(`[data-stat="${k}"] b`); if (el && el.textContent !== v) el.textContent = v; };
  b('first', run.firstAt === null ? '…' : formatMs(run.firstAt - run.t0));
  b('rate', run.n >= 2 ? `${((run.n - 1) / ((run.lastAt - run.firstAt) / 1000)).toFixed(1)} tokens/s` : '—');
  b('last', run.n ? formatMs(run.ms[run.n - 1]) : '—');
  b('count', String(run.n));
  $('stats').querySelector('[data-stat="end"]').textContent = run.stopReason ? (run.end || STOP_TEXT[run.stopReason] || run.stopReason) : 'writing…';
  if (run.n) panel.setLastInference(run.ms[run.n - 1]);
  drawSteps();
  drawHeat();
}

function drawSteps() {
  const c = $('steps');
  const width = c.clientWidth || 600, height = 40;
  if (c.width !== width) { c.width = width; c.height = height; }
  const ctx = c.getContext('2d');
  ctx.clearRect(0, 0, width, height);
  const max = Number($('max-tokens').value) || run.n || 1;
  const bw = width / max;
  const scale = Math.max(1e-3, ...run.ms.slice(1), run.n === 1 ? run.ms[0] : 0);
  for (let i = 0; i < run.n; i++) {
    const h = Math.max(1, Math.min(1, run.ms[i] / scale) * (height - 2));
    ctx.fillStyle = i === 0 ? '#f2a65a' : '#9fb3ef';
    ctx.fillRect(i * bw, height - h, Math.max(1, bw - (bw > 3 ? 1 : 0)), h);
  }
}

/** The newest token's attention: one row per (layer, head), one column per position (the last HEAT_COLUMNS). */
function drawHeat() {
  const a = run.attention;
  if (!a) return;
  const { layers, heads, positions, data } = a;
  const cols = Math.min(positions, HEAT_COLUMNS);
  const rows = layers * heads;
  const c = $('heat');
  if (c.width !== cols || c.height !== rows) { c.width = cols; c.height = rows; }
  const rowPx = Math.max(2, Math.min(10, Math.floor(480 / rows)));
  c.style.width = `${Math.max(cols * Math.max(2, Math.floor(700 / cols)), 100)}px`;
  c.style.height = `${rows * rowPx}px`;
  const img = new ImageData(cols, rows);
  const sel = Number($('layer').value) * heads + Number($('head').value);
  for (let r = 0; r < rows; r++) {
    const base = r * positions + positions - cols;
    let max = 0;
    for (let j = 0; j < cols; j++) max = Math.max(max, data[base + j]);
    for (let j = 0; j < cols; j++) {
      const [R, G, B] = blues(max > 0 ? data[base + j] / max : 0);
      const o = 4 * (r * cols + j);
      const mark = r === sel;
      img.data[o] = mark ? Math.min(255, R + 40) : R;
      img.data[o + 1] = mark ? G * 0.8 : G;
      img.data[o + 2] = B;
      img.data[o + 3] = 255;
    }
  }
  c.getContext('2d').putImageData(img, 0, 0);
  c.dataset.rows = String(rows);
  c.dataset.positions = String(positions);
}

/** The selected head's five most attended positions, with their tokens (asked of the worker's tokenizer). */
async function updateTopPositions() {
  const a = run.attention;
  if (!a || !model?.tokenizer || !run.contextIds) return;
  const { heads, positions, data } = a;
  const r = Number($('layer').value) * heads + Number($('head').value);
  const row = data.subarray(r * positions, (r + 1) * positions);
  const top = [...row.keys()].sort((i, j) => row[j] - row[i]).slice(0, 5);
  const texts = await Promise.all(top.map((p) => model.tokenizer.decode([run.contextIds[p] ?? 0]).catch(() => '?')));
  $('top-positions').textContent = `Layer ${Number($('layer').value) + 1}, head ${Number($('head').value) + 1}: most attention on `
    + top.map((p, i) => `position ${p} ${JSON.stringify(texts[i])} (${row[p].toFixed(3)})`).join(', ');
}

$('heat').addEventListener('click', (e) => {
  const a = run.attention;
  if (!a) return;
  const rect = $('heat').getBoundingClientRect();
  const r = Math.floor(((e.clientY - rect.top) / rect.height) * a.layers * a.heads);
  $('layer').value = String(Math.floor(r / a.heads));
  $('head').value = String(r % a.heads);
  drawHeat();
  updateTopPositions();
});
for (const id of ['layer', 'head']) $(id).addEventListener('change', () => { drawHeat(); updateTopPositions(); });

// ------------------------------------------------------------------ wiring

for (const m of REPO_MODELS) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'chip';
  b.textContent = m.label;
  b.addEventListener('click', () => choose(m.url, () => inspectUrl(m.url)));
  $('repo-models').append(b);
}
$('pick-folder').addEventListener('change', (e) => { if (e.target.files.length) choose('the folder', () => inspectFiles(e.target.files)); });
$('pick-files').addEventListener('change', (e) => { if (e.target.files.length) choose('the files', () => inspectFiles(e.target.files)); });
$('url-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const u = $('url').value.trim();
  if (u) choose(u, () => inspectUrl(u));
});
$('load').addEventListener('click', load);
$('ask').addEventListener('submit', (e) => { e.preventDefault(); send(); });
$('prompt').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && $('mode-chat').checked) { e.preventDefault(); send(); }
});
$('stop').addEventListener('click', () => active?.controller.abort());
$('clear').addEventListener('click', () => { messages = []; $('chat-log').replaceChildren(); });
for (const id of ['mode-chat', 'mode-complete']) $(id).addEventListener('change', renderMode);

try {
  rt = await createWorker();
  panel.setCapabilities(rt.startCapabilities);
  if (chosen) $('load').disabled = false;
  document.body.dataset.ready = 'true';
} catch (e) {
  panel.setError(`Could not start the runtime's worker: ${e.message}`);
  document.body.dataset.ready = 'error';
}

/** For tests and the console: the run on show. */
window.openDemo = {
  get state() {
    return {
      loaded: document.body.dataset.loaded ?? null,
      kind: model?.kind ?? null,
      tokens: run.n,
      stopReason: run.stopReason ?? null,
      text: run.target?.textContent ?? '',
      tokensPerSecond: run.n >= 2 ? (run.n - 1) / ((run.lastAt - run.firstAt) / 1000) : null,
      messages: messages.map((m) => ({ ...m })),
      attention: run.attention ? { layers: run.attention.layers, heads: run.attention.heads, positions: run.attention.positions } : null,
    };
  },
  memory: () => rt?.memory() ?? null,
};
