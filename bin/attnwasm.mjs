#!/usr/bin/env node
// attnwasm command line: the entry. It reads the flags translate, classify, generate and chat share (anywhere on
// the line), picks the command's module from COMMANDS (bin/commands/<name>.mjs, loaded when used), prints the help
// and turns the command's end into the exit code: 0; 1 when an item or a turn failed; 2 for a usage error (before
// any work); 130 after Ctrl-C. What the commands do is theirs; what they share is in bin/commands/shared.mjs.
import { readFile } from 'node:fs/promises';
import { UsageError, parseArgv } from './commands/shared.mjs';

const HELP = `attnwasm — PyTorch-exact attention in WebAssembly: the demo models from Node

Usage:
  attnwasm translate "<English number words>" [--to fr|de] [--beam N] [--model FILE]
      Prints the French (default) or German spelling on one line. Numbers 0 to
      999 999 as people write them: "forty two", "one hundred and five",
      "a thousand", "eleven hundred", "1,234". Anything else is refused with
      a message on stderr and exit status 1.
      e.g. attnwasm translate "three hundred seventy-one" --to de
  attnwasm translate [--input FILE] [--json] [--to fr|de] [--beam N] [--model FILE]
      Without text: one phrase per line of FILE (or of stdin), one output line
      per input line: the translation, or an empty line for a phrase that
      fails (its line number and error go to stderr). Blank lines stay blank.
      e.g. attnwasm translate --to de < phrases.txt > german.txt
  attnwasm translate "<text>" --model DIR|HUB_ID [--src LANG] [--tgt LANG]
          [--beams N] [--max-new-tokens N] [--dtype TYPE] [--bounded-head]
          [--input FILE] [--json]
      Translates with a hub encoder-decoder (Marian opus-mt, M2M100 / NLLB,
      BART, mBART, T5) as transformers' generate() does with the folder's
      generation_config.json; one text per line of --input (or stdin)
      without text, progress on stderr. --src / --tgt: language codes of a
      multilingual model (NLLB 'fra_Latn', M2M100 'fr', Marian's >>fr<<
      target as 'fr'). --bounded-head: the float32 head keeps a q8 copy that
      greedy steps (--beams 1) read instead, the same tokens, faster (more
      memory: opus-mt 4.25 -> 4.73 bytes a parameter).
      e.g. attnwasm translate "How are you?" --model Helsinki-NLP/opus-mt-en-de
  attnwasm classify <image> [--model FILE] [--probs]
      Classifies a handwritten digit: a PNG (8-bit), a PGM (P2/P5) or a raw
      28×28 file of 784 bytes (255 = ink). Prints the digit (and with --probs
      the probability of each class).
  attnwasm classify <image|folder>... [--json] [--probs] [--model FILE]
      Several images, or folders (their .png, .pgm and .raw files, sorted):
      one line per image, "<file><TAB><digit>" (--probs: a TAB and the ten
      probabilities); a file that fails is reported on stderr.
  attnwasm generate "<prompt>" [--max-tokens N] [--temperature T] [--top-k K]
          [--top-p P] [--seed S] [--ignore-eos] [--echo] [--json]
          [--model FILE [--config config.json] [--tokenizer tokenizer.json]]
      Writes the model's continuation of the prompt as it is generated, then
      a newline. The package's model writes fortune cookies, one character at
      a time (printable ASCII, tab and newline; anything else in the prompt is
      refused). Greedy unless --temperature is above 0; when sampling without
      --seed, the seed drawn is printed on stderr (--seed repeats the run).
      Ctrl-C stops it: the text so far stays, exit status 130.
      e.g. attnwasm generate "Q: What is " --temperature 0.8 --seed 7
  attnwasm generate [--input FILE] [--json] [generate's options]
      Without a prompt: one prompt per line of FILE (or of stdin), one output
      line per input line: the continuation with backslash, newline, carriage
      return and tab written as \\\\, \\n, \\r and \\t, or an empty line for a
      prompt that fails. Blank lines stay blank. Every prompt is generated with
      the same seed (--seed, or one drawn and printed), so a line's output does
      not depend on the lines before it. Ctrl-C ends the batch at once.
      e.g. attnwasm generate --temperature 0.8 --seed 1 < prompts.txt
  attnwasm chat --model <folder|model.safetensors> [--config config.json]
          [--tokenizer tokenizer.json] [--tokenizer-config tokenizer_config.json]
          [--chat-template FILE] [--chat-template-kwargs JSON] [--system "<text>"]
          [--dtype q8] [--max-new-tokens N] [--temperature T] [--top-k K]
          [--top-p P] [--seed S] [--show-prompt] [--json]
      A conversation with a chat model: each line of stdin is a user message
      (typed, or piped: one turn per line; blank lines are skipped), the
      assistant's reply is streamed to stdout and ends with a newline, and the
      conversation is kept for the next turn. The prompt is the model's chat
      template (tokenizer_config.json's chat_template, a chat_template.jinja in
      the folder, or --chat-template) rendered as transformers renders it; a
      reply ends at the template's end-of-turn token (<|eot_id|>, <|im_end|>,
      <end_of_turn>, ...), the model's eos or --max-new-tokens (default 512).
      Ctrl-C stops the reply being written (what it wrote stays in the
      conversation); a second Ctrl-C, or one while waiting for input, exits
      with status 130. A turn that fails (the conversation no longer fits the
      model's positions, a template error) is reported on stderr and left out
      of the conversation; the exit status is then 1.
      e.g. attnwasm chat --model ./Qwen3-0.6B --dtype q8 --chat-template-kwargs '{"enable_thinking": false}'
  attnwasm embed --model <folder|model.safetensors> ["text"... | --input FILE] [--json]
          [--pooling M] [--normalize] [--dtype q8] [--batch-size N]
      One vector per text, as sentence-transformers computes it from the
      folder's files (attnwasm embed --help lists every flag).
      e.g. attnwasm embed --model ./all-MiniLM-L6-v2 --input docs.txt > vectors.txt
  attnwasm classify-text --model <folder> ["text"... | --input FILE] [--top-k N|all] [--pairs] [--json]
      Labels and scores of a sequence classifier (sentiment, NLI, toxicity), as
      transformers' text-classification pipeline (attnwasm classify-text --help).
      e.g. attnwasm classify-text --model ./distilbert-sst2 "I loved it"
  attnwasm rerank --model <folder> --query "<query>" [--top-k N] [--json] < docs.txt
      Documents (one per line) best first for the query, scored by a
      cross-encoder as sentence-transformers' CrossEncoder.rank (attnwasm rerank --help).
      e.g. attnwasm rerank --model ./ms-marco-MiniLM-L-6-v2 --query "how do cats sleep" < passages.txt
  attnwasm entities --model <folder> ["text"... | --input FILE] [--aggregation S] [--json]
      Named entities, one a line, as transformers' token-classification pipeline
      finds them (attnwasm entities --help).
      e.g. attnwasm entities --model ./bert-base-NER "My name is Wolfgang and I live in Berlin."
  attnwasm classify-image --model <folder> <image>... [--top-k N|all] [--json]
      Labels and scores of a ViT, DeiT or DINOv2 image classifier, as transformers'
      image-classification pipeline (attnwasm classify-image --help).
      e.g. attnwasm classify-image --model ./vit-base-patch16-224 cat.jpg
  attnwasm embed-image --model <folder> <image>... [--normalize] [--json]
      One vector per image: the pooler output, or DINOv2's class token
      (attnwasm embed-image --help).
      e.g. attnwasm embed-image --model ./dinov2-small a.png b.jpg > vectors.txt
  attnwasm transcribe --model <folder> <audio>... [--language xx] [--task translate]
          [--timestamps] [--chunk-length S] [--json]
      Speech to text with a Whisper checkpoint, as transformers' ASR pipeline
      (WAV, FLAC; attnwasm transcribe --help).
      e.g. attnwasm transcribe --model openai/whisper-tiny --language en talk.wav
  attnwasm inspect <folder|url|file|organisation/name> [--json]
      What a checkpoint holds, read from its headers only: its files, the
      model family and model_type (or why attnwasm refuses it), tensors,
      parameters, the bytes its weights take as each dtype, its side files
      (attnwasm inspect --help).
  attnwasm cache ls | rm <organisation/name>   the models downloaded by hub id
      (attnwasm cache --help). Every --model also takes a hub id
      ('Qwen/Qwen2.5-0.5B-Instruct', with --revision REV): downloaded once,
      then read from the cache, also offline.
  attnwasm --help | --version

Options:
  --to LANG        target language of translate: fr (French) or de (German)
  --beam N         beam size (1 = greedy, the default; a hub translator: its
                   generation_config.json's num_beams); --beams is the same
  --src LANG, --tgt LANG
                   translate --model: the source and target languages
  --model FILE     a model file other than the one shipped in the package, a
                   folder, or a hub id 'organisation/name' (cached)
  --revision REV   with a hub id: a branch, tag or commit (default main)
  --probs          classify: also print the class probabilities
  --input FILE     translate, generate: read the lines from FILE ('-' = stdin)
  --max-tokens N   generate: tokens to generate at most (default 200)
  --max-new-tokens N
                   the same (chat's default: 512)
  --temperature T  generate: 0 = greedy (the default); higher = more random
  --top-k K        generate: sample among the K most likely tokens (0 = all)
  --top-p P        generate: ... among the most likely tokens whose
                   probabilities sum to P (1 = all)
  --seed S         generate: the sampling seed, an integer (default: random)
  --ignore-eos     generate: go on past the model's end-of-text token (chat:
                   past the end-of-turn tokens)
  --echo           generate: write the prompt before its continuation
  --ids            generate: the prompts are token ids ("1,2,3"), for a model
                   without a tokenizer (whose output is ids too)
  --config FILE    generate, chat --model: a Hugging Face checkpoint's
                   config.json (default: the one in the model's folder)
  --tokenizer FILE generate, chat --model: its tokenizer.json (text in, text out)
  --tokenizer-config FILE
                   generate, chat --model: its tokenizer_config.json (special
                   tokens, chat template)
  --dtype TYPE     generate, chat --model: keep the weights as f32, bf16, f16,
                   q8, q4 or q4a16 (default: as stored)
  --chat-template FILE
                   chat: the template to use (a chat_template.jinja), instead
                   of the folder's chat_template.jinja or tokenizer_config.json's
  --chat-template-kwargs JSON
                   chat: template variables, a JSON object, e.g.
                   '{"enable_thinking": false}' (Qwen3 without thinking)
  --system TEXT    chat: a system message to start the conversation with
  --show-prompt    chat: write each turn's prompt, as the template rendered it,
                   to stderr before the reply (--json: a "prompt" field)
  --json           one JSON object per line: translate {line, input, text,
                   tokens, ms}, classify {file, label, probabilities, ms};
                   generate one {index, id, text, ms} per token, then {prompt,
                   text, ids, stopReason, seed, tokens, promptTokens, ms,
                   firstTokenMs, tokensPerSecond} (the rate after the first
                   token); in a batch only that last object, with line;
                   chat one such object per turn, with turn and user (no
                   prompt unless --show-prompt: the rendered prompt);
                   a failed item {line|file, input|prompt, error: {code, message}}
  --progress, --no-progress
                   a progress bar on stderr (count, rate, time left); by
                   default only when stderr is a terminal

Many items (stdin, --input, several images, a folder) end with a summary on
stderr; the exit code is 1 if any item failed, 2 for a usage error, 130 when
generate or chat is stopped with Ctrl-C.
`;

