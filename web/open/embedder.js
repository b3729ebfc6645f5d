// The sentence embedder at work (the runtime's Embedder: BERT, RoBERTa, XLM-R with sentence-transformers'
// files; or a DecoderEmbedder: Qwen3-Embedding): the sentences typed, one a line, embedded in the worker; the time
// and speed; the cosine similarity of every pair (computed in the worker: rt.cosineSimilarity) as a table of
// values, or past SIM_TABLE_MAX sentences a canvas of colors; for an encoder, a row or a pixel picks a sentence,
// whose tokens token_attention.js shows (a decoder embedder has no encoder forward to show attention from).
import { formatMs } from '../shared/panel.js';
import { blues, css, textOn } from '../shared/colormap.js';
import { $, show } from './dom.js';
import { page, emb } from './state.js';
import { showTokens } from './token_attention.js';

/**
 * Sentences the similarity table shows with values; past it, a canvas of colors. A table of n² cells is laid out
 * in one task: measured in Chromium on a 2-core EPYC, 40 × 40 cells took 95-125 ms (59 ms of it the table's layout,
 * with a fixed table layout too), over the page's 50 ms budget; 16 × 16 takes a sixth of it, and fits the page's
 * width.
 */
const SIM_TABLE_MAX = 16;

/** Shows the embedder's card for the model just loaded (a run of another model forgotten). */
export function showEmbedder() {
  Object.assign(emb, { sentences: [], shape: null, ms: null, similarity: null, forwards: new Map(), sentence: 0, pick: null });
  emb.seq += 1;
  $('embed').disabled = !page.model.tokenizer;
  $('embed-stats').dataset.state = 'idle';
  for (const k of ['count', 'ms', 'rate', 'dim']) $('embed-stats').querySelector(`[data-stat="${k}"] b`).textContent = '—';
  show($('embed-error'), !page.model.tokenizer);
  $('embed-error').textContent = page.model.tokenizer ? '' : 'No tokenizer.json: nothing to embed sentences with.';
  show($('sim-wrap'), false);
  show($('embed-card'));
  show($('token-card'), false);
}

/** Embeds the sentences typed (one a line, blank lines skipped), then shows their similarity and the first one's tokens. */
export async function embedSentences() {
  if (!page.model || !['Embedder', 'DecoderEmbedder'].includes(page.model.kind)) return;
  const sentences = $('sentences').value.split('\n').map((s) => s.trim()).filter(Boolean);
  show($('embed-error'), false);
  if (!sentences.length) {
    $('embed-error').textContent = 'Type at least one sentence.';
    show($('embed-error'));
    return;
  }
  const seq = ++emb.seq;
  const target = page.model;
  $('embed').disabled = true;
  $('embed-stats').dataset.state = 'running';
  try {
    const t0 = performance.now();
    const vectors = await target.embed(sentences);
    const ms = performance.now() - t0;
    const similarity = await page.rt.cosineSimilarity(vectors, vectors);
    if (seq !== emb.seq || target !== page.model) return;  // another run, or another model, since
    Object.assign(emb, { sentences, shape: vectors.shape, ms, similarity, forwards: new Map(), sentence: 0, pick: null });
    const b = (k, v) => { $('embed-stats').querySelector(`[data-stat="${k}"] b`).textContent = v; };
    b('count', String(sentences.length));
    b('ms', formatMs(ms));
    b('rate', `${(sentences.length / (ms / 1000)).toFixed(1)} sentences/s`);
    b('dim', `${vectors.shape[1]} numbers`);
    page.panel.setLastInference(ms);
    renderSimilarity();
    $('sentence').replaceChildren(...sentences.map((s, i) => new Option(`${i + 1}. ${s.length > 60 ? `${s.slice(0, 57)}…` : s}`, String(i))));
    $('embed-stats').dataset.state = 'done';
    if (target.kind !== 'Embedder') return;  // attention maps: an encoder's forward
    show($('token-card'));
    await showTokens(0);
  } catch (e) {
    if (seq !== emb.seq) return;
    $('embed-stats').dataset.state = 'error';
    $('embed-error').textContent = `Cannot embed: ${e.message}`;
    show($('embed-error'));
  } finally {
    if (target === page.model) $('embed').disabled = false;
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

/** Marks the row of the sentence whose tokens show. */
export function markSentence() {
  for (const tr of $('sim').querySelectorAll('tr[data-row]')) tr.classList.toggle('chosen', Number(tr.dataset.row) === emb.sentence);
}

/** Wires the similarity canvas's hover and click, and the sentences' form. */
export function mountEmbedder() {
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
}
