// translate() end to end (issue 40): a hub-like folder of a small random checkpoint beside a real slow tokenizer's
// files (the golden folders of tests/data/goldens/spm/: MarianTokenizer's source.spm / target.spm / vocab.json,
// M2M100Tokenizer, NllbTokenizer, T5Tokenizer, MBart50Tokenizer), against transformers v4.40.2's tokenizer(texts, padding=True) →
// generate() → batch_decode(skip_special_tokens=True) (tests/data/make_seq2seq_translate_goldens.py): the same ids
// in, the same sequences out, the same strings. srcLang / tgtLang as the tokenizers take them (tgtLang forces the
// first token of M2M100 and NLLB); an unknown language is refused by name.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { tokenizerFromFolder } from '../../bindings/tokenizer.js';
import { folderReader } from './spm_folders.mjs';
import { convertSlow } from './spm_convert.mjs';

const DIR = new URL('../data/goldens/seq2seq_translate/', import.meta.url);
const SPM = new URL('../data/goldens/spm/', import.meta.url);
const x = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));
const manifest = JSON.parse(readFileSync(new URL('manifest.json', SPM), 'utf8'));
const aw = await init({ threads: 1 });
after(() => aw.close());

/** The model's folder with its tokenizer's files beside it, as a files object (a hub folder's layout). */
function folder(c) {
  const files = {};
  const add = (dir) => { for (const f of readdirSync(fileURLToPath(dir))) files[f] = readFileSync(new URL(f, dir)); };
  add(new URL(`${c.folder}/`, DIR));
  add(new URL(`folders/${c.tokenizer}/`, SPM));
  for (const [f, src] of Object.entries(manifest[c.tokenizer])) files[f] = readFileSync(new URL(src, SPM));
  return files;
}

for (const c of x.cases) {
  test(`${c.folder}: translate() as tokenizer → generate() → batch_decode`, async () => {
    const m = await aw.loadModel(folder(c));
    try {
      assert.ok(m instanceof aw.Seq2SeqLM);
      const lang = {};
      if (c.options.srcLang) lang.srcLang = c.options.srcLang;
      const t = m.tokenize(c.texts, lang);
      assert.deepEqual(Array.from(t.inputIds.data), c.input_ids.flat(), 'the tokenizer\'s ids');
      assert.deepEqual(Array.from(t.attentionMask.data), c.attention_mask.flat(), 'the padding mask');
      const g = await m.generate(c.texts, c.options);
      assert.deepEqual(g.sequences.map((s) => Array.from(s)), c.sequences, 'generate()\'s sequences');
      assert.deepEqual(await m.translate(c.texts, c.options), c.translations);
      assert.equal(await m.translate(c.texts[0], c.options), c.translations[0], 'one text: one string');
    } finally {
      m.dispose();
    }
  });
}

test('sources are cut to maxSourceLength: max_position_embeddings, not M2M100\'s 65 536-position sinusoid; T5 at maxPositions', async () => {
  for (const c of x.cases) {
    const m = await aw.loadModel(folder(c));
    try {
      assert.equal(m.maxSourceLength, Math.min(m.config.max_position_embeddings ?? Infinity, m.maxPositions), c.folder);
      if (c.folder === 't5') {
        assert.equal(m.maxSourceLength, m.maxPositions, 't5: no max_position_embeddings; the tokenizer\'s model_max_length is not applied');
        assert.equal(m.tokenizer.config.model_max_length, 512);
        const long = m.tokenize('one two three '.repeat(400)).inputIds.data;
        assert.ok(long.length > 512, `t5: ${long.length} tokens kept`);
        // a config whose max_position_embeddings is no count of positions is not a bound
        for (const bad of [0, -3, 1.5, '64']) {
          const odd = await aw.loadModel(folder(c), { config: { ...m.config, max_position_embeddings: bad } });
          try { assert.equal(odd.maxSourceLength, odd.maxPositions, `max_position_embeddings ${bad}`); } finally { odd.dispose(); }
        }
        continue;
      }
      if (c.folder === 'm2m100' || c.folder === 'nllb') {
        assert.equal(m.maxPositions, 65536, c.folder);
        assert.ok(m.maxSourceLength <= m.config.max_position_embeddings, c.folder);
      }
      const lang = c.options.srcLang ? { srcLang: c.options.srcLang } : {};
      const long = m.tokenize(['one two three '.repeat(400), 'one'], lang);
      assert.deepEqual(long.inputIds.shape, [2, m.maxSourceLength], c.folder);
      const full = m.tokenize('one two three '.repeat(400), lang).inputIds.data;
      assert.equal(full.length, m.maxSourceLength, c.folder);
      assert.equal(full[full.length - 1], m.eosTokenId ?? m.config.eos_token_id, `${c.folder}: the eos kept at the cut`);
      assert.equal(typeof await m.translate('one two three '.repeat(400), { ...c.options, maxNewTokens: 2 }), 'string', c.folder);
    } finally {
      m.dispose();
    }
  }
});

