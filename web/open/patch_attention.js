// Where a patch looks: an image as the model sees it (its pixel_values, prepared in the worker by the folder's image
// processor, shown back in colours), its grid of patches, and for the patch clicked (or the class token) that token's
// attention over the patches tinted over the image, for one layer and one head or the mean of the heads. The forward
// runs in the worker, once per image: VisionModel / ImageClassifier.forward or CLIPModel.visionForward with
// outputAttentions, attentions (1, layers, heads, T, T), T = extra tokens (the class token; DeiT's distillation
// token; none for SigLIP) + gridH · gridW patches in row-major order.
import { $, show } from './dom.js';
import { page, img } from './state.js';
import { nameOf } from './image_inputs.js';
import { paintPatches } from './paint.js';

/** The canvas's longest side in CSS pixels. */
const SIDE = 320;
let shown = null;  // the image on show: { i, pixels: canvas, attentions, grid: [gridH, gridW], patch, extra, H, W }
let seq = 0;

/**
 * The patch size and the tokens before the patches: the model's own (patchSize, extraTokens: a VisionModel's, a
 * CLIPModel's); else they are read off the attentions' T for the input's H × W: the fewest extra tokens (0 … 2) for
 * which T − extra patches of one whole size tile it.
 */
function patchesOf(model, H, W, T) {
  if (model.patchSize && model.extraTokens !== undefined) return { patch: model.patchSize, extra: model.extraTokens };
  for (let extra = 0; extra <= 2; extra++) {
    const p = Math.round(Math.sqrt((H * W) / (T - extra)));
    if (p > 0 && Math.floor(H / p) * Math.floor(W / p) === T - extra) return { patch: p, extra };
  }
  throw new Error(`cannot tell its patches from ${T} tokens for ${W} × ${H} pixels`);
}

/**
 * pixel_values (1, 3, H, W) back to colours: x · std + mean, over rescale_factor, as the processor's config says;
 * a canvas of H × W.
 */
function toCanvas({ data, shape: [, , H, W] }, cfg) {
  const mean = cfg.do_normalize === false ? [0, 0, 0] : cfg.image_mean ?? [0.5, 0.5, 0.5];
  const std = cfg.do_normalize === false ? [1, 1, 1] : cfg.image_std ?? [0.5, 0.5, 0.5];
  const scale = cfg.do_rescale === false ? 1 : cfg.rescale_factor ?? 1 / 255;
  const m = typeof mean === 'number' ? [mean, mean, mean] : mean, s = typeof std === 'number' ? [std, std, std] : std;
  const image = new ImageData(W, H);
  for (let c = 0; c < 3; c++) {
    const plane = data.subarray(c * H * W, (c + 1) * H * W);
    for (let p = 0; p < H * W; p++) image.data[4 * p + c] = (plane[p] * s[c] + m[c]) / scale;  // clamped by the array
  }
  for (let p = 0; p < H * W; p++) image.data[4 * p + 3] = 255;
  const canvas = document.createElement('canvas');
  canvas.width = W;
  canvas.height = H;
  canvas.getContext('2d').putImageData(image, 0, 0);
  return canvas;
}

/** Hides the card (another model, or other images). */
export function hidePatches() {
  seq += 1;
  shown = null;
  img.patch = null;
  show($('patch-card'), false);
}

/** Image i of the card: prepared and run with its attentions in the worker, shown with its grid (no patch picked). */
export async function showPatches(i) {
  const model = page.model;
  const mine = ++seq;
  show($('patch-card'));
  $('patch-top').textContent = `Running ${nameOf(img.files[i])}…`;
  let pixelValues, out;
  try {
    pixelValues = await model.preprocess([img.files[i]]);
    const inputs = { pixelValues, outputAttentions: true };
    out = await (model.kind === 'CLIPModel' ? model.visionForward(inputs) : model.forward(inputs));
  } catch (e) {
    if (mine === seq) $('patch-top').textContent = `Cannot run ${nameOf(img.files[i])}: ${e.message}`;
    return;
  }
  if (mine !== seq || model !== page.model) return;
  const [, , H, W] = pixelValues.shape;
  const [, L, heads, T] = out.attentions.shape;
  let patch, extra;
  try {
    ({ patch, extra } = patchesOf(model, H, W, T));
  } catch (e) {
    $('patch-top').textContent = `Cannot show ${nameOf(img.files[i])}'s patches: ${e.message}`;
    return;
  }
  const grid = [Math.floor(H / patch), Math.floor(W / patch)];
  shown = { i, pixels: toCanvas(pixelValues, model.preprocessorConfig), attentions: out.attentions, grid, patch, extra, H, W };
  const keep = (sel, n, first) => {
    const v = sel.value;
    sel.replaceChildren(...first, ...Array.from({ length: n }, (_, k) => new Option(String(k + 1), String(k))));
    sel.value = [...sel.options].some((o) => o.value === v) ? v : sel.options[first.length ? 0 : n - 1].value;
  };
  keep($('patch-layer'), L, []);
  keep($('patch-head'), heads, [new Option('mean of heads', 'mean')]);
  $('patch-cls').textContent = shown.extra === 2 ? 'class and distillation tokens: the class token' : 'the class token';
  show($('patch-cls'), shown.extra > 0);
  $('patch-title').textContent = `${nameOf(img.files[i])} as the model sees it: ${W} × ${H} pixels, ${grid[0]} × ${grid[1]} patches of ${patch}`;
  img.patch = { image: i, token: null, patch: null, layer: null, head: null, shape: [...out.attentions.shape], grid, extraTokens: shown.extra, weights: null };
  draw();
  $('patch-top').textContent = 'Click a patch.';
  $('patch-card').scrollIntoView?.({ block: 'nearest' });
}

