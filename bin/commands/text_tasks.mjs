// attnwasm classify-text and attnwasm rerank: a sequence-classification checkpoint (sentiment, NLI, toxicity) as
// transformers' text-classification pipeline scores it, and a cross-encoder (ms-marco-MiniLM, bge-reranker)
// ranking documents for a query as sentence-transformers' CrossEncoder.rank does. Each reads its own flags
// (what follows the command), texts from the line or one per line of --input / stdin.
import { init } from '../../bindings/index.js';
import { UsageError, count, parseArgv, readFlagFile, loadOptions } from './shared.mjs';

const CLASSIFY_HELP = `attnwasm classify-text — labels for texts (BERT, RoBERTa, XLM-R classifiers)

Usage:
  attnwasm classify-text --model <folder> "<text>" ...
  attnwasm classify-text --model <folder> [--input FILE] [--pairs]
      One line per text on stdout: its labels best first, "label<TAB>score"
      joined by tabs (--json: a JSON array of {label, score} per line). The
      scores are transformers' text-classification pipeline's. Without texts:
      one text per line of FILE (or stdin); with --pairs each line is
      "text<TAB>second text" (NLI's premise and hypothesis).
      e.g. attnwasm classify-text --model ./distilbert-sst2 "I loved it"

Options:
  --model PATH         the folder (config.json naming *ForSequenceClassification,
                       model.safetensors, the tokenizer's files) or a hub id (required)
  --revision REV       with a hub id: a branch, tag or commit (default main)
  --top-k N|all        labels per text (default 1)
  --function F         softmax, sigmoid or none (default: as the config's
                       problem_type and labels say)
  --dtype TYPE         keep the weights as f32, bf16, f16, q8, q4 or q4a16
  --threads N|auto     threads for the model (default 1)
  --input FILE         the texts, one per line ('-' = stdin)
  --pairs              each line is two texts separated by a tab
  --json               a JSON array per line
`;

const RERANK_HELP = `attnwasm rerank — documents ranked for a query by a cross-encoder

Usage:
  attnwasm rerank --model <folder> --query "<query>" [--input FILE | < docs.txt]
      Reads one document per line (blank lines skipped) and writes them best
      first, "score<TAB>line number<TAB>document" (--json: one JSON array of
      {corpusId, score, text}; corpusId counts the documents read, from 0).
      The scores are sentence-transformers' CrossEncoder.predict's: the logit
      through the activation the model's config names (Sigmoid by default for
      one label). A pair longer than the model takes loses words from the end
      of the document.
      e.g. attnwasm rerank --model ./ms-marco-MiniLM-L-6-v2 --query "how do cats sleep" < passages.txt

Options:
  --model PATH         the folder or a hub id (required)
  --revision REV       with a hub id: a branch, tag or commit (default main)
  --query TEXT         the query (required)
  --top-k N            the best N only (default all)
  --dtype TYPE         keep the weights as f32, bf16, f16, q8, q4 or q4a16
  --threads N|auto     threads for the model (default 1)
  --input FILE         the documents, one per line ('-' = stdin, the default)
  --json               one JSON array
`;

const ENTITIES_HELP = `attnwasm entities — named entities in texts (BERT, RoBERTa, XLM-R, DistilBERT token classifiers)

Usage:
  attnwasm entities --model <folder> "<text>" ...
  attnwasm entities --model <folder> [--input FILE]
      One line per entity on stdout: "text number<TAB>label<TAB>start<TAB>end<TAB>score<TAB>word"
      (text numbers from 1; start and end index the text as JavaScript strings do, UTF-16).
      --json: one JSON array of entities per text, a line each. The entities are transformers'
      token-classification pipeline's. Without texts: one text per line of FILE (or stdin).
      e.g. attnwasm entities --model ./bert-base-NER "My name is Wolfgang and I live in Berlin."

Options:
  --model PATH         the folder (config.json naming *ForTokenClassification,
                       model.safetensors, tokenizer.json or vocab.txt) or a hub id (required)
  --revision REV       with a hub id: a branch, tag or commit (default main)
  --aggregation S      none, simple, first, average or max (default simple)
  --keep-o             keep the 'O' tags (ignoreLabels [])
  --dtype TYPE         keep the weights as f32, bf16, f16, q8, q4 or q4a16
  --threads N|auto     threads for the model (default 1)
  --input FILE         the texts, one per line ('-' = stdin)
  --json               a JSON array per line
`;

const COMMON_VALUED = ['--model', '--revision', '--dtype', '--threads', '--input'];
const COMMON_FLAGS = { '--json': ['json', true], '--help': ['help', true], '-h': ['help', true] };