test('a hub folder with tokenizer.json too: NLLB, M2M100 and mBART-50 read their slow files (the languages are the slow class\'s options), T5 its tokenizer.json', async () => {
  // NLLB's tokenizer.json as transformers converts it (the hub's NLLB folders have one beside sentencepiece.bpe.model)
  const nllbJson = JSON.stringify(convertSlow(await tokenizerFromFolder(folderReader('nllb_hub')), folderReader('nllb_hub')));
  const t5Json = JSON.stringify(convertSlow(await tokenizerFromFolder(folderReader('t5_hub')), folderReader('t5_hub')));
  const want = { m2m100: 'M2M100Tokenizer', nllb: 'NllbTokenizer', mbart50: 'MBart50Tokenizer', t5: 'Tokenizer' };
  for (const c of x.cases.filter((k) => k.folder in want)) {
    const files = { ...folder(c), 'tokenizer.json': Buffer.from(c.folder === 't5' ? t5Json : nllbJson) };
    const m = await aw.loadModel(files);
    try {
      assert.equal(m.tokenizer.constructor.name, want[c.folder], c.folder);
      if (c.folder === 't5') assert.equal(await m.translate(c.texts[0], c.options), c.translations[0], c.folder);  // the converted file has no pad
      else assert.deepEqual(await m.translate(c.texts, c.options), c.translations, c.folder);
    } finally {
      m.dispose();
    }
    if (c.folder !== 'nllb') continue;
    // without sentencepiece.bpe.model (another slow file there), the tokenizer.json is read (no language options then)
    const { 'sentencepiece.bpe.model': _, ...rest } = files;
    const fast = await aw.loadModel({ ...rest, 'vocab.json': Buffer.from('{}') });
    try {
      assert.equal(fast.tokenizer.constructor.name, 'Tokenizer');
    } finally {
      fast.dispose();
    }
  }
});

