// The sentence-pair cases both pair golden scripts (make_pair_goldens.mjs for tokenizer.json files,
// make_pair_goldens.py for the slow classes) run: the texts, and the maxLengths chosen from each
// tokenizer's own lengths (make_pair_goldens.py has a twin of maxLengthsOf) so that every file meets the same situations (nothing cut, one id over,
// both texts cut to an even and an odd budget, a budget of one, the special tokens alone).
import { readFileSync } from 'node:fs';

const cases = JSON.parse(readFileSync(new URL('tokenizer_pair_cases.json', import.meta.url), 'utf8'));
/** [text, pair]: second longer, first longer, equal, an empty first, accents and a word split in pieces. */
export const PAIRS = cases.pairs;
export const STRATEGIES = cases.strategies;

/**
 * The maxLengths of a pair whose texts have n1 and n2 ids and whose template adds `added` special
 * tokens: ascending, distinct, at least `added` and at least 1.
 */
export function maxLengthsOf(n1, n2, added) {
  const m = n1 + n2;
  const half = Math.floor(m / 2);
  const wanted = [added + m, added + m - 1, added + half, added + half + 1, added + 1, added];
  return [...new Set(wanted.filter((v) => v >= Math.max(1, added)))].sort((a, b) => a - b);
}
