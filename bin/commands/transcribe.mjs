// attnwasm transcribe: speech to text with a Whisper hub folder (src/models/whisper.h, a SpeechRecognizer), as
// transformers' automatic-speech-recognition pipeline transcribes: audio files (WAV, FLAC: attnwasm/audio's
// readAudio, 16 kHz mono), up to 30 s in one window, longer ones by long-form generation or, with --chunk-length,
// the pipeline's chunks. Reads its own flags (what follows the command); progress on stderr.
import { init } from '../../bindings/index.js';
import { readAudio } from '../../bindings/audio/index.js';
import { UsageError, count, parseArgv, loadOptions, errorJson } from './shared.mjs';

const HELP = `attnwasm transcribe — speech to text with Whisper

Usage:
  attnwasm transcribe --model <folder> <audio>... [--language xx] [--task translate]
          [--timestamps | --word-timestamps] [--chunk-length S] [--beams N] [--json]
      One line per file on stdout: "file<TAB>text" (--timestamps: then one
      line per segment, "<TAB>[start - end]<TAB>text"; --word-timestamps: one
      per word; --json: {file, text, chunks?, language?} per line). Files: WAV (PCM 8-32 bits, float) or FLAC,
      any rate and channels (averaged, resampled to 16 kHz). The text is
      transformers' ASR pipeline's on the same audio and weights.
      e.g. attnwasm transcribe --model openai/whisper-tiny --language en talk.wav

Options:
  --model PATH         a Whisper folder (config.json, model.safetensors,
                       preprocessor_config.json, tokenizer.json,
                       generation_config.json) or a hub id (required)
  --revision REV       with a hub id: a branch, tag or commit (default main)
  --language xx        the spoken language (code 'en', name 'english'); detected
                       from the first 30 s when not given (multilingual models)
  --task T             transcribe (default) or translate (to English)
  --timestamps         segment timestamps
  --word-timestamps    word timestamps, from the cross-attention alignment heads
                       (generation_config.json alignment_heads; without them the
                       file fails, naming them)
  --chunk-length S     the pipeline's chunked mode: S-second chunks (e.g. 30)
  --stride-length S    their overlap each side (default a sixth of the chunk)
  --beams N            beam search with N beams (default: generation_config's)
  --max-new-tokens N   tokens per window at most
  --dtype TYPE         keep the weights as f32, bf16, f16, q8, q4 or q4a16
  --threads N|auto     threads for the model (default 1)
  --json               a JSON object per line
`;

const VALUED = ['--model', '--revision', '--dtype', '--threads', '--language', '--task', '--chunk-length', '--stride-length', '--beams', '--max-new-tokens'];
const FLAGS = { '--json': ['json', true], '--timestamps': ['timestamps', true], '--word-timestamps': ['words', true], '--help': ['help', true], '-h': ['help', true] };

function seconds(args, flag) {
  const v = args[flag];
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!(n > 0) || !Number.isFinite(n)) throw new UsageError(`--${flag}: expected a number of seconds > 0, got '${v}'`);
  return n;
}

/** A text on one line: its line breaks (a model may write them) as spaces. */
const oneLine = (s) => s.trim().replace(/\s*[\r\n]+\s*/g, ' ');
const stamp = (t) => (t === null || t === undefined ? '?' : t.toFixed(2));

/** transcribe: each file's text. Returns the exit code: 1 when a file failed. */
export async function transcribeCommand(argv) {
  const args = parseArgv(argv, { flags: FLAGS, valued: VALUED, unknown: (a) => `transcribe: unknown option ${a} (see attnwasm transcribe --help)` });
  if (args.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (args.model === undefined) throw new UsageError('transcribe: --model is needed: a Whisper folder or hub id');
  if (!args._.length) throw new UsageError('transcribe: give one or more audio files (WAV, FLAC)');
  if (args.task !== undefined && !['transcribe', 'translate'].includes(args.task)) throw new UsageError(`--task: expected transcribe or translate, got '${args.task}'`);
  const options = {};
  if (args.language !== undefined) options.language = args.language;
  if (args.task !== undefined) options.task = args.task;
  if (args.timestamps && args.words) throw new UsageError('--word-timestamps: give it or --timestamps, not both');
  if (args.timestamps) options.returnTimestamps = true;
  if (args.words) options.returnTimestamps = 'word';
  const chunk = seconds(args, 'chunk-length'), stride = seconds(args, 'stride-length');
  if (stride !== undefined && chunk === undefined) throw new UsageError('--stride-length: needs --chunk-length');
  if (chunk !== undefined) options.chunkLengthS = chunk;
  if (stride !== undefined) options.strideLengthS = stride;
  const beams = count(args, 'beams', 1), maxNew = count(args, 'max-new-tokens', 1);
  if (beams !== undefined) options.numBeams = beams;
  if (maxNew !== undefined) options.maxNewTokens = maxNew;
  const aw = await init({ threads: args.threads === 'auto' ? 'auto' : count(args, 'threads', 1) ?? 1 });
  const m = await aw.loadModel(args.model, await loadOptions(args));
  if (!(m instanceof aw.SpeechRecognizer)) {
    const name = m.constructor.name;
    m.dispose();
    throw new UsageError(`transcribe: ${args.model} loads as a ${name}; a Whisper checkpoint (config.json model_type "whisper") is needed`);
  }
  const tty = !!process.stderr.isTTY;
  let failed = 0;
  try {
    for (const file of args._) {
      try {
        const audio = await readAudio(file);
        const onProgress = (p) => process.stderr.write(`attnwasm: ${file}: ${p.done}/${p.total ?? '?'} windows, ${p.seconds.toFixed(1)} s${tty ? '\r' : '\n'}`);
        const r = await m.transcribe(audio, { ...options, onProgress });
        if (tty) process.stderr.write('\n');
        if (args.json) process.stdout.write(`${JSON.stringify({ file, ...r })}\n`);
        else {
          process.stdout.write(`${file}\t${oneLine(r.text)}\n`);
          for (const c of args.timestamps || args.words ? r.chunks ?? [] : []) process.stdout.write(`\t[${stamp(c.timestamp[0])} - ${stamp(c.timestamp[1])}]\t${oneLine(c.text)}\n`);
        }
      } catch (e) {
        failed++;
        if (args.json) process.stdout.write(`${JSON.stringify({ file, error: errorJson(e) })}\n`);
        process.stderr.write(`attnwasm: ${file}: ${e.message}\n`);
      }
    }
  } finally {
    m.dispose();
  }
  return failed ? 1 : 0;
}
