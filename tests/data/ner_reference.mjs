// For make_classifier_goldens.py (run by it, not a test): what transformers' token-classification pipeline
// gets from the fast tokenizer it converts a slow folder to (vocab.json + merges.txt, sentencepiece.bpe.model).
// Reads a job on stdin: { transcript, added } as convert_slow_tokenizers.py records transformers' converter,
// turned into that tokenizer's tokenizer.json by tokenizer_transcript.mjs and run by Hugging Face's Rust
// tokenizers (npm `tokenizers` 0.23.2, build/tokenizer-ref/); `texts` encoded with the special tokens and
// truncation to `maxLength` (the pipeline's truncation=True); `tokenLists` joined by the file's decoder
// (convert_tokens_to_string). Writes { tokenizer (the JSON), encodings [{ ids, offsets (code points),
// special, tokens }], decoded, idToToken (for the ids seen), unkId } on stdout.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenizerJson } from './tokenizer_transcript.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(join(ROOT, 'build/tokenizer-ref/package.json'));
const VERSION = '0.23.2';
if (JSON.parse(readFileSync(require.resolve('tokenizers/package.json'), 'utf8')).version !== VERSION) throw new Error(`build/tokenizer-ref: expected tokenizers ${VERSION} (run make_tokenizer_goldens.mjs)`);
const { Tokenizer } = require('tokenizers');

const job = JSON.parse(readFileSync(0, 'utf8'));
const json = tokenizerJson(job.transcript, job.added);
const tok = Tokenizer.fromString(JSON.stringify(json));
tok.setTruncation(job.maxLength);  // transformers: enable_truncation(max_length, stride=0, strategy='longest_first')
const out = { tokenizer: json, encodings: [], decoded: [], idToToken: {}, unkId: tok.tokenToId(job.unkToken) };
for (const text of job.texts) {
  const e = await tok.encode(text);
  out.encodings.push({ ids: e.getIds(), offsets: e.getOffsets(), special: e.getSpecialTokensMask(), tokens: e.getTokens() });
  for (const id of e.getIds()) out.idToToken[id] = tok.idToToken(id);
}
const decoder = tok.getDecoder();
for (const tokens of job.tokenLists ?? []) out.decoded.push(decoder.decode(tokens));
console.log(JSON.stringify(out));