/**
 * The commands by name, in the order the help and the usage error list them. `line`: the module reads the
 * flags the entry parsed from the whole line (LINE_FLAGS, LINE_VALUED) and what follows the command's name,
 * run(args, rest); otherwise the module parses what follows its name itself, run(argv), and the name must come
 * first. Each module is imported when its command runs.
 */
const COMMANDS = {
  translate: { line: true, run: async (args, rest) => (await import('./commands/translate.mjs')).translateCommand(args, rest) },
  classify: { line: true, run: async (args, rest) => (await import('./commands/classify.mjs')).classifyCommand(args, rest) },
  generate: { line: true, run: async (args, rest) => (await import('./commands/generate.mjs')).generateCommand(args, rest) },
  chat: { line: true, run: async (args, rest) => (await import('./commands/chat.mjs')).chatCommand(args, rest) },
  embed: { line: false, run: async (argv) => (await import('./commands/embed.mjs')).embedCommand(argv) },
  'classify-text': { line: false, run: async (argv) => (await import('./commands/text_tasks.mjs')).classifyTextCommand(argv) },
  rerank: { line: false, run: async (argv) => (await import('./commands/text_tasks.mjs')).rerankCommand(argv) },
  entities: { line: false, run: async (argv) => (await import('./commands/text_tasks.mjs')).entitiesCommand(argv) },
  'classify-image': { line: false, run: async (argv) => (await import('./commands/image_tasks.mjs')).classifyImageCommand(argv) },
  'embed-image': { line: false, run: async (argv) => (await import('./commands/image_tasks.mjs')).embedImageCommand(argv) },
  transcribe: { line: false, run: async (argv) => (await import('./commands/transcribe.mjs')).transcribeCommand(argv) },
  cache: { line: false, run: async (argv) => (await import('./commands/cache.mjs')).cacheCommand(argv) },
  inspect: { line: false, run: async (argv) => (await import('./commands/inspect.mjs')).inspectCommand(argv) },
};

