// Load time and memory of the two demo models, each in fresh Node processes:
// init(), read the file, then time loadTranslator / loadClassifier from the
// bytes (parse, convert, fill the parameters, build the model), and report
// the process's peak resident memory (maxRSS), the wasm heap, and JS
// ArrayBuffer bytes after the load. Medians of N processes per model.
// Usage: node bench/load.mjs [N=5]        (one process: node bench/load.mjs --one translator|vit)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, dirname } from 'node:path';
import { median } from './lib.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const FILES = { translator: 'models/translator/translator.safetensors', vit: 'models/vit/vit.safetensors' };

if (process.argv[2] === '--one') {
  const which = process.argv[3];
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads: 1 });
  const bytes = new Uint8Array(readFileSync(join(ROOT, FILES[which])));
  const rss0 = process.resourceUsage().maxRSS;
  const t0 = performance.now();
  const m = which === 'translator' ? await aw.loadTranslator(bytes) : await aw.loadClassifier(bytes);
  const ms = performance.now() - t0;
  const mem = process.memoryUsage();
  console.log(JSON.stringify({ ms, maxRssKB: process.resourceUsage().maxRSS, rssBeforeKB: rss0, wasmHeap: aw.memory().heapBytes, wasmInUse: aw.memory().inUseBytes, arrayBuffers: mem.arrayBuffers, fileBytes: bytes.byteLength }));
  m.dispose();
} else {
  const N = Number(process.argv[2] ?? 5);
  for (const which of Object.keys(FILES)) {
    const runs = [];
    for (let i = 0; i < N; i++) {
      const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--one', which], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(r.stderr);
      runs.push(JSON.parse(r.stdout.trim().split('\n').at(-1)));
    }
    const f = (k) => median(runs.map((r) => r[k]));
    console.log(`${which}: file ${(runs[0].fileBytes / 1024).toFixed(0)} KB; load ${f('ms').toFixed(1)} ms (median of ${N} processes); ` +
      `peak RSS ${(f('maxRssKB') / 1024).toFixed(1)} MB (${((f('maxRssKB') - f('rssBeforeKB')) / 1024).toFixed(1)} MB over the process before the load); ` +
      `wasm heap ${(f('wasmHeap') / 1048576).toFixed(1)} MB, in use ${(f('wasmInUse') / 1048576).toFixed(2)} MB; JS ArrayBuffers ${(f('arrayBuffers') / 1048576).toFixed(2)} MB`);
  }
}