test('languages: an unknown code is refused by name; Marian\'s tgtLang is its >>xx<< token and it takes no srcLang', async () => {
  const m2m = await aw.loadModel(folder(x.cases.find((c) => c.folder === 'm2m100')));
  try {
    await assert.rejects(m2m.translate('Hello', { srcLang: 'en', tgtLang: 'xx' }), /language: expected one of .*got 'xx'|tgtLang.*'xx'/);
    await assert.rejects(m2m.translate('Hello', { srcLang: 'zz', tgtLang: 'fr' }), /srcLang.*'zz'/);
    assert.equal(typeof await m2m.translate('Hello', { srcLang: 'en', tgtLang: 'de', maxNewTokens: 3 }), 'string', 'still works');
  } finally {
    m2m.dispose();
  }
  const marian = await aw.loadModel(folder(x.cases.find((c) => c.folder === 'marian')));
  try {
    await assert.rejects(marian.translate('Hello', { srcLang: 'en' }), /srcLang: this model's tokenizer \(MarianTokenizer\) takes no language option/);
    await assert.rejects(marian.translate('Hello', { tgtLang: 'it' }), /tgtLang: expected one of this model's 3 target languages \(de, fr, es\), got 'it'/);
    assert.equal(await marian.translate('Hello', { tgtLang: 'fr', maxNewTokens: 6 }), await marian.translate('>>fr<< Hello', { maxNewTokens: 6 }));
    await assert.rejects(marian.translate(['Hello', 3]), /texts\[1\]: expected a string, got number/);
    assert.deepEqual(await marian.translate([]), []);
  } finally {
    marian.dispose();
  }
});

test('attnwasm translate --model DIR: the API\'s translations, from the line, --input and stdin; --json; usage errors', async () => {
  const { spawnSync } = await import('node:child_process');
  const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const CLI = fileURLToPath(new URL('../../bin/attnwasm.mjs', import.meta.url));
  const tmp = mkdtempSync(join(tmpdir(), 'attnwasm-cli-translate-'));
  try {
    const c = x.cases.find((k) => k.folder === 'm2m100');
    for (const [name, bytes] of Object.entries(folder(c))) writeFileSync(join(tmp, name), bytes);
    const cli = (args, input) => spawnSync(process.execPath, [CLI, 'translate', '--model', tmp, ...args], { input, encoding: 'utf8', timeout: 60_000 });
    const flags = ['--src', 'en', '--tgt', 'fr'];
    const m = await aw.loadModel(tmp);
    const want = await m.translate(c.texts, { srcLang: 'en', tgtLang: 'fr' });
    const one = cli([c.texts[0], ...flags]);
    assert.equal(one.status, 0, one.stderr);
    assert.equal(one.stdout, `${want[0]}\n`);
    writeFileSync(join(tmp, 'in.txt'), `${c.texts[0]}\n\n${c.texts[1]}\n`);
    const many = cli(['--input', join(tmp, 'in.txt'), ...flags, '--json', '--no-progress']);
    assert.equal(many.status, 0, many.stderr);
    const rows = many.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(rows.map((r) => [r.line, r.text]), [[1, want[0]], [3, want[1]]]);
    assert.match(many.stderr, /2 texts in .*: 2 translated/);
    const long = Array.from({ length: 19 }, (_, i) => c.texts[i % c.texts.length]);
    writeFileSync(join(tmp, 'long.txt'), `${long.join('\n')}\n`);
    const chunked = cli(['--input', join(tmp, 'long.txt'), ...flags, '--no-progress']);
    assert.equal(chunked.status, 0, chunked.stderr);
    assert.equal(chunked.stdout, `${long.map((t) => want[c.texts.indexOf(t)]).join('\n')}\n`);
    const piped = cli([...flags], `${c.texts[1]}\n`);
    assert.equal(piped.status, 0, piped.stderr);
    assert.equal(piped.stdout, `${want[1]}\n`);
    const beams = cli([c.texts[0], ...flags, '--beams', '2', '--max-new-tokens', '4']);
    assert.equal(beams.status, 0, beams.stderr);
    assert.equal(beams.stdout, `${await m.translate(c.texts[0], { srcLang: 'en', tgtLang: 'fr', numBeams: 2, maxNewTokens: 4 })}\n`);
    // --bounded-head: the same greedy translations (the head's q8 copy bounds, the exact logits decide).
    const bounded = cli(['--input', join(tmp, 'in.txt'), ...flags, '--beams', '1', '--bounded-head', '--no-progress']);
    assert.equal(bounded.status, 0, bounded.stderr);
    assert.equal(bounded.stdout, `${(await m.translate([c.texts[0], c.texts[1]], { srcLang: 'en', tgtLang: 'fr', numBeams: 1 })).join('\n\n')}\n`);
    m.dispose();
    const numberWords = spawnSync(process.execPath, [CLI, 'translate', 'forty-two', '--bounded-head'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(numberWords.status, 2);
    assert.match(numberWords.stderr, /--bounded-head: only a hub translator/);
    const bad = cli([c.texts[0], ...flags, '--beams', '0']);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--beams: expected a whole number >= 1, got '0'/);
    const lang = cli([c.texts[0], '--src', 'en', '--tgt', 'xx']);
    assert.equal(lang.status, 1);
    assert.match(lang.stderr, /'xx'/);
    const digits = spawnSync(process.execPath, [CLI, 'translate', 'forty-two', '--src', 'en'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(digits.status, 2);
    assert.match(digits.stderr, /--src: only a hub translator/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('attnwasm translate --input: lines translated 16 at a time as one batch, a failing chunk line by line', async () => {
  const { inChunks, TRANSLATE_CHUNK } = await import('../../bin/commands/translate.mjs');
  assert.equal(TRANSLATE_CHUNK, 16);
  const items = Array.from({ length: 40 }, (_, i) => ({ line: i + 1, input: i % 7 === 3 ? ' ' : i === 25 ? 'bad' : `t${i}` }));
  const calls = [];
  const fake = async (texts) => {
    calls.push(texts.length);
    if (texts.includes('bad')) throw new Error('bad line');
    return texts.map((t) => t.toUpperCase());
  };
  const c = inChunks(items, fake);
  const got = [];
  for (const it of items) {
    if (!it.input.trim()) continue;
    try { got.push([it.line, await c.work(it)]); } catch (e) { got.push([it.line, e.message]); }
  }
  assert.deepEqual(got, items.filter((it) => it.input.trim()).map((it) => [it.line, it.input === 'bad' ? 'bad line' : it.input.toUpperCase()]));
  // 34 lines with text: chunks of 16, 16 and 2; the second holds 'bad' and is redone one line at a time
  assert.deepEqual(calls, [16, 16, ...Array(16).fill(1), 2]);
  assert.ok(c.ms(items[0]) >= 0 && c.ms(items[25]) === null, 'a batched line has its share of the time; a retried one has none');
  // typed lines (a terminal: async items) go one at a time
  calls.length = 0;
  const typed = inChunks((async function* () { yield items[0]; })(), fake);
  assert.equal(await typed.work(items[0]), 'T0');
  assert.deepEqual(calls, [1]);
});

test('attnwasm/inspect: a Marian folder\'s source.spm, target.spm and target_vocab.json are its tokenizer\'s (a picked folder passes them on)', async () => {
  const { roleOf } = await import('../../bindings/inspect/roles.js');
  for (const f of ['source.spm', 'target.spm', 'target_vocab.json', 'vocab.json', 'spiece.model', 'sentencepiece.bpe.model']) {
    assert.equal(roleOf(f, new Set(['model.safetensors'])), 'tokenizer', f);
  }
  assert.equal(roleOf('README.md', new Set(['model.safetensors'])), 'other');
});
