// Many items in one process (translate's phrases, classify's images, generate's prompts, embed's texts): the
// lines of --input FILE or stdin, a run over the items where one item's error is that item's line and the others
// go on, the progress bar on stderr and the summary at the end. Not here: what an item is (each command's own).
import { createInterface } from 'node:readline';
import { readFlagFile } from './shared.mjs';

/**
 * The lines of a batch (translate's phrases, generate's prompts), from
 * --input FILE or stdin: { items: {line, input}…, total } (total null while
 * stdin is typed). Typed lines stop coming once `signal` is aborted.
 */
export async function inputLines(args, signal) {
  const source = args.input ?? '-';
  let text;
  if (source !== '-') {
    text = await readFlagFile('--input', source, 'utf8');
  } else if (process.stdin.isTTY) {
    // Typed at a terminal: each line is an item as soon as it is entered.
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    signal?.addEventListener('abort', () => lines.close());
    async function* typed() {
      let n = 0;
      for await (const line of lines) yield { line: ++n, input: line };
    }
    return { items: typed(), total: null };
  } else {
    const chunks = [];
    for await (const c of process.stdin) chunks.push(c);
    text = Buffer.concat(chunks).toString('utf8');
  }
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const items = lines.map((input, i) => ({ line: i + 1, input }));
  return { items, total: items.filter((it) => it.input.trim()).length };
}

/** Seconds as the bar shows them: '4.2s', '13s', '2m05s', '1h02m'. */
const fmtTime = (s) => (s >= 3600 ? `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`
  : s >= 60 ? `${Math.floor(s / 60)}m${String(Math.floor(s) % 60).padStart(2, '0')}s` : `${s.toFixed(s < 10 ? 1 : 0)}s`);

/**
 * A one-line progress bar on stderr: count, rate and time left (with a known
 * total). Redrawn at most every 100 ms; note() prints a line above it.
 */
export function progressBar(enabled, total, noun) {
  const t0 = performance.now();
  let done = 0, shown = false, last = 0;
  const draw = (now) => {
    const s = (now - t0) / 1000;
    const rate = done / Math.max(s, 1e-9);
    let line;
    if (total) {
      const width = 24, filled = Math.round((width * done) / total);
      const left = rate > 0 ? fmtTime((total - done) / rate) : '?';
      line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${noun}  ${rate.toFixed(0)}/s  ${left} left`;
    } else {
      line = `${done} ${noun}  ${rate.toFixed(0)}/s  ${fmtTime(s)}`;
    }
    process.stderr.write(`\r\x1b[K${line}`);
    shown = true;
    last = now;
  };
  const clear = () => {
    if (shown) process.stderr.write('\r\x1b[K');
    shown = false;
  };
  return {
    tick() {
      done++;
      const now = performance.now();
      if (enabled && now - last >= 100) draw(now);
    },
    note(line) {
      const wasShown = shown;
      clear();
      process.stderr.write(`${line}\n`);
      if (wasShown) draw(performance.now());
    },
    clear,
  };
}

/**
 * Runs `work(item)` (which may throw) on each item of `items` (an array or an
 * async iterable), in order; `write(item, value, ms)` prints a result,
 * `writeError(item, error)` a failure's stdout line (if any); failures are
 * also noted on stderr as "<label>: <message>". An item for which `skip`
 * says true is no item: write(item, null) only. Yields to the event loop
 * every 100 ms (for a closed pipe, Ctrl-C); once `signal` is aborted no
 * further item starts. Returns { count, failed, ms }.
 */
export async function runBatch(items, { total, noun, label, skip = () => false, work, write, writeError, progress, signal }) {
  const bar = progressBar(progress, total, noun);
  const failed = [];
  let count = 0;
  const t0 = performance.now();
  let yielded = t0;
  for await (const item of items) {
    if (signal?.aborted) break;
    if (skip(item)) {
      write(item, null);
      continue;
    }
    const t = performance.now();
    try {
      const value = await work(item);
      write(item, value, performance.now() - t);
    } catch (e) {
      failed.push(item);
      writeError(item, e);
      bar.note(`attnwasm: ${label(item)}: ${e.message}`);
    }
    count++;
    bar.tick();
    if (performance.now() - yielded > 100) {
      await new Promise((resolve) => setImmediate(resolve));
      yielded = performance.now();
    }
  }
  bar.clear();
  return { count, failed, ms: performance.now() - t0 };
}

/** "attnwasm: 1000 phrases in 2.31 s (433/s): 998 translated, 2 failed (line 17, line 503)" */
export function summary({ count, failed, ms }, noun, verb, label) {
  const s = ms / 1000;
  const shown = failed.slice(0, 10).map(label).join(', ') + (failed.length > 10 ? ', …' : '');
  const rate = count && s > 0 ? ` (${(count / s).toFixed(count / s < 10 ? 1 : 0)}/s)` : '';
  return `attnwasm: ${count} ${count === 1 ? noun.replace(/s$/, '') : noun} in ${s.toFixed(2)} s${rate}: ${count - failed.length} ${verb}`
    + (failed.length ? `, ${failed.length} failed (${shown})` : '');
}
