// attnwasm embed: sentence embeddings (BERT, RoBERTa, XLM-R encoders; Qwen3-Embedding and other decoder embedders)
// through aw.loadModel with task 'embed', one vector per text or per line of --input FILE / stdin, written as
// numbers or JSON arrays. It reads its own flags (what follows 'embed': EMBED_FLAGS, EMBED_VALUED), not the
// entry's; lines run in chunks with batch.mjs's progress bar and summary.
import { init } from '../../bindings/index.js';
import { UsageError, parseArgv, readFlagFile, loadOptions } from './shared.mjs';
import { progressBar, summary } from './batch.mjs';

const EMBED_HELP = `attnwasm embed — sentence embeddings (BERT, RoBERTa, XLM-R: all-MiniLM, bge, e5, gte, …)

Usage:
  attnwasm embed --model <folder|model.safetensors> "<text>" ...
  attnwasm embed --model <folder|model.safetensors> [--input FILE]
      Writes one vector per text on stdout: its numbers separated by spaces
      (--json: a JSON array per line), in the order of the texts. Without
      texts: one text per line of FILE (or of stdin, '-'), one vector per
      line, blank lines included (the empty text's vector); progress on
      stderr, a summary at the end. The model: a sentence-transformers folder
      (config.json, model.safetensors, tokenizer.json, modules.json,
      1_Pooling/config.json, ...: its pooling, Normalize and max_seq_length
      are used), or model.safetensors with --config and --tokenizer.
      e.g. attnwasm embed --model ./all-MiniLM-L6-v2 --input docs.txt > vectors.txt

Options:
  --model PATH           the folder, or its model.safetensors, or a hub id (required)
  --revision REV         with a hub id: a branch, tag or commit (default main)
  --config FILE          config.json (default: the folder's)
  --tokenizer FILE       tokenizer.json (default: the folder's)
  --tokenizer-config FILE  tokenizer_config.json (default: the folder's)
  --pooling MODE         mean, cls, max, mean_sqrt_len, weightedmean, lasttoken,
                         or several joined by + (default: the folder's; mean)
  --normalize, --no-normalize
                         L2-normalize the vectors, or not (default: the folder's
                         Normalize module)
  --prompt TEXT          text put before every text ('query: ')
  --prompt-name NAME     one of config_sentence_transformers.json's prompts
  --dtype TYPE           keep the weights as f32, bf16, f16, q8, q4 or q4a16
  --batch-size N         texts per batch (default 32)
  --threads N|auto       threads for the model (default 1)
  --input FILE           the texts, one per line ('-' = stdin)
  --json                 a JSON array per line
  --progress, --no-progress
                         a progress bar on stderr (default: when stderr is a
                         terminal and the texts come from --input or stdin)
`;
const EMBED_VALUED = ['--model', '--revision', '--config', '--tokenizer', '--tokenizer-config', '--pooling', '--prompt', '--prompt-name', '--dtype', '--batch-size',
  '--threads', '--input'];
const EMBED_FLAGS = { '--normalize': ['normalize', true], '--no-normalize': ['normalize', false], '--json': ['json', true], '--progress': ['progress', true],
  '--no-progress': ['progress', false], '--help': ['help', true], '-h': ['help', true] };

/** A float32 as the fewest digits that read back as it (at most 9 significant). */
const float32Text = (v) => String(Number(v.toPrecision(9)));

/**
 * embed: the vectors of the texts given, or of each line of --input FILE or stdin, one line each on stdout
 * (space-separated numbers, or --json arrays), in batches of --batch-size; progress and a summary on stderr
 * for lines. Its own flags (`argv`: what follows 'embed'); the model loads through aw.loadModel (task 'embed'), the
 * folder's sentence-transformers files deciding pooling and normalization unless --pooling / --normalize say.
 */
export async function embedCommand(argv) {
  const args = parseArgv(argv, { flags: EMBED_FLAGS, valued: EMBED_VALUED, unknown: (a) => `embed: unknown option ${a} (see attnwasm embed --help)` });
  if (args.help) {
    process.stdout.write(EMBED_HELP);
    return 0;
  }
  if (args.model === undefined) throw new UsageError('embed: --model is needed: a sentence-transformers folder, or model.safetensors with --config and --tokenizer');
  if (args._.length && args.input !== undefined) throw new UsageError('embed: give the texts or --input, not both');
  const count = (flag, min) => {
    const v = args[flag];
    if (v === undefined) return undefined;
    const n = /^\d+$/.test(v) ? Number(v) : NaN;
    if (!(n >= min)) throw new UsageError(`--${flag}: expected a whole number >= ${min}, got '${v}'`);
    return n;
  };
  const batchSize = count('batch-size', 1) ?? 32;
  const threads = args.threads === 'auto' ? 'auto' : count('threads', 1) ?? 1;
  const load = await loadOptions(args);
  if (args.pooling !== undefined) load.pooling = args.pooling;
  if (args.normalize !== undefined) load.normalize = args.normalize;
  const embedOptions = { batchSize };
  if (args.prompt !== undefined) embedOptions.prompt = args.prompt;
  if (args['prompt-name'] !== undefined) embedOptions.promptName = args['prompt-name'];

  const aw = await init({ threads });
  let e;
  try {
    // task 'embed': an encoder as its Embedder (a classifier's encoder alone), a causal LM (Qwen3-Embedding) as a DecoderEmbedder
    e = await aw.loadModel(args.model, { ...load, task: 'embed' });
  } catch (err) {
    if (err.code === 'ERR_INVALID_ARGUMENT' && /^pooling:/.test(err.message)) throw new UsageError(`--${err.message}`);
    throw err;
  }
  if (!e.tokenizer) throw new UsageError('embed: this model has no tokenizer: give --tokenizer tokenizer.json (or a folder that has one)');
  const write = (r) => {
    const d = r.shape[1];
    let out = '';
    for (let i = 0; i < r.shape[0]; i++) {
      const row = Array.from(r.data.subarray(i * d, (i + 1) * d), float32Text);
      out += args.json ? `[${row.join(',')}]\n` : `${row.join(' ')}\n`;
    }
    process.stdout.write(out);
  };
  if (args._.length) {
    write(await e.embed(args._, embedOptions));
    e.dispose();
    return 0;
  }
  // Lines: read whole (a file or stdin), embedded and written a chunk at a time.
  const text = args.input !== undefined && args.input !== '-' ? await readFlagFile('--input', args.input, 'utf8')
    : await (async () => { const chunks = []; for await (const c of process.stdin) chunks.push(c); return Buffer.concat(chunks).toString('utf8'); })();
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const bar = progressBar(args.progress ?? !!process.stderr.isTTY, lines.length, 'texts');
  const t0 = performance.now();
  const CHUNK = Math.max(batchSize, 1024);
  for (let at = 0; at < lines.length; at += CHUNK) {
    let done = 0;
    const r = await e.embed(lines.slice(at, at + CHUNK), {
      ...embedOptions,
      onProgress: (p) => { for (; done < p.done; done++) bar.tick(); },
    });
    write(r);
  }
  bar.clear();
  e.dispose();
  process.stderr.write(`${summary({ count: lines.length, failed: [], ms: performance.now() - t0 }, 'texts', 'embedded', () => '')}\n`);
  return 0;
}
