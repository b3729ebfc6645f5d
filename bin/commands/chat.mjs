// attnwasm chat: a conversation with a chat model (--model: a folder, a hub id, or files given one by one), a
// user message per line of stdin, each reply streamed to stdout, the conversation kept. The template is
// --chat-template's, else the one the loader chose (bindings/models.js: the folder's chat_template.jinja, …).
// The flags are the entry's (../attnwasm.mjs), the sampling flags generation.mjs's. Ctrl-C stops the reply;
// a second exits (130).
import { createInterface } from 'node:readline';
import { init, AttnWasmError } from '../../bindings/index.js';
import { UsageError, THREADS, readFlagFile, loadOptions, errorJson } from './shared.mjs';
import { generationOptions, generationJson, noteSeed } from './generation.mjs';

const CHAT_MAX_TOKENS = 512;

/**
 * The lines of stdin one at a time as they come (typed or piped), without reading ahead of what
 * readline buffers; done at the end of input.
 */
function stdinLines() {
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  return rl[Symbol.asyncIterator]();
}

/**
 * chat: a conversation read from stdin, a user message per line; each reply streamed to stdout and
 * ended with a newline (--json: one object per turn). Ctrl-C: the first stops the reply being
 * written (the turn ends, what it wrote stays in the conversation), a second before another reply
 * completes — or one while waiting for input — exits with 130.
 */
export async function chatCommand(args, rest) {
  if (rest.length) throw new UsageError(`chat: unexpected argument '${rest[0]}' (the user's messages are read from stdin, one per line; --system "…" for a system message)`);
  if (args.model === undefined) {
    throw new UsageError('chat: --model is needed: a chat model\'s folder (config.json, model.safetensors, tokenizer.json, tokenizer_config.json), '
      + 'or its model.safetensors with --config, --tokenizer and --tokenizer-config');
  }
  for (const flag of ['input', 'ids', 'echo']) if (args[flag] !== undefined) throw new UsageError(`--${flag} is an option of generate, not of chat`);
  let kwargs;
  if (args['chat-template-kwargs'] !== undefined) {
    try {
      kwargs = JSON.parse(args['chat-template-kwargs']);
    } catch (e) {
      throw new UsageError(`--chat-template-kwargs: expected a JSON object (e.g. '{"enable_thinking": false}'), got '${args['chat-template-kwargs']}' (${e.message})`);
    }
    if (kwargs === null || typeof kwargs !== 'object' || Array.isArray(kwargs)) {
      throw new UsageError(`--chat-template-kwargs: expected a JSON object (e.g. '{"enable_thinking": false}'), got '${args['chat-template-kwargs']}'`);
    }
  }
  // The template: --chat-template's text; without it the tokenizer's, which the loader chose as transformers does
  // (a folder's or hub repo's chat_template.jinja, else its chat_template.json, else tokenizer_config.json's).
  const chatTemplate = args['chat-template'] === undefined ? undefined : await readFlagFile('--chat-template', args['chat-template'], 'utf8');
  const load = await loadOptions(args);
  const aw = await init({ threads: THREADS });
  const lm = await aw.loadCausalLM(args.model, load);
  if (!lm.tokenizer) {
    throw new UsageError('chat: this model has no tokenizer: give --tokenizer tokenizer.json and --tokenizer-config tokenizer_config.json (or a folder that has them)');
  }
  if (typeof lm.tokenizer.chatStopTokens !== 'function') {
    throw new UsageError("chat: this model's tokenizer is its file's character vocabulary, which has no chat template (give --tokenizer and --tokenizer-config)");
  }
  const base = await generationOptions(lm, args, undefined, CHAT_MAX_TOKENS);
  delete base.signal;
  const options = { ...base, chatTemplate, chatTemplateKwargs: kwargs };
  try {
    lm.tokenizer.chatStopTokens({ chatTemplate });  // no template: fail now, before any input
  } catch (e) {
    if (e.code !== 'ERR_INVALID_ARGUMENT') throw e;
    throw new AttnWasmError(e.code, `chat: ${e.message.replace(/^chatStopTokens: /, '').replace(/: pass that file's text as \{ chatTemplate \}$/, '')}; give --chat-template FILE (a chat_template.jinja)`);
  }
  noteSeed(args, options);

  const tty = !!process.stdin.isTTY;
  const messages = args.system !== undefined ? [{ role: 'system', content: args.system }] : [];
  const out = (s) => process.stdout.write(`${s}\n`);
  let controller = null;  // the running turn's
  let interrupted = false;  // a Ctrl-C since the last reply that completed
  process.on('SIGINT', () => {
    if (interrupted || !controller) {
      if (tty) process.stderr.write('\n');
      process.exit(130);
    }
    interrupted = true;
    controller.abort();
  });
  let turn = 0;
  let failed = 0;
  const lines = stdinLines();
  for (;;) {
    if (tty) process.stderr.write('> ');
    const { value: line, done } = await lines.next();
    if (done) {
      if (tty) process.stderr.write('\n');
      break;
    }
    if (!line.trim()) continue;
    turn++;
    messages.push({ role: 'user', content: line });
    controller = new AbortController();
    let written = '';
    const write = (s) => { process.stdout.write(s); written += s; };
    const t0 = performance.now();
    let firstTokenMs = null;
    let chat = null;
    try {
      chat = lm.chat(messages, { ...options, signal: controller.signal });
      if (args['show-prompt'] && !args.json) process.stderr.write(chat.prompt);
      for await (const t of chat) {
        firstTokenMs ??= performance.now() - t0;
        if (!args.json) write(t.text);
      }
    } catch (e) {
      if (written) process.stdout.write('\n');
      messages.pop();
      failed++;
      if (args.json) out(JSON.stringify({ turn, user: line, error: errorJson(e) }));
      process.stderr.write(`attnwasm: turn ${turn}: ${e.message}\n`);
      continue;
    } finally {
      controller = null;
    }
    const r = { g: chat, firstTokenMs, ms: performance.now() - t0 };
    if (args.json) out(JSON.stringify({ turn, user: line, ...(args['show-prompt'] ? { prompt: chat.prompt } : {}), ...generationJson(lm, r) }));
    else out(chat.text.slice(written.length));  // what the stream held back, and the newline
    messages.push(chat.message);
    if (chat.stopReason === 'aborted') process.stderr.write(`attnwasm: stopped (Ctrl-C) after ${chat.ids.length} tokens; Ctrl-C again to exit\n`);
    else interrupted = false;
    if (chat.stopReason === 'context') process.stderr.write(`attnwasm: turn ${turn}: the conversation reached the model's ${lm.maxPositions} positions\n`);
  }
  lm.dispose();
  return failed ? 1 : 0;
}
