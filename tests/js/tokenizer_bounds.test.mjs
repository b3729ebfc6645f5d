// Bounded work where input sizes it (docs/reliability.md, "Bounded work"): WordPiece's longest match starts at
// the longest vocabulary entry, so a word costs at most (its length × that entry's length) look-ups whatever
// max_input_chars_per_word allows, with the ids of the search from the word's end (compared on every word of a
// seeded set against that search, written out here); chat templates stop at their step budget
// (TEMPLATE_LIMITS) with ERR_TEMPLATE_LIMIT, and the families' real templates take a small part of it. Counts,
// never times.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Tokenizer } from '../../bindings/tokenizer.js';
import { WordPieceModel } from '../../bindings/tokenizer/wordpiece.js';
import { renderChatTemplate, TEMPLATE_LIMITS } from '../../bindings/chat_template.js';

const ROOT = new URL('../../', import.meta.url);
const bertJson = () => JSON.parse(readFileSync(new URL('tests/data/goldens/encoders/bert_cls_norm_lower/tokenizer.json', ROOT), 'utf8'));

/** The search the Rust library writes: every length from the word's end down (the reference for the ids). */
function fromTheEnd(model, word) {
  const ids = [];
  for (let start = 0; start < word.length;) {
    let end = word.length, id;
    while (start < end) {
      id = model.vocab.get(start > 0 ? model.prefix + word.slice(start, end) : word.slice(start, end));
      if (id !== undefined) break;
      end -= end - 2 >= start && /[\udc00-\udfff]/.test(word[end - 1]) && /[\ud800-\udbff]/.test(word[end - 2]) ? 2 : 1;
    }
    if (id === undefined) return [model.unk];
    ids.push(id);
    start = end;
  }
  return ids;
}

test('WordPiece: the same ids as the search from the word\'s end, in look-ups bounded by the longest entry', () => {
  const json = bertJson();
  json.model.max_input_chars_per_word = 1e12;
  const model = new WordPieceModel(json.model);
  // Words from the vocabulary's own pieces (so they split), with unknown and astral characters among them.
  const pieces = [...model.vocab.keys()].filter((k) => !k.startsWith('[')).map((k) => k.replace(/^##/, ''));
  let s = 7;
  const pick = (n) => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s % n; };
  for (let i = 0; i < 300; i++) {
    let word = '';
    const parts = 1 + pick(12);
    for (let j = 0; j < parts; j++) word += pick(20) === 0 ? ['😀', 'ß', '\u0301'][pick(3)] : pieces[pick(pieces.length)];
    assert.deepEqual(model.split(word), fromTheEnd(model, word), JSON.stringify(word));
  }
  let gets = 0;
  const vocab = model.vocab;
  const get = vocab.get.bind(vocab);
  vocab.get = (k) => { gets++; return get(k); };
  const word = 'ab'.repeat(10000);  // 20 000 characters, one word: hours before the bound
  const ids = model.split(word);
  assert.ok(ids.length > 1, 'the word splits');
  assert.ok(gets <= word.length * model.longest, `${gets} look-ups for ${word.length} characters (longest entry ${model.longest})`);
  // Through the whole tokenizer too.
  const tok = Tokenizer.fromJSON(json);
  assert.equal(tok.encode(word, { addSpecialTokens: false }).length, ids.length);
});

test('chat templates: two nested range(100000) loops, a string doubled past the limit: ERR_TEMPLATE_LIMIT naming the budget', () => {
  const limited = (template, what) => assert.throws(() => renderChatTemplate(template, { messages: [], templateName: 'probe' }),
    (e) => e.code === 'ERR_TEMPLATE_LIMIT' && e.message.startsWith(`probe was stopped: ${what}`) && e.message.includes(String(TEMPLATE_LIMITS.steps)));
  limited('{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}', 'more than');
  limited('{% for i in range(100000) %}{% for j in range(100000) %}{% break %}{% endfor %}{% endfor %}', 'more than');
  limited('{% set ns = namespace(s="ab") %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}', 'a string of');
  limited('{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}', 'a list of');
  // Below the bounds, the same constructs render.
  assert.equal(renderChatTemplate('{% for i in range(300) %}{% for j in range(300) %}{% endfor %}{% endfor %}ok', { messages: [] }), 'ok');
});

test("chat templates: the six families' templates render long conversations within a small part of the budget", () => {
  const messages = [];
  for (let i = 0; i < 2000; i++) messages.push({ role: i % 2 ? 'assistant' : 'user', content: `message ${i} ${'word '.repeat(i % 50)}` });
  for (const family of ['llama3', 'qwen3', 'gemma3', 'mistral', 'phi3', 'smollm3']) {
    const template = readFileSync(new URL(`tests/data/chat_templates/${family}.jinja`, ROOT), 'utf8');
    const text = renderChatTemplate(template, { messages, addGenerationPrompt: true, specialTokens: { bos_token: '<s>', eos_token: '</s>' }, templateName: family });
    assert.ok(text.includes('message 1999'), family);
  }
});
