// attnwasm translate: English number words to French or German with the package's translator, or any text with a
// hub translator (--model: a Marian, M2M100 / NLLB, BART, mBART or T5 folder or hub id, a Seq2SeqLM).
//   attnwasm translate "forty-two" [--to fr|de] [--beam N]     one phrase: its translation, errors end the process
//   attnwasm translate [--input FILE] [--json]                 one phrase per line (stdin by default), one line out each
//   attnwasm translate "Hello" --model DIR [--src en --tgt fr] [--beams N] [--max-new-tokens N] [--bounded-head]
// The flags are the entry's (../attnwasm.mjs); many phrases run through batch.mjs.
import { init } from '../../bindings/index.js';
import { UsageError, THREADS, errorJson, round, loadOptions } from './shared.mjs';
import { inputLines, runBatch, summary } from './batch.mjs';

const MODEL = new URL('../../models/translator/translator.safetensors', import.meta.url);

/**
 * One phrase through the translator: { text, tokens, input } where input is
 * what the model translated (typed digits and commas become words first).
 * Throws what translate() throws (ERR_NOT_A_NUMBER for a non-number).
 */
function translateItem(tr, phrase, options) {
  const r = tr.translate(phrase, options);
  return { text: r.text, tokens: r.tokens, input: r.input };
}
/** Whether the translator changed more than case and spaces of what was typed. */
const rewritten = (typed, normalised) => normalised !== typed.trim().toLowerCase().replace(/\s+/g, ' ');
/** A line without text: runBatch skips it (and inChunks leaves it out of the chunks). */
const blank = (it) => !it.input.trim();

/**
 * translate: `rest` is what follows the command, the text (one argument) or nothing (lines of --input or stdin).
 * Returns the exit code: 0, or 1 when a line of a batch failed.
 */
export async function translateCommand(args, rest) {
  if (rest.length > 1) throw new UsageError(`translate: unexpected argument '${rest[1]}' (quote the text: "forty-two")`);
  if (rest[0] === '') throw new UsageError('translate: missing the English text (see --help)');
  const text = rest[0];
  if (text !== undefined && args.input !== undefined) throw new UsageError('translate: give the text or --input, not both');
  const aw = await init({ threads: THREADS });
  const tr = args.model === undefined ? await aw.loadTranslator(MODEL) : await aw.loadModel(args.model, await loadOptions(args));
  if (tr instanceof aw.Seq2SeqLM) return hubTranslate(tr, args, text);
  if (!(tr instanceof aw.Translator)) {
    const name = tr.constructor.name;
    tr.dispose();
    throw new UsageError(`--model: expected a translator (a hub Marian, M2M100 / NLLB, BART, mBART or T5 folder, or attnwasm's own translator file), got a ${name}`);
  }
  for (const flag of ['src', 'tgt', 'beams', 'max-new-tokens', 'bounded-head']) {
    if (args[flag] !== undefined) throw new UsageError(`--${flag}: only a hub translator (--model DIR) takes it; the number-words translator takes --to and --beam`);
  }
  const to = args.to ?? tr.languages[0];
  if (!tr.languages.includes(to)) throw new UsageError(`--to: expected one of ${tr.languages.join(', ')}, got '${to}'`);
  const beamSize = args.beam === undefined ? 1 : Number(args.beam);
  if (!Number.isInteger(beamSize) || beamSize < 1) throw new UsageError(`--beam: expected a whole number >= 1, got '${args.beam}'`);
  const options = { to, beamSize };
  const out = (s) => process.stdout.write(`${s}\n`);
  if (text !== undefined && !args.json) {
    const r = translateItem(tr, text, options); // one phrase: as ever, errors end the process
    // Digits and commas became words before the model: say what it translated.
    if (rewritten(text, r.input)) process.stderr.write(`attnwasm: translated '${r.input}'\n`);
    out(r.text);
    return 0;
  }
  const batch = text === undefined;
  const { items, total } = batch ? await inputLines(args) : { items: [{ line: 1, input: text }], total: 1 };
  const result = await runBatch(items, {
    total, noun: 'phrases', label: (it) => `line ${it.line}`, progress: args.progress ?? (batch && !!process.stderr.isTTY),
    // A blank line is no item: it stays a blank line (text) or is left out (JSON).
    skip: blank,
    work: (it) => translateItem(tr, it.input, options),
    write: (it, r, ms) => {
      if (!args.json) out(r ? r.text : '');
      else if (r) out(JSON.stringify({ line: it.line, input: it.input, normalized: r.input, text: r.text, tokens: r.tokens, ms: round(ms) }));
    },
    writeError: (it, e) => out(args.json ? JSON.stringify({ line: it.line, input: it.input, error: errorJson(e) }) : ''),
  });
  tr.dispose();
  if (batch) process.stderr.write(`${summary(result, 'phrases', 'translated', (it) => `line ${it.line}`)}\n`);
  return result.failed.length ? 1 : 0;
}

