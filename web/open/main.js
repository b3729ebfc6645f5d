// Open a model: a Hugging Face checkpoint from disk (a folder or files), a base URL, or one of this
// repository's models, run in a worker ('attnwasm/worker'): the page reads only the files' headers (to say
// what fits before the load), the worker reads the weights itself. A language model then chats (its chat
// template applied by CausalLM#chat) or completes a text, streaming; the page shows each token's time and
// the newest token's attention for every layer and head. A sentence embedder (the runtime's Embedder: BERT,
// RoBERTa, XLM-R with sentence-transformers' files) embeds the sentences typed, one a line, and the page shows
// the time, the cosine similarity matrix (computed in the worker: rt.cosineSimilarity) and, for a token of
// one sentence, its attention over the sentence's tokens for every layer and head (forward with
// outputAttentions of that sentence alone). What the runtime cannot run is refused with its error's text.
// Imports the package the way a user would (import map: attnwasm/worker → /bindings/worker.js).
//
// Keeping the page responsive: the model runs in the worker; a token here is bookkeeping only, and what is
// visible is drawn once per animation frame.
import { createWorker } from 'attnwasm/worker';
import { mountPanel, formatBytes, formatMs } from '../shared/panel.js';
import { blues, css, textOn } from '../shared/colormap.js';
import { mountCacheView, looksLikeHubId } from './cache_view.js';

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
/** sentence-transformers' files at a folder's top; the folders its modules.json names are kept too. */
const ST_FILES = ['modules.json', 'sentence_bert_config.json', 'config_sentence_transformers.json'];
/** Sentences the similarity table shows with values; past it, a canvas of colors (a table of n² cells would be a long task). */
const SIM_TABLE_MAX = 40;

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
/**
 * The embedder's last run: the sentences, their vectors' shape, the time, the similarity (n, n); `forwards`
 * caches each sentence's { tokens, attentions } (attentions (1, layers, heads, T, T)); `pick` the token shown.
 */
const emb = { sentences: [], shape: null, ms: null, similarity: null, forwards: new Map(), sentence: 0, pick: null, seq: 0 };

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

/** A picked File's path in its checkpoint folder: below the folder picked ('1_Pooling/config.json'), else its name. */
const pathOf = (f) => (f.webkitRelativePath?.includes('/') ? f.webkitRelativePath.slice(f.webkitRelativePath.indexOf('/') + 1) : f.name);

/** The folders a sentence-transformers modules.json names ('1_Pooling', '2_Normalize'), or none. */
async function modulePaths(file) {
  try {
    const modules = JSON.parse(await file.text());
    return Array.isArray(modules) ? modules.map((m) => m?.path).filter((p) => typeof p === 'string' && p !== '') : [];
  } catch {
    return [];  // the runtime names what is wrong with it when it loads
  }
}

/**
 * The files picked: the weights (index and shards, model.safetensors, or one .safetensors), config.json, the
 * tokenizer's and sentence-transformers' files, each named by its path in the folder picked.
 */
