// Writes the hub tokenizer goldens (node tests/data/make_tokenizer_hub_goldens.mjs), beside
// make_tokenizer_goldens.mjs (the byte-level ones) and with the same reference: Hugging Face's Rust
// `tokenizers` 0.23.2 through its Node binding, installed into build/tokenizer-ref/.
//   goldens/tokenizer/xlmr_unigram.json  an XLM-R-style Unigram tokenizer.json: a SentencePiece
//       model trained here (apt python3-sentencepiece, /usr/bin/python3; fixed corpus, one thread)
//       converted as transformers' XLMRobertaConverter lays it out, with SentencePiece's real
//       nmt_nfkc precompiled_charsmap. Made once: delete it to make it again.
//   goldens/tokenizer/hub.json  per file of tokenizer_hub_cases.mjs and per text: the ids without
//       special tokens, the template the post-processor puts around them (checked against the ids
//       with them on every text), type ids where not all 0, decoded text where not the text, and
//       batches (truncation + padding) as encode_batch gives them.
// Deterministic: two runs write identical bytes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rng } from './tokenizer_cases.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, 'tests/data/goldens/tokenizer');
const REF = join(ROOT, 'build/tokenizer-ref');
const UNIGRAM = join(OUT, 'xlmr_unigram.json');

/** SentencePiece's ModelProto: pieces (piece, score, type) and normalizer_spec.precompiled_charsmap. */
function readModelProto(bytes) {
  const fields = (buf) => {
    const out = [];
    for (let i = 0; i < buf.length;) {
      let key = 0, shift = 0, b;
      do { b = buf[i++]; key += (b & 127) * 2 ** shift; shift += 7; } while (b & 128);
      const field = Math.floor(key / 8), wire = key % 8;
      if (wire === 0) {
        let v = 0; shift = 0;
        do { b = buf[i++]; v += (b & 127) * 2 ** shift; shift += 7; } while (b & 128);
        out.push([field, v]);
      } else if (wire === 5) {
        out.push([field, new DataView(buf.buffer, buf.byteOffset + i, 4).getFloat32(0, true)]);
        i += 4;
      } else if (wire === 2) {
        let n = 0; shift = 0;
        do { b = buf[i++]; n += (b & 127) * 2 ** shift; shift += 7; } while (b & 128);
        out.push([field, buf.subarray(i, i + n)]);
        i += n;
      } else if (wire === 1) { i += 8; } else throw new Error(`wire type ${wire}`);
    }
    return out;
  };
  const pieces = [];
  let charsmap = null;
  for (const [field, v] of fields(bytes)) {
    if (field === 1) {
      const p = { piece: '', score: 0, type: 1 };
      for (const [f, x] of fields(v)) {
        if (f === 1) p.piece = new TextDecoder().decode(x);
        else if (f === 2) p.score = x;
        else if (f === 3) p.type = x;
      }
      pieces.push(p);
    } else if (field === 3) {
      for (const [f, x] of fields(v)) if (f === 2) charsmap = Buffer.from(x).toString('base64');
    }
  }
  return { pieces, charsmap };
}

