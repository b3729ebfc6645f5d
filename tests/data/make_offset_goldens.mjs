// Writes tests/data/goldens/tokenizer/offsets.json (node tests/data/make_offset_goldens.mjs): the
// character offsets Hugging Face's Rust `tokenizers` 0.23.2 gives (npm Node binding, installed into
// build/tokenizer-ref/ by make_tokenizer_goldens.mjs) for every file and text of
// tokenizer_offset_files.mjs — Encoding.getOffsets() without the special tokens (with the ids), in
// code points of the text as the binding counts them (the test turns them into UTF-16 units); with
// the special tokens the row is checked here to be the same offsets with the template's tokens at
// [0, 0] around them, and only how many go before and after is kept. Padding in a
// file is switched off (encode's offsets are asked of one text). A file whose template comes from its
// tokenizer_config.json (llama2_eos: transformers rebuilds the post-processor) has no reference for
// the special tokens: only its offsets without them are kept. Two runs write identical bytes.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OFFSET_TEXTS, offsetFiles } from './tokenizer_offset_files.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REF = join(ROOT, 'build/tokenizer-ref');
const VERSION = '0.23.2';
const require = createRequire(join(REF, 'package.json'));
const ref = require('tokenizers');
if (JSON.parse(readFileSync(require.resolve('tokenizers/package.json'), 'utf8')).version !== VERSION) throw new Error(`build/tokenizer-ref: expected tokenizers ${VERSION} (run make_tokenizer_goldens.mjs)`);

/** Files whose special tokens come from tokenizer_config.json (not the Rust file's post-processor). */
const CONFIG_TEMPLATES = new Set(['llama2_eos']);

const out = { reference: `Hugging Face tokenizers ${VERSION} (Rust, npm Node binding), made by tests/data/make_offset_goldens.mjs`, texts: OFFSET_TEXTS.length, files: {} };
for (const [name, { json }] of Object.entries(offsetFiles())) {
  const tok = ref.Tokenizer.fromString(JSON.stringify(json));
  tok.disablePadding();
  // How many template tokens go before the text: from a text whose ids are not ambiguous.
  let template = null;
  if (!CONFIG_TEMPLATES.has(name)) {
    const plain = (await tok.encode('Hello world', null, { addSpecialTokens: false })).getIds();
    const full = (await tok.encode('Hello world', null, { addSpecialTokens: true })).getIds();
    const before = full.findIndex((_, b) => JSON.stringify(full.slice(b, b + plain.length)) === JSON.stringify(plain));
    template = [before, full.length - before - plain.length];
  }
  const file = { template, texts: [] };
  for (const text of OFFSET_TEXTS) {
    const plain = await tok.encode(text, null, { addSpecialTokens: false });
    const offsets = plain.getOffsets();
    file.texts.push([plain.getIds(), offsets.flat()]);
    if (!template) continue;
    const full = await tok.encode(text, null, { addSpecialTokens: true });
    const row = [...Array(template[0]).fill([0, 0]), ...offsets, ...Array(template[1]).fill([0, 0])];
    if (JSON.stringify(full.getIds().slice(template[0], template[0] + offsets.length)) !== JSON.stringify(plain.getIds()) || JSON.stringify(full.getOffsets()) !== JSON.stringify(row)) {
      throw new Error(`${name} ${JSON.stringify(text)}: the offsets with special tokens are not the plain ones with ${template} template tokens at [0, 0] around them`);
    }
  }
  out.files[name] = file;
}
const path = join(ROOT, 'tests/data/goldens/tokenizer/offsets.json');
// one text per line: small diffs when a case changes
const lines = JSON.stringify(out, null, 0).replace(/\],\[\[/g, '],\n[[');
writeFileSync(path, `${lines}\n`);
console.log(`wrote ${path}: ${Object.keys(out.files).length} files × ${OFFSET_TEXTS.length} texts`);
