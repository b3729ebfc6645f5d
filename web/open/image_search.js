// Image search: the images given embedded in the worker (CLIPModel.embedImages: get_image_features, normalized;
// a bare ViT / DeiT / DINOv2: VisionModel.embed, normalized), a batch of 8 at a time with the progress shown, then
// ranked for a query: a text typed (CLIP, SigLIP with their tokenizer: embedTexts) or an image ("similar"). The
// score: the cosine of the normalized vectors (CLIP, and every image query); SigLIP's text query shows its
// probability, sigmoid(cosine · exp(logit_scale) + logit_bias), as SiglipModel's logits_per_image do. Only the
// dot products of the query with the n vectors run on the page (n · D multiply-adds: a millisecond at n = 1000).
import { $, show } from './dom.js';
import { page, img } from './state.js';
import { nameOf } from './image_inputs.js';
import { imageError, renderThumbs, stat, withProgress } from './image_tasks.js';

/** The ranked images shown: the best SHOWN (the rest are in openDemo.state.imageTask.results). */
const SHOWN = 60;
const hasTextQuery = () => page.model?.kind === 'CLIPModel' && page.model.hasText && !!page.model.tokenizer;

/** The search's form for the model loaded: a text query when it reads texts, else why not. */
export function showSearch() {
  const model = page.model;
  const text = hasTextQuery();
  show($('image-query-form'));
  $('image-query').disabled = !text;
  $('image-search').disabled = true;  // until the images are embedded
  $('image-query-note').textContent = text ? (model.siglip ? 'score: sigmoid(cosine · scale + bias), as SigLIP' : 'score: the cosine')
    : model.kind === 'CLIPModel' && model.hasText ? 'No tokenizer files: nothing to read a query with (vocab.json + merges.txt, tokenizer.json or spiece.model). "similar" under an image ranks the others by it.'
      : 'No text tower: "similar" under an image ranks the others by it (the cosine).';
}

/** Embeds the images given, then shows them in their order with a "similar" button each. */
export async function embedImages() {
  const model = page.model;
  const files = img.files;
  img.vectors = null;
  $('image-search').disabled = true;
  $('image-results-note').textContent = '';
  const done = await withProgress('embed these images', (onProgress) => (model.kind === 'CLIPModel'
    ? model.embedImages(files, { batchSize: 8, onProgress })
    : model.embed(files, { batchSize: 8, normalize: true, onProgress })));
  if (!done) return;
  img.vectors = done.result;
  img.run = { mode: 'search', images: files.map(nameOf), shape: [...done.result.shape], ms: done.ms, progress: done.progress, query: null, scoreKind: null, results: null };
  stat('dim', `${done.result.shape[1]} numbers`);
  $('image-search').disabled = !hasTextQuery();
  renderThumbs(files.map((_, i) => i), (i, cap) => cap.append(similarButton(i)));
  $('image-stats').dataset.state = 'done';
  if (hasTextQuery() && $('image-query').value.trim()) searchText();
}

function similarButton(i) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'chip similar';
  b.textContent = 'similar';
  b.title = 'rank the images by their likeness to this one';
  b.addEventListener('click', () => rank({ image: i }, img.vectors.data.slice(i * img.vectors.shape[1], (i + 1) * img.vectors.shape[1]), 'cosine'));
  return b;
}

/** The typed query embedded in the worker (normalized), then the images ranked for it. */
export async function searchText() {
  const model = page.model;
  const text = $('image-query').value.trim();
  if (!img.vectors || !hasTextQuery()) return;
  if (!text) { imageError('Type what to look for.'); return; }
  imageError(null);
  const seq = img.seq;
  let q;
  try {
    q = await model.embedTexts([text]);
  } catch (e) {
    if (seq === img.seq) imageError(`Cannot read the query: ${e.message}`);
    return;
  }
  if (seq !== img.seq || model !== page.model) return;
  rank({ text }, q.data, model.siglip ? 'sigmoid' : 'cosine');
}

/**
 * The images ranked by their score for the query vector `q` (normalized, D numbers): the dot accumulated in double
 * and rounded to float32 as CLIPModel's logits are; 'sigmoid': SigLIP's logit_scale and logit_bias applied.
 */
export function rank(query, q, scoreKind) {
  const { data, shape: [n, D] } = img.vectors;
  const { logitScale, logitBias } = page.model;
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < D; k++) s += data[i * D + k] * q[k];
    const cos = Math.fround(s);
    scores[i] = scoreKind === 'sigmoid' ? Math.fround(1 / (1 + Math.exp(-Math.fround(Math.fround(cos * logitScale) + logitBias)))) : cos;
  }
  const order = [...scores.keys()].sort((a, b) => scores[b] - scores[a] || a - b);
  img.run = { ...img.run, query, scoreKind, results: order.map((i) => ({ index: i, name: nameOf(img.files[i]), score: scores[i] })) };
  img.seq += 1;  // thumbnails still being added for the previous order stop
  $('image-results').dataset.query = query.text ?? `image ${query.image}`;
  renderThumbs(order.slice(0, SHOWN), (i, cap) => {
    const line = document.createElement('div');
    line.className = 'score';
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.width = `${Math.round(Math.max(0, scores[i]) * 60)}px`;
    line.append(bar, scores[i].toFixed(4));
    if (query.image === i) line.append(' (the query)');
    cap.append(line, similarButton(i));
  });
  $('image-results-note').textContent = `Ranked for ${query.text !== undefined ? JSON.stringify(query.text) : `image ${query.image + 1}, ${nameOf(img.files[query.image])}`}`
    + ` by ${scoreKind === 'sigmoid' ? 'SigLIP\'s probability' : 'cosine'}${n > SHOWN ? `; the best ${SHOWN} of ${n} shown` : ''}.`;
}

/** Wires the query's form. */
export function mountImageSearch() {
  $('image-query-form').addEventListener('submit', (e) => { e.preventDefault(); searchText(); });
}
