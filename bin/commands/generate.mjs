// attnwasm generate: a causal LM's continuation of a prompt, the package's fortune-cookie model or --model's.
//   attnwasm generate "Once upon a time" [--temperature T]     one prompt: streamed as it is generated (--json: a line per token)
//   attnwasm generate [--input FILE] [--json]                  one prompt per line (stdin by default), a line out each
// The flags are the entry's (../attnwasm.mjs), the sampling flags generation.mjs's; many prompts run through
// batch.mjs. Ctrl-C stops cleanly (exit code 130); a second exits at once.
import { init, AttnWasmError } from '../../bindings/index.js';
import { UsageError, THREADS, loadOptions, errorJson, round } from './shared.mjs';
import { inputLines, runBatch, summary } from './batch.mjs';
import { generationOptions, generationJson, noteSeed } from './generation.mjs';

const MODEL = new URL('../../models/lm/lm.safetensors', import.meta.url);
const CHAT_ONLY = ['chat-template', 'chat-template-kwargs', 'system', 'show-prompt'];

/** "1,2,3" or "1 2 3" → [1, 2, 3] (--ids); generate() checks them against the vocabulary. */
function parseIds(text) {
  const parts = text.trim() ? text.trim().split(/\s*[\s,]\s*/) : [];
  const bad = parts.find((p) => !/^\d+$/.test(p));
  if (bad !== undefined) throw new AttnWasmError('ERR_INVALID_ARGUMENT', `--ids: expected token ids separated by commas (e.g. 1,2,3), got '${bad}'`);
  return parts.map(Number);
}

/**
 * One prompt through the model: onStart(g) before the first token, onToken(t)
 * for each. Returns { g, firstTokenMs, ms } (g.text, g.ids, g.stopReason …).
 * Throws what generate() throws (ERR_INVALID_ARGUMENT for a character the
 * model's vocabulary lacks).
 */
async function generateItem(lm, prompt, options, { onStart, onToken } = {}) {
  const t0 = performance.now();
  const g = lm.generate(prompt, options);
  onStart?.(g);
  let firstTokenMs = null;
  for await (const t of g) {
    firstTokenMs ??= performance.now() - t0;
    onToken?.(t);
  }
  return { g, firstTokenMs, ms: performance.now() - t0 };
}

/** The prompt as the model saw it (--echo): its text, or for a model without a tokenizer its ids. */
const promptText = (lm, g) => (lm.tokenizer ? lm.decode(g.promptIds, { skipSpecialTokens: true }) : g.promptIds.join(','));

/**
 * What generate writes for a generation: the text, or for a model without a
 * tokenizer the ids, comma-separated; with `echo` the prompt first.
 */
function generatedText(lm, g, echo) {
  const text = lm.tokenizer ? g.text : g.ids.join(',');
  return echo ? promptText(lm, g) + (!lm.tokenizer && text ? ',' : '') + text : text;
}

/** A batch line's text: backslash, newline, carriage return and tab as \\, \n, \r and \t. */
const escapeLine = (s) => s.replace(/[\\\n\r\t]/g, (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c]);

/**
 * Ctrl-C: the first aborts `controller` (the command ends its line, notes it
 * and exits 130), a second exits at once.
 */
function stopOnInterrupt(controller) {
  process.on('SIGINT', () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  });
}

/**
 * generate: `rest` is what follows the command, the prompt (one argument) or nothing (lines of --input or stdin).
 * Returns the exit code: 0; 1 when a line of a batch failed; 130 when Ctrl-C stopped it.
 */
export async function generateCommand(args, rest) {
  if (rest.length > 1) throw new UsageError(`generate: unexpected argument '${rest[1]}' (quote the prompt: "Once upon a time")`);
  const prompt = rest[0];
  if (prompt !== undefined && args.input !== undefined) throw new UsageError('generate: give the prompt or --input, not both');
  if (args.model === undefined) {
    for (const flag of ['config', 'tokenizer', 'tokenizer-config']) if (args[flag] !== undefined) throw new UsageError(`--${flag} goes with --model (the checkpoint it describes)`);
  }
  for (const flag of CHAT_ONLY) if (args[flag] !== undefined) throw new UsageError(`--${flag} is an option of chat, not of generate`);
  const controller = new AbortController();
  stopOnInterrupt(controller);
  const load = await loadOptions(args);
  const aw = await init({ threads: THREADS });
  const lm = await aw.loadCausalLM(args.model ?? MODEL, load);
  if (!lm.tokenizer && !args.ids) {
    throw new UsageError('generate: this model has no tokenizer, so it takes no text: give --tokenizer tokenizer.json, or the prompt as token ids with --ids (e.g. --ids "1,2,3")');
  }
  const options = await generationOptions(lm, args, controller.signal);
  const promptOf = (text) => (args.ids ? parseIds(text) : text);
  const out = (s) => process.stdout.write(`${s}\n`);
  const interrupted = (what) => process.stderr.write(`attnwasm: stopped (Ctrl-C)${what}\n`);
  noteSeed(args, options);

  if (prompt !== undefined) {
    // One prompt: streamed, a token at a time, as generatedText() would put it.
    let r, written = 0;
    const write = (s) => { process.stdout.write(s); written += s.length; };
    try {
      r = await generateItem(lm, promptOf(prompt), options, args.json ? {
        onToken: (t) => out(JSON.stringify({ index: t.index, id: t.id, text: t.text, ms: round(t.ms) })),
      } : {
        onStart: (g) => { if (args.echo) write(promptText(lm, g)); },
        onToken: (t) => write(lm.tokenizer ? t.text : `${written ? ',' : ''}${t.id}`),
      });
    } catch (e) {
      if (args.json) out(JSON.stringify({ prompt, error: errorJson(e) }));
      else if (written) process.stdout.write('\n');
      throw e;
    }
    if (args.json) out(JSON.stringify({ prompt, ...generationJson(lm, r) }));
    else out(generatedText(lm, r.g, args.echo).slice(written));  // what the stream held back (an unfinished UTF-8 tail), and the newline
    lm.dispose();
    if (r.g.stopReason !== 'aborted') return 0;
    interrupted(` after ${r.g.ids.length} tokens`);
    return 130;
  }

  const { items, total } = await inputLines(args, controller.signal);
  const result = await runBatch(items, {
    total, noun: 'prompts', label: (it) => `line ${it.line}`, progress: args.progress ?? !!process.stderr.isTTY, signal: controller.signal,
    // A blank line is no item: it stays a blank line (text) or is left out (JSON).
    skip: (it) => !it.input.trim(),
    work: (it) => generateItem(lm, promptOf(it.input), options),
    write: (it, r) => {
      if (!args.json) out(r ? escapeLine(generatedText(lm, r.g, args.echo)) : '');
      else if (r) out(JSON.stringify({ line: it.line, prompt: it.input, ...generationJson(lm, r) }));
    },
    writeError: (it, e) => out(args.json ? JSON.stringify({ line: it.line, prompt: it.input, error: errorJson(e) }) : ''),
  });
  lm.dispose();
  if (controller.signal.aborted) interrupted('');
  process.stderr.write(`${summary(result, 'prompts', 'generated', (it) => `line ${it.line}`)}\n`);
  return controller.signal.aborted ? 130 : result.failed.length ? 1 : 0;
}
