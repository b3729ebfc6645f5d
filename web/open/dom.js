// The open page's two DOM helpers, shared by its modules: an element by id, and showing or hiding one (the
// shared stylesheet's .hidden).

/** The element with id `id`. */
export const $ = (id) => document.getElementById(id);

/** Shows `el` (or hides it with on = false). */
export const show = (el, on = true) => el.classList.toggle('hidden', !on);
