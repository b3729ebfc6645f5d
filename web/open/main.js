// Open a model: a Hugging Face checkpoint from disk (a folder or files), a base URL, a hub id, or one of this
// repository's models, run in a worker ('attnwasm/worker'): the page reads only the files' headers, through
// 'attnwasm/inspect' (what it is, what fits, before the load), the worker reads the weights itself. A language
// model then chats or completes a text, streaming, with the newest token's attention for every layer and head; a
// sentence embedder embeds sentences, compares them, and shows where each token looks; a text classifier labels
// texts, a reranker ranks documents for a query; an image classifier labels images, CLIP / SigLIP (or a bare vision
// encoder) search them, and a patch's attention shows; an encoder–decoder translates texts (greedy streamed, beams
// when done); Whisper transcribes audio (a file or the microphone), its segments streamed. What the runtime cannot
// run is refused with its error's text. Imports the package the way a user would (the import map).
// This file wires the page: its elements, the modules, the start-up and window.openDemo; it draws nothing.
// source.js, fits.js: the checkpoint and what fits · loading.js: the load and the model's facts ·
// generation.js, lm_attention.js: a causal LM at work · embedder.js, token_attention.js: a sentence embedder ·
// text_tasks.js: a classifier or a reranker · image_inputs.js, image_tasks.js, image_search.js, patch_attention.js:
// images dropped, labelled, searched, and a patch's attention · translate.js: an encoder–decoder translating ·
// speech_input.js, transcribe.js: audio given to Whisper, transcribed ·
// paint.js: the attention grids' pixels · cache_view.js: the hub cache · state.js, dom.js: what they share.
import { createWorker } from 'attnwasm/worker';
import { mountPanel } from '../shared/panel.js';
import { $ } from './dom.js';
import { page, run, emb, img } from './state.js';
import { REPO_MODELS, choose, fromFiles, fromUrl } from './source.js';
import { load } from './loading.js';
import { renderMode, send, endText } from './generation.js';
import { mountLmAttention } from './lm_attention.js';
import { mountEmbedder } from './embedder.js';
import { mountTokenAttention } from './token_attention.js';
import { mountTextTask, last as textTask } from './text_tasks.js';
import { mountImageTask } from './image_tasks.js';
import { mountPatchAttention } from './patch_attention.js';
import { mountTranslate, last as translation } from './translate.js';
import { mountTranscribe, last as transcription } from './transcribe.js';
import { mountCacheView, looksLikeHubId } from './cache_view.js';

page.panel = mountPanel($('panel'), { models: ['Model weights'] });

// ------------------------------------------------------------------ the checkpoint
for (const m of REPO_MODELS) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'chip';
  b.textContent = m.label;
  b.addEventListener('click', () => choose(m.url, () => fromUrl(m.url)));
  $('repo-models').append(b);
}
// The picked files taken and the input emptied: picking the same folder or files again (to reload them, or after
// another source) is a change again — Chromium fires none for a selection equal to the input's current one.
const picked = (what) => (e) => {
  const files = [...e.target.files];
  e.target.value = '';
  if (files.length) choose(what, () => fromFiles(files));
};
$('pick-folder').addEventListener('change', picked('the folder'));
$('pick-files').addEventListener('change', picked('the files'));
const cacheView = mountCacheView($('cache-view'), { open: (id) => choose(id, () => cacheView.inspect(id)) });
page.refresh = cacheView.refresh;
$('url-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const u = $('url').value.trim();
  if (looksLikeHubId(u)) choose(u, () => cacheView.inspect(u));
  else if (u) choose(u, () => fromUrl(u));
});
$('load').addEventListener('click', load);

// ------------------------------------------------------------------ a causal LM, a sentence embedder
$('ask').addEventListener('submit', (e) => { e.preventDefault(); send(); });
$('prompt').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && $('mode-chat').checked) { e.preventDefault(); send(); }
});
$('stop').addEventListener('click', () => run.active?.controller.abort());
$('clear').addEventListener('click', () => { run.messages = []; $('chat-log').replaceChildren(); });
for (const id of ['mode-chat', 'mode-complete']) $(id).addEventListener('change', renderMode);
mountLmAttention();
mountEmbedder();
mountTokenAttention();
mountTextTask();
mountImageTask();
mountPatchAttention();
mountTranslate();
mountTranscribe();

// ------------------------------------------------------------------ start-up
try {
  page.rt = await createWorker();
  page.panel.setCapabilities(page.rt.startCapabilities);
  if (page.chosen) $('load').disabled = false;
  document.body.dataset.ready = 'true';
} catch (e) {
  page.panel.setError(`Could not start the runtime's worker: ${e.message}`);
  document.body.dataset.ready = 'error';
}

/** For tests and the console: the run on show, and the runtime's worker. */
window.openDemo = {
  get runtime() { return page.rt; },
  get state() {
    return {
      loaded: document.body.dataset.loaded ?? null,
      kind: page.model?.kind ?? null,
      tokens: run.n,
      stopReason: run.stopReason ?? null,
      endText: run.n || run.stopReason ? endText() : null,
      text: run.target?.textContent ?? '',
      tokensPerSecond: run.n >= 2 ? (run.n - 1) / ((run.lastAt - run.firstAt) / 1000) : null,
      messages: run.messages.map((m) => ({ ...m })),
      attention: run.attention ? { layers: run.attention.layers, heads: run.attention.heads, positions: run.attention.positions } : null,
      embed: emb.similarity ? {
        sentences: [...emb.sentences],
        shape: [...emb.shape],
        ms: emb.ms,
        similarity: Array.from({ length: emb.shape[0] }, (_, i) => Array.from(emb.similarity.data.subarray(i * emb.shape[0], (i + 1) * emb.shape[0]))),
      } : null,
      tokenAttention: emb.pick ? { sentence: emb.pick.sentence, token: emb.pick.token, row: emb.pick.row } : null,
      textTask: textTask.run,
      imageTask: img.run ? { ...img.run, patch: img.patch ? { ...img.patch } : null } : null,
      translate: translation.run ? { ...translation.run, running: !!translation.active, seq: translation.seq } : null,
      transcribe: transcription.run ? { ...transcription.run, running: !!transcription.active, seq: transcription.seq } : null,
      checkpoint: page.chosen?.report ?? null,
    };
  },
  memory: () => page.rt?.memory() ?? null,
};
