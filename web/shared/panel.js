// The "runtime" panel every demo page shows: SIMD, relaxed SIMD, threads,
// cross-origin isolation, model size and the last inference time. Plain DOM, no state
// beyond the elements it writes.

/** Human-readable byte count: 1536 → "1.5 KB". */
export function formatBytes(n) {
  if (!Number.isFinite(n)) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(2)} MB`;
}

/** Milliseconds with a precision that suits their size. */
export function formatMs(ms) {
  if (!Number.isFinite(ms)) return '—';
  if (ms < 1) return `${ms.toFixed(3)} ms`;
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  return `${ms.toFixed(1)} ms`;
}

function badge(on, yes = 'on', no = 'off') {
  const b = document.createElement('span');
  b.className = `badge ${on ? 'on' : 'off'}`;
  b.textContent = on ? yes : no;
  return b;
}

/**
 * Fills `root` (an <aside>) with the panel. Returns setters the page calls as
 * things happen; each only rewrites its own row.
 * @param {HTMLElement} root
 * @param {{models?: string[], inference?: boolean}} [options] one "model size" row per
 *   name (default one row, "Model size"); inference: false drops the "Last inference" row
 */
export function mountPanel(root, { models = ['Model size'], inference = true } = {}) {
  root.classList.add('card', 'caps');
  root.innerHTML = `
    <h2>Runtime</h2>
    <dl>
      <dt>SIMD</dt><dd data-cap="simd">…</dd>
      <dt>Relaxed SIMD (FMA)</dt><dd data-cap="relaxed">…</dd>
      <dt>Threads</dt><dd data-cap="threads">…</dd>
      <dt>Cross-origin isolated</dt><dd data-cap="coi">…</dd>
    </dl>
    <p class="muted" data-cap="env" style="margin:10px 0 0"></p>`;
  const dl = root.querySelector('dl');
  const row = (label, key, value) => {
    const dt = document.createElement('dt');
    dt.textContent = label;
    const dd = document.createElement('dd');
    dd.dataset.cap = key;
    dd.textContent = value;
    dl.append(dt, dd);
  };
  models.forEach((name, i) => row(name, i ? `model${i}` : 'model', '—'));
  if (inference) row('Last inference', 'last', '—');
  const cell = (k) => root.querySelector(`[data-cap="${k}"]`);
  return {
    /** @param {ReturnType<import('attnwasm').AttnWasm['capabilities']>} caps */
    setCapabilities(caps) {
      cell('simd').replaceChildren(badge(caps.simd, 'on', 'off'));
      cell('simd').title = caps.simd ? 'WebAssembly SIMD128 kernels' : 'scalar kernels';
      cell('relaxed').replaceChildren(badge(caps.relaxedSimd, 'on', 'off'));
      cell('relaxed').title = caps.relaxedSimd ? 'the relaxed-SIMD build: f32x4.relaxed_madd in the matrix multiplies' : (caps.relaxedSimdReason ?? '');
      const t = cell('threads');
      t.replaceChildren(badge(caps.threads, 'on', 'off'));
      t.title = caps.threadsReason ?? '';
      cell('coi').replaceChildren(badge(caps.crossOriginIsolated, 'yes', 'no'));
      const env = cell('env');
      env.textContent = caps.threads ? '' : `Threads: ${caps.threadsReason ?? 'not available'}.`;
    },
    /**
     * @param {number|null} bytes the model file's size, null if it is missing
     * @param {number} [i] which model row (in the order given to mountPanel)
     */
    setModelSize(bytes, i = 0) {
      cell(i ? `model${i}` : 'model').textContent = bytes === null ? 'not trained' : formatBytes(bytes);
    },
    /** @param {number} ms */
    setLastInference(ms) {
      cell('last').textContent = formatMs(ms);
    },
    /** Shows an error in the panel (e.g. the runtime failed to load). */
    setError(message) {
      cell('env').textContent = message;
      cell('env').classList.add('error');
    },
  };
}

/**
 * Wires a <progress> and a caption to a model download.
 * @returns {(p: {loaded: number, total: number|null}) => void} an onProgress callback
 */
export function progressReporter(progress, caption, what) {
  return ({ loaded, total }) => {
    if (total) {
      progress.max = total;
      progress.value = loaded;
      caption.textContent = `Loading ${what}: ${formatBytes(loaded)} of ${formatBytes(total)}`;
    } else {
      progress.removeAttribute('value');
      caption.textContent = `Loading ${what}: ${formatBytes(loaded)}`;
    }
  };
}

/** The message to show when a model file cannot be loaded. */
export function loadErrorMessage(e, url, trainCommand) {
  const msg = e && e.message ? e.message : String(e);
  if (/HTTP 404/.test(msg)) {
    return `The model file ${url} is missing. Train it first: ${trainCommand}`;
  }
  return `Could not load the model: ${msg}`;
}

/**
 * The start-up every demo page shares: starts the runtime (`init`), shows its
 * capabilities in `panel`, loads the model with `load(aw, onProgress)` while
 * #loading-bar / #loading-text show the download, then hides #loading. On a
 * failure it shows the message there and in the panel, sets
 * body[data-ready=error] and returns null; else { aw, model }.
 */
export async function startDemo({ init, panel, what, modelUrl, trainCommand, load }) {
  const $ = (id) => document.getElementById(id);
  const fail = (message) => {
    $('loading-bar').classList.add('hidden');
    const t = $('loading-text');
    t.textContent = message;
    t.className = 'error';
    panel.setError(message);
    document.body.dataset.ready = 'error';
    return null;
  };
  let aw;
  try {
    aw = await init();
  } catch (e) {
    return fail(`Could not start the WebAssembly runtime: ${e.message}`);
  }
  panel.setCapabilities(aw.capabilities());
  let model;
  try {
    model = await load(aw, progressReporter($('loading-bar'), $('loading-text'), what));
  } catch (e) {
    return fail(loadErrorMessage(e, modelUrl, trainCommand));
  }
  panel.setModelSize(model.fileBytes);
  $('loading').classList.add('hidden');
  return { aw, model };
}
