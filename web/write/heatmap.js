// The writing page's attention heatmap: the context's characters in cells, coloured by the attention of the
// token on show (the newest, or the one clicked) for the selected layer and head (or the head mean), the
// window's start marked; its caption, hover line and clicks. Two stacked canvases keep a frame's cost to the
// window's cells whatever the context's length. Not the attention's copy out of the generation (run.js).
import { blues, css, textOn } from '../shared/colormap.js';
import { fitCanvas } from './canvas.js';
import { glyph, charLabel } from './vocabulary.js';

const CELL_FONT = '13px "DejaVu Sans Mono", ui-monospace, Menlo, Consolas, monospace';
const LINE_H = 20;        // heatmap row height (px)
const PAD_X = 2;          // heatmap left padding (px)
const ROW_CHUNK = 6;      // the canvases grow by this many rows (growing clears them: the glyphs are redrawn)

/**
 * Cell positions of the context, computed as positions arrive (append-only):
 * col[p], row[p], width[p] in cells; a newline ends its row; an <eos> after the
 * start ends its row too (a new fortune starts on a new line).
 */
function layoutCells(r, vocab, count, cols) {
  let lay = r.layout;
  if (!lay || lay.cols !== cols) {
    const cap = r.ids.length;
    lay = r.layout = { cols, n: 0, col: 0, row: 0, cellCol: new Int16Array(cap), cellRow: new Int32Array(cap), cellW: new Uint8Array(cap), drawn: 0 };
  }
  for (let p = lay.n; p < count; p++) {
    const id = r.ids[p];
    const special = vocab.special[id];
    const w = special ? 3 : 1;
    if (lay.col + w > cols) { lay.row++; lay.col = 0; }
    lay.cellCol[p] = lay.col;
    lay.cellRow[p] = lay.row;
    lay.cellW[p] = w;
    lay.col += w;
    if ((special && p > 0) || (!special && vocab.token[id] === '\n')) { lay.row++; lay.col = 0; }
  }
  lay.n = count;
  return lay;
}

/** The token whose attention is shown: the one clicked, or the newest. */
function shownToken(r) {
  if (r.shown !== null && r.shown < r.n) return r.shown;
  return r.n - 1;
}

/**
 * Mounts the heatmap on `canvas` (#heatmap) over `textCanvas` (#heat-text) in their wrapper, with the
 * `layerSelect`, `headSelect` and `followBox` controls, the `caption` and the `hover` line. `page.run` and
 * `page.vocab` are the run on show and the vocabulary; `schedule(true)` redraws it. Returns
 * { setModel(numLayers, numHeads), draw(run), reset(), cellBox(p) }.
 */
