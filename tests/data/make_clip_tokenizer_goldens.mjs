// Writes tests/data/goldens/clip_tokenizer/fast.json (node tests/data/make_clip_tokenizer_goldens.mjs,
// after make_clip_tokenizer_goldens.py): the clip_hub folder's tokenizer.json (CLIPConverter's file:
// BPE with end_of_word_suffix '</w>', NFC + Replace(\s+) + Lowercase, Split(Removed, invert) + ByteLevel,
// RobertaProcessing) run by Hugging Face's Rust `tokenizers` 0.23.2 (npm Node binding, installed into
// build/tokenizer-ref/ as make_tokenizer_goldens.mjs does) on slow.json's texts: ids with and without
// the special tokens, offsets (in code points, as Rust counts) and decode. With --full FILE (the same
// file over CLIP's full vocabulary) it checks that the cut vocabulary gives the full one's ids. Two
// runs write identical bytes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REF = join(ROOT, 'build/tokenizer-ref');
const OUT = join(ROOT, 'tests/data/goldens/clip_tokenizer');
const VERSION = '0.23.2';

if (!existsSync(join(REF, 'node_modules/tokenizers/package.json'))) {
  mkdirSync(REF, { recursive: true });
  if (!existsSync(join(REF, 'package.json'))) writeFileSync(join(REF, 'package.json'), JSON.stringify({ name: 'tokenizer-ref', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-exact', `tokenizers@${VERSION}`], { cwd: REF, stdio: 'inherit' });
}
const require = createRequire(join(REF, 'package.json'));
const ref = require('tokenizers');
if (JSON.parse(readFileSync(require.resolve('tokenizers/package.json'), 'utf8')).version !== VERSION) throw new Error(`build/tokenizer-ref: expected tokenizers ${VERSION}`);

const slow = JSON.parse(readFileSync(join(OUT, 'slow.json'), 'utf8'));
const texts = slow.folders.clip_hub.cases.map((c) => c.text);
const tok = ref.Tokenizer.fromString(readFileSync(join(OUT, 'folders/clip_hub/tokenizer.json'), 'utf8'));
const full = process.argv.includes('--full') ? ref.Tokenizer.fromString(readFileSync(process.argv[process.argv.indexOf('--full') + 1], 'utf8')) : null;
const cases = [];
for (const text of texts) {
  const e = await tok.encode(text, null, { addSpecialTokens: true });
  const ids = Array.from(e.getIds());
  if (full) {
    const f = Array.from((await full.encode(text, null, { addSpecialTokens: true })).getIds());
    if (f.join() !== ids.join()) throw new Error(`the cut vocabulary gives other ids than the full one for ${JSON.stringify(text)}`);
  }
  const plain = Array.from((await tok.encode(text, null, { addSpecialTokens: false })).getIds());
  cases.push({ text, ids, ids_plain: plain, offsets: e.getOffsets(), decoded: await tok.decode(ids, false), decoded_skip: await tok.decode(ids, true) });
}
writeFileSync(join(OUT, 'fast.json'), JSON.stringify({ reference: `Hugging Face tokenizers ${VERSION} (Rust, npm Node binding), made by tests/data/make_clip_tokenizer_goldens.mjs`, cases }) + '\n');
console.log(`wrote fast.json: ${cases.length} texts${full ? ', ids equal to the full vocabulary\'s' : ''}`);
