// Images given to the image card: dropped (files, or folders walked to their files) or picked (several files, or a
// folder), kept as Files — the page never decodes them: they cross to the worker as they are (a File is a handle;
// the worker reads and decodes its bytes) and show here as <img> thumbnails of object URLs, decoded by the browser
// off the main thread. Only PNG and JPEG are kept (what attnwasm/image decodes); the others are counted. Not here:
// what is done with them (image_tasks.js, image_search.js).
import { $ } from './dom.js';
import { img } from './state.js';

const IMAGE = /\.(png|jpe?g)$/i;
/** Files a drop may hold in all: a folder of a hundred thousand photos is cut here, and the cut said. */
export const MAX_IMAGES = 5000;

/** A File's path as given (a picked folder's webkitRelativePath, a dropped folder's path), else its name. */
export const nameOf = (f) => f.path ?? (f.webkitRelativePath || f.name);

/**
 * PNG and JPEG files of `files` (by name or type), in path order: { images, skipped } (skipped: how many others).
 */
export function imagesOf(files) {
  const images = [];
  let skipped = 0;
  for (const f of files) {
    if (IMAGE.test(f.name) || f.type === 'image/png' || f.type === 'image/jpeg') images.push(f);
    else skipped++;
  }
  images.sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  return { images: images.slice(0, MAX_IMAGES), skipped, cut: Math.max(0, images.length - MAX_IMAGES) };
}

/** Every file under a dropped entry (FileSystemEntry): a file, or a folder read to its end, its files' paths kept. */
async function filesOfEntry(entry, out) {
  if (out.length >= MAX_IMAGES * 2) return;
  if (entry.isFile) {
    const f = await new Promise((resolve, reject) => entry.file(resolve, reject));
    // The path in the folder dropped ('/photos/2019/a.jpg' → 'photos/2019/a.jpg'), for names and order.
    Object.defineProperty(f, 'path', { value: entry.fullPath.replace(/^\//, '') });
    out.push(f);
    return;
  }
  if (!entry.isDirectory) return;
  const reader = entry.createReader();
  for (;;) {
    // readEntries gives at most 100 entries a call (Chromium): called until it gives none.
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) return;
    for (const e of batch) await filesOfEntry(e, out);
  }
}

/** The files of a drop: its items' entries walked (folders too), else its plain files. */
async function filesOfDrop(dt) {
  const entries = [...(dt.items ?? [])].map((it) => (it.kind === 'file' ? it.webkitGetAsEntry?.() : null)).filter(Boolean);
  if (!entries.length) return [...dt.files];
  const out = [];
  for (const e of entries) await filesOfEntry(e, out);
  return out;
}

/** An object URL for image i of the run (made on first use, revoked by setImages). */
export function thumbUrl(i) {
  img.urls[i] ??= URL.createObjectURL(img.files[i]);
  return img.urls[i];
}

/** Takes `files` as the images (the previous ones' URLs revoked); returns imagesOf's counts. */
function setImages(files) {
  for (const u of img.urls) if (u) URL.revokeObjectURL(u);
  const picked = imagesOf(files);
  img.files = picked.images;
  img.urls = [];
  return picked;
}

/**
 * Wires the drop zone and the two pickers: `onImages({ images, skipped, cut })` with the images taken (maybe none).
 */
export function mountImageInputs(onImages) {
  const zone = $('image-drop');
  const take = (files) => onImages(setImages(files));
  for (const id of ['image-files', 'image-folder']) {
    $(id).addEventListener('change', (e) => {
      const files = [...e.target.files];
      e.target.value = '';  // the same files picked again are a change again
      if (files.length) take(files);
    });
  }
  // A file dropped beside the zone (and beside a file input, which takes drops itself) would make the browser open
  // it in place of the page, and its loaded model.
  for (const type of ['dragover', 'drop']) {
    window.addEventListener(type, (e) => { if (!zone.contains(e.target) && !(e.target instanceof HTMLInputElement)) e.preventDefault(); });
  }
  zone.addEventListener('dragover', (e) => {
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    zone.classList.add('over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', async (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    take(await filesOfDrop(e.dataTransfer));
  });
}
