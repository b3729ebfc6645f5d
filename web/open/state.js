// What the open page's modules share: the runtime and the model loaded, the checkpoint chosen, the runtime
// panel, and the runs on show — a generation's (generation.js) and the sentence embedder's (embedder.js). One
// object each, written by the module named beside each field and read by the others.

/**
 * The page: rt (the worker's runtime, main.js), model (the loaded model's proxy, loading.js), chosen (the
 * checkpoint chosen, source.js: { arg, options, label, report }), panel (the runtime panel, main.js), refresh
 * (the cache view's refresh, main.js).
 */
export const page = { rt: null, model: null, chosen: null, panel: null, refresh: () => {} };

/**
 * The generation running or last run (generation.js): its ids, each token's ms, when the first and last came,
 * the stop reason and end text, the newest token's attention, the prompt's length and the context's ids, the
 * text not yet drawn, where it is drawn, whether it is a chat turn; `active` ({ controller, finished }) while
 * one runs; the conversation's messages.
 */
export const run = {
  ids: [], ms: [], firstAt: null, lastAt: null, t0: 0, end: '', stopReason: null, attention: null, promptLength: 0, contextIds: null,
  pending: '', target: null, n: 0, chat: true, active: null, messages: [],
};

/**
 * The embedder's last run (embedder.js): the sentences, their vectors' shape, the time, the similarity (n, n);
 * `forwards` caches each sentence's { tokens, attentions } (attentions (1, layers, heads, T, T)); `sentence`
 * the one whose tokens show, `pick` the token picked ({ sentence, token, row }); `seq` ends a stale run.
 */
export const emb = { sentences: [], shape: null, ms: null, similarity: null, forwards: new Map(), sentence: 0, pick: null, seq: 0 };

/**
 * The image card's run (image_tasks.js, image_search.js): the images given (Files, in the worker's order), their
 * object URLs (image_inputs.js owns and revokes them), the run shown (`run`: { mode, images, results, ms, progress, … },
 * for tests), the search's vectors ({ data, shape: [n, D] }, normalized) and `seq` ending a stale run; `patch` the patch
 * picked (patch_attention.js).
 */
export const img = { files: [], urls: [], run: null, vectors: null, seq: 0, patch: null };
