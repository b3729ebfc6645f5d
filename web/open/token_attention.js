// A sentence's tokens as the embedder sees them, and where one token looks: its attention over the sentence's
// tokens for every layer and head (forward with outputAttentions of that sentence alone, once per sentence),
// a row per (layer, head), the token labels over the columns; a click on a row picks it and names its three
// most attended tokens.
import { $, show } from './dom.js';
import { page, emb } from './state.js';
import { paintHeat } from './paint.js';
import { markSentence } from './embedder.js';

/**
 * Sentence i's tokens, as embed() tokenized it, and its attentions from forward({ …, outputAttentions }) of
 * that sentence alone (once per sentence): { tokens: [text], attentions: { data, shape: [1, L, H, T, T] } }.
 */
async function sentenceForward(i) {
  if (!emb.forwards.has(i)) {
    const target = page.model;
    emb.forwards.set(i, (async () => {
      const batch = await target.tokenize([emb.sentences[i]]);
      const out = await target.forward({ ...batch, outputAttentions: true });
      const ids = [...batch.inputIds.data];
      const tokens = await Promise.all(ids.map((id) => target.tokenizer.idToToken(id).then((t) => t ?? `#${id}`, () => `#${id}`)));
      return { tokens, attentions: out.attentions };
    })());
    emb.forwards.get(i).catch(() => emb.forwards.delete(i));  // a failure is shown, and tried again on the next click
  }
  return emb.forwards.get(i);
}

/** Shows sentence i's tokens as chips (none picked yet). */
export async function showTokens(i) {
  if (page.model?.kind !== 'Embedder') return;  // a decoder embedder: no encoder forward, no attention map
  emb.sentence = i;
  emb.pick = null;
  markSentence();
  show($('tok-heat-wrap'), false);
  $('tok-top').textContent = '\u00a0';
  $('tokens').replaceChildren();
  const seq = emb.seq;
  let f;
  try {
    f = await sentenceForward(i);
  } catch (e) {
    $('tok-top').textContent = `Cannot run the sentence: ${e.message}`;
    return;
  }
  if (seq !== emb.seq || emb.sentence !== i) return;
  $('tokens').replaceChildren(...f.tokens.map((t, k) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'chip token';
    b.textContent = t;
    b.dataset.index = String(k);
    b.addEventListener('click', () => pickToken(k));
    return b;
  }));
  $('tokens').dataset.sentence = String(i);
  $('tok-top').textContent = 'Click a token.';
}

/** Token k of the sentence shown: its attention over the sentence's tokens, a row per (layer, head). */
async function pickToken(k) {
  const i = emb.sentence;
  const f = await sentenceForward(i);
  if (emb.sentence !== i) return;
  emb.pick = { sentence: i, token: k, row: emb.pick?.row ?? 0 };
  for (const b of $('tokens').children) b.classList.toggle('chosen', Number(b.dataset.index) === k);
  show($('tok-heat-wrap'));  // before drawing: the labels' offset is measured
  drawTokenHeat(f);
  updateTokenTop(f);
}

function drawTokenHeat(f) {
  const [, L, H, T] = f.attentions.shape;
  const rows = L * H, k = emb.pick.token;
  const c = $('tok-heat');
  if (c.width !== T || c.height !== rows) { c.width = T; c.height = rows; }
  const colPx = Math.max(24, Math.min(64, Math.floor(700 / T)));
  const rowPx = Math.max(3, Math.min(12, Math.floor(480 / rows)));
  c.style.width = `${T * colPx}px`;
  c.style.height = `${rows * rowPx}px`;
  // Row r = (layer, head) of token k: attentions[0, l, h, k, :], at ((r · T) + k) · T.
  paintHeat(c, f.attentions.data, rows, T, (r) => (r * T + k) * T, emb.pick.row);
  c.dataset.rows = String(rows);
  c.dataset.cols = String(T);
  c.dataset.layers = String(L);
  c.dataset.heads = String(H);
  $('tok-layers').style.gridTemplateRows = `repeat(${L}, ${H * rowPx}px)`;
  $('tok-layers').replaceChildren(...Array.from({ length: L }, (_, l) => {
    const s = document.createElement('span');
    s.textContent = `L${l + 1}`;
    return s;
  }));
  // The token labels over the canvas's columns: shifted by the layer labels' width.
  $('tok-labels').style.gridTemplateColumns = `repeat(${T}, ${colPx}px)`;
  $('tok-labels').style.marginLeft = `${$('tok-layers').offsetWidth}px`;
  $('tok-labels').replaceChildren(...f.tokens.map((t, j) => {
    const s = document.createElement('span');
    s.textContent = t;
    s.title = t;
    if (j === k) s.className = 'self';
    return s;
  }));
}

/** The picked row's (layer, head) three most attended tokens. */
function updateTokenTop(f) {
  const [, , H, T] = f.attentions.shape;
  const { token: k, row: r } = emb.pick;
  const row = f.attentions.data.subarray((r * T + k) * T, (r * T + k + 1) * T);
  const top = [...row.keys()].sort((a, b) => row[b] - row[a]).slice(0, 3);
  $('tok-top').textContent = `Token ${k + 1} ${JSON.stringify(f.tokens[k])}, layer ${Math.floor(r / H) + 1}, head ${(r % H) + 1}: most attention on `
    + top.map((j) => `${JSON.stringify(f.tokens[j])} (${row[j].toFixed(3)})`).join(', ');
}

/** Wires the grid's clicks and the sentence choice. */
export function mountTokenAttention() {
  $('tok-heat').addEventListener('click', async (e) => {
    if (!emb.pick) return;
    const f = await sentenceForward(emb.pick.sentence);
    const [, L, H] = f.attentions.shape;
    const rect = $('tok-heat').getBoundingClientRect();
    emb.pick.row = Math.min(L * H - 1, Math.max(0, Math.floor(((e.clientY - rect.top) / rect.height) * L * H)));
    drawTokenHeat(f);
    updateTokenTop(f);
  });
  $('sentence').addEventListener('change', () => showTokens(Number($('sentence').value)));
}
