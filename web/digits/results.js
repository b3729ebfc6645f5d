// A classification and what it shows: the predicted class with its confidence and time, the true label when
// known, a probability bar per class, the prediction card's data-* attributes (which the browser test waits on),
// and the attention maps redrawn (attention.js).
import { formatMs } from '../shared/panel.js';
import { $, setSource } from './dom.js';
import { page, shown } from './state.js';
import { drawAttention } from './attention.js';

const predictionCard = $('prediction-card');
let runs = 0;

/** Builds one probability bar per class label. */
export function buildBars(labels) {
  $('bars').replaceChildren(...labels.map((label) => {
    const row = document.createElement('div');
    row.className = 'bar';
    row.innerHTML = `<span></span><div class="track"><div class="fill"></div></div><span class="pct">–</span>`;
    row.firstChild.textContent = label;
    return row;
  }));
}

/** Classifies `input` (Float32Array(784), MNIST-normalised) and shows it; `truth` is its label index or null. */
export function classifyInput(input, truth) {
  let result;
  try {
    result = page.classifier.classify(input);
  } catch (e) {
    setSource(`Classification failed: ${e.message}`, true);
    return;
  }
  page.panel.setLastInference(result.totalMs);
  showResult({ input, result, truth });
}

/** Shows `r` ({ input, result, truth }), or nothing to show when `r` is null; counts the run either way. */
export function showResult(r) {
  shown.last = r;
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
  const { classifier } = page;
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