/** Trains the Unigram model and writes its tokenizer.json in XLM-R's layout. */
function makeUnigram() {
  const words = ['the', 'tokenizer', 'reads', 'text', 'and', 'gives', 'ids', 'model', 'attention', 'hello', 'world', 'naïve', 'café', 'résumé', 'straße',
    'größe', 'über', 'español', 'niño', 'français', 'русский', 'язык', 'ελληνικά', 'مرحبا', 'بالعالم', 'हिन्दी', 'भाषा', 'ภาษาไทย', '你好', '世界', '日本語', 'テキスト', '한국어',
    '1234', '3.14', 'émoji', '😀', 'ｆｕｌｌ', 'ﬁne', '①', 'don\'t', 'it\'s', '``quoted\'\'', '—', '…', '(x)', 'a,b', 'end.'];
  const next = rng(11);
  // and 600 made-up words of 2-4 syllables in five scripts, so that the model has some hundreds of pieces
  const syllables = [['b', 'k', 'm', 'st', 'r', 'n', 'ch'], ['a', 'e', 'i', 'o', 'u', 'é', 'ö'], ['б', 'д', 'ж', 'к', 'л'], ['а', 'ы', 'о', 'е'], ['κ', 'λ', 'μ', 'π'], ['α', 'ε', 'ο'],
    ['क', 'म', 'त', 'र'], ['ा', 'ि', 'ी', 'े'], ['ก', 'ม', 'ส'], ['า', 'ิ', 'ู']];
  for (let i = 0; i < 600; i++) {
    const s = 2 * Math.floor(next() * 5);
    let w = '';
    for (let n = 2 + Math.floor(next() * 3); n > 0; n--) w += syllables[s][Math.floor(next() * syllables[s].length)] + syllables[s + 1][Math.floor(next() * syllables[s + 1].length)];
    words.push(w);
  }
  const lines = [];
  for (let i = 0; i < 4000; i++) {
    const n = 3 + Math.floor(next() * 12);
    lines.push(Array.from({ length: n }, () => words[Math.floor(next() * words.length)]).join(next() < 0.1 ? '  ' : ' '));
  }
  mkdirSync(join(REF, 'spm'), { recursive: true });
  writeFileSync(join(REF, 'spm/corpus.txt'), lines.join('\n') + '\n');
  execFileSync('/usr/bin/python3', ['-c', `import sentencepiece as spm
spm.SentencePieceTrainer.train(input='corpus.txt', model_prefix='xlmr', vocab_size=700, model_type='unigram', character_coverage=0.9995,
  num_threads=1, seed_sentencepiece_size=100000, hard_vocab_limit=False, shuffle_input_sentence=False, minloglevel=2)`], { cwd: join(REF, 'spm'), stdio: 'inherit' });
  const { pieces, charsmap } = readModelProto(readFileSync(join(REF, 'spm/xlmr.model')));
  // XLMRobertaConverter: <s> <pad> </s> <unk> (score 0), the model's pieces after its first three, <mask>.
  const vocab = [['<s>', 0], ['<pad>', 0], ['</s>', 0], ['<unk>', 0], ...pieces.slice(3).map((p) => [p.piece, p.score]), ['<mask>', 0]];
  const add = (id, content, flags = {}) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true, ...flags });
  const file = {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [add(0, '<s>'), add(1, '<pad>'), add(2, '</s>'), add(3, '<unk>'), add(vocab.length - 1, '<mask>', { lstrip: true })],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Precompiled', precompiled_charsmap: charsmap }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', 2], cls: ['<s>', 0], trim_offsets: true, add_prefix_space: true },
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 3, vocab, byte_fallback: false },
  };
  writeFileSync(UNIGRAM, JSON.stringify(file) + '\n');
  console.log(`xlmr_unigram.json: ${vocab.length} pieces, charsmap ${charsmap.length} base64 characters`);
}

/** Texts for the batches: short and long ones, so that truncation and padding both happen. */
const BATCHES = [
  { texts: ['Hello world', 'a', '', 'The quick brown fox jumps over the lazy dog. '.repeat(6)], maxLength: 16 },
  { texts: ['same', 'same'], maxLength: null },
  { texts: ['naïve café', '你好，世界！', 'emoji 😀😃😄 faces and more words'], maxLength: 9, addSpecialTokens: false },
];

installed();
if (!existsSync(UNIGRAM)) makeUnigram();
const require = createRequire(join(REF, 'package.json'));
const { Tokenizer } = require('tokenizers');
const { hubFiles, HUB_TEXTS } = await import('./tokenizer_hub_cases.mjs');
const { Tokenizer: Ours } = await import('../../bindings/tokenizer.js');

