// The translator's input check (bindings/numberwords.js): what it normalises,
// what it accepts and what it refuses. No wasm: plain JS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { englishWords, parseEnglishNumber } from '../../bindings/numberwords.js';

const root = new URL('../../', import.meta.url);
const json = (p) => JSON.parse(readFileSync(new URL(p, root), 'utf8'));

/** The refusal as { code, message, suggestion } (fails when the text is accepted). */
function refusal(text) {
  try {
    const r = parseEnglishNumber(text);
    assert.fail(`${JSON.stringify(text)} was accepted as ${r.value}`);
  } catch (e) {
    if (e.code === 'ERR_ASSERTION') throw e;
    return e;
  }
}

test('englishWords: the plain spelling, the same as the training data generator (numbers.py)', () => {
  const known = { 0: 'zero', 7: 'seven', 13: 'thirteen', 21: 'twenty-one', 40: 'forty', 100: 'one hundred', 101: 'one hundred one',
    1000: 'one thousand', 1100: 'one thousand one hundred', 12345: 'twelve thousand three hundred forty-five',
    100000: 'one hundred thousand', 999999: 'nine hundred ninety-nine thousand nine hundred ninety-nine' };
  for (const [n, words] of Object.entries(known)) assert.equal(englishWords(Number(n)), words);
  // heldout_expected.json's English column is numbers.english(n) for the held-out numbers of heldout.json.
  const held = json('models/translator/heldout.json');
  const numbers = [...held.uniform, ...held.small, ...held.hundreds];
  const expected = json('models/translator/heldout_expected.json').items;
  assert.equal(expected.length, numbers.length);
  numbers.forEach((n, i) => assert.equal(englishWords(n), expected[i][0], `n = ${n}`));
  for (const bad of [-1, 1e6, 1.5, NaN]) assert.throws(() => englishWords(bad), RangeError);
});

test('every number 0 … 999 999 in its plain spelling and in digits reads back as itself', () => {
  for (let n = 0; n < 1e6; n++) {
    const words = englishWords(n);
    const r = parseEnglishNumber(words);
    if (r.value !== n || r.words !== words) assert.fail(`${words}: got ${r.value} '${r.words}'`);
    if (n % 997 === 0) assert.equal(parseEnglishNumber(String(n)).words, words);
  }
});

// Every spelling the translator learned (tools/models/numbers.py english_spelled):
// hyphen or space between tens and units, "and" or not at each place it may go,
// "a" for a leading one, hundreds counted past ten. Written here a third time,
// as the enumeration of all combinations.
function allSpellings(n) {
  if (n === 0) return ['zero'];
  const below100 = (m) => (m < 20 ? [englishWords(m)] : m % 10 ? [englishWords(m), englishWords(m).replace('-', ' ')] : [englishWords(m)]);
  const below1000 = (m) => {
    const h = Math.floor(m / 100), r = m % 100;
    if (!h) return below100(r);
    if (!r) return [`${englishWords(h)} hundred`];
    return below100(r).flatMap((s) => [`${englishWords(h)} hundred ${s}`, `${englishWords(h)} hundred and ${s}`]);
  };
  const th = Math.floor(n / 1000), r = n % 1000;
  let out = !th ? below1000(r) : below1000(th).flatMap((head) => (!r ? [`${head} thousand`]
    : below1000(r).flatMap((rest) => [`${head} thousand ${rest}`, ...(r < 100 ? [`${head} thousand and ${rest}`] : [])])));
  out = out.flatMap((s) => (/^one (hundred|thousand)/.test(s) ? [s, `a${s.slice(3)}`] : [s]));
  if (n >= 1100 && n <= 9999 && Math.floor(n / 100) % 10) {
    const tail = n % 100 ? below100(n % 100).flatMap((s) => [` ${s}`, ` and ${s}`]) : [''];
    out.push(...below100(Math.floor(n / 100)).flatMap((head) => tail.map((t) => `${head} hundred${t}`)));
  }
  return out;
}

test('every typed spelling of every 61st number reads back as that number, and no spelling names two numbers', () => {
  const seen = new Map();
  let count = 0;
  for (let n = 0; n < 1e6; n += 61) {
    for (const s of allSpellings(n)) {
      const r = parseEnglishNumber(s);
      if (r.value !== n || r.words !== s) assert.fail(`'${s}': got ${r.value} '${r.words}', want ${n}`);
      if (seen.has(s) && seen.get(s) !== n) assert.fail(`'${s}' names ${seen.get(s)} and ${n}`);
      seen.set(s, n);
      count++;
    }
  }
  assert.ok(count > 100000, `${count} spellings`);
  assert.deepEqual(allSpellings(1984).sort().slice(0, 3), ['a thousand nine hundred and eighty four', 'a thousand nine hundred and eighty-four',
    'a thousand nine hundred eighty four']);
});

