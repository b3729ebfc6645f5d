// attnwasm inspect: a checkpoint described without reading its tensor data ('attnwasm/inspect'): what each file
// is, the family and model_type or why the runtime refuses it, the tensors by dtype, the parameters, what the
// weights take in memory for each dtype, the side files. A readable summary, or --json the whole report. Its
// own flags (what follows 'inspect'). Exit code 0; 1 when the runtime would refuse the checkpoint. It asks a
// runtime (aw.inspect: the native reader and a dry run of the loader: the loader's refusals, exact bytes).
import { init } from '../../bindings/index.js';
import { UsageError, parseArgv, readFlagFile } from './shared.mjs';

const HELP = `attnwasm inspect — a checkpoint described without reading its weights

Usage:
  attnwasm inspect <folder|url|file|organisation/name> [--json] [--config FILE]
          [--revision REV] [--no-probe]
      Reads only each weight file's header (its first bytes: a 2.5 GB file
      or a sharded checkpoint takes a moment) and prints what the folder
      holds and what each file is for, the model family and model_type (or
      why attnwasm would refuse it), the tensors by dtype, the parameter
      count, the bytes the weights take in memory as stored and as each
      dtype (f32, bf16, f16, q8, q4, q4a16; exactly what a load would keep)
      and the side files (tokenizer, chat template, generation config, preprocessor
      config). Exit status 1 when attnwasm would refuse the checkpoint.
      e.g. attnwasm inspect ./SmolLM2-135M-Instruct
           attnwasm inspect https://example.com/models/bge-small/ --json

Options:
  --json         the whole report as one JSON object (bindings/inspect.d.ts
                 CheckpointReport)
  --config FILE  a config.json for a checkpoint without one
  --revision REV with a hub id: a branch, tag or commit (default main)
  --no-probe     a base URL: ask only for the weights and config.json (no
                 request, and no 404, for each side file it may not have)
`;
const FLAGS = { '--json': ['json', true], '--no-probe': ['probe', false], '--help': ['help', true], '-h': ['help', true] };
const VALUED = ['--config', '--revision'];

/** Bytes as people read them: '1.61 MB', '2.47 GB', '940 B'. */
export function formatBytes(b) {
  if (b === null || b === undefined) return '?';
  if (b < 1e3) return `${b} B`;
  const [unit, d] = b >= 1e9 ? ['GB', 1e9] : b >= 1e6 ? ['MB', 1e6] : ['kB', 1e3];
  return `${(b / d).toFixed(b / d >= 100 ? 0 : 2)} ${unit}`;
}

/** A count as people read it: '134.5 M', '1.24 B', '40 000'. */
function formatCount(n) {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
}

/** The report as lines of text. */
export function summary(what, r) {
  const lines = [];
  const family = r.family ? `${r.family.noun} (${r.family.className})` : 'no family of attnwasm';
  lines.push(`${what}: ${family}${r.modelType ? `, model_type "${r.modelType}"` : ''}`);
  if (r.refused) lines.push(`refused: ${r.refused.code}: ${r.refused.message}`);
  const width = Math.max(...r.files.map((f) => f.name.length));
  lines.push(`files (${r.files.length}):`);
  for (const f of r.files) lines.push(`  ${f.name.padEnd(width)}  ${f.role.padEnd(21)}  ${formatBytes(f.bytes)}`);
  const byDtype = {};
  for (const t of r.tensors) byDtype[t.dtype] = (byDtype[t.dtype] ?? 0) + 1;
  lines.push(`tensors: ${r.tensors.length} (${Object.entries(byDtype).map(([d, n]) => `${n} ${d}`).join(', ') || 'none'})`
    + (r.parameters === null ? '' : `; parameters: ${formatCount(r.parameters)}`));
  if (r.memory) {
    lines.push(`weights in memory${r.memoryExact ? '' : ' (estimate)'}:`);
    for (const [as, m] of Object.entries(r.memory)) {
      if (!m) continue;
      const types = Object.entries(m.weightTypes).map(([t, b]) => `${t} ${formatBytes(b)}`).join(', ');
      lines.push(`  ${(as === 'stored' ? 'as stored' : as).padEnd(9)}  ${formatBytes(m.weightBytes).padStart(9)}  (${types})`);
    }
  }
  if (r.side) {
    const s = r.side;
    const one = (label, v) => `${label}: ${v ?? 'none'}`;
    lines.push(`side files: ${[one('tokenizer', s.tokenizer), one('chat template', s.chatTemplate), one('generation config', s.generationConfig),
      one('preprocessor config', s.preprocessorConfig)].join('; ')}${s.sentenceTransformers ? '; sentence-transformers: modules.json' : ''}`);
  }
  return lines;
}

/**
 * attnwasm inspect …: prints the report of one checkpoint; resolves to the exit code (1 when refused).
 * @param {string[]} argv what follows 'inspect'
 */
export async function inspectCommand(argv) {
  const args = parseArgv(argv, { flags: FLAGS, valued: VALUED, unknown: (a) => `inspect: unknown option ${a} (see attnwasm inspect --help)` });
  if (args.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (args._.length !== 1) throw new UsageError(`inspect: name one checkpoint (a folder, a URL, a file or a hub id), got ${args._.length}`);
  const options = {};
  if (args.config !== undefined) options.config = await readFlagFile('--config', args.config);
  if (args.revision !== undefined) options.revision = args.revision;
  if (args.probe === false) options.probe = false;
  const aw = await init({ threads: 1 });
  let r;
  try {
    r = await aw.inspect(args._[0], options);
  } finally {
    await aw.close();
  }
  process.stdout.write(args.json ? `${JSON.stringify(r)}\n` : `${summary(args._[0], r).join('\n')}\n`);
  return r.refused ? 1 : 0;
}