const out = { reference: 'Hugging Face tokenizers 0.23.2 (Rust, npm Node binding), made by tests/data/make_tokenizer_hub_goldens.mjs', texts: HUB_TEXTS.length, files: {} };
for (const [name, { json, config }] of Object.entries(hubFiles())) {
  // The template a config sets (Llama / Gemma add_bos_token, add_eos_token) is written into the
  // reference's file as transformers writes it; ours reads it from the config.
  const ours = Ours.fromJSON(json, config);
  const t = ours._template;
  const ref = Tokenizer.fromString(JSON.stringify(config && ours.config && t !== undefined && json.post_processor?.type === 'TemplateProcessing' && config.add_eos_token
    ? { ...json, post_processor: templateOf(ours) } : json));
  // encode() applies no truncation or padding (as transformers, which resets the file's): nor does the reference here.
  ref.disableTruncation();
  ref.disablePadding();
  const texts = [];
  for (const text of HUB_TEXTS) {
    const plain = await ref.encode(text, null, { addSpecialTokens: false });
    const full = await ref.encode(text, null, { addSpecialTokens: true });
    const ids = plain.getIds();
    const withSpecial = full.getIds();
    const before = withSpecial.slice(0, withSpecial.length - ids.length - t.after.length);
    const after = withSpecial.slice(withSpecial.length - t.after.length);
    if (JSON.stringify([...before, ...ids, ...after]) !== JSON.stringify(withSpecial) || JSON.stringify(before) !== JSON.stringify([...t.before])) {
      throw new Error(`${name}: ${JSON.stringify(text)}: the ids with special tokens are not the template around the ids`);
    }
    const decoded = await ref.decode(withSpecial, false);
    const decodedSkip = await ref.decode(withSpecial, true);
    const types = full.getTypeIds();
    texts.push([ids, ...(decoded === text && decodedSkip === text ? [] : [decoded, decodedSkip]), ...(types.some((x) => x) ? [types] : [])]);
  }
  const batches = [];
  for (const b of BATCHES) {
    const maxLength = b.maxLength ?? null;
    if (maxLength) ref.setTruncation(maxLength); else ref.disableTruncation();
    if (ours._pad) ref.setPadding({ padId: ours._pad.id, padTypeId: ours._pad.typeId, padToMultipleOf: ours._pad.multiple > 1 ? ours._pad.multiple : undefined });
    else ref.disablePadding();
    let encodings;
    try {
      encodings = await ref.encodeBatch(b.texts, { addSpecialTokens: b.addSpecialTokens ?? true });
    } catch (e) {
      batches.push({ error: String(e.message ?? e) });
      continue;
    }
    const rows = encodings.map((e) => ({ ids: e.getIds(), mask: e.getAttentionMask(), types: e.getTypeIds() }));
    const lengths = rows.map((r) => r.mask.reduce((a, x) => a + x, 0));
    batches.push({ ids: rows.map((r) => r.ids), types: rows.map((r) => r.types), lengths });
  }
  ref.disableTruncation();
  ref.disablePadding();
  out.files[name] = { vocabSize: ref.getVocabSize(true), before: [...t.before], after: [...t.after], texts, batches };
  console.log(`${name}: ${texts.length} texts, vocabSize ${ref.getVocabSize(true)}`);
}
writeFileSync(join(OUT, 'hub.json'), JSON.stringify(out) + '\n');

/** transformers' TemplateProcessing for a Llama / Gemma config, as tokenizer.json would hold it. */
function templateOf(tok) {
  const t = tok._template;
  const item = (id) => ({ SpecialToken: { id: tok.idToToken(id), type_id: 0 } });
  const single = [...[...t.before].map(item), { Sequence: { id: 'A', type_id: 0 } }, ...[...t.after].map(item)];
  const special = Object.fromEntries([...t.before, ...t.after].map((id) => [tok.idToToken(id), { id: tok.idToToken(id), ids: [id], tokens: [tok.idToToken(id)] }]));
  return { type: 'TemplateProcessing', single, pair: single, special_tokens: special };
}

function installed() {
  if (!existsSync(join(REF, 'node_modules/tokenizers/package.json'))) execFileSync('node', [join(ROOT, 'tests/data/make_tokenizer_goldens.mjs')], { stdio: 'inherit' });
}
