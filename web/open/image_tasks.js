// The image card: an image model at work (the runtime's ImageClassifier: ViT, DeiT, DINOv2 *ForImageClassification;
// CLIPModel: CLIP and SigLIP; VisionModel: a bare ViT, DeiT, DINOv2). Images dropped or picked (image_inputs.js) go
// to the worker as Files; a classifier labels each, its five best labels and their scores as transformers'
// image-classification pipeline gives them, under its thumbnail; CLIP, SigLIP and a bare encoder embed them for a
// search (image_search.js). A thumbnail clicked shows its patches' attention (patch_attention.js). The page draws
// thumbnails (object URLs) and a few lines of text, a batch of thumbnails a frame.
import { formatMs } from '../shared/panel.js';
import { $, show } from './dom.js';
import { page, img } from './state.js';
import { mountImageInputs, nameOf, thumbUrl } from './image_inputs.js';
import { embedImages, mountImageSearch, showSearch } from './image_search.js';
import { showPatches, hidePatches } from './patch_attention.js';

/** The image models' kinds (loading.js shows this card for them). */
export const IMAGE_KINDS = ['ImageClassifier', 'VisionModel', 'CLIPModel'];
/** Thumbnails added a frame: 40 figures are a few ms of layout; a thousand in one task were not. */
const THUMBS_A_FRAME = 40;
const isClassifier = () => page.model?.kind === 'ImageClassifier';

/** The stats line's value `k`. */
export const stat = (k, v) => { $('image-stats').querySelector(`[data-stat="${k}"] b`).textContent = v; };

/** An error under the card's inputs (null hides it). */
export function imageError(message) {
  $('image-error').textContent = message ?? '';
  show($('image-error'), !!message);
}

/** Shows the card for the image model just loaded: a classifier's, or the search's. */
export function showImageTask() {
  const model = page.model;
  img.run = null;
  img.vectors = null;
  img.seq += 1;
  hidePatches();
  $('image-title').textContent = isClassifier() ? 'Classify images' : 'Search images';
  $('image-stats').dataset.state = 'idle';
  for (const k of ['count', 'ms', 'rate', 'dim']) stat(k, '—');
  show($('image-progress'), false);
  $('image-results').replaceChildren();
  imageError(model.kind === 'CLIPModel' && !model.hasVision ? `This ${model.modelType} model has no vision tower: nothing to do with images here.`
    : model.preprocessorConfig ? null : 'No preprocessor_config.json: this page cannot prepare images for this model.');
  if (isClassifier()) show($('image-query-form'), false);
  else showSearch();
  show($('image-card'));
  // Images given before (to another model) run again with this one.
  if (img.files.length) runImages();
}

/** The images given to the model loaded: labelled, or embedded for the search. */
export function runImages() {
  if (!page.model || !IMAGE_KINDS.includes(page.model.kind)) return;
  if (!img.files.length) { imageError('Drop or pick at least one PNG or JPEG image.'); return; }
  if (!page.model.preprocessorConfig || page.model.hasVision === false) return;
  hidePatches();
  if (isClassifier()) classifyImages();
  else embedImages();
}

/**
 * Runs `work(onProgress)` in the worker with the card's progress bar and stats line kept; returns its result, ms and
 * the progress reported (each batch's `done`), or null when another run (or another model) came since, or it failed
 * (the error shown).
 */
export async function withProgress(what, work) {
  const seq = ++img.seq;
  const model = page.model;
  const n = img.files.length;
  imageError(null);
  $('image-stats').dataset.state = 'running';
  const bar = $('image-progress');
  bar.max = n;
  bar.value = 0;
  show(bar);
  stat('count', `0 of ${n}`);
  const progress = [];
  try {
    const t0 = performance.now();
    const result = await work(({ done, total }) => {
      if (seq !== img.seq) return;
      progress.push(done);
      bar.value = done;
      stat('count', `${done} of ${total}`);
      stat('ms', formatMs(performance.now() - t0));
    });
    const ms = performance.now() - t0;
    if (seq !== img.seq || model !== page.model) return null;
    stat('count', String(n));
    stat('ms', formatMs(ms));
    stat('rate', `${(n / (ms / 1000)).toFixed(1)} images/s`);
    page.panel.setLastInference(ms / n);
    return { result, ms, progress };
  } catch (e) {
    if (seq === img.seq) {
      imageError(`Cannot ${what}: ${e.message}`);
      $('image-stats').dataset.state = 'error';
    }
    return null;
  } finally {
    if (seq === img.seq) show(bar, false);
  }
}

/** Each image's five best labels, in the worker (batches of 8), shown under its thumbnail. */
async function classifyImages() {
  const model = page.model;
  const files = img.files;
  const done = await withProgress('label these images', (onProgress) => model.classify(files, { topK: Math.min(5, model.numLabels), onProgress }));
  if (!done) return;
  img.run = { mode: 'classify', images: files.map(nameOf), results: done.result, ms: done.ms, progress: done.progress };
  stat('dim', `${model.numLabels} labels`);
  renderThumbs(files.map((_, i) => i), (i, cap) => {
    const list = document.createElement('ol');
    list.className = 'labels';
    for (const { label, score } of done.result[i]) {
      const li = document.createElement('li');
      const bar = document.createElement('span');
      bar.className = 'bar';
      bar.style.width = `${Math.round(score * 60)}px`;
      li.append(bar, `${label} `);
      const b = document.createElement('b');
      b.textContent = score.toFixed(4);
      li.append(b);
      list.append(li);
    }
    cap.append(list);
  });
  $('image-stats').dataset.state = 'done';
}

/**
 * Thumbnails of images `order` (indices into img.files), each a figure with its name and what `caption(i, el)`
 * adds; a click on the picture shows its patches' attention. Added THUMBS_A_FRAME at a time.
 */
export function renderThumbs(order, caption) {
  const box = $('image-results');
  box.replaceChildren();
  const seq = img.seq;
  let at = 0;
  const step = () => {
    if (seq !== img.seq) return;
    const figures = order.slice(at, at + THUMBS_A_FRAME).map((i, k) => {
      const fig = document.createElement('figure');
      fig.className = 'thumb';
      fig.dataset.index = String(i);
      fig.dataset.rank = String(at + k);
      const picture = document.createElement('img');
      picture.decoding = 'async';
      picture.loading = 'lazy';
      picture.alt = nameOf(img.files[i]);
      picture.title = 'Click: where its patches look';
      picture.src = thumbUrl(i);
      picture.addEventListener('click', () => showPatches(i));
      const cap = document.createElement('figcaption');
      const name = document.createElement('div');
      name.className = 'name';
      name.textContent = nameOf(img.files[i]);
      cap.append(name);
      caption(i, cap);
      fig.append(picture, cap);
      return fig;
    });
    box.append(...figures);
    at += THUMBS_A_FRAME;
    if (at < order.length) requestAnimationFrame(step);
    else box.dataset.shown = String(order.length);
  };
  delete box.dataset.shown;
  step();
}

/** Wires the drop zone, the pickers and the search's form. */
export function mountImageTask() {
  mountImageInputs(({ images, skipped, cut }) => {
    const notes = [skipped ? `${skipped} file(s) that are not PNG or JPEG skipped` : '', cut ? `${cut} image(s) past the first ${images.length} left out` : ''].filter(Boolean);
    $('image-note').textContent = `${images.length} image(s)${notes.length ? `; ${notes.join('; ')}` : ''}.`;
    runImages();
  });
  mountImageSearch();
}
