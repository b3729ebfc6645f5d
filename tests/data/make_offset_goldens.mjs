// Writes tests/data/goldens/tokenizer/offsets.json (node tests/data/make_offset_goldens.mjs): the
// character offsets Hugging Face's Rust `tokenizers` 0.23.2 gives (npm Node binding, installed into
// build/tokenizer-ref/ by make_tokenizer_goldens.mjs) for every file and text of
// tokenizer_offset_files.mjs — Encoding.getOffsets() without the special tokens (with the ids), in
// code points of the text as the binding counts them (the test turns them into UTF-16 units); with
// the special tokens the row is checked here to be the same offsets with the template's tokens at
// [0, 0] around them, and only how many go before and after is kept. Padding in a
// file is switched off (encode's offsets are asked of one text). A file whose template comes from its
// tokenizer_config.json (llama2_eos: transformers rebuilds the post-processor) has no reference for
// the special tokens: only its offsets without them are kept.
// Also writes tests/data/goldens/tokenizer/slow_offsets.json, for the slow tokenizer folders of
// SLOW_OFFSET_FOLDERS: transformers 4.40.2 (/usr/bin/python3, tools/hf_env) loads each slow class and
// gives its ids, and its own converter (convert_slow_tokenizer) builds the fast tokenizer, recorded by
// convert_slow_tokenizers.py and written as tokenizer.json by tokenizer_transcript.mjs; the Rust
// library runs that file. Per text: the slow class's ids and, where the fast tokenizer gives the same
// ids, its offsets (else null). Two runs write identical bytes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OFFSET_TEXTS, SLOW_OFFSET_FOLDERS, goldenPath, offsetFiles } from './tokenizer_offset_files.mjs';
import { tokenizerJson } from './tokenizer_transcript.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REF = join(ROOT, 'build/tokenizer-ref');
const VERSION = '0.23.2';
const require = createRequire(join(REF, 'package.json'));
const ref = require('tokenizers');
if (JSON.parse(readFileSync(require.resolve('tokenizers/package.json'), 'utf8')).version !== VERSION) throw new Error(`build/tokenizer-ref: expected tokenizers ${VERSION} (run make_tokenizer_goldens.mjs)`);

/** Files whose special tokens come from tokenizer_config.json (not the Rust file's post-processor). */
const CONFIG_TEMPLATES = new Set(['llama2_eos']);

/** How many template tokens go before and after the text, from a text whose ids are not ambiguous. */
async function templateOf(tok) {
  const plain = (await tok.encode('Hello world', null, { addSpecialTokens: false })).getIds();
  const full = (await tok.encode('Hello world', null, { addSpecialTokens: true })).getIds();
  const before = full.findIndex((_, b) => JSON.stringify(full.slice(b, b + plain.length)) === JSON.stringify(plain));
  return [before, full.length - before - plain.length];
}

/** Checks that the offsets with special tokens are those without, with the template's tokens at [0, 0] around them. */
async function checkTemplate(tok, name, text, template, plain) {
  const full = await tok.encode(text, null, { addSpecialTokens: true });
  const row = [...Array(template[0]).fill([0, 0]), ...plain.getOffsets(), ...Array(template[1]).fill([0, 0])];
  if (JSON.stringify(full.getIds().slice(template[0], template[0] + plain.getIds().length)) !== JSON.stringify(plain.getIds()) || JSON.stringify(full.getOffsets()) !== JSON.stringify(row)) {
    throw new Error(`${name} ${JSON.stringify(text)}: the offsets with special tokens are not the plain ones with ${template} template tokens at [0, 0] around them`);
  }
}

// Numbers to 15 significant digits: serde_json's default float parsing may land one ulp from the
// correctly rounded double (a Unigram score -10.039819717407227 is saved as …228).
const sortKeys = (v) => (Array.isArray(v) ? v.map(sortKeys) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]))
  : typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(15)) : v);

