// Choosing a checkpoint: a folder or files picked, a base URL or a file's URL, a hub id (cache_view.js), or one of
// this repository's models. Each is described by 'attnwasm/inspect' from its files' headers alone — what it is,
// what fits — before anything loads; the worker's loadModel then reads the same source. Not here: the fits
// table (fits.js), the load (loading.js).
import { inspect } from 'attnwasm/inspect';
import { $, show } from './dom.js';
import { page } from './state.js';
import { renderFits } from './fits.js';

/** This repository's models, offered as chips. */
export const REPO_MODELS = [
  { label: 'fortune writer (causal LM)', url: '/models/lm/lm.safetensors' },
  { label: 'number translator', url: '/models/translator/translator.safetensors' },
  { label: 'digit classifier', url: '/models/vit/vit.safetensors' },
];
const INDEX = 'model.safetensors.index.json';

/** A picked File's path in its checkpoint folder: below the folder picked ('1_Pooling/config.json'), else its name. */
const pathOf = (f) => (f.webkitRelativePath?.includes('/') ? f.webkitRelativePath.slice(f.webkitRelativePath.indexOf('/') + 1) : f.name);

/**
 * Files picked (a folder or several files): a folder of files by their paths, of which only the checkpoint's
 * (every role but 'other': a folder pick holds the README too) go to the worker. One .safetensors picked with no
 * model.safetensors, index or config.json beside it (one of attnwasm's own files) is one file.
 * @returns {Promise<{arg: object, label: string, report: object}>}
 */
export async function fromFiles(fileList) {
  const files = [...fileList];
  const byPath = new Map(files.map((f) => [pathOf(f), f]));
  const weights = files.filter((f) => f.name.endsWith('.safetensors'));
  const folder = files.some((f) => ['model.safetensors', INDEX, 'config.json'].includes(f.name));
  if (!folder && weights.length === 1) return { arg: weights[0], label: `${files.length} file(s): ${weights[0].name}`, report: await inspect(weights[0]) };
  const report = await inspect(byPath);
  // inspect names a file by its path in the checkpoint's folder: the picked path, or its tail.
  const fileOf = (name) => byPath.get(name) ?? [...byPath].find(([p]) => p.endsWith(`/${name}`))?.[1];
  const kept = report.files.filter((f) => f.role !== 'other').map((f) => f.name);
  return { arg: Object.fromEntries(kept.map((n) => [n, fileOf(n)])), label: `${files.length} file(s): ${kept.join(', ')}`, report };
}

/**
 * A URL typed (or a repository model's): a file's URL (.safetensors, an index) as it is, anything else as a base
 * URL ending in '/'. A base URL is asked only for its weights and config.json (probe: false), so that no side
 * file it lacks is a 404 in the console; the worker's load asks for those it reads.
 */
export async function fromUrl(text) {
  const url = new URL(text, location.href);
  const file = /\.(safetensors|index\.json)$/.test(url.pathname);
  if (!file && !url.pathname.endsWith('/')) url.pathname += '/';
  return { arg: url.href, label: url.href, report: await inspect(url.href, file ? {} : { probe: false }) };
}

/**
 * Chooses the checkpoint `how()` describes ({ arg, label, report, options? }), named `what` while its headers are
 * read: the summary, and what fits (fits.js) unless its headers are refused (then the source's error). A
 * checkpoint the runtime would refuse by its config is still offered: the load then says why, in the runtime's words.
 */
export async function choose(what, how) {
  show($('source-error'), false);
  show($('source-refusal'), false);
  show($('load-error'), false);
  $('source-summary').textContent = `Reading the headers of ${what}…`;
  let chosen;
  try {
    chosen = await how();
    if (!chosen.report.memory) throw new Error(chosen.report.refused.message);  // a header the runtime refuses
  } catch (e) {
    page.chosen = null;
    $('source-summary').textContent = 'No checkpoint chosen.';
    $('source-error').textContent = e.message;
    show($('source-error'));
    show($('fit-card'), false);
    return;
  }
  page.chosen = chosen;
  const r = chosen.report;
  const weights = r.files.filter((f) => f.role === 'weights').length;
  const type = r.files.some((f) => f.role === 'config') ? ` — config.json: model_type "${r.modelType}"`
    : r.family ? ` — ${r.family.noun} (its own attnwasm.config)` : '';
  $('source-summary').textContent = `${chosen.label}: ${weights} weight file(s), ${r.tensors.length} tensors${type}`;
  $('source-summary').dataset.family = r.family?.kind ?? '';
  if (r.refused) {
    $('source-refusal').textContent = `attnwasm will not run it as it is: ${r.refused.message}`;
    show($('source-refusal'));
  }
  renderFits(r);
  $('load').disabled = !page.rt;
}
