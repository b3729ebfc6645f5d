// Held-out digits: the 1 500 MNIST digits the model never saw in training (models/vit/heldout.safetensors,
// fetched on first use), shown on the pad and classified with their true label; the random button and the
// #heldout=i link.
import { $, setSource } from './dom.js';
import { N, page, shown } from './state.js';
import { showDigit } from './pad.js';
import { classifyInput } from './results.js';

const HELDOUT_URL = '/models/vit/heldout.safetensors';

/** Held-out set, loaded on first use: { images: Uint8Array (n, 28, 28), labels: Int32Array (n,), count }. */
let heldout = null;
let heldoutLoading = null;

async function loadHeldout() {
  if (heldout) return heldout;
  heldoutLoading ??= (async () => {
    const res = await fetch(HELDOUT_URL);
    if (!res.ok) throw new Error(`fetching ${HELDOUT_URL} gave HTTP ${res.status}`);
    const t = page.aw.loadSafetensors(new Uint8Array(await res.arrayBuffer()));
    const [count, h, w] = t.images.shape;
    if (h !== N || w !== N) throw new Error(`heldout images: expected (n, ${N}, ${N}), got (${t.images.shape.join(', ')})`);
    heldout = { images: t.images.data, labels: t.labels.data, count };
    return heldout;
  })();
  try {
    return await heldoutLoading;
  } catch (e) {
    heldoutLoading = null;
    throw e;
  }
}

/** Shows held-out digit `index` (modulo the set's size) on the pad and classifies it. */
export async function showHeldout(index) {
  let set;
  try {
    set = await loadHeldout();
  } catch (e) {
    setSource(`Could not load the held-out digits: ${e.message}`, true);
    return;
  }
  const i = ((index % set.count) + set.count) % set.count;
  const pixels = set.images.subarray(i * N * N, (i + 1) * N * N);
  showDigit(pixels);
  shown.fromHeldout = true;
  const truth = set.labels[i];
  setSource(`Held-out digit #${i} of ${set.count} (never seen in training), true label ${truth}.`);
  // Held-out digits are already MNIST-normalised: feed the pixels as they are.
  classifyInput(Float32Array.from(pixels, (p) => p / 255), truth);
}

/** The digit the page's #heldout=i link names, or null. */
export function heldoutFromHash() {
  const m = /^#heldout=(\d+)$/.exec(location.hash);
  return m ? Number(m[1]) : null;
}

/** Wires the random button and the #heldout=i link's changes. */
export function mountHeldout() {
  $('random').addEventListener('click', async () => {
    const set = await loadHeldout().catch((e) => {
      setSource(`Could not load the held-out digits: ${e.message}`, true);
      return null;
    });
    if (!set) return;
    const i = Math.floor(Math.random() * set.count);
    history.replaceState(null, '', `#heldout=${i}`);
    showHeldout(i);
  });
  window.addEventListener('hashchange', () => {
    const i = heldoutFromHash();
    if (i !== null && page.classifier) showHeldout(i);
  });
}