export function mountHeatmap({ canvas: heat, textCanvas: heatText, layerSelect, headSelect, followBox, caption, hover, page, schedule }) {
  const heatWrap = heat.parentElement;
  // The width, read when it changes rather than in every frame (a read forces a layout).
  let width = 700;
  let cellW = 0;

  /** The layer and head options of a model of `numLayers` layers of `numHeads` heads; the last layer first. */
  function setModel(numLayers, numHeads) {
    layerSelect.replaceChildren(...Array.from({ length: numLayers }, (_, i) => new Option(`${i + 1}`, String(i))));
    layerSelect.value = String(numLayers - 1);
    headSelect.replaceChildren(new Option('mean over heads', 'mean'),
      ...Array.from({ length: numHeads }, (_, i) => new Option(`${i + 1}`, String(i))));
  }

  /** The shown attention over positions start … start + w − 1 for the selected layer and head (or the head mean). */
  function selectedAttention(r, i) {
    const P = r.P0 + i;               // positions the token's query saw
    const w = Math.min(P, r.W);
    const l = Number(layerSelect.value);
    const h = headSelect.value;
    const heads = h === 'mean' ? Array.from({ length: r.H }, (_, k) => k) : [Number(h)];
    const out = new Float32Array(w);
    for (const hh of heads) {
      const base = i * r.L * r.H * r.W + (l * r.H + hh) * r.W;
      for (let j = 0; j < w; j++) out[j] += r.att[base + j] / heads.length;
    }
    return { start: P - w, weights: out, P };
  }

  /**
   * Two stacked canvases: #heat-text holds every character's glyph, drawn once
   * (new characters appended per frame); #heatmap on top is redrawn per frame
   * but paints only the attended cells (at most the window, 128), each with its
   * colour and its glyph. So a frame costs ~130 cells whatever the context's length.
   */
  function draw(r) {
    const vocab = page.vocab;
    if (!cellW) {
      const measure = heatText.getContext('2d');
      measure.font = CELL_FONT;
      cellW = Math.ceil(measure.measureText('M').width) + 1;
    }
    const cols = Math.max(8, Math.floor((width - 2 * PAD_X) / cellW));
    const count = r.P0 + r.n;
    const lay = layoutCells(r, vocab, count, cols);
    if (!lay.rows || lay.row + 2 > lay.rows || lay.width !== width) {
      lay.rows = lay.row + 2 + ROW_CHUNK;
      lay.width = width;
      lay.drawn = 0;
    }
    const height = lay.rows * LINE_H + 4;
    const x = (p) => PAD_X + lay.cellCol[p] * cellW;
    const y = (p) => lay.cellRow[p] * LINE_H;

    // The glyph layer: characters not drawn yet.
    const tctx = fitCanvas(heatText, width, height);
    if (lay.drawn === 0) tctx.clearRect(0, 0, width, height);
    tctx.font = CELL_FONT;
    tctx.textAlign = 'center';
    tctx.textBaseline = 'middle';
    for (let p = lay.drawn; p < count; p++) drawCell(tctx, r, vocab, p, x(p), y(p), lay.cellW[p] * cellW, null);
    lay.drawn = count;

    // The attention layer.
    const ctx = fitCanvas(heat, width, height);
    ctx.clearRect(0, 0, width, height);
    ctx.font = CELL_FONT;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    const i = r.n ? shownToken(r) : -1;
    const att = i >= 0 ? selectedAttention(r, i) : { start: count, weights: new Float32Array(0), P: count };
    let max = 0, argmax = -1;
    for (let j = 0; j < att.weights.length; j++) if (att.weights[j] > max) { max = att.weights[j]; argmax = att.start + j; }
    for (let j = 0; j < att.weights.length; j++) {
      const p = att.start + j;
      drawCell(ctx, r, vocab, p, x(p), y(p), lay.cellW[p] * cellW, blues(max > 0 ? att.weights[j] / max : 0));
    }
    if (i >= 0) {
      const p = att.P;  // the character this attention chose, outlined
      ctx.strokeStyle = '#f2a65a';
      ctx.lineWidth = 2;
      ctx.strokeRect(x(p) + 0.5, y(p) + 1, lay.cellW[p] * cellW - 2, LINE_H - 5);
      ctx.lineWidth = 1;
      if (att.start > 0) {
        // Where the window starts: a bar before its first cell.
        ctx.fillStyle = '#3457d5';
        ctx.fillRect(x(att.start) - 1.5, y(att.start) + 1, 2, LINE_H - 5);
      }
    }
    // The canvases are allocated ROW_CHUNK rows ahead; show the rows in use.
    const shownHeight = `${(lay.row + (lay.col > 0 ? 1 : 0) + (r.stopReason ? 0 : 1)) * LINE_H + 4}px`;
    if (heatWrap.style.height !== shownHeight) heatWrap.style.height = shownHeight;
    r.heatGeometry = { lay, count, att };
    heat.dataset.token = String(i);
    heat.dataset.view = `${layerSelect.value}/${headSelect.value}`;
    writeCaption(r, vocab, i, att, max, argmax);
  }

  /**
   * One context cell at (cx, cy), cw wide: on the glyph layer (rgb null) a muted
   * glyph and the prompt's underline; on the attention layer its colour and a
   * glyph readable on it.
   */
  function drawCell(ctx, r, vocab, p, cx, cy, cw, rgb) {
    if (rgb) {
      ctx.fillStyle = css(rgb);
      ctx.fillRect(cx, cy + 1, cw - 1, LINE_H - 5);
    } else if (p < r.P0) {
      ctx.fillStyle = '#b8c3dd';
      ctx.fillRect(cx, cy + LINE_H - 3, cw - 1, 2);
    }
    const g = glyph(vocab, r.ids[p]);
    const ink = rgb ? textOn(rgb) : '#7a8396';
    if (g === 'eos') {
      ctx.strokeStyle = rgb ? ink : '#9aa3b5';
      ctx.strokeRect(cx + 1.5, cy + 3.5, cw - 4, LINE_H - 9);
      ctx.font = '10px system-ui, sans-serif';
      ctx.fillStyle = ink;
      ctx.fillText('eos', cx + cw / 2, cy + LINE_H / 2 - 1);
      ctx.font = CELL_FONT;
      return;
    }
    const faint = g === '·' || g === '↵' || g === '⇥';
    ctx.fillStyle = faint && ink !== '#ffffff' ? '#b3b9c6' : ink;
    ctx.fillText(g, cx + cw / 2, cy + LINE_H / 2 - 1);
  }

  function writeCaption(r, vocab, i, att, max, argmax) {
    if (i < 0) {
      caption.textContent = 'Each cell is a position of the context; darker = more attention (scaled to the largest weight). Press Write.';
      return;
    }
    const head = headSelect.value === 'mean' ? 'the mean over heads' : `head ${Number(headSelect.value) + 1}`;
    const windowNote = att.start > 0
      ? ` It attends to the last ${r.W} positions only (the model's window, from the blue bar); those before get no attention.` : '';
    caption.textContent = `Token ${i + 1}, ${charLabel(vocab, r.ids[att.P])} (outlined), was chosen looking at positions 0–${att.P - 1}: ` +
      `layer ${Number(layerSelect.value) + 1}, ${head}. Darker = more attention; the largest weight, ${max.toFixed(3)}, ` +
      `is on position ${argmax} ${charLabel(vocab, r.ids[argmax])}.${windowNote} ` +
      (r.shown === null ? 'Click a written character to see the attention that chose it.' : '');
  }

  /** The context position under mouse event `e`, or -1. */
  function cellAt(e) {
    const gm = page.run?.heatGeometry;
    if (!gm) return -1;
    const rect = heat.getBoundingClientRect();
    const col = Math.floor((e.clientX - rect.left - PAD_X) / cellW);
    const row = Math.floor((e.clientY - rect.top) / LINE_H);
    for (let p = 0; p < gm.count; p++) {
      if (gm.lay.cellRow[p] === row && col >= gm.lay.cellCol[p] && col < gm.lay.cellCol[p] + gm.lay.cellW[p]) return p;
    }
    return -1;
  }

  /** The heatmap cell of context position p in client coordinates: { x, y, width, height }, or null. */
  function cellBox(p) {
    const gm = page.run?.heatGeometry;
    if (!gm || p < 0 || p >= gm.count) return null;
    const rect = heat.getBoundingClientRect();
    return { x: rect.left + PAD_X + gm.lay.cellCol[p] * cellW, y: rect.top + gm.lay.cellRow[p] * LINE_H, width: gm.lay.cellW[p] * cellW, height: LINE_H };
  }

  /** A new run: follow its newest token; no hover line. */
  function reset() {
    followBox.checked = true;
    hover.innerHTML = '&nbsp;';
  }

  layerSelect.addEventListener('change', () => schedule(true));
  headSelect.addEventListener('change', () => schedule(true));
  followBox.addEventListener('change', () => {
    if (followBox.checked && page.run) page.run.shown = null;
    schedule(true);
  });
  new ResizeObserver((entries) => {
    for (const e of entries) width = Math.floor(e.contentRect.width);
    schedule(true);
  }).observe(heatWrap);
  heat.addEventListener('mousemove', (e) => {
    const p = cellAt(e);
    const run = page.run;
    const gm = run?.heatGeometry;
    if (p < 0 || !gm) {
      hover.innerHTML = '&nbsp;';
      return;
    }
    const { att } = gm;
    const j = p - att.start;
    const where = p === 0 ? 'the start' : p < run.P0 ? 'prompt' : `written, token ${p - run.P0 + 1}`;
    const weight = p >= att.P ? 'chosen by this attention' : j >= 0 ? `attention ${att.weights[j].toFixed(4)}` : 'outside the window: attention 0';
    hover.textContent = `position ${p} ${charLabel(page.vocab, run.ids[p])} (${where}): ${weight}`;
  });
  heat.addEventListener('mouseleave', () => { hover.innerHTML = '&nbsp;'; });
  heat.addEventListener('click', (e) => {
    const p = cellAt(e);
    const run = page.run;
    if (!run || p < run.P0) return;
    run.shown = p - run.P0;
    followBox.checked = false;
    schedule(true);
  });
  return { setModel, draw, reset, cellBox };
}
