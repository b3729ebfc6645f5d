// The demo models through our runtime: numerical parity with torch on the
// reference dumps, held-out accuracy above the targets (the translator on
// plain spellings and on typed variants), refusal of text that is not a
// number, KV-cache decoding equal to full recomputation, beam size 1 equal to
// greedy, and the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { englishWords } from '../../bindings/numberwords.js';

const root = new URL('../../', import.meta.url);
const aw = await init();
const json = (p) => JSON.parse(readFileSync(new URL(p, root), 'utf8'));

const tr = await aw.loadTranslator(new URL('models/translator/translator.safetensors', root));
const clf = await aw.loadClassifier(new URL('models/vit/vit.safetensors', root));
const trRef = json('models/translator/reference.json');
const heldout = json('models/translator/heldout_expected.json');
const typed = json('models/translator/typed_heldout.json');
const notNumbers = json('tests/data/not_numbers.json').items;

function argmaxRow(t, row) {
  const V = t.shape[1];
  let best = 0;
  for (let j = 1; j < V; j++) if (t.data[row * V + j] > t.data[row * V + best]) best = j;
  return best;
}

test('translator: logits match torch on the reference dump (≤ 1e-4)', () => {
  let worst = 0, n = 0;
  for (const r of trRef.items.filter((e) => e.firstStepsLogits)) {
    r.firstStepsDecoderInputs.forEach((inputs, t) => {
      const got = tr.scoreFull(r.english, inputs);
      const V = got.shape[1], last = (inputs.length - 1) * V;
      r.firstStepsLogits[t].forEach((want, j) => {
        worst = Math.max(worst, Math.abs(got.data[last + j] - want));
        n++;
      });
    });
  }
  assert.ok(n > 0, 'the reference has logits');
  assert.ok(worst <= 1e-4, `max abs logit error ${worst}`);
});

test("translator: greedy tokens equal torch's on the reference dump", () => {
  assert.ok(trRef.items.length >= 10);
  for (const r of trRef.items) {
    const out = tr.translate(r.english, { to: r.lang });
    assert.deepEqual(out.tokenIds, r.outputIds, r.english);
    assert.equal(out.text, r.text);
  }
});

test('translator: KV-cache decoding gives exactly the tokens of full recomputation', () => {
  for (const [english, lang] of [['three hundred seventy-one', 'fr'], ['nine hundred ninety-nine thousand nine hundred ninety-nine', 'de'], ['eighty thousand one', 'fr'], ['seventy-seven', 'de']]) {
    const cached = tr.translate(english, { to: lang });
    const ids = [tr.config.langTokens[lang]];
    for (;;) {
      const logits = tr.scoreFull(english, ids);
      const next = argmaxRow(logits, ids.length - 1);
      if (next === tr.config.eos || ids.length >= tr.config.maxLen - 1) break;
      ids.push(next);
    }
    assert.deepEqual(cached.tokenIds, ids.slice(1), english);
  }
});

test('translator: beam size 1 equals greedy; beam search returns a translation', () => {
  for (const english of ['forty-two', 'one hundred thousand', 'six hundred eighty-one thousand two hundred four']) {
    for (const lang of ['fr', 'de']) {
      const src = tr._sourceIds(tr.tokenize(english));
      const g = tr._greedy(src, tr.config.langTokens[lang], 40);
      const b = tr._beam(src, tr.config.langTokens[lang], 40, 1, 1.0);
      assert.deepEqual(b.ids, g.ids, `${english} → ${lang}`);
      const b4 = tr.translate(english, { to: lang, beamSize: 4 });
      assert.equal(b4.text, tr.translate(english, { to: lang }).text);
    }
  }
});

/** Held-out items as { text (what is typed), words (what the model must be given, or undefined), fr, de }. */
const byColumn = (set) => set.items.map((row) => Object.fromEntries(set.columns.map((c, i) => [c, row[i]])));
const canonicalSet = byColumn(heldout).map((it) => ({ text: it.english, words: it.english, fr: it.fr, de: it.de }));
const typedSet = byColumn(typed).map((it) => ({ text: it.typed, words: it.words, fr: it.fr, de: it.de, n: it.n }));

/** Exact match of translate() over items; also checks the normalised input the model was given. */
function accuracy(items, lang, beamSize) {
  let ok = 0;
  const wrong = [];
  for (const it of items) {
    const r = tr.translate(it.text, { to: lang, beamSize });
    assert.equal(r.input, it.words, `normalised input of ${JSON.stringify(it.text)}`);
    if (r.text === it[lang]) ok++;
    else if (wrong.length < 5) wrong.push(`${JSON.stringify(it.text)} → ${r.text} (expected ${it[lang]})`);
  }
  return { acc: ok / items.length, ok, n: items.length, wrong };
}
const pct = (a) => `${(100 * a.acc).toFixed(2)}% (${a.ok}/${a.n})`;