// The flags of the commands that share the entry's parse: those that take a value, and those that set a key.
const LINE_VALUED = ['--to', '--beam', '--beams', '--src', '--tgt', '--model', '--revision', '--input', '--max-tokens', '--max-new-tokens', '--temperature', '--top-k', '--top-p', '--seed', '--config',
  '--tokenizer', '--tokenizer-config', '--dtype', '--chat-template', '--chat-template-kwargs', '--system'];
const LINE_FLAGS = {
  '--help': ['help', true], '-h': ['help', true], '--version': ['version', true], '-v': ['version', true],
  '--progress': ['progress', true], '--no-progress': ['progress', false],
  ...Object.fromEntries(['--probs', '--json', '--ids', '--echo', '--ignore-eos', '--show-prompt', '--bounded-head'].map((f) => [f, [f.slice(2), true]])),
};

/** "a, b or c" */
const listed = (names) => `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;

/** Runs the command of `argv` (process.argv without node and the script); resolves to the exit code. */
async function main(argv) {
  if (Object.hasOwn(COMMANDS, argv[0]) && !COMMANDS[argv[0]].line) return COMMANDS[argv[0]].run(argv.slice(1));
  const args = parseArgv(argv, { flags: LINE_FLAGS, valued: LINE_VALUED, unknown: (a) => `unknown option ${a} (see --help)` });
  if (args.version) {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    console.log(pkg.version);
    return 0;
  }
  const [cmd, ...rest] = args._;
  if (args.help || !cmd) {
    process.stdout.write(HELP);
    return 0;
  }
  // A command that parses its own flags, named after other flags, is no command here (as 'attnwasm --json embed').
  if (!Object.hasOwn(COMMANDS, cmd) || !COMMANDS[cmd].line) throw new UsageError(`unknown command '${cmd}' (expected ${listed(Object.keys(COMMANDS))}; see --help)`);
  return COMMANDS[cmd].run(args, rest);
}

// A reader that stops early (`| head`) closes the pipe: stop quietly.
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e) => {
  console.error(`attnwasm: ${e.message}`);
  process.exitCode = e.code === 'ERR_USAGE' || e.code === 'ERR_INVALID_TYPE' || e.code === 'ERR_OUT_OF_RANGE' ? 2 : 1;
});
