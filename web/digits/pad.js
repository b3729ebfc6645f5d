// The drawing pad: strokes from the mouse, a pen or a finger (pointer events), classified live while drawing (at
// most every THROTTLE_MS) and on release after MNIST-style preprocessing; the Clear button; a 28 × 28 digit
// shown on it enlarged. It owns the pad's canvas; what a classification shows is results.js's.
import { inkFromRgba, mnistPreprocess } from 'attnwasm/helpers';
import { $, setSource } from './dom.js';
import { N, page, shown } from './state.js';
import { classifyInput, showResult } from './results.js';

const STROKE = 20;         // pen width on the 280×280 pad: ~2 px after scaling the digit to 20×20
const THROTTLE_MS = 70;    // live prediction at most this often while drawing

const pad = $('pad');
const padCtx = pad.getContext('2d', { willReadFrequently: true });

let drawing = false;
let lastPoint = null;
let timer = null;
let lastRun = 0;

/** Paints the pad black (no ink). */
export function clearPad() {
  padCtx.fillStyle = '#000';
  padCtx.fillRect(0, 0, pad.width, pad.height);
}

function padPoint(e) {
  const r = pad.getBoundingClientRect();
  return [(e.clientX - r.left) * (pad.width / r.width), (e.clientY - r.top) * (pad.height / r.height)];
}

function strokeTo([x, y]) {
  padCtx.strokeStyle = '#fff';
  padCtx.fillStyle = '#fff';
  padCtx.lineWidth = STROKE;
  padCtx.lineCap = 'round';
  padCtx.lineJoin = 'round';
  if (!lastPoint) {
    padCtx.beginPath();
    padCtx.arc(x, y, STROKE / 2, 0, 2 * Math.PI);
    padCtx.fill();
  } else {
    padCtx.beginPath();
    padCtx.moveTo(lastPoint[0], lastPoint[1]);
    padCtx.lineTo(x, y);
    padCtx.stroke();
  }
  lastPoint = [x, y];
}

function endStroke() {
  if (!drawing) return;
  drawing = false;
  lastPoint = null;
  predictDrawing();
}

function schedulePredict() {
  if (timer !== null) return;
  const wait = Math.max(0, THROTTLE_MS - (performance.now() - lastRun));
  timer = setTimeout(() => {
    timer = null;
    predictDrawing();
  }, wait);
}

/** Classifies what is on the pad (MNIST-style preprocessing first). */
export function predictDrawing() {
  if (!page.classifier) return;
  if (timer !== null) { clearTimeout(timer); timer = null; }
  lastRun = performance.now();
  const { data } = padCtx.getImageData(0, 0, pad.width, pad.height);
  const input = mnistPreprocess(inkFromRgba(data, pad.width, pad.height), pad.width, pad.height);
  if (!input) { showResult(null); return; }
  classifyInput(input, null);
}

/** Shows N × N grey `pixels` (white ink on black, like MNIST) on the pad, smoothly enlarged. */
export function showDigit(pixels) {
  const small = document.createElement('canvas');
  small.width = N;
  small.height = N;
  const img = new ImageData(N, N);
  for (let k = 0; k < N * N; k++) {
    img.data[4 * k] = img.data[4 * k + 1] = img.data[4 * k + 2] = pixels[k];
    img.data[4 * k + 3] = 255;
  }
  small.getContext('2d').putImageData(img, 0, 0);
  clearPad();
  padCtx.imageSmoothingEnabled = true;
  padCtx.imageSmoothingQuality = 'high';
  padCtx.drawImage(small, 0, 0, pad.width, pad.height);
}

/** Clears the pad and wires its pointer events and the Clear button. */
export function mountPad() {
  clearPad();
  pad.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    e.preventDefault();
    pad.setPointerCapture(e.pointerId);
    drawing = true;
    lastPoint = null;
    if (shown.fromHeldout) {
      // Drawing over a held-out digit turns it into a drawing.
      shown.fromHeldout = false;
      setSource('Drawing.');
      history.replaceState(null, '', location.pathname + location.search);
    }
    strokeTo(padPoint(e));
    schedulePredict();
  });
  pad.addEventListener('pointermove', (e) => {
    if (!drawing) return;
    const events = e.getCoalescedEvents ? e.getCoalescedEvents() : [e];
    for (const ev of events.length ? events : [e]) strokeTo(padPoint(ev));
    schedulePredict();
  });
  pad.addEventListener('pointerup', endStroke);
  pad.addEventListener('pointercancel', endStroke);

  $('clear').addEventListener('click', () => {
    clearPad();
    shown.fromHeldout = false;
    history.replaceState(null, '', location.pathname + location.search);
    setSource('Draw with the mouse, a pen or a finger.');
    showResult(null);
  });
}
