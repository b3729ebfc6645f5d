// attnwasm cache: the models downloaded by hub id (bindings/hub/), listed and removed; and what the other
// commands add when --model is a hub id (--revision, a progress line that tells cached bytes from downloaded).
//   attnwasm cache ls [--json] [--cache DIR]
//   attnwasm cache rm <org/name>... [--cache DIR]
import { openCache, looksLikeHubId } from '../../bindings/hub/index.js';
import { UsageError, parseArgv } from './shared.mjs';

const HELP = `attnwasm cache — the models downloaded by hub id

Usage:
  attnwasm cache ls [--json] [--cache DIR]
      One line per cached model: its hub id, the bytes its files take, the
      number of complete files, and the commit each revision pointed at
      (--json: one object per line).
  attnwasm cache rm <organisation/name>... [--cache DIR]
      Removes the models' files (every revision).

A command's --model takes a hub id ('Qwen/Qwen2.5-0.5B-Instruct'): its files
are downloaded once, into the cache, and read from it after that, also with
no network. --revision picks a branch, tag or commit (default main).

Options:
  --cache DIR   the cache folder (default: ATTNWASM_CACHE, else
                ~/.cache/attnwasm/hub). The layout is the hub's
                (models--org--name/blobs, refs, snapshots): a
                huggingface_hub cache folder works too.
  --json        ls: JSON lines
Environment: ATTNWASM_CACHE (the default folder), HF_ENDPOINT (a mirror of the hub).
`;

const MB = 1e6;
const size = (b) => (b >= 1e9 ? `${(b / 1e9).toFixed(2)} GB` : `${(b / MB).toFixed(1)} MB`);

const FLAGS = { '--help': ['help', true], '-h': ['help', true], '--json': ['json', true] };

/** attnwasm cache …: the exit code. */
export async function cacheCommand(argv) {
  const args = parseArgv(argv, { flags: FLAGS, valued: ['--cache'], unknown: (a) => `cache: unknown option ${a} (see attnwasm cache --help)` });
  const [sub, ...ids] = args._;
  if (args.help || !sub) {
    process.stdout.write(HELP);
    return 0;
  }
  const cache = openCache(args.cache);
  if (sub === 'ls' || sub === 'list') {
    if (ids.length) throw new UsageError(`cache ls: unexpected argument '${ids[0]}'`);
    const models = await cache.list();
    for (const m of models) {
      const revs = Object.entries(m.revisions).map(([r, c]) => `${r}=${c.slice(0, 8)}`).join(' ');
      process.stdout.write(args.json ? `${JSON.stringify(m)}\n` : `${m.id}\t${size(m.bytes)}\t${m.files} file(s)\t${revs}\n`);
    }
    if (!args.json) process.stderr.write(`attnwasm: ${models.length} model(s) in ${await cache.where()}\n`);
    return 0;
  }
  if (sub === 'rm' || sub === 'delete') {
    if (!ids.length) throw new UsageError('cache rm: name the models to remove (organisation/name)');
    let missing = 0;
    for (const id of ids) {
      if (await cache.delete(id)) process.stderr.write(`attnwasm: removed ${id}\n`);
      else { missing++; process.stderr.write(`attnwasm: ${id} is not in the cache\n`); }
    }
    return missing ? 1 : 0;
  }
  throw new UsageError(`cache: unknown command '${sub}' (expected ls or rm)`);
}

/**
 * loadModel's options for a --model that is a hub id: --revision, and on a terminal a progress line on stderr
 * (bytes from the cache and downloaded). {} for any other --model (a --revision then is a usage error).
 */
export function hubLoadOptions(args) {
  if (!looksLikeHubId(args.model)) {
    if (args.revision !== undefined) throw new UsageError('--revision goes with a --model that is a hub id (organisation/name)');
    return {};
  }
  const o = args.revision === undefined ? {} : { revision: args.revision };
  if (!process.stderr.isTTY) return o;
  let shown = 0;
  o.onProgress = ({ loaded, total, cached = 0, downloaded = 0 }) => {
    const now = performance.now();
    if (now - shown < 100 && loaded !== total) return;
    shown = now;
    process.stderr.write(`\r\x1b[K${args.model}: ${size(loaded)}${total ? ` of ${size(total)}` : ''} (${size(downloaded)} downloaded, ${size(cached)} from the cache)`);
    if (loaded === total) process.stderr.write('\r\x1b[K');
  };
  return o;
}
