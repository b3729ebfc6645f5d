// The newest token's attention while a causal LM writes: one row per (layer, head), one column per position of
// the context (the last HEAT_COLUMNS), the picked head's five most attended positions with their tokens; a click
// on a row, or the layer and head choices, picks the head.
import { $ } from './dom.js';
import { page, run } from './state.js';
import { paintHeat } from './paint.js';

const HEAT_COLUMNS = 256;

/** Draws the newest token's attention (run.attention), if any. */
export function drawHeat() {
  const a = run.attention;
  if (!a) return;
  const { layers, heads, positions, data } = a;
  const cols = Math.min(positions, HEAT_COLUMNS);
  const rows = layers * heads;
  const c = $('heat');
  if (c.width !== cols || c.height !== rows) { c.width = cols; c.height = rows; }
  const rowPx = Math.max(2, Math.min(10, Math.floor(480 / rows)));
  c.style.width = `${Math.max(cols * Math.max(2, Math.floor(700 / cols)), 100)}px`;
  c.style.height = `${rows * rowPx}px`;
  paintHeat(c, data, rows, cols, (r) => r * positions + positions - cols, Number($('layer').value) * heads + Number($('head').value));
  c.dataset.rows = String(rows);
  c.dataset.positions = String(positions);
}

/** The selected head's five most attended positions, with their tokens (asked of the worker's tokenizer). */
export async function updateTopPositions() {
  const a = run.attention;
  const { model } = page;
  if (!a || !model?.tokenizer || !run.contextIds) return;
  const { heads, positions, data } = a;
  const r = Number($('layer').value) * heads + Number($('head').value);
  const row = data.subarray(r * positions, (r + 1) * positions);
  const top = [...row.keys()].sort((i, j) => row[j] - row[i]).slice(0, 5);
  const texts = await Promise.all(top.map((p) => model.tokenizer.decode([run.contextIds[p] ?? 0]).catch(() => '?')));
  $('top-positions').textContent = `Layer ${Number($('layer').value) + 1}, head ${Number($('head').value) + 1}: most attention on `
    + top.map((p, i) => `position ${p} ${JSON.stringify(texts[i])} (${row[p].toFixed(3)})`).join(', ');
}

/** Wires the grid's clicks and the layer and head choices. */
export function mountLmAttention() {
  $('heat').addEventListener('click', (e) => {
    const a = run.attention;
    if (!a) return;
    const rect = $('heat').getBoundingClientRect();
    const r = Math.floor(((e.clientY - rect.top) / rect.height) * a.layers * a.heads);
    $('layer').value = String(Math.floor(r / a.heads));
    $('head').value = String(r % a.heads);
    drawHeat();
    updateTopPositions();
  });
  for (const id of ['layer', 'head']) $(id).addEventListener('change', () => { drawHeat(); updateTopPositions(); });
}
