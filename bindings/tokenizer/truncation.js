// How many ids of each text of a pair survive truncation, by Hugging Face's two rules: the Rust
// library's truncate_encodings (fast tokenizers, tokenizer.json: what transformers and
// sentence-transformers' CrossEncoder use) and transformers' PreTrainedTokenizerBase.truncate_sequences
// (the slow classes, v4.40). They agree except in one place: when both texts must be cut to an odd
// budget, Rust gives the extra id to the text that was longer (the second on a tie), the slow
// classes to the first. Where neither can reach the budget (only_first / only_second and a text too
// short to cut) both libraries leave the texts too long (the slow ones log an error; Rust throws):
// here a RangeError. Only lengths here; the ids are cut from the right by the caller.
import { rangeError, typeError } from '../errors.js';

/** The strategies of the `truncation` option; true means 'longest_first', as in transformers. */
export const STRATEGIES = ['longest_first', 'only_first', 'only_second'];

/** The `truncation` option → a strategy or false (undefined: 'longest_first', as today's default `true`). */
export function readStrategy(v) {
  if (v === undefined || v === true) return 'longest_first';
  if (v === false) return false;
  if (typeof v === 'string' && STRATEGIES.includes(v)) return v;
  const got = typeof v === 'string' ? `'${v}'` : typeof v === 'number' || v === null ? String(v) : typeof v;
  throw typeError(`truncation: expected true, false, 'longest_first', 'only_first' or 'only_second', got ${got}`);
}

/**
 * The lengths [k1, k2] the two texts keep within `budget` ids (maxLength less the pair's special
 * tokens; budget >= 0), never longer than n1, n2.
 * @param {number} n1 the first text's ids
 * @param {number} n2 the second text's ids
 * @param {number} budget
 * @param {'longest_first' | 'only_first' | 'only_second'} strategy
 * @param {'rust' | 'python'} rule whose arithmetic: the Rust library's or the slow classes'
 * @param {() => string} where names the texts and maxLength for the error (called only on error)
 * @returns {[number, number]}
 */
export function pairLengths(n1, n2, budget, strategy, rule, where) {
  if (n1 + n2 <= budget) return [n1, n2];
  // Rust's max_length == 0: both texts emptied, whatever the strategy.
  if (budget === 0 && rule === 'rust') return [0, 0];
  const remove = n1 + n2 - budget;
  if (strategy === 'only_first' || strategy === 'only_second') {
    const first = strategy === 'only_first';
    const target = first ? n1 : n2;
    // Both libraries need the cut text to keep at least one id (target > remove, strictly).
    if (target <= remove) {
      throw rangeError(`${where()}: truncation '${strategy}' cannot reach that length: the texts have ${n1} + ${n2} ids `
        + `and ${budget} fit beside the special tokens, so the ${first ? 'first' : 'second'} text (${target} ids) would have to lose ${remove}; `
        + `use 'longest_first', a larger maxLength or a shorter ${first ? 'second' : 'first'} text`);
    }
    return first ? [n1 - remove, n2] : [n1, n2 - remove];
  }
  if (rule === 'rust') {
    // truncate_encodings: the shorter keeps its length if the longer can take the rest, else
    // budget / 2 and the rest (budget % 2 more) to the longer (the second when they tie).
    const swap = n1 > n2;
    let short = swap ? n2 : n1;
    let long = short > budget ? short : Math.max(short, budget - short);
    if (short + long > budget) {
      short = Math.floor(budget / 2);
      long = short + (budget % 2);
    }
    return swap ? [long, short] : [short, long];
  }
  // truncate_sequences (LONGEST_FIRST with a pair): the difference first, then the rest halved,
  // the second text losing the odd one.
  const first = Math.min(Math.abs(n2 - n1), remove);
  const second = remove - first;
  const half = Math.floor(second / 2);
  return n1 > n2 ? [n1 - first - half, n2 - (second - half)] : [n1 - half, n2 - first - (second - half)];
}
