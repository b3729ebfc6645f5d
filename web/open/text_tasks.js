// A text classifier or a reranker at work (the runtime's TextClassifier and CrossEncoder: BERT, RoBERTa, XLM-R,
// DistilBERT checkpoints with a sequence-classification head). A classifier: the texts typed, one a line (a pair
// split at " | ": NLI's premise and hypothesis), each with its labels best first and their scores as transformers'
// text-classification pipeline gives them. A reranker: a query and documents, one a line, ranked best first with
// their scores (sentence-transformers' CrossEncoder.rank). The model runs in the worker; the page draws one small
// table.
import { formatMs } from '../shared/panel.js';
import { $, show } from './dom.js';
import { page } from './state.js';

/** What the last run showed (for tests): { mode, inputs, results, ms }, or null. */
export const last = { run: null, seq: 0 };

const isReranker = () => page.model?.kind === 'CrossEncoder' && page.model.numLabels === 1;

/** Shows the card for the classifier or reranker just loaded. */
export function showTextTask() {
  const rerank = isReranker();
  last.run = null;
  last.seq += 1;
  $('classify-title').textContent = rerank ? 'Rank documents for a query' : 'Classify texts';
  $('classify').textContent = rerank ? 'Rank' : 'Classify';
  $('classify').disabled = !page.model.tokenizer;
  show($('query-field'), rerank);
  $('texts-note').textContent = rerank ? 'one document a line' : 'one text a line; a pair (premise | hypothesis) split at " | "';
  if (rerank && !$('texts').dataset.edited) {
    $('texts').value = 'Cats sleep between 12 and 16 hours a day, often in short naps.\nThe Eiffel Tower is in Paris.\nA cat curls up in a warm spot to sleep.\nDogs need a walk every day.';
  }
  show($('classify-error'), !page.model.tokenizer);
  $('classify-error').textContent = page.model.tokenizer ? '' : 'No tokenizer files: nothing to read texts with.';
  $('classify-stats').dataset.state = 'idle';
  for (const k of ['count', 'ms', 'rate']) $('classify-stats').querySelector(`[data-stat="${k}"] b`).textContent = '—';
  show($('results'), false);
  show($('classify-card'));
}

/** Runs the texts typed through the model: labels per text, or the documents ranked. */
export async function runTextTask() {
  const model = page.model;
  if (!model || !['TextClassifier', 'CrossEncoder'].includes(model.kind)) return;
  const rerank = isReranker();
  const lines = $('texts').value.split('\n').map((s) => s.trim()).filter(Boolean);
  const query = $('query').value.trim();
  show($('classify-error'), false);
  const problem = !lines.length ? `Type at least one ${rerank ? 'document' : 'text'}.` : rerank && !query ? 'Type a query.' : null;
  if (problem) {
    $('classify-error').textContent = problem;
    show($('classify-error'));
    return;
  }
  const seq = ++last.seq;
  $('classify').disabled = true;
  $('classify-stats').dataset.state = 'running';
  try {
    const t0 = performance.now();
    const inputs = rerank ? lines : lines.map((l) => (l.includes(' | ') ? l.split(' | ', 2).map((s) => s.trim()) : l));
    const results = rerank ? await model.rank(query, lines) : await model.classify(inputs, { topK: Math.min(3, model.numLabels) });
    const ms = performance.now() - t0;
    if (seq !== last.seq || model !== page.model) return;  // another run, or another model, since
    last.run = { mode: rerank ? 'rank' : 'classify', query: rerank ? query : null, inputs, results, ms };
    const b = (k, v) => { $('classify-stats').querySelector(`[data-stat="${k}"] b`).textContent = v; };
    b('count', String(lines.length));
    b('ms', formatMs(ms));
    b('rate', `${(lines.length / (ms / 1000)).toFixed(1)} ${rerank ? 'documents' : 'texts'}/s`);
    page.panel.setLastInference(ms);
    render(rerank, inputs, results);
    $('classify-stats').dataset.state = 'done';
  } catch (e) {
    if (seq !== last.seq) return;
    $('classify-error').textContent = e.message;
    show($('classify-error'));
    $('classify-stats').dataset.state = 'error';
  } finally {
    if (seq === last.seq) $('classify').disabled = !model.tokenizer;
  }
}

/** A score as a bar (scores in [0, 1]; others as numbers only) and its value. */
function scoreCell(score) {
  const td = document.createElement('td');
  if (score >= 0 && score <= 1) {
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.width = `${Math.round(score * 80)}px`;
    td.append(bar);
  }
  td.append(score.toFixed(4));
  return td;
}

function render(rerank, inputs, results) {
  const table = $('results');
  const head = document.createElement('tr');
  for (const h of rerank ? ['#', 'document', 'score'] : ['text', 'label', 'score', 'next']) {
    const th = document.createElement('th');
    th.textContent = h;
    head.append(th);
  }
  const rows = results.map((r, i) => {
    const tr = document.createElement('tr');
    const cell = (text, cls) => {
      const td = document.createElement('td');
      td.textContent = text;
      if (cls) td.className = cls;
      return td;
    };
    if (rerank) {
      tr.append(cell(String(r.corpusId + 1)), cell(inputs[r.corpusId], 'text'), scoreCell(r.score));
    } else {
      const text = Array.isArray(inputs[i]) ? inputs[i].join(' | ') : inputs[i];
      tr.append(cell(text, 'text'), cell(r[0].label), scoreCell(r[0].score), cell(r.slice(1).map((x) => `${x.label} ${x.score.toFixed(3)}`).join(', ')));
    }
    return tr;
  });
  table.replaceChildren(head, ...rows);
  show(table);
}

/** Wires the card's form. */
export function mountTextTask() {
  $('classify-form').addEventListener('submit', (e) => { e.preventDefault(); runTextTask(); });
  $('texts').addEventListener('input', () => { $('texts').dataset.edited = 'true'; });
}
