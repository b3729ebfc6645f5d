// Checks the Whisper goldens' tokenizer.json files against the slow tokenizer (node
// tests/data/check_whisper_tokenizers.mjs, after make_whisper_goldens.py): each folder's tokenizer.json, run by
// Hugging Face's Rust `tokenizers` 0.23.2 (npm Node binding, installed into build/tokenizer-ref/ as
// make_tokenizer_goldens.mjs does), must give the ids that transformers' slow WhisperTokenizer gave for the texts in
// expected.json's `tokenizer` cases (without and with the special tokens: <|startoftranscript|> <|notimestamps|> ...
// <|endoftext|>), and decode them back to the slow tokenizer's text (timestamps removed as WhisperTokenizer.decode does). Writes nothing; exits 1 on a difference.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REF = join(ROOT, 'build/tokenizer-ref');
const DIR = join(ROOT, 'tests/data/goldens/whisper');
const VERSION = '0.23.2';

if (!existsSync(join(REF, 'node_modules/tokenizers/package.json'))) {
  mkdirSync(REF, { recursive: true });
  if (!existsSync(join(REF, 'package.json'))) writeFileSync(join(REF, 'package.json'), JSON.stringify({ name: 'tokenizer-ref', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-exact', `tokenizers@${VERSION}`], { cwd: REF, stdio: 'inherit' });
}
const require = createRequire(join(REF, 'package.json'));
const ref = require('tokenizers');
if (JSON.parse(readFileSync(require.resolve('tokenizers/package.json'), 'utf8')).version !== VERSION) throw new Error(`build/tokenizer-ref: expected tokenizers ${VERSION}`);

const expected = JSON.parse(readFileSync(join(DIR, 'expected.json'), 'utf8'));
let bad = 0, n = 0;
for (const folder of expected.folders) {
  const tok = ref.Tokenizer.fromString(readFileSync(join(DIR, folder.folder, 'tokenizer.json'), 'utf8'));
  for (const c of folder.tokenizer) {
    const plain = Array.from((await tok.encode(c.text, null, { addSpecialTokens: false })).getIds());
    const full = Array.from((await tok.encode(c.text, null, { addSpecialTokens: true })).getIds());
    // WhisperTokenizer.decode removes timestamp tokens from the text (its _filter_timestamp_ids regex); tokenizer.json
    // keeps them: compared after the same removal.
    const text = (await tok.decode(plain, false)).replace(/<\|(\d+\.\d+)\|>/g, '');
    n++;
    for (const [what, got, want] of [['ids', plain, c.ids], ['ids_with_special', full, c.ids_with_special]]) {
      if (got.join() !== want.join()) { bad++; console.log(`${folder.folder} ${JSON.stringify(c.text)} ${what}: fast ${got} slow ${want}`); }
    }
    if (text !== c.decoded) { bad++; console.log(`${folder.folder} ${JSON.stringify(c.text)} decode: fast ${JSON.stringify(text)} slow ${JSON.stringify(c.decoded)}`); }
  }
}
console.log(`${n} texts, ${bad} differences`);
process.exit(bad ? 1 : 0);