async function inspectFiles(fileList) {
  const files = [...fileList];
  const byName = new Map(files.map((f) => [pathOf(f), f]));
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
  // A folder pick holds every file of the folder: only the checkpoint's go to the worker, by their paths
  // (a sentence embedder's 1_Pooling/config.json is not its config.json).
  const keep = new Set([...weights.map(pathOf), INDEX, 'config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json',
    'chat_template.jinja', 'chat_template.json', ...ST_FILES]);
  const folders = byName.has('modules.json') ? await modulePaths(byName.get('modules.json')) : [];
  const sideFiles = files.filter((f) => keep.has(pathOf(f)) || folders.some((d) => pathOf(f).startsWith(`${d}/`)));
  const arg = weights.length === 1 && weights[0].name !== 'model.safetensors' && !config ? weights[0]
    : Object.fromEntries(sideFiles.map((f) => [pathOf(f), f]));
  return { arg, label: `${files.length} file(s): ${sideFiles.map(pathOf).join(', ')}`, weights: list, config };
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
  for (const id of ['model-card', 'lm-card', 'attention-card', 'embed-card', 'token-card']) show($(id), false);
  Object.assign(emb, { similarity: null, pick: null, seq: emb.seq + 1 });
  if (model) { await model.dispose(); model = null; }
  $('load').disabled = true;
  show($('progress-card'));
  const bar = $('progress-bar');
  const t0 = performance.now();
  const dtype = $('dtype').value;
  document.body.dataset.loaded = 'loading';
  let fromHub = '';  // a hub id's bytes: downloaded, and read from the cache
  try {
    model = await rt.loadModel(chosen.arg, {
      ...(dtype ? { dtype } : {}), ...chosen.options,
      onProgress: ({ loaded, total, file, cached, downloaded }) => {
        if (total) { bar.max = total; bar.value = loaded; } else bar.removeAttribute('value');
        const s = (performance.now() - t0) / 1000;
        $('progress-text').textContent = `Loading ${file}: ${formatBytes(loaded)}${total ? ` of ${formatBytes(total)}` : ''}`
          + (fromHub = cached === undefined ? '' : ` (${formatBytes(downloaded)} downloaded, ${formatBytes(cached)} from the cache)`);
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
  $('progress-text').textContent = `Loaded ${formatBytes(model.fileBytes)} in ${seconds.toFixed(1)} s${fromHub}`;
  $('progress-rate').textContent = `${(model.fileBytes / 2 ** 20 / seconds).toFixed(0)} MB/s`;
  bar.max = 1;
  bar.value = 1;
  panel.setModelSize(model.weightBytes);
  $('load').disabled = false;
  showModel(seconds);
  cacheView.refresh();
  document.body.dataset.loaded = 'true';
}

function showModel(seconds) {
  const facts = [['kind', model.kind], ['weights in memory', `${formatBytes(model.weightBytes)} (${Object.keys(model.weightTypes ?? {}).join(', ')})`],
    ['read', `${formatBytes(model.fileBytes)} in ${seconds.toFixed(1)} s`]];
  if (model.kind === 'CausalLM') {
    facts.push(['model_type', model.modelType], ['layers × heads', `${model.numLayers} × ${model.numHeads}`], ['vocabulary', String(model.vocabSize)],
      ['positions', String(model.maxPositions)], ['tokenizer', model.tokenizer ? `${model.tokenizer.kind}, ${model.tokenizer.vocabSize} ids` : 'none (ids only)']);
  } else if (model.kind === 'Embedder') {
    facts.push(['model_type', model.modelType], ['layers × heads', `${model.numLayers} × ${model.numHeads}`],
      ['vectors', `${model.dimension} numbers, ${model.pooling} pooling${model.normalize ? ', normalized' : ''}`],
      ['tokens a sentence', `at most ${model.maxTokens}${model.doLowerCase ? ', lowercased' : ''}`], ['vocabulary', String(model.vocabSize)],
      ['tokenizer', model.tokenizer ? `${model.tokenizer.kind}, ${model.tokenizer.vocabSize} ids` : 'none (ids only)']);
  }
  $('facts').replaceChildren(...facts.flatMap(([k, v]) => {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    return [dt, dd];
  }));
  $('model-title').textContent = model.kind === 'CausalLM' ? `A ${model.modelType} language model`
    : model.kind === 'Embedder' ? `A ${model.modelType} sentence embedder` : `A ${model.kind}`;
  if (model.kind === 'Embedder') {
    $('other-note').textContent = '';
    show($('other-note'), false);
    show($('model-card'));
    showEmbedder();
    return;
  }
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
  paintHeat(c, data, rows, cols, (r) => r * positions + positions - cols, Number($('layer').value) * heads + Number($('head').value));
  c.dataset.rows = String(rows);
  c.dataset.positions = String(positions);
}

/**
 * Paints `rows` × `cols` weights into canvas `c` (one pixel each, sized by CSS): row r's weights are
 * data[base(r) + j], scaled to the row's largest; row `sel` tinted. Used by both attention grids.
 */
function paintHeat(c, data, rows, cols, base, sel) {
  const img = new ImageData(cols, rows);
  for (let r = 0; r < rows; r++) {
    const b = base(r);
    let max = 0;
    for (let j = 0; j < cols; j++) max = Math.max(max, data[b + j]);
    for (let j = 0; j < cols; j++) {
      const [R, G, B] = blues(max > 0 ? data[b + j] / max : 0);
      const o = 4 * (r * cols + j);
      const mark = r === sel;
      img.data[o] = mark ? Math.min(255, R + 40) : R;
      img.data[o + 1] = mark ? G * 0.8 : G;
      img.data[o + 2] = B;
      img.data[o + 3] = 255;
    }
  }
  c.getContext('2d').putImageData(img, 0, 0);
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

// ------------------------------------------------------------------ the sentence embedder

function showEmbedder() {
  Object.assign(emb, { sentences: [], shape: null, ms: null, similarity: null, forwards: new Map(), sentence: 0, pick: null });
  emb.seq += 1;
  $('embed').disabled = !model.tokenizer;
  $('embed-stats').dataset.state = 'idle';
  for (const k of ['count', 'ms', 'rate', 'dim']) $('embed-stats').querySelector(`[data-stat="${k}"] b`).textContent = '—';
  show($('embed-error'), !model.tokenizer);
  $('embed-error').textContent = model.tokenizer ? '' : 'No tokenizer.json: nothing to embed sentences with.';
  show($('sim-wrap'), false);
  show($('embed-card'));
  show($('token-card'), false);
}

/** Embeds the sentences typed (one a line, blank lines skipped), then shows their similarity and the first one's tokens. */
async function embedSentences() {
  if (!model || model.kind !== 'Embedder') return;
  const sentences = $('sentences').value.split('\n').map((s) => s.trim()).filter(Boolean);
  show($('embed-error'), false);
  if (!sentences.length) {
    $('embed-error').textContent = 'Type at least one sentence.';
    show($('embed-error'));
    return;
  }
  const seq = ++emb.seq;
  const target = model;
  $('embed').disabled = true;
  $('embed-stats').dataset.state = 'running';
  try {
    const t0 = performance.now();
    const vectors = await target.embed(sentences);
    const ms = performance.now() - t0;
    const similarity = await rt.cosineSimilarity(vectors, vectors);
    if (seq !== emb.seq || target !== model) return;  // another run, or another model, since
    Object.assign(emb, { sentences, shape: vectors.shape, ms, similarity, forwards: new Map(), sentence: 0, pick: null });
    const b = (k, v) => { $('embed-stats').querySelector(`[data-stat="${k}"] b`).textContent = v; };
    b('count', String(sentences.length));
    b('ms', formatMs(ms));
    b('rate', `${(sentences.length / (ms / 1000)).toFixed(1)} sentences/s`);
    b('dim', `${vectors.shape[1]} numbers`);
    panel.setLastInference(ms);
    renderSimilarity();
    $('sentence').replaceChildren(...sentences.map((s, i) => new Option(`${i + 1}. ${s.length > 60 ? `${s.slice(0, 57)}…` : s}`, String(i))));
    $('embed-stats').dataset.state = 'done';
    show($('token-card'));
    await showTokens(0);
  } catch (e) {
    if (seq !== emb.seq) return;
    $('embed-stats').dataset.state = 'error';
    $('embed-error').textContent = `Cannot embed: ${e.message}`;
    show($('embed-error'));
  } finally {
    if (target === model) $('embed').disabled = false;
  }
}

/**
 * The n × n similarity as a table: a colored cell per pair with its value, a click on a row picks its
 * sentence; past SIM_TABLE_MAX sentences, a canvas of the colors (a pixel a pair; its title the pair's value).
 */
function renderSimilarity() {
  const { data, shape: [n] } = emb.similarity;
  const big = n > SIM_TABLE_MAX;
  show($('sim'), !big);
  show($('sim-map'), big);
  show($('sim-wrap'));
  if (big) {
    const c = $('sim-map');
    c.width = n;
    c.height = n;
    const side = Math.min(640, Math.max(4 * n, 240));
    c.style.width = c.style.height = `${side}px`;
    const img = new ImageData(n, n);
    for (let i = 0; i < n * n; i++) {
      const [R, G, B] = blues(Math.max(0, data[i]));
      img.data.set([R, G, B, 255], 4 * i);
    }
    c.getContext('2d').putImageData(img, 0, 0);
    c.dataset.n = String(n);
    $('sim').replaceChildren();
    return;
  }
  const head = document.createElement('tr');
  head.append(document.createElement('th'));
  for (let j = 0; j < n; j++) {
    const th = document.createElement('th');
    th.textContent = String(j + 1);
    th.title = emb.sentences[j];
    head.append(th);
  }
  const rows = emb.sentences.map((s, i) => {
    const tr = document.createElement('tr');
    tr.dataset.row = String(i);
    const th = document.createElement('th');
    th.scope = 'row';
    th.innerHTML = '<span class="idx"></span> <span class="text"></span>';
    th.firstChild.textContent = `${i + 1}.`;
    th.lastChild.textContent = s;
    th.title = s;
    tr.append(th);
    for (let j = 0; j < n; j++) {
      const v = data[i * n + j];
      const td = document.createElement('td');
      const rgb = blues(Math.max(0, v));
      td.style.background = css(rgb);
      td.style.color = textOn(rgb);
      td.textContent = v.toFixed(2);
      td.title = `${i + 1} · ${j + 1}: ${v.toFixed(6)}`;
      td.dataset.value = String(v);
      tr.append(td);
    }
    tr.addEventListener('click', () => { $('sentence').value = String(i); showTokens(i); });
    return tr;
  });
  $('sim').replaceChildren(head, ...rows);
  markSentence();
}

/** The pair under a point of the similarity canvas: [i, j]. */
function simPair(e) {
  const c = $('sim-map'), n = Number(c.dataset.n), rect = c.getBoundingClientRect();
  const at = (x, size) => Math.min(n - 1, Math.max(0, Math.floor((x / size) * n)));
  return [at(e.clientY - rect.top, rect.height), at(e.clientX - rect.left, rect.width)];
}

function markSentence() {
  for (const tr of $('sim').querySelectorAll('tr[data-row]')) tr.classList.toggle('chosen', Number(tr.dataset.row) === emb.sentence);
}

/**
 * Sentence i's tokens, as embed() tokenized it, and its attentions from forward({ …, outputAttentions }) of
 * that sentence alone (once per sentence): { tokens: [text], attentions: { data, shape: [1, L, H, T, T] } }.
 */
async function sentenceForward(i) {
  if (!emb.forwards.has(i)) {
    const target = model;
    emb.forwards.set(i, (async () => {
      const batch = await target.tokenize([emb.sentences[i]]);
      const out = await target.forward({ ...batch, outputAttentions: true });
      const ids = [...batch.inputIds.data];
      const tokens = await Promise.all(ids.map((id) => target.tokenizer.idToToken(id).then((t) => t ?? `#${id}`, () => `#${id}`)));
      return { tokens, attentions: out.attentions };
    })());
    emb.forwards.get(i).catch(() => emb.forwards.delete(i));  // a failure is shown, and tried again on the next click
  }
  return emb.forwards.get(i);
}

/** Shows sentence i's tokens as chips (none picked yet). */
async function showTokens(i) {
  emb.sentence = i;
  emb.pick = null;
  markSentence();
  show($('tok-heat-wrap'), false);
  $('tok-top').textContent = '\u00a0';
  $('tokens').replaceChildren();
  const seq = emb.seq;
  let f;
  try {
    f = await sentenceForward(i);
  } catch (e) {
    $('tok-top').textContent = `Cannot run the sentence: ${e.message}`;
    return;
  }
  if (seq !== emb.seq || emb.sentence !== i) return;
  $('tokens').replaceChildren(...f.tokens.map((t, k) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'chip token';
    b.textContent = t;
    b.dataset.index = String(k);
    b.addEventListener('click', () => pickToken(k));
    return b;
  }));
  $('tokens').dataset.sentence = String(i);
  $('tok-top').textContent = 'Click a token.';
}

/** Token k of the sentence shown: its attention over the sentence's tokens, a row per (layer, head). */
async function pickToken(k) {
  const i = emb.sentence;
  const f = await sentenceForward(i);
  if (emb.sentence !== i) return;
  emb.pick = { sentence: i, token: k, row: emb.pick?.row ?? 0 };
  for (const b of $('tokens').children) b.classList.toggle('chosen', Number(b.dataset.index) === k);
  show($('tok-heat-wrap'));  // before drawing: the labels' offset is measured
  drawTokenHeat(f);
  updateTokenTop(f);
}

function drawTokenHeat(f) {
  const [, L, H, T] = f.attentions.shape;
  const rows = L * H, k = emb.pick.token;
  const c = $('tok-heat');
  if (c.width !== T || c.height !== rows) { c.width = T; c.height = rows; }
  const colPx = Math.max(24, Math.min(64, Math.floor(700 / T)));
  const rowPx = Math.max(3, Math.min(12, Math.floor(480 / rows)));
  c.style.width = `${T * colPx}px`;
  c.style.height = `${rows * rowPx}px`;
  // Row r = (layer, head) of token k: attentions[0, l, h, k, :], at ((r · T) + k) · T.
  paintHeat(c, f.attentions.data, rows, T, (r) => (r * T + k) * T, emb.pick.row);
  c.dataset.rows = String(rows);
  c.dataset.cols = String(T);
  c.dataset.layers = String(L);
  c.dataset.heads = String(H);
  $('tok-layers').style.gridTemplateRows = `repeat(${L}, ${H * rowPx}px)`;
  $('tok-layers').replaceChildren(...Array.from({ length: L }, (_, l) => {
    const s = document.createElement('span');
    s.textContent = `L${l + 1}`;
    return s;
  }));
  // The token labels over the canvas's columns: shifted by the layer labels' width.
  $('tok-labels').style.gridTemplateColumns = `repeat(${T}, ${colPx}px)`;
  $('tok-labels').style.marginLeft = `${$('tok-layers').offsetWidth}px`;
  $('tok-labels').replaceChildren(...f.tokens.map((t, j) => {
    const s = document.createElement('span');
    s.textContent = t;
    s.title = t;
    if (j === k) s.className = 'self';
    return s;
  }));
}

/** The picked row's (layer, head) three most attended tokens. */
function updateTokenTop(f) {
  const [, , H, T] = f.attentions.shape;
  const { token: k, row: r } = emb.pick;
  const row = f.attentions.data.subarray((r * T + k) * T, (r * T + k + 1) * T);
  const top = [...row.keys()].sort((a, b) => row[b] - row[a]).slice(0, 3);
  $('tok-top').textContent = `Token ${k + 1} ${JSON.stringify(f.tokens[k])}, layer ${Math.floor(r / H) + 1}, head ${(r % H) + 1}: most attention on `
    + top.map((j) => `${JSON.stringify(f.tokens[j])} (${row[j].toFixed(3)})`).join(', ');
}

$('tok-heat').addEventListener('click', async (e) => {
  if (!emb.pick) return;
  const f = await sentenceForward(emb.pick.sentence);
  const [, L, H] = f.attentions.shape;
  const rect = $('tok-heat').getBoundingClientRect();
  emb.pick.row = Math.min(L * H - 1, Math.max(0, Math.floor(((e.clientY - rect.top) / rect.height) * L * H)));
  drawTokenHeat(f);
  updateTokenTop(f);
});
$('sentence').addEventListener('change', () => showTokens(Number($('sentence').value)));
$('sim-map').addEventListener('mousemove', (e) => {
  if (!emb.similarity) return;
  const [i, j] = simPair(e), n = emb.similarity.shape[0];
  $('sim-map').title = `${i + 1} · ${j + 1}: ${emb.similarity.data[i * n + j].toFixed(6)}`;
});
$('sim-map').addEventListener('click', (e) => {
  if (!emb.similarity) return;
  const [i] = simPair(e);
  $('sentence').value = String(i);
  showTokens(i);
});
$('embed-form').addEventListener('submit', (e) => { e.preventDefault(); embedSentences(); });

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
  if (looksLikeHubId(u)) choose(u, () => cacheView.inspect(u));
  else if (u) choose(u, () => inspectUrl(u));
});
$('load').addEventListener('click', load);
const cacheView = mountCacheView($('cache-view'), { open: (id) => choose(id, () => cacheView.inspect(id)), inspectFiles, inspectUrl });
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

/** For tests and the console: the run on show, and the runtime's worker. */
window.openDemo = {
  get runtime() { return rt; },
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
      embed: emb.similarity ? {
        sentences: [...emb.sentences],
        shape: [...emb.shape],
        ms: emb.ms,
        similarity: Array.from({ length: emb.shape[0] }, (_, i) => Array.from(emb.similarity.data.subarray(i * emb.shape[0], (i + 1) * emb.shape[0]))),
      } : null,
      tokenAttention: emb.pick ? { sentence: emb.pick.sentence, token: emb.pick.token, row: emb.pick.row } : null,
    };
  },
  memory: () => rt?.memory() ?? null,
};
