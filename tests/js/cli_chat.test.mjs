// `attnwasm chat` (bin/attnwasm.mjs) on a tiny random Llama with a byte-level BPE tokenizer and a
// ChatML template (tests/data/chat_lm_fixture.mjs), written as a folder: lines piped to stdin are the
// user's turns, the replies on stdout are the library's lm.chat replies to the same conversation
// (the reply of each turn kept for the next), --show-prompt / --json show the template's rendering the
// model was given, the files can be given one by one, a template from --chat-template or the folder's
// chat_template.jinja, template variables; usage errors; a failing turn; Ctrl-C stops a reply (what it
// wrote stays in the conversation) and a second one exits with 130.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init } from '../../bindings/index.js';
import { renderChatTemplate } from '../../bindings/chat_template.js';
import { chatCheckpoint, chatModelConfig, CHAT_TEMPLATE } from '../data/chat_lm_fixture.mjs';

const CLI = fileURLToPath(new URL('../../bin/attnwasm.mjs', import.meta.url));
// The CLI runs the build this process runs (tools/test.sh passes --experimental-wasm-relaxed-simd), so that its
// replies can be compared with the library's here exactly.
const NODE = [...process.execArgv.filter((a) => a.startsWith('--experimental-wasm')), CLI];
const files = chatCheckpoint();
const SPECIAL = { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' };
let dir, folder, lm;

/** A folder with the checkpoint's files, `config` replacing config.json's keys, and extra files. */
function writeFolder(name, { config = {}, extra = {} } = {}) {
  const d = join(dir, name);
  mkdirSync(d);
  for (const [n, bytes] of files) writeFileSync(join(d, n), bytes);
  writeFileSync(join(d, 'config.json'), JSON.stringify({ ...chatModelConfig(), ...config }));
  for (const [n, text] of Object.entries(extra)) writeFileSync(join(d, n), text);
  return d;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'attnwasm-cli-chat-'));
  folder = writeFolder('model');
  lm = await (await init({ threads: 1 })).loadModel(files);
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
  lm?.dispose();
});

const cli = (args, input) => spawnSync(process.execPath, [...NODE, ...args], { input, encoding: 'utf8', timeout: 60_000 });

/** The library's replies to `lines` as one conversation (each reply appended), with the prompts it rendered. */
async function library(lines, { system, ...options } = {}) {
  const messages = system === undefined ? [] : [{ role: 'system', content: system }];
  const turns = [];
  for (const line of lines) {
    messages.push({ role: 'user', content: line });
    const turn = lm.chat(messages, { maxNewTokens: 512, ...options });
    const message = await turn.finalMessage();
    turns.push({ prompt: turn.prompt, text: turn.text, ids: turn.ids, stopReason: turn.stopReason, promptIds: turn.promptIds });
    messages.push(message);
  }
  return turns;
}

const LINES = ['Hello there, how are you?', 'Tell me more.'];