/** The lines of --input FILE or stdin (a last empty line dropped). */
async function inputLines(input) {
  const text = input !== undefined && input !== '-' ? await readFlagFile('--input', input, 'utf8')
    : await (async () => { const chunks = []; for await (const c of process.stdin) chunks.push(c); return Buffer.concat(chunks).toString('utf8'); })();
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** The model, loaded as the task it is run for ('classify' or 'rerank'; undefined: as its config says). */
async function loadTask(args, task, command) {
  if (args.model === undefined) throw new UsageError(`${command}: --model is needed: a folder (or hub id) of a ${task ? 'sequence' : 'token'}-classification checkpoint`);
  const aw = await init({ threads: args.threads === 'auto' ? 'auto' : count(args, 'threads', 1) ?? 1 });
  const m = await aw.loadModel(args.model, { ...await loadOptions(args), task });
  if (!m.tokenizer) throw new UsageError(`${command}: the model has no tokenizer (tokenizer.json, or vocab.txt, vocab.json + merges.txt or sentencepiece.bpe.model in its folder)`);
  return m;
}

/** classify-text: each text's labels, best first. */
export async function classifyTextCommand(argv) {
  const args = parseArgv(argv, { flags: { ...COMMON_FLAGS, '--pairs': ['pairs', true] }, valued: [...COMMON_VALUED, '--top-k', '--function'], unknown: (a) => `classify-text: unknown option ${a} (see attnwasm classify-text --help)` });
  if (args.help) {
    process.stdout.write(CLASSIFY_HELP);
    return 0;
  }
  if (args._.length && args.input !== undefined) throw new UsageError('classify-text: give the texts or --input, not both');
  const topK = args['top-k'] === 'all' ? null : count(args, 'top-k', 1) ?? 1;
  if (args.function !== undefined && !['softmax', 'sigmoid', 'none'].includes(args.function)) throw new UsageError(`--function: expected softmax, sigmoid or none, got '${args.function}'`);
  const lines = args._.length ? args._ : await inputLines(args.input);
  const inputs = args.pairs ? lines.map((l, i) => {
    const tab = l.indexOf('\t');
    if (tab < 0) throw new UsageError(`--pairs: line ${i + 1} has no tab between its two texts`);
    return [l.slice(0, tab), l.slice(tab + 1)];
  }) : lines;
  const m = await loadTask(args, 'classify', 'classify-text');
  try {
    const out = await m.classify(inputs, { topK, ...(args.function ? { functionToApply: args.function } : {}) });
    process.stdout.write(out.map((r) => (args.json ? JSON.stringify(r) : r.map((x) => `${x.label}\t${x.score.toFixed(6)}`).join('\t'))).join('\n') + (out.length ? '\n' : ''));
  } finally {
    m.dispose();
  }
  return 0;
}

/** rerank: the documents of --input / stdin, best first for --query. */
export async function rerankCommand(argv) {
  const args = parseArgv(argv, { flags: COMMON_FLAGS, valued: [...COMMON_VALUED, '--query', '--top-k'], unknown: (a) => `rerank: unknown option ${a} (see attnwasm rerank --help)` });
  if (args.help) {
    process.stdout.write(RERANK_HELP);
    return 0;
  }
  if (args.query === undefined) throw new UsageError('rerank: --query is needed');
  if (args._.length) throw new UsageError(`rerank: the documents come one per line from --input or stdin, not the command line (got '${args._[0]}')`);
  const topK = count(args, 'top-k', 1);
  const all = await inputLines(args.input);
  const docs = [], lineOf = [];
  all.forEach((l, i) => { if (l.trim() !== '') { docs.push(l); lineOf.push(i + 1); } });
  if (docs.length === 0) throw new UsageError('rerank: no documents (one per line on stdin or in --input)');
  const m = await loadTask(args, 'rerank', 'rerank');
  try {
    const ranked = await m.rank(args.query, docs, { topK, returnDocuments: true });
    process.stdout.write(args.json ? `${JSON.stringify(ranked)}\n` : ranked.map((r) => `${r.score.toFixed(6)}\t${lineOf[r.corpusId]}\t${r.text}\n`).join(''));
  } finally {
    m.dispose();
  }
  return 0;
}

/** entities: each text's entities, one a line. */
export async function entitiesCommand(argv) {
  const args = parseArgv(argv, { flags: { ...COMMON_FLAGS, '--keep-o': ['keepO', true] }, valued: [...COMMON_VALUED, '--aggregation'], unknown: (a) => `entities: unknown option ${a} (see attnwasm entities --help)` });
  if (args.help) {
    process.stdout.write(ENTITIES_HELP);
    return 0;
  }
  if (args._.length && args.input !== undefined) throw new UsageError('entities: give the texts or --input, not both');
  const strategies = ['none', 'simple', 'first', 'average', 'max'];
  if (args.aggregation !== undefined && !strategies.includes(args.aggregation)) throw new UsageError(`--aggregation: expected none, simple, first, average or max, got '${args.aggregation}'`);
  const texts = args._.length ? args._ : await inputLines(args.input);
  const m = await loadTask(args, undefined, 'entities');
  try {
    if (m.constructor.name !== 'TokenClassifier') {
      throw new UsageError(`entities: ${args.model} is a ${m.constructor.name}, not a token classifier (its config.json names ${m.config?.architectures?.[0] ?? 'no architecture'}; see attnwasm classify-text)`);
    }
    const out = await m.classify(texts, { aggregationStrategy: args.aggregation ?? 'simple', ...(args.keepO ? { ignoreLabels: [] } : {}) });
    const lines = args.json ? out.map((r) => JSON.stringify(r))
      : out.flatMap((r, i) => r.map((e) => [i + 1, e.entity_group ?? e.entity, e.start, e.end, e.score.toFixed(6), e.word].join('\t')));
    process.stdout.write(lines.join('\n') + (lines.length ? '\n' : ''));
  } finally {
    m.dispose();
  }
  return 0;
}
