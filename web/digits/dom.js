// The digits page's two DOM helpers, shared by its modules: an element by id, and the source line under the
// pad (what is being classified, or why it failed).

/** The element with id `id`. */
export const $ = (id) => document.getElementById(id);

/** Writes `text` in the source line, styled as an error if `isError`. */
export function setSource(text, isError = false) {
  const el = $('source');
  el.textContent = text;
  el.className = isError ? 'error' : 'muted';
}