/** The token picked's attention row (T weights) at the layer and head chosen, or the mean over the heads. */
function row(token) {
  const { data, shape: [, , heads, T] } = shown.attentions;
  const l = Number($('patch-layer').value);
  const h = $('patch-head').value;
  const at = (hh) => ((l * heads + hh) * T + token) * T;
  if (h !== 'mean') return { l, h: Number(h), w: data.slice(at(Number(h)), at(Number(h)) + T) };
  const w = new Float32Array(T);
  for (let hh = 0; hh < heads; hh++) for (let j = 0; j < T; j++) w[j] += data[at(hh) + j];
  for (let j = 0; j < T; j++) w[j] /= heads;
  return { l, h: 'mean', w };
}

/** The image, its grid, and the picked token's attention tinted over the patches. */
function draw() {
  const { pixels, grid: [gh, gw], patch, extra, H, W } = shown;
  const c = $('patch-canvas');
  const dpr = window.devicePixelRatio || 1;
  const cssW = Math.round(SIDE * W / Math.max(H, W)), cssH = Math.round(SIDE * H / Math.max(H, W));
  if (c.width !== Math.round(cssW * dpr)) { c.width = Math.round(cssW * dpr); c.height = Math.round(cssH * dpr); }
  c.style.width = `${cssW}px`;
  c.style.height = `${cssH}px`;
  const ctx = c.getContext('2d');
  ctx.imageSmoothingEnabled = Math.max(H, W) * 2 > c.width;  // a small input enlarged: its pixels, not a blur
  ctx.drawImage(pixels, 0, 0, c.width, c.height);
  const cw = c.width / W * patch, ch = c.height / H * patch;
  const p = img.patch;
  if (p.token !== null) {
    const { l, h, w } = row(p.token);
    paintPatches(ctx, w.subarray(extra), gh, gw, cw, ch);
    Object.assign(p, { layer: l, head: h, weights: Array.from(w) });
    top(w);
  }
  ctx.strokeStyle = 'rgba(255, 255, 255, 0.35)';
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let r = 1; r < gh; r++) { ctx.moveTo(0, r * ch); ctx.lineTo(gw * cw, r * ch); }
  for (let k = 1; k < gw; k++) { ctx.moveTo(k * cw, 0); ctx.lineTo(k * cw, gh * ch); }
  ctx.stroke();
  if (p.patch !== null) {
    ctx.strokeStyle = '#ff8c00';
    ctx.lineWidth = Math.max(2, 2 * dpr);
    ctx.strokeRect((p.patch % gw) * cw + 1, Math.floor(p.patch / gw) * ch + 1, cw - 2, ch - 2);
  }
  c.dataset.token = p.token === null ? '' : String(p.token);
}

const tokenName = (t) => (t < shown.extra ? (t === 0 ? 'the class token' : shown.extra === 2 ? 'the distillation token' : `extra token ${t + 1}`)
  : `patch (${Math.floor((t - shown.extra) / shown.grid[1]) + 1}, ${((t - shown.extra) % shown.grid[1]) + 1})`);

/** The line under the image: the picked token, the layer and head, its three most attended tokens. */
function top(w) {
  const p = img.patch;
  const best = [...w.keys()].sort((a, b) => w[b] - w[a]).slice(0, 3);
  $('patch-top').textContent = `${tokenName(p.token)[0].toUpperCase()}${tokenName(p.token).slice(1)}, layer ${p.layer + 1}, `
    + `${p.head === 'mean' ? 'mean of heads' : `head ${p.head + 1}`}: most attention on ${best.map((t) => `${tokenName(t)} (${w[t].toFixed(3)})`).join(', ')}`;
}

/** Picks token t (a patch's token, or the class token) and draws its attention. */
function pick(t) {
  if (!shown) return;
  img.patch.token = t;
  img.patch.patch = t >= shown.extra ? t - shown.extra : null;
  draw();
}

/** Wires the canvas's clicks, the class token's button and the layer and head choices. */
export function mountPatchAttention() {
  $('patch-canvas').addEventListener('click', (e) => {
    if (!shown) return;
    const rect = $('patch-canvas').getBoundingClientRect();
    const [gh, gw] = shown.grid;
    // The grid covers floor(H / patch) · patch rows of pixels (the rest, if any, is cut by the patch embedding).
    const x = (e.clientX - rect.left) / rect.width * shown.W, y = (e.clientY - rect.top) / rect.height * shown.H;
    const c = Math.floor(x / shown.patch), r = Math.floor(y / shown.patch);
    if (r < 0 || r >= gh || c < 0 || c >= gw) return;
    pick(shown.extra + r * gw + c);
  });
  $('patch-cls').addEventListener('click', () => pick(0));
  for (const id of ['patch-layer', 'patch-head']) $(id).addEventListener('change', () => { if (shown) draw(); });
}
