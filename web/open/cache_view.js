// The open page's view of the hub cache ('attnwasm/hub'): the models downloaded by hub id, with their sizes,
// an Open button (the model is inspected from the cache's files, then loaded by its id: offline too) and a
// Delete button; and hub ids typed in the URL box. The worker's loads and this view share the cache (the
// origin's private file system). `?hub=<URL>` names another hub (a mirror, a local server in the tests).
import { cache, looksLikeHubId, hubHost, fileUrl } from 'attnwasm/hub';
import { formatBytes } from '../shared/panel.js';

const param = new URLSearchParams(location.search).get('hub');
/** loadModel's options for a hub id on this page: the hub it asks. */
export const hubOptions = param ? { host: param } : {};
export { looksLikeHubId };

/**
 * Mounts the list in `el`. `open(id)` is called when a model's Open is clicked; `inspectFiles` and `inspectUrl`
 * are the page's readers of a checkpoint's headers (from Files, from a base URL). Returns { refresh(), inspect(id) }.
 */
export function mountCacheView(el, { open, inspectFiles, inspectUrl }) {
  el.innerHTML = '<h3>Downloaded models</h3><table class="fits" id="cache-list"><thead><tr><th>hub id</th><th>size</th><th></th></tr></thead><tbody></tbody></table>'
    + '<p class="muted" id="cache-note"></p>';
  const body = el.querySelector('tbody');
  const note = el.querySelector('#cache-note');

  async function refresh() {
    let models;
    try {
      models = await cache.list();
    } catch (e) {
      note.textContent = `The cache cannot be read: ${e.message}`;
      return;
    }
    body.replaceChildren(...models.map((m) => {
      const tr = document.createElement('tr');
      tr.dataset.id = m.id;
      tr.innerHTML = '<td></td><td></td><td><button type="button" class="secondary" data-act="open">Open</button> <button type="button" class="secondary" data-act="delete">Delete</button></td>';
      tr.cells[0].textContent = m.id;
      tr.cells[1].textContent = formatBytes(m.bytes);
      tr.cells[1].dataset.bytes = String(m.bytes);
      tr.querySelector('[data-act="open"]').addEventListener('click', () => open(m.id));
      tr.querySelector('[data-act="delete"]').addEventListener('click', async () => { await cache.delete(m.id); await refresh(); });
      return tr;
    }));
    const where = await cache.where();
    note.textContent = !where ? 'This browser keeps no cache (no origin private file system): hub models download on every load.'
      : models.length ? `Kept in ${where}; a model opened here loads with no network.` : 'None yet: type a hub id (organisation/name) above.';
    el.dataset.count = String(models.length);
  }

  /** A hub id's headers: from the cache's files when it holds them, else from the hub. Loaded by its id. */
  async function inspect(id) {
    const files = await cache.files(id);
    const r = files.size
      ? await inspectFiles([...files].filter(([p]) => !p.includes('/')).map(([p, b]) => new File([b], p)))
      : await inspectUrl(fileUrl(hubHost(hubOptions.host), id, 'main', ''));
    return { ...r, arg: id, options: hubOptions, label: `${id}${files.size ? ' (from the cache)' : ''}` };
  }

  refresh();
  return { refresh, inspect };
}
