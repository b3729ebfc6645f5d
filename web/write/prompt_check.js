// The writing page's prompt check as it is typed, and its error line (#error): a character the model never saw
// is refused by the model's tokenizer; the line shows that message, names every other such character, and
// offers to replace the typographic ones (’ “ ” – — …) with their ASCII. Write shows a setting's refusal there
// too. Not the sampling settings (options.js) nor the Write (writer.js).
import { unsupportedChars } from './vocabulary.js';

/** What phones and word processors type instead of ASCII, and the ASCII the model knows. */
const TYPOGRAPHIC = new Map([
  ...[...'\u2018\u2019\u201A\u201B\u2032'].map((c) => [c, "'"]),
  ...[...'\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB'].map((c) => [c, '"']),
  ...[...'\u2010\u2011\u2012\u2013\u2212'].map((c) => [c, '-']),
  ['\u2014', '--'], ['\u2015', '--'], ['\u2026', '...'],
  ...[...'\u00A0\u2007\u2009\u202F'].map((c) => [c, ' ']),
]);

function replaceTypographic(text) {
  let out = '';
  for (const ch of text) out += TYPOGRAPHIC.get(ch) ?? ch;
  return out;
}

const codePoint = (ch) => `U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
const sentence = (s) => s.replace(/^./, (c) => c.toUpperCase()).replace(/\.$/, '');

/**
 * Checks `input` (the prompt's <textarea>) on every keystroke and wires #fix. `page.lm` and
 * `page.vocab` are the model and its vocabulary once loaded (before that a check answers null).
 * Returns { check(), answered(text), showError(message, fixable), hideError() }.
 */
export function mountPromptCheck({ input, errorBox, errorText, fixButton, page }) {
  let checks = 0;
  /** The newest check's answer: { text, ids } (ids null: refused), so that Write need not ask again. */
  let checked = null;

  function showError(message, fixable = []) {
    errorText.textContent = message;
    fixButton.classList.toggle('hidden', fixable.length === 0);
    fixButton.textContent = fixable.length
      ? `Replace ${fixable.join(' ')} with ${[...new Set(fixable.map((c) => TYPOGRAPHIC.get(c)))].map((c) => (c === ' ' ? 'a space' : c)).join(' ')}`
      : '';
    errorBox.classList.remove('hidden');
  }

  function hideError() {
    errorBox.classList.add('hidden');
  }

  /**
   * Checks the prompt with the model's tokenizer (ERR_INVALID_ARGUMENT naming the
   * first character it lacks) and shows the answer. Resolves to the prompt's ids or
   * null. The tokenizer is the worker's, so the answer comes a message later: only
   * the newest check touches the page, and #prompt[data-check="pending"] says one
   * is on its way.
   */
  async function check() {
    if (!page.lm) return null;
    const n = ++checks;
    const text = input.value;
    input.dataset.check = 'pending';
    let ids = null;
    let error = null;
    try {
      ids = await page.lm.encode(text);
    } catch (e) {
      error = e;
    }
    if (n !== checks) return ids;  // a newer check shows its own answer
    delete input.dataset.check;
    checked = { text, ids };
    if (ids) {
      hideError();
      input.removeAttribute('aria-invalid');
      return ids;
    }
    if (error.code !== 'ERR_INVALID_ARGUMENT') {
      showError(`The prompt could not be read: ${error.message}`);  // the worker ended, say
      return null;
    }
    const bad = unsupportedChars(page.vocab, text);
    const fixable = bad.filter((c) => TYPOGRAPHIC.has(c));
    const others = bad.length > 1 ? ` Characters it cannot write here: ${bad.map((c) => `${c} (${codePoint(c)})`).join(', ')}.` : '';
    const hint = fixable.length ? ' Typographic quotes and dashes can be replaced with ASCII:' : ' Remove or replace it.';
    showError(`${sentence(error.message.replace(/^text: /, ''))}.${others}${hint}`, fixable);
    input.setAttribute('aria-invalid', 'true');
    return null;
  }

  /** The newest check's answer { text, ids } when it was for `text` and none is on its way; else null. */
  function answered(text) {
    return checked?.text === text && input.dataset.check === undefined ? checked : null;
  }

  input.addEventListener('input', () => { check(); });
  fixButton.addEventListener('click', () => {
    input.value = replaceTypographic(input.value);
    check();
    input.focus();
  });
  return { check, answered, showError, hideError };
}
