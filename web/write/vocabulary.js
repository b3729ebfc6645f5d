// The model's vocabulary as the writing page draws it: its 98 characters and <eos>, copied from the model's
// tokenizer once after the load, so that drawing never waits for the worker; how a context position is drawn
// in a cell (glyph) and named in text (charLabel). Not the prompt's check (prompt_check.js asks the tokenizer).

/**
 * The vocabulary, asked of the model's tokenizer once (a few ms through the worker):
 * { token: string[], special: boolean[], ids: Map<char, id> } (ids: the characters only, not <eos>).
 * Plain arrays, owned by the caller; nothing to dispose.
 */
export async function readVocabulary(lm) {
  const ids = Array.from({ length: lm.vocabSize }, (_, i) => i);
  const [token, special] = await Promise.all([
    Promise.all(ids.map((i) => lm.tokenizer.idToToken(i))),
    Promise.all(ids.map((i) => lm.tokenizer.isSpecial(i))),
  ]);
  return { token, special, ids: new Map(ids.filter((i) => !special[i]).map((i) => [token[i], i])) };
}

/** How a context position is drawn: <eos> as a 3-cell "eos" mark, tab and newline as arrows, space as a dot. */
export function glyph(vocab, id) {
  if (vocab.special[id]) return 'eos';
  const c = vocab.token[id];
  return c === '\n' ? '↵' : c === '\t' ? '⇥' : c === ' ' ? '·' : c;
}

/** How a token is named in a sentence: “a”, “\n”, <eos>. */
export function charLabel(vocab, id) {
  if (vocab.special[id]) return '<eos>';
  const c = vocab.token[id];
  return c === '\n' ? '“\\n”' : c === '\t' ? '“\\t”' : `“${c}”`;
}

/** The distinct characters of `text` the model's vocabulary lacks, in order. */
export function unsupportedChars(vocab, text) {
  const seen = new Set();
  for (const ch of text) if (!vocab.ids.has(ch)) seen.add(ch);
  return [...seen];
}