test('two piped lines (a blank one between): two replies, each the library\'s for the conversation so far, streamed and ended by a newline; exit 0', async () => {
  const want = await library(LINES);
  assert.ok(want.every((t) => t.stopReason === 'stop'), 'the replies end at <|im_end|>');
  const r = cli(['chat', '--model', folder], `${LINES[0]}\n\n${LINES[1]}\n`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.equal(r.stdout, want.map((t) => `${t.text}\n`).join(''));
  // --max-new-tokens, as --max-tokens in generate.
  const short = cli(['chat', '--model', folder, '--max-new-tokens', '2'], `${LINES[0]}\n`);
  const two = await library([LINES[0]], { maxNewTokens: 2 });
  assert.equal(short.stdout, `${two[0].text}\n`);
});

test('--show-prompt: the template\'s rendering of the conversation so far, the system message first; --json: one object per turn with it, the ids and the stop reason', async () => {
  const system = 'Be brief.';
  const want = await library(LINES, { system });
  const r = cli(['chat', '--model', folder, '--system', system, '--show-prompt'], LINES.join('\n'));
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, want.map((t) => t.prompt).join(''));
  const messages = [{ role: 'system', content: system }, { role: 'user', content: LINES[0] }];
  assert.equal(want[0].prompt, renderChatTemplate(CHAT_TEMPLATE, { messages, addGenerationPrompt: true, specialTokens: SPECIAL }));
  messages.push({ role: 'assistant', content: want[0].text }, { role: 'user', content: LINES[1] });
  assert.equal(want[1].prompt, renderChatTemplate(CHAT_TEMPLATE, { messages, addGenerationPrompt: true, specialTokens: SPECIAL }));
  const j = cli(['chat', '--model', folder, '--system', system, '--show-prompt', '--json'], `${LINES.join('\n')}\n`);
  assert.equal(j.status, 0, j.stderr);
  const objects = j.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(objects.map((o) => [o.turn, o.user, o.prompt, o.text, o.ids, o.stopReason, o.promptTokens, o.tokens]),
    want.map((t, i) => [i + 1, LINES[i], t.prompt, t.text, t.ids, 'stop', t.promptIds.length, t.ids.length]));
  assert.ok(!('prompt' in JSON.parse(cli(['chat', '--model', folder, '--json'], LINES[0]).stdout)), 'no prompt without --show-prompt');
});

test('the files one by one (--config, --tokenizer, --tokenizer-config), --dtype, the template from --chat-template or the folder\'s chat_template.jinja, --chat-template-kwargs', async () => {
  const want = await library(LINES);
  const r = cli(['chat', '--model', join(folder, 'model.safetensors'), '--config', join(folder, 'config.json'), '--tokenizer', join(folder, 'tokenizer.json'),
    '--tokenizer-config', join(folder, 'tokenizer_config.json')], LINES.join('\n'));
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, want.map((t) => `${t.text}\n`).join(''));
  const q8 = cli(['chat', '--model', folder, '--dtype', 'q8', '--json', '--max-new-tokens', '3'], LINES[0]);
  assert.equal(q8.status, 0, q8.stderr);
  assert.equal(JSON.parse(q8.stdout).tokens <= 3, true);
  // A template of one's own: the file given, or a chat_template.jinja in the folder (which wins over tokenizer_config.json's, as in transformers).
  const mine = '{% for m in messages %}<|im_start|>{{ m.role | upper }}: {{ m.content }}<|im_end|>{% endfor %}<|im_start|>ASSISTANT: ';
  const file = join(dir, 'mine.jinja');
  writeFileSync(file, mine);
  const jinjaFolder = writeFolder('with_jinja', { extra: { 'chat_template.jinja': mine } });
  const expected = `<|im_start|>USER: ${LINES[0]}<|im_end|><|im_start|>ASSISTANT: `;
  for (const args of [['--model', folder, '--chat-template', file], ['--model', jinjaFolder]]) {
    const o = cli(['chat', ...args, '--json', '--show-prompt', '--max-new-tokens', '4'], LINES[0]);
    assert.equal(o.status, 0, o.stderr);
    assert.equal(JSON.parse(o.stdout).prompt, expected, args.join(' '));
  }
  // The loader chooses the template, as for loadModel: a --tokenizer-config FILE is used as it is (its template, not
  // the folder's chat_template.jinja, which joins the folder's own tokenizer_config.json).
  const given = cli(['chat', '--model', jinjaFolder, '--tokenizer-config', join(folder, 'tokenizer_config.json'), '--json', '--show-prompt', '--max-new-tokens', '1'], LINES[0]);
  assert.equal(given.status, 0, given.stderr);
  assert.equal(JSON.parse(given.stdout).prompt, want[0].prompt);
  const think = cli(['chat', '--model', folder, '--json', '--show-prompt', '--max-new-tokens', '1', '--chat-template-kwargs', '{"enable_thinking": false}'], LINES[0]);
  assert.equal(think.status, 0, think.stderr);
  assert.ok(JSON.parse(think.stdout).prompt.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'));
});

