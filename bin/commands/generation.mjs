// What generate and chat share: their sampling flags (--max-tokens / --max-new-tokens, --temperature, --top-k,
// --top-p, --seed, --ignore-eos) as generate()'s options, the note of a drawn seed, and a finished generation's
// JSON. Not here: the prompts, the streaming and Ctrl-C (generate.mjs, chat.mjs).
import { UsageError, round } from './shared.mjs';

// The flags of generate's numbers, by the generate() option each sets.
const SAMPLING = { 'max-tokens': 'maxNewTokens', 'max-new-tokens': 'maxNewTokens', temperature: 'temperature', 'top-k': 'topK', 'top-p': 'topP', seed: 'seed' };
const MAX_TOKENS = 200;

/**
 * generate()'s options from the flags. The CLI checks only that each value
 * is a number; the ranges are generate()'s, checked once here (before any
 * prompt) with a prompt of one id, and a value it refuses becomes a usage
 * error naming the flag. Without --seed the seed is drawn here, so that
 * every prompt of a batch uses the same one.
 */
export async function generationOptions(lm, args, signal, maxNewTokens = MAX_TOKENS) {
  const o = { maxNewTokens, seed: Math.floor(Math.random() * 2 ** 32), signal };
  if (args['max-tokens'] !== undefined && args['max-new-tokens'] !== undefined) throw new UsageError('give --max-tokens or --max-new-tokens (the same), not both');
  for (const [flag, key] of Object.entries(SAMPLING)) {
    const v = args[flag];
    if (v === undefined) continue;
    o[key] = v.trim() === '' ? NaN : Number(v);
    if (!Number.isFinite(o[key])) throw new UsageError(`--${flag}: expected a number, got '${v}'`);
  }
  if (args['ignore-eos']) o.stopTokens = [];
  try {
    await lm.generate([0], o).return();
  } catch (e) {
    const flag = Object.keys(SAMPLING).find((f) => args[f] !== undefined && e.message.startsWith(`${SAMPLING[f]}:`));
    if (flag) throw new UsageError(`--${flag}${e.message.slice(SAMPLING[flag].length)}`);
    throw e;
  }
  return o;
}

/** Without --seed, sampling draws a seed: stderr names it, so that the run can be repeated (not with --json, whose lines hold it). */
export function noteSeed(args, options) {
  if (!args.json && options.temperature > 0 && args.seed === undefined) {
    process.stderr.write(`attnwasm: sampling with seed ${options.seed} (--seed ${options.seed} repeats it)\n`);
  }
}

/** The JSON of a finished generation: a batch line's object, the last line of one prompt's token lines, a chat turn's object. */
export function generationJson(lm, { g, firstTokenMs, ms }) {
  const tokens = g.ids.length;
  return {
    ...(lm.tokenizer ? { text: g.text } : {}), ids: g.ids, stopReason: g.stopReason, seed: g.seed,
    tokens, promptTokens: g.promptIds.length, ms: round(ms),
    firstTokenMs: firstTokenMs === null ? null : round(firstTokenMs),
    // The rate after the first token (which carries the prompt's prefill).
    tokensPerSecond: tokens > 1 && ms > firstTokenMs ? round(((tokens - 1) * 1000) / (ms - firstTokenMs)) : null,
  };
}