/** A whole number >= min from a flag, or a usage error naming it. */
function wholeFlag(name, v, min) {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name}: expected a whole number >= ${min}, got '${v}'`);
  return n;
}

/** Lines translated together: one padded batch per call of translate(texts) (the real tokens only are encoded). */
export const TRANSLATE_CHUNK = 16;

/**
 * The lines of a file or a pipe (an array of items), translated TRANSLATE_CHUNK non-empty lines at a time:
 * work(item) translates the item's chunk when it comes to its first line and gives each line its text; a chunk
 * that fails is translated line by line, so that an error stays its own line's. ms(item): the line's share of its
 * chunk's time. Typed lines (a terminal's async items) go one at a time.
 */
export function inChunks(items, translateTexts) {
  const one = async (it) => (await translateTexts([it.input]))[0];
  if (!Array.isArray(items)) return { work: one, ms: () => null };
  const lines = items.filter((it) => !blank(it));
  const at = new Map(lines.map((it, i) => [it, i]));
  const done = new Map(), share = new Map();
  return {
    async work(it) {
      if (!done.has(it)) {
        const chunk = lines.slice(at.get(it), at.get(it) + TRANSLATE_CHUNK);
        const t0 = performance.now();
        const texts = await translateTexts(chunk.map((c) => c.input)).catch(() => null);
        const each = (performance.now() - t0) / chunk.length;
        for (const [j, c] of chunk.entries()) {
          done.set(c, texts ? texts[j] : null);
          if (texts) share.set(c, each);
        }
      }
      const text = done.get(it);
      done.delete(it);
      return text ?? one(it);
    },
    ms: (it) => share.get(it) ?? null,
  };
}

/**
 * translate with a hub Seq2SeqLM: the text (one argument) or one text per line of --input / stdin, each translated
 * with --src / --tgt (--to is --tgt), --beams (--beam) and --max-new-tokens; the folder's generation_config.json
 * decides the rest. Progress on stderr as for the other batches. Returns the exit code.
 */
async function hubTranslate(m, args, text) {
  if (args.beams !== undefined && args.beam !== undefined) throw new UsageError('give --beams or --beam, not both');
  if (args.to !== undefined && args.tgt !== undefined) throw new UsageError('give --tgt or --to, not both');
  const options = {};
  if (args.src !== undefined) options.srcLang = args.src;
  if ((args.tgt ?? args.to) !== undefined) options.tgtLang = args.tgt ?? args.to;
  const beams = args.beams ?? args.beam;
  if (beams !== undefined) options.numBeams = wholeFlag(args.beams !== undefined ? 'beams' : 'beam', beams, 1);
  if (args['max-new-tokens'] !== undefined) options.maxNewTokens = wholeFlag('max-new-tokens', args['max-new-tokens'], 1);
  const out = (s) => process.stdout.write(`${s}\n`);
  try {
    if (text !== undefined && !args.json) {
      out(await m.translate(text, options));
      return 0;
    }
    const batch = text === undefined;
    const { items, total } = batch ? await inputLines(args) : { items: [{ line: 1, input: text }], total: 1 };
    const chunks = inChunks(items, (texts) => m.translate(texts, options));
    const result = await runBatch(items, {
      total, noun: 'texts', label: (it) => `line ${it.line}`, progress: args.progress ?? (batch && !!process.stderr.isTTY),
      skip: blank,
      work: chunks.work,
      write: (it, r, ms) => {
        if (!args.json) out(r ?? '');
        else if (r != null) out(JSON.stringify({ line: it.line, input: it.input, text: r, ms: round(chunks.ms(it) ?? ms) }));
      },
      writeError: (it, e) => out(args.json ? JSON.stringify({ line: it.line, input: it.input, error: errorJson(e) }) : ''),
    });
    if (batch) process.stderr.write(`${summary(result, 'texts', 'translated', (it) => `line ${it.line}`)}\n`);
    return result.failed.length ? 1 : 0;
  } finally {
    m.dispose();
  }
}
