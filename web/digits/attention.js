// The class token's attention over the 7 × 7 patch grid, drawn under the input as translucent ink: the map
// chosen (a layer with one head or the mean over heads, or the rollout over all layers) large with its caption,
// and small multiples of every map (a row per layer, a column per head, then the rollout); a click on one picks it.
import { magma, css } from '../shared/colormap.js';
import { $ } from './dom.js';
import { N, page, shown } from './state.js';

const overlay = $('overlay');
const layerSelect = $('layer');
const headSelect = $('head');

/** The selected 7×7 map: rollout, or layer l with head h or the mean over heads. */
function attentionMap(result, layer, head) {
  if (layer === 'rollout') return result.rollout;
  const { heads, grid, data } = result.attention;
  const P = grid * grid, l = Number(layer);
  const hs = head === 'avg' ? Array.from({ length: heads }, (_, i) => i) : [Number(head)];
  const out = new Float32Array(P);
  for (const h of hs) for (let p = 0; p < P; p++) out[p] += data[(l * heads + h) * P + p] / hs.length;
  return out;
}

/**
 * Draws a 7×7 map (colour, scaled to its maximum) with the 28×28 input on top
 * as translucent white ink, so both the digit and the attention stay visible.
 * @param {HTMLCanvasElement} c square canvas
 */
function drawMap(c, input, map, grid, { gridLines = true } = {}) {
  const ctx = c.getContext('2d');
  const s = c.width;
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, s, s);
  if (!input) return;
  if (map) {
    let max = 0;
    for (const v of map) max = Math.max(max, v);
    const cell = s / grid;
    for (let gy = 0; gy < grid; gy++) {
      for (let gx = 0; gx < grid; gx++) {
        ctx.fillStyle = css(magma(max > 0 ? map[gy * grid + gx] / max : 0));
        ctx.fillRect(Math.round(gx * cell), Math.round(gy * cell), Math.ceil(cell), Math.ceil(cell));
      }
    }
    if (gridLines) {
      ctx.strokeStyle = 'rgba(255, 255, 255, 0.15)';
      ctx.lineWidth = 1;
      for (let k = 1; k < grid; k++) {
        const p = Math.round(k * cell) + 0.5;
        ctx.beginPath();
        ctx.moveTo(p, 0); ctx.lineTo(p, s);
        ctx.moveTo(0, p); ctx.lineTo(s, p);
        ctx.stroke();
      }
    }
  }
  const px = s / N;
  for (let y = 0; y < N; y++) {
    for (let x = 0; x < N; x++) {
      const v = input[y * N + x];
      if (v > 0.02) {
        ctx.fillStyle = `rgba(255, 255, 255, ${(map ? 0.6 : 1) * v})`;
        ctx.fillRect(Math.floor(x * px), Math.floor(y * px), Math.ceil(px), Math.ceil(px));
      }
    }
  }
}

/** Fills the layer and head choices and the small multiples for the loaded classifier; wires them. */
export function setupAttentionControls() {
  const { numLayers, nhead } = page.classifier.config;
  layerSelect.replaceChildren(new Option('rollout', 'rollout'),
    ...Array.from({ length: numLayers }, (_, i) => new Option(`layer ${i + 1}`, String(i))));
  headSelect.replaceChildren(new Option('average over heads', 'avg'),
    ...Array.from({ length: nhead }, (_, i) => new Option(`${i + 1}`, String(i))));
  layerSelect.value = 'rollout';
  const sync = () => {
    headSelect.disabled = layerSelect.value === 'rollout';
    drawAttention();
  };
  layerSelect.addEventListener('change', sync);
  headSelect.addEventListener('change', drawAttention);
  sync();

  // Small multiples: one row per layer (average, then each head), plus rollout.
  const thumbs = $('thumbs');
  thumbs.style.gridTemplateColumns = `auto repeat(${nhead + 1}, var(--thumb))`;
  const cells = [document.createElement('span')];
  for (const h of ['avg', ...Array.from({ length: nhead }, (_, i) => String(i))]) {
    const s = document.createElement('span');
    s.className = 'colhead';
    s.textContent = h === 'avg' ? 'avg' : `h${Number(h) + 1}`;
    cells.push(s);
  }
  const thumb = (layer, head) => {
    const c = document.createElement('canvas');
    c.width = 56;
    c.height = 56;
    c.dataset.layer = layer;
    c.dataset.head = head;
    c.title = layer === 'rollout' ? 'rollout' : `layer ${Number(layer) + 1}, ${head === 'avg' ? 'average over heads' : `head ${Number(head) + 1}`}`;
    c.addEventListener('click', () => {
      layerSelect.value = layer;
      if (layer !== 'rollout') headSelect.value = head;
      sync();
    });
    return c;
  };
  for (let l = 0; l < numLayers; l++) {
    const lbl = document.createElement('span');
    lbl.className = 'lbl';
    lbl.textContent = `layer ${l + 1}`;
    cells.push(lbl, thumb(String(l), 'avg'), ...Array.from({ length: nhead }, (_, h) => thumb(String(l), String(h))));
  }
  const lbl = document.createElement('span');
  lbl.className = 'lbl';
  lbl.textContent = 'rollout';
  cells.push(lbl, thumb('rollout', 'avg'));
  thumbs.replaceChildren(...cells);
}

/** Redraws the chosen map and the small multiples for what was classified last (shown.last), if anything. */
export function drawAttention() {
  const { classifier } = page;
  if (!classifier) return;
  const { last } = shown;
  const layer = layerSelect.value, head = headSelect.value;
  const grid = classifier.grid;
  const map = last ? attentionMap(last.result, layer, head) : null;
  drawMap(overlay, last?.input ?? null, map, grid);
  const cap = $('overlay-caption');
  if (!last) {
    cap.innerHTML = '&nbsp;';
  } else if (layer === 'rollout') {
    cap.textContent = 'Attention rollout over all layers (scaled to its maximum).';
  } else {
    let max = 0;
    for (const v of map) max = Math.max(max, v);
    cap.textContent = `Layer ${Number(layer) + 1}, ${head === 'avg' ? 'average over heads' : `head ${Number(head) + 1}`}: largest patch weight ${max.toFixed(3)}.`;
  }
  for (const c of $('thumbs').querySelectorAll('canvas')) {
    const selected = c.dataset.layer === layer && (layer === 'rollout' || c.dataset.head === head);
    c.classList.toggle('selected', selected);
    drawMap(c, last?.input ?? null, last ? attentionMap(last.result, c.dataset.layer, c.dataset.head) : null, grid, { gridLines: false });
  }
}
