// A text classifier, a reranker or an entity tagger at work (the runtime's TextClassifier, CrossEncoder and
// TokenClassifier: BERT, RoBERTa, XLM-R, DistilBERT checkpoints with a sequence- or token-classification head). A
// classifier: the texts typed, one a line (a pair split at " | ": NLI's premise and hypothesis), each with its labels
// best first and their scores as transformers' text-classification pipeline gives them. A reranker: a query and
// documents, one a line, ranked best first with their scores (sentence-transformers' CrossEncoder.rank). An entity
// tagger: each text with its entities marked (the token-classification pipeline, aggregation 'simple'), found by
// the offsets the tokenizer gives. The model runs in the worker; the page draws one small table.
import { formatMs } from '../shared/panel.js';
import { $, show } from './dom.js';
import { page } from './state.js';

/** What the last run showed (for tests): { mode, inputs, results, ms }, or null. */
export const last = { run: null, seq: 0 };

const isReranker = () => page.model?.kind === 'CrossEncoder' && page.model.numLabels === 1;
const isTagger = () => page.model?.kind === 'TokenClassifier';

/** Shows the card for the classifier, reranker or entity tagger just loaded. */
export function showTextTask() {
  const rerank = isReranker();
  const tag = isTagger();
  last.run = null;
  last.seq += 1;
  $('classify-title').textContent = rerank ? 'Rank documents for a query' : tag ? 'Find entities' : 'Classify texts';
  $('classify').textContent = rerank ? 'Rank' : tag ? 'Find' : 'Classify';
  $('classify').disabled = !page.model.tokenizer;
  show($('query-field'), rerank);
  $('texts-note').textContent = rerank ? 'one document a line' : tag ? 'one text a line; neighbouring tokens of one entity grouped' : 'one text a line; a pair (premise | hypothesis) split at " | "';
  if (rerank && !$('texts').dataset.edited) {
    $('texts').value = 'Cats sleep between 12 and 16 hours a day, often in short naps.\nThe Eiffel Tower is in Paris.\nA cat curls up in a warm spot to sleep.\nDogs need a walk every day.';
  }
  if (tag && !$('texts').dataset.edited) {
    $('texts').value = 'My name is Wolfgang and I live in Berlin.\nHugging Face Inc. is a company based in New York City.';
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
  if (!model || !['TextClassifier', 'CrossEncoder', 'TokenClassifier'].includes(model.kind)) return;
  const rerank = isReranker();
  const tag = isTagger();
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
    const inputs = rerank || tag ? lines : lines.map((l) => (l.includes(' | ') ? l.split(' | ', 2).map((s) => s.trim()) : l));
    const results = rerank ? await model.rank(query, lines)
      : tag ? await model.classify(inputs, { aggregationStrategy: 'simple' })
        : await model.classify(inputs, { topK: Math.min(3, model.numLabels) });
    const ms = performance.now() - t0;
    if (seq !== last.seq || model !== page.model) return;  // another run, or another model, since
    last.run = { mode: rerank ? 'rank' : tag ? 'entities' : 'classify', query: rerank ? query : null, inputs, results, ms };
    const b = (k, v) => { $('classify-stats').querySelector(`[data-stat="${k}"] b`).textContent = v; };
    b('count', String(lines.length));
    b('ms', formatMs(ms));
    b('rate', `${(lines.length / (ms / 1000)).toFixed(1)} ${rerank ? 'documents' : 'texts'}/s`);
    page.panel.setLastInference(ms);
    if (tag) renderEntities(inputs, results);
    else render(rerank, inputs, results);
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

/** Each text with its entities marked (start / end index the string), and the entities listed with their scores. */
function renderEntities(inputs, results) {
  const table = $('results');
  const head = document.createElement('tr');
  for (const h of ['text', 'entities']) {
    const th = document.createElement('th');
    th.textContent = h;
    head.append(th);
  }
  const rows = results.map((entities, i) => {
    const text = inputs[i];
    const tr = document.createElement('tr');
    const marked = document.createElement('td');
    marked.className = 'text';
    let at = 0;
    for (const e of entities) {
      if (e.start < at) continue; // overlapping spans cannot both be marked
      marked.append(text.slice(at, e.start));
      const mark = document.createElement('mark');
      mark.textContent = text.slice(e.start, e.end);
      mark.dataset.entity = e.entity_group;
      mark.title = `${e.entity_group} ${e.score.toFixed(3)}`;
      marked.append(mark);
      at = e.end;
    }
    marked.append(text.slice(at));
    const list = document.createElement('td');
    list.textContent = entities.length ? entities.map((e) => `${e.entity_group} “${e.word}” ${e.score.toFixed(3)}`).join(', ') : 'none';
    tr.append(marked, list);
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