test('normalisation: case, spaces, digits, a comma after thousand; the words the model gets', () => {
  const cases = [
    ['forty two', 42, 'forty two'],
    ['Forty  Two', 42, 'forty two'],
    ['  FORTY-TWO  ', 42, 'forty-two'],
    ['forty - two', 42, 'forty-two'],
    ['twenty\tone', 21, 'twenty one'],
    ['One hundred and five', 105, 'one hundred and five'],
    ['two thousand and six', 2006, 'two thousand and six'],
    ['a hundred', 100, 'a hundred'],
    ['A Thousand And One', 1001, 'a thousand and one'],
    ['a hundred and five thousand', 105000, 'a hundred and five thousand'],
    ['eleven hundred', 1100, 'eleven hundred'],
    ['Nineteen Hundred and Eighty-Four', 1984, 'nineteen hundred and eighty-four'],
    ['ninety nine hundred ninety nine', 9999, 'ninety nine hundred ninety nine'],
    ['one thousand, two hundred', 1200, 'one thousand two hundred'],
    ['one thousand , two hundred', 1200, 'one thousand two hundred'],
    ['nine hundred ninety nine thousand nine hundred and ninety nine', 999999, 'nine hundred ninety nine thousand nine hundred and ninety nine'],
    ['zero', 0, 'zero'],
    ['0', 0, 'zero'],
    ['001', 1, 'one'],
    ['42', 42, 'forty-two'],
    ['1,234', 1234, 'one thousand two hundred thirty-four'],
    ['1 000', 1000, 'one thousand'],
    ['999999', 999999, 'nine hundred ninety-nine thousand nine hundred ninety-nine'],
    ['42 thousand', 42000, 'forty-two thousand'],
  ];
  for (const [text, value, words] of cases) {
    const r = parseEnglishNumber(text);
    assert.deepEqual([r.value, r.words], [value, words], JSON.stringify(text));
    assert.deepEqual(r.tokens, words.replace(/-/g, ' - ').split(' '));
  }
});

test('the typed held-out set (an independent generator): every item reads as its number, normalised as the generator expects', () => {
  const typed = json('models/translator/typed_heldout.json');
  const col = Object.fromEntries(typed.columns.map((c, i) => [c, i]));
  assert.ok(typed.items.length >= 2000);
  for (const row of typed.items) {
    const r = parseEnglishNumber(row[col.typed]);
    assert.deepEqual([r.value, r.words], [row[col.n], row[col.words]], JSON.stringify(row[col.typed]));
  }
});

test(`refusals: every text of tests/data/not_numbers.json is refused, named, with the expected suggestion`, () => {
  const { items } = json('tests/data/not_numbers.json');
  assert.ok(items.length >= 50, `${items.length} items`);
  for (const [text, why, suggestion] of items) {
    const e = refusal(text);
    assert.equal(e.name, 'AttnWasmError', `${text}: ${e.stack}`);
    assert.equal(e.code, 'ERR_NOT_A_NUMBER', text);
    assert.equal(e.input, text);
    assert.equal(e.suggestion ?? null, suggestion, `${JSON.stringify(text)} (${why}): ${e.message}`);
    if (text.trim()) assert.ok(e.message.includes(`'${text.trim()}'`), `the message names the input: ${e.message}`);
    assert.match(e.message, /is not a number from 0 to 999 999: \S/);
    if (suggestion) assert.ok(e.message.endsWith(`Did you mean '${suggestion}'?`), e.message);
    // A suggestion is itself accepted.
    if (suggestion) parseEnglishNumber(suggestion);
  }
});

test('refusal messages say why', () => {
  const why = (text) => refusal(text).message.split(': ').slice(2).join(': ');
  assert.equal(why('twenty twenty'), "'twenty' cannot follow 'twenty'. Did you mean 'two thousand twenty'?");
  assert.equal(why('seventy eleven'), "'eleven' cannot follow 'seventy'.");
  assert.equal(why('hundred hundred'), "'hundred' needs a number before it, as in 'one hundred' or 'a hundred'.");
  assert.equal(why('one million'), "'million': numbers above 999 999 cannot be translated.");
  assert.equal(why('eleven hundred thousand'), "'eleven hundred thousand' would be 1,100,000, above 999 999.");
  assert.equal(why('two point five'), "'point': only whole numbers can be translated.");
  assert.equal(why('fourty'), "'fourty' is not an English number word. Did you mean 'forty'?");
  assert.equal(why('twenty hundred'), "2000 is written 'two thousand', not 'twenty hundred'.");
  assert.equal(why('-5'), 'negative numbers cannot be translated.');
  assert.equal(why('1,234 thousand'), "'thousand' cannot follow 'four'; write the number all in digits or all in words.");
  assert.equal(refusal('x'.repeat(500)).message, `text: 'x${'x'.repeat(56)}…' is not a number from 0 to 999 999: 'x${'x'.repeat(56)}…' is not an English number word.`);
});

test('text that is not a string is a TypeError before any parsing', () => {
  for (const bad of [undefined, null, 42, ['one'], { text: 'one' }]) {
    assert.throws(() => parseEnglishNumber(bad), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_TYPE');
  }
});