test('usage errors (exit 2) and a model without a chat template (exit 1) fail before reading the conversation', () => {
  const noTemplate = writeFolder('no_template', { extra: { 'tokenizer_config.json': JSON.stringify({ eos_token: '<|im_end|>' }) } });
  for (const [args, status, message] of [
    [['chat'], 2, /^attnwasm: chat: --model is needed: a chat model's folder/],
    [['chat', 'hello', '--model', folder], 2, /^attnwasm: chat: unexpected argument 'hello' \(the user's messages are read from stdin/],
    [['chat', '--model', folder, '--chat-template-kwargs', '{enable_thinking: false}'], 2, /^attnwasm: --chat-template-kwargs: expected a JSON object/],
    [['chat', '--model', folder, '--chat-template-kwargs', '[1]'], 2, /^attnwasm: --chat-template-kwargs: expected a JSON object/],
    [['chat', '--model', folder, '--input', 'x.txt'], 2, /^attnwasm: --input is an option of generate, not of chat$/m],
    [['chat', '--model', folder, '--temperature', 'hot'], 2, /^attnwasm: --temperature: expected a number, got 'hot'$/],
    [['chat', '--model', folder, '--max-new-tokens', '0'], 2, /^attnwasm: --max-new-tokens: expected an integer in \[1, \d+\], got 0$/],
    [['chat', '--model', folder, '--max-new-tokens', '5', '--max-tokens', '5'], 2, /^attnwasm: give --max-tokens or --max-new-tokens \(the same\), not both$/],
    [['chat', '--model', folder, '--chat-template', join(dir, 'absent.jinja')], 2, /^attnwasm: --chat-template: cannot read '.*absent\.jinja': ENOENT/],
    [['chat', '--model', join(folder, 'model.safetensors'), '--config', join(folder, 'config.json')], 2, /^attnwasm: chat: this model has no tokenizer: give --tokenizer/],
    [['chat', '--model', noTemplate], 1, /^attnwasm: chat: no chat template: tokenizer_config\.json has no chat_template \(newer repos keep it in chat_template\.jinja\); give --chat-template FILE \(a chat_template\.jinja\)$/],
    [['generate', 'hi', '--model', folder, '--system', 'x'], 2, /^attnwasm: --system is an option of chat, not of generate$/m],
    [['nope'], 2, /^attnwasm: unknown command 'nope' \(expected translate, classify, generate, chat, embed, classify-text, rerank, entities, classify-image, embed-image, transcribe, cache or inspect; see --help\)$/],
  ]) {
    const r = cli(args, 'Hello\n');
    assert.equal(r.status, status, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr.trimEnd(), message, args.join(' '));
    assert.equal(r.stdout, '', args.join(' '));
  }
  const help = cli(['--help']);
  assert.match(help.stdout, /^ {2}attnwasm chat --model <folder\|model\.safetensors>/m);
  for (const flag of ['--system', '--show-prompt', '--chat-template', '--chat-template-kwargs', '--tokenizer-config', '--dtype', '--max-new-tokens']) {
    assert.match(help.stdout, new RegExp(`^ {2}${flag}\\b`, 'm'), flag);
  }
});

test('a turn that fails (the conversation no longer fits) is reported and left out; the next turn goes on; exit 1', async () => {
  const small = writeFolder('small', { config: { max_position_embeddings: 48 } });
  const long = 'word '.repeat(40);
  const r = cli(['chat', '--model', small, '--max-new-tokens', '4'], `${long}\n${LINES[0]}\n`);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^attnwasm: turn 1: prompt: expected fewer than maxPositions \(48\) tokens, got \d+$/m);
  const want = await library([LINES[0]], { maxNewTokens: 4 });
  assert.equal(r.stdout, `${want[0].text}\n`, 'turn 2 as if turn 1 had not happened');
});

/**
 * Spawns chat with stdin open; `steps` runs with the child and the output so far ({ stdout, stderr },
 * updated as it arrives). Resolves { code, signal, stdout, stderr }.
 */
function converse(args, steps) {
  const child = spawn(process.execPath, [...NODE, 'chat', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  const waiters = [];
  const wake = () => { for (const w of [...waiters]) w(); };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (d) => { out.stdout += d; wake(); });
  child.stderr.on('data', (d) => { out.stderr += d; wake(); });
  const until = (what) => new Promise((resolve) => {
    const check = () => {
      if (what(out)) {
        waiters.splice(waiters.indexOf(check), 1);
        resolve();
      }
    };
    waiters.push(check);
    check();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const closed = new Promise((resolve) => child.on('close', (code, signal) => { clearTimeout(timer); resolve({ ...out, code, signal }); }));
  steps(child, until, out);
  return closed;
}

test('Ctrl-C stops the reply being written (the turn ends with a newline, what it wrote stays in the conversation); a second one exits with 130', async () => {
  // Replies that would go on for a long time: no end-of-turn stop, room for 10^6 positions.
  const big = writeFolder('big', { config: { max_position_embeddings: 1_000_000 } });
  const args = ['--model', big, '--ignore-eos', '--max-new-tokens', '200000', '--show-prompt'];
  const r = await converse(args, async (child, until) => {
    child.stdin.write(`${LINES[0]}\n`);
    await until((o) => o.stdout.length > 0);
    child.kill('SIGINT');
    await until((o) => /attnwasm: stopped \(Ctrl-C\) after \d+ tokens; Ctrl-C again to exit\n/.test(o.stderr));
    child.stdin.write(`${LINES[1]}\n`);
    await until((o) => o.stderr.includes(`<|im_start|>user\n${LINES[1]}<|im_end|>\n<|im_start|>assistant\n`));
    child.kill('SIGINT');
  });
  assert.equal(r.code, 130, r.stderr);
  // The second prompt holds the first reply as far as it went.
  const end = r.stderr.indexOf(`<|im_end|>\n<|im_start|>user\n${LINES[1]}<|im_end|>\n<|im_start|>assistant\n`);
  const head = `<|im_start|>user\n${LINES[0]}<|im_end|>\n<|im_start|>assistant\n`;
  const second = r.stderr.indexOf(head, head.length);  // stderr: prompt 1, the note, prompt 2
  assert.ok(r.stderr.startsWith(head) && second > 0 && end > second, r.stderr.slice(0, 500));
  assert.match(r.stderr.slice(head.length, second), /^attnwasm: stopped \(Ctrl-C\) after \d+ tokens; Ctrl-C again to exit\n$/);
  const partial = r.stderr.slice(second + head.length, end);
  assert.ok(partial.length > 0);
  assert.ok(r.stdout.startsWith(`${partial}\n`), 'the first reply, cut short, then a newline');
  const tokens = Number(/after (\d+) tokens/.exec(r.stderr)[1]);
  assert.ok(tokens > 0 && tokens < 200000);
});

test('Ctrl-C while waiting for the next line exits with 130; end of input exits with 0', async () => {
  const want = await library([LINES[0]]);
  const r = await converse(['--model', folder], async (child, until) => {
    child.stdin.write(`${LINES[0]}\n`);
    await until((o) => o.stdout === `${want[0].text}\n`);
    child.kill('SIGINT');
  });
  assert.equal(r.code, 130, r.stderr);
  assert.equal(r.stdout, `${want[0].text}\n`);
  const eof = await converse(['--model', folder], (child) => child.stdin.end(`${LINES[0]}\n`));
  assert.equal(eof.code, 0, eof.stderr);
  assert.equal(eof.stdout, `${want[0].text}\n`);
});