for (const lang of ['fr', 'de']) {
  test(`translator: held-out exact match ≥ 99.5% in ${lang}, plain spellings, greedy and beam 4`, (t) => {
    const g = accuracy(canonicalSet, lang, 1);
    const b = accuracy(canonicalSet, lang, 4);
    t.diagnostic(`${lang} plain spellings: greedy ${pct(g)}; beam 4 ${pct(b)}`);
    assert.ok(g.acc >= 0.995, `greedy ${g.acc}: ${g.wrong.join('; ')}`);
    assert.ok(b.acc >= 0.995, `beam ${b.acc}: ${b.wrong.join('; ')}`);
  });

  test(`translator: held-out exact match ≥ 99.5% in ${lang}, typed variants (make_typed_heldout.py), greedy and beam 4`, (t) => {
    // Items whose words differ from the plain spelling: the model sees a variant, not only normalised noise.
    assert.ok(typedSet.filter((it) => it.words !== englishWords(it.n)).length >= 2000);
    const g = accuracy(typedSet, lang, 1);
    const b = accuracy(typedSet, lang, 4);
    // "eleven hundred": hundreds counted past ten, the one variant that changes the words' structure.
    const counted = accuracy(typedSet.filter((it) => it.n >= 1100 && !it.words.includes('thousand') && !/\d/.test(it.text)), lang, 1);
    t.diagnostic(`${lang} typed variants: greedy ${pct(g)}; beam 4 ${pct(b)}; of them "eleven hundred" forms, greedy ${pct(counted)}`);
    assert.ok(g.acc >= 0.995, `greedy ${g.acc}: ${g.wrong.join('; ')}`);
    assert.ok(b.acc >= 0.995, `beam ${b.acc}: ${b.wrong.join('; ')}`);
    assert.ok(counted.n >= 100);
  });
}

test(`translator: every text of tests/data/not_numbers.json is refused with ERR_NOT_A_NUMBER, never translated`, () => {
  assert.ok(notNumbers.length >= 50);
  for (const [text] of notNumbers) {
    for (const call of [() => tr.translate(text, { to: 'fr' }), () => tr.translate(text, { to: 'de', beamSize: 4 }), () => tr.tokenize(text)]) {
      assert.throws(call, (e) => e.name === 'AttnWasmError' && e.code === 'ERR_NOT_A_NUMBER' && e.input === text, JSON.stringify(text));
    }
  }
  // The instance stays usable.
  assert.equal(tr.translate('forty two').text, 'quarante-deux');
});

test('translator: token ids are checked at the edge of the target vocabulary (the last id passes, the first past it is refused)', () => {
  const V = tr.config.tgtVocab.length;
  const last = tr.config.tgtVocab[V - 1];
  assert.equal(tr.detokenize([V - 1], 'fr'), last.startsWith('<') ? '' : last);
  assert.throws(() => tr.detokenize([4, V], 'fr'), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.message === `ids[1]: expected a token id in [0, ${V}), got ${V}`);
  assert.throws(() => tr.detokenize([-1], 'fr'), (e) => e.code === 'ERR_OUT_OF_RANGE' && e.message === `ids[0]: expected a token id in [0, ${V}), got -1`);
  // scoreFull's ids are checked natively, at the same edge.
  const first = tr.config.langTokens.fr;
  assert.equal(tr.scoreFull('twenty-one', [first, V - 1]).shape[1], V);
  assert.throws(() => tr.scoreFull('twenty-one', [first, V]), (e) => /targetIds|tgt/.test(e.message) && e.message.includes(String(V)));
});

test('translator: cross-attention weights are per layer and head and sum to 1 over the source', () => {
  const r = tr.translate('three hundred seventy-one', { to: 'de' });
  const { layers, heads, targetLength: T, sourceLength: S, data } = r.crossAttention;
  assert.equal(T, r.tokenIds.length + 1);  // the end token's step too
  assert.equal(S, r.sourceTokens.length);
  for (let i = 0; i < layers * heads * T; i++) {
    const sum = data.subarray(i * S, (i + 1) * S).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-5, `row ${i} sums to ${sum}`);
  }
  assert.equal(r.stepMs.length, T);
});

const digits = aw.loadSafetensors(readFileSync(new URL('models/vit/heldout.safetensors', root)));
const ink = (i) => Float32Array.from(digits.images.data.subarray(i * 784, (i + 1) * 784), (v) => v / 255);