/** The Rust tokenizer of a tokenizer.json, checked to save the same JSON (every field read as written). */
function loadChecked(name, json) {
  const tok = ref.Tokenizer.fromString(JSON.stringify(json));
  const dir = mkdtempSync(join(tmpdir(), 'slow-offsets-'));
  try {
    tok.save(join(dir, 'tokenizer.json'));
    const saved = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
    if (JSON.stringify(sortKeys(saved)) !== JSON.stringify(sortKeys(json))) {
      const diff = Object.keys(json).filter((k) => JSON.stringify(sortKeys(saved[k])) !== JSON.stringify(sortKeys(json[k])));
      throw new Error(`${name}: the Rust library saves another tokenizer.json than the one written (${diff.join(', ')}): ${JSON.stringify(diff.map((k) => saved[k])).slice(0, 600)}`);
    }
  } finally {
    rmSync(dir, { recursive: true });
  }
  return tok;
}

const out = { reference: `Hugging Face tokenizers ${VERSION} (Rust, npm Node binding), made by tests/data/make_offset_goldens.mjs`, texts: OFFSET_TEXTS.length, files: {} };
for (const [name, { json }] of Object.entries(offsetFiles())) {
  const tok = ref.Tokenizer.fromString(JSON.stringify(json));
  tok.disablePadding();
  // How many template tokens go before the text: from a text whose ids are not ambiguous.
  const template = CONFIG_TEMPLATES.has(name) ? null : await templateOf(tok);
  const file = { template, texts: [] };
  for (const text of OFFSET_TEXTS) {
    const plain = await tok.encode(text, null, { addSpecialTokens: false });
    const offsets = plain.getOffsets();
    file.texts.push([plain.getIds(), offsets.flat()]);
    if (template) await checkTemplate(tok, name, text, template, plain);
  }
  out.files[name] = file;
}
const path = join(ROOT, 'tests/data/goldens/tokenizer/offsets.json');
// one text per line: small diffs when a case changes
const lines = JSON.stringify(out, null, 0).replace(/\],\[\[/g, '],\n[[');
writeFileSync(path, `${lines}\n`);
console.log(`wrote ${path}: ${Object.keys(out.files).length} files × ${OFFSET_TEXTS.length} texts`);

// The slow folders: transformers' slow ids and converter, the Rust library's offsets.
const request = { texts: OFFSET_TEXTS, folders: {} };
for (const [name, files] of Object.entries(SLOW_OFFSET_FOLDERS)) {
  request.folders[name] = Object.fromEntries(Object.entries(files).map(([f, v]) => [f, typeof v === 'string' ? { path: goldenPath(v) } : { json: v }]));
}
const converted = JSON.parse(execFileSync('/usr/bin/python3', [join(ROOT, 'tests/data/convert_slow_tokenizers.py')], { input: JSON.stringify(request), maxBuffer: 1 << 28, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] }));
const slow = { reference: `transformers ${converted.transformers} slow classes (ids) and convert_slow_tokenizer (the fast tokenizer), run by Hugging Face tokenizers ${VERSION} (Rust, npm Node binding); made by tests/data/make_offset_goldens.mjs`,
  texts: OFFSET_TEXTS.length, files: {} };
for (const [name, c] of Object.entries(converted.folders)) {
  const tok = loadChecked(name, tokenizerJson(c.tokenizer, c.added_tokens));
  const template = await templateOf(tok);
  const texts = [];
  let same = 0;
  for (const [i, text] of OFFSET_TEXTS.entries()) {
    const plain = await tok.encode(text, null, { addSpecialTokens: false });
    const equal = JSON.stringify(plain.getIds()) === JSON.stringify(c.ids[i]);
    texts.push([c.ids[i], equal ? plain.getOffsets().flat() : null]);
    if (equal) same++;
    await checkTemplate(tok, name, text, template, plain);
  }
  slow.files[name] = { class: c.class, template, texts };
  console.log(`${name} (${c.class}): the converted tokenizer's ids equal the slow class's on ${same} of ${OFFSET_TEXTS.length} texts`);
}
const slowPath = join(ROOT, 'tests/data/goldens/tokenizer/slow_offsets.json');
writeFileSync(slowPath, `${JSON.stringify(slow, null, 0).replace(/\],\[\[/g, '],\n[[')}\n`);
console.log(`wrote ${slowPath}`);
