// The open page's view of the hub cache ('attnwasm/hub'): the models downloaded by hub id, with their sizes,
// an Open button (the model is inspected — from the cache's files when it holds them, offline too — then loaded
// by its id) and a Delete button; and hub ids typed in the URL box. The worker's loads and this view share the
// cache (the origin's private file system). `?hub=<URL>` names another hub (a mirror, a local server in the tests).
import { cache, looksLikeHubId } from 'attnwasm/hub';
import { inspect as inspectCheckpoint } from 'attnwasm/inspect';
import { formatBytes } from '../shared/panel.js';

const param = new URLSearchParams(location.search).get('hub');
/** loadModel's options for a hub id on this page: the hub it asks. */
export const hubOptions = param ? { host: param } : {};
export { looksLikeHubId };

/**
 * Mounts the list in `el`. `open(id)` is called when a model's Open is clicked. Returns { refresh(), inspect(id) }.
 */
export function mountCacheView(el, { open }) {
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

  /**
   * A hub id described by inspect (source.js's shape: { arg, options, label, report }): its listing from the hub,
   * or from the cache when the hub cannot be reached; its files' headers from the cache when it holds them, else
   * by a range of each file's URL (nothing is written to the cache before the load). Loaded by its id.
   */
  async function inspect(id) {
    const cached = (await cache.files(id)).size > 0;
    // Held in the cache: its listing there, by the commit main pointed at (no request to the hub).
    const commit = cached ? (await cache.list()).find((m) => m.id === id)?.revisions.main : undefined;
    const report = await inspectCheckpoint(id, { ...hubOptions, ...(commit ? { revision: commit } : {}) });
    return { arg: id, options: hubOptions, label: `${id}${cached ? ' (from the cache)' : ''}`, report };
  }

  refresh();
  return { refresh, inspect };
}
