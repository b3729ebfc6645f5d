// Writes tests/data/goldens/tokenizer/pairs.json (node tests/data/make_pair_goldens.mjs): sentence
// pairs encoded by Hugging Face's Rust `tokenizers` 0.23.2 (npm Node binding, installed into
// build/tokenizer-ref/ by make_tokenizer_goldens.mjs or here) — what fast tokenizers, transformers
// and sentence-transformers' CrossEncoder give — for the cases of tokenizer_pair_cases.mjs: ids and
// type ids with and without the special tokens, and truncated with each strategy (setTruncation
// maxLength / strategy): the ids each text keeps ([k1, k2], the rest of the row being the full row's
// special tokens, checked here), or the reference's error. The files: checked-in goldens (a WordPiece BERT
// with TemplateProcessing, a byte-level RoBERTa and an XLM-R Unigram with RobertaProcessing), two
// variants of them written by VARIANTS below (BertProcessing; a TemplateProcessing pair with type 1),
// and GPT-2's cut file (a ByteLevel post-processor: the texts joined). Two runs write identical bytes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAIRS, STRATEGIES, maxLengthsOf } from './tokenizer_pair_cases.mjs';
import { FILES, VARIANTS } from './tokenizer_pair_files.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REF = join(ROOT, 'build/tokenizer-ref');
const VERSION = '0.23.2';

if (!existsSync(join(REF, 'node_modules/tokenizers/package.json'))) {
  mkdirSync(REF, { recursive: true });
  if (!existsSync(join(REF, 'package.json'))) writeFileSync(join(REF, 'package.json'), JSON.stringify({ name: 'tokenizer-ref', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-exact', `tokenizers@${VERSION}`], { cwd: REF, stdio: 'inherit' });
}
const require = createRequire(join(REF, 'package.json'));
const ref = require('tokenizers');
if (JSON.parse(readFileSync(require.resolve('tokenizers/package.json'), 'utf8')).version !== VERSION) throw new Error(`build/tokenizer-ref: expected tokenizers ${VERSION}`);

const STRATEGY = { longest_first: 'LongestFirst', only_first: 'OnlyFirst', only_second: 'OnlySecond' };
const types = (e) => e.getTypeIds().join('');
// Which text each id comes from: '0', '1', or '-' for a special token.
const seqs = (e) => e.getSequenceIds().map((s) => (s == null ? '-' : String(s))).join('');

async function encode(json, a, b, add, truncation) {
  const tok = ref.Tokenizer.fromString(JSON.stringify(json));
  if (truncation) tok.setTruncation(truncation.maxLength, { strategy: STRATEGY[truncation.strategy] });
  try {
    const e = await tok.encode(a, b, { addSpecialTokens: add });
    return { ids: e.getIds(), types: types(e), seqs: seqs(e) };
  } catch (err) {
    return { error: String(err.message ?? err) };
  }
}

const out = { reference: `Hugging Face tokenizers ${VERSION} (Rust, npm Node binding), made by tests/data/make_pair_goldens.mjs`, files: {} };
for (const [name, { path, variant, pairs }] of Object.entries(FILES)) {
  const base = JSON.parse(readFileSync(join(ROOT, path), 'utf8'));
  const json = variant ? VARIANTS[variant](base) : base;
  const cases = [];
  for (const [a, b] of PAIRS.slice(0, pairs)) {
    const full = await encode(json, a, b, true);
    const plain = await encode(json, a, b, false);
    const n1 = (await encode(json, a, null, false)).ids.length;
    const n2 = (await encode(json, b, null, false)).ids.length;
    const added = full.ids.length - n1 - n2;
    const truncated = [];
    // A truncated row is the full row with each text cut to its first k ids: check that, keep [k1, k2].
    const kept = (r, row) => {
      if (r.error) return r.error;
      const k = [0, 0];
      const expect = { ids: [], types: '' };
      for (let i = 0; i < row.ids.length; i++) {
        const s = row.seqs[i];
        if (s !== '-' && k[s]++ >= [...r.seqs].filter((c) => c === s).length) continue;
        expect.ids.push(row.ids[i]);
        expect.types += row.types[i];
      }
      if (JSON.stringify(expect) !== JSON.stringify({ ids: r.ids, types: r.types })) throw new Error(`${name}: a truncated row is not the full row cut: ${JSON.stringify(r)}`);
      return [0, 1].map((s) => [...r.seqs].filter((c) => c === String(s)).length);
    };
    for (const maxLength of maxLengthsOf(n1, n2, added)) {
      for (const strategy of STRATEGIES) truncated.push([maxLength, strategy, kept(await encode(json, a, b, true, { maxLength, strategy }), full)]);
    }
    // Without the special tokens the whole maxLength goes to the texts.
    const m = Math.max(1, Math.floor((n1 + n2) / 2));
    const noSpecial = [m, 'longest_first', kept(await encode(json, a, b, false, { maxLength: m, strategy: 'longest_first' }), plain), 'no special tokens'];
    cases.push({ text: a, pair: b, lengths: [n1, n2], full, plain, truncated, noSpecial });
  }
  out.files[name] = cases;
}
// One case a line.
const text = `{"reference": ${JSON.stringify(out.reference)}, "files": {\n${Object.entries(out.files).map(([name, cases]) => `${JSON.stringify(name)}: [\n${cases.map((c) => JSON.stringify(c)).join(',\n')}]`).join(',\n')}}}`;
writeFileSync(join(ROOT, 'tests/data/goldens/tokenizer/pairs.json'), text + '\n');
console.log('wrote tests/data/goldens/tokenizer/pairs.json', text.length, 'bytes');