test('classifier: probabilities match torch on the reference dump (≤ 1e-4)', () => {
  const ref = json('models/vit/reference.json');
  let worst = 0;
  assert.ok(ref.samples.length >= 8);
  for (const r of ref.samples) {
    const { logits } = r;
    const out = clf.classify(ink(Number(r.index)));
    const max = Math.max(...logits);
    const e = logits.map((l) => Math.exp(l - max));
    const s = e.reduce((a, b) => a + b, 0);
    e.forEach((v, j) => { worst = Math.max(worst, Math.abs(out.probabilities[j] - v / s)); });
    assert.equal(out.index, Number(r.predicted));
  }
  assert.ok(worst <= 1e-4, `max abs probability error ${worst}`);
});

test('classifier: held-out accuracy ≥ 97% on all held-out digits', (t) => {
  const n = digits.labels.data.length;
  let ok = 0;
  for (let i = 0; i < n; i++) if (clf.classify(ink(i)).index === digits.labels.data[i]) ok++;
  t.diagnostic(`held-out accuracy ${(100 * ok / n).toFixed(2)}% of ${n}`);
  assert.ok(n >= 1000);
  assert.ok(ok / n >= 0.97, `${ok}/${n}`);
});

test('classifier: attention maps and rollout have the patch-grid shape', () => {
  const r = clf.classify(ink(0));
  const { layers, heads, grid, data } = r.attention;
  assert.equal(grid * grid, 49);
  assert.equal(data.length, layers * heads * 49);
  assert.equal(r.rollout.length, 49);
  assert.equal(Math.max(...r.rollout), 1);
  for (let i = 0; i < layers * heads; i++) {
    const s = data.subarray(i * 49, (i + 1) * 49).reduce((a, b) => a + b, 0);
    assert.ok(s > 0 && s <= 1 + 1e-5, 'class-token attention to patches is part of a softmax row');
  }
});

const cli = fileURLToPath(new URL('bin/attnwasm.mjs', root));
test('CLI: translate prints the translation on one line, refuses non-numbers; classify reads PGM and raw files', (t) => {
  const run = (...args) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  const cases = [
    [['translate', 'forty-two'], 'quarante-deux\n', ''],
    [['translate', 'three hundred seventy-one', '--to', 'de'], 'dreihunderteinundsiebzig\n', ''],
    [['translate', 'Forty  Two'], 'quarante-deux\n', ''],
    [['translate', 'one hundred and five', '--to', 'de'], 'hundertfünf\n', ''],
    [['translate', 'eleven hundred', '--beam', '4'], 'mille cent\n', ''],
    // Digits and commas are normalised before the model: stderr says what was translated.
    [['translate', '1,234', '--to', 'de'], 'tausendzweihundertvierunddreißig\n', "attnwasm: translated 'one thousand two hundred thirty-four'\n"],
  ];
  for (const [args, stdout, stderr] of cases) {
    const r = run(...args);
    assert.deepEqual([r.status, r.stdout, r.stderr], [0, stdout, stderr], args.join(' '));
  }
  for (const [text, want] of [['twenty twenty', /'twenty' cannot follow 'twenty'\. Did you mean 'two thousand twenty'\?/],
    ['forty-twoo', /'twoo' is not an English number word\. Did you mean 'forty-two'\?/], ['one million', /numbers above 999 999/]]) {
    const r = run('translate', text);
    assert.equal(r.status, 1, text);
    assert.equal(r.stdout, '', `${text}: nothing on stdout`);
    assert.match(r.stderr, /^attnwasm: text: '.*' is not a number from 0 to 999 999: /);
    assert.match(r.stderr, want);
  }
  const dir = mkdtempSync(join(tmpdir(), 'attnwasm-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (let i = 0; i < 3; i++) {
    const px = digits.images.data.subarray(i * 784, (i + 1) * 784);
    const pgm = join(dir, `d${i}.pgm`);
    writeFileSync(pgm, Buffer.concat([Buffer.from('P5\n28 28\n255\n'), Buffer.from(px)]));
    const raw = join(dir, `d${i}.raw`);
    writeFileSync(raw, Buffer.from(px));
    const want = `${digits.labels.data[i]}\n`;
    assert.equal(execFileSync(process.execPath, [cli, 'classify', raw], { encoding: 'utf8' }), want);
    assert.equal(execFileSync(process.execPath, [cli, 'classify', pgm], { encoding: 'utf8' }), want);
  }
  const help = run('--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /attnwasm translate/);
});

test.after(() => {
  tr.dispose();
  clf.dispose();
});
