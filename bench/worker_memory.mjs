// Peak tab memory and time to first token of a real-size checkpoint opened through 'attnwasm/worker' in
// headless Chromium (issue 33's target: a Qwen2.5-0.5B-shaped BF16 checkpoint starts writing within the load
// time plus one prefill, with the tab's peak memory at most 1.3× the weights' bytes). A random checkpoint of
// the shape (tools/make_checkpoint.mjs, BF16 like the hub's, with a byte-level BPE tokenizer from
// tools/make_tokenizer.mjs) is opened as the open page opens one, in a fresh browser per run:
//
//   url    rt.loadModel('<base URL>/') — the worker fetches config.json, the tokenizer files and
//          model.safetensors from tools/serve.mjs (a page without COOP/COEP: one thread)
//   file   the folder's files picked in an <input type=file> (disk-backed Files; the worker streams them)
//   iso    url again on a cross-origin-isolated page (2 threads), where
//          performance.measureUserAgentSpecificMemory() is available: the page's and the worker's memory
//   weights  url without the tokenizer: model.safetensors and config.json only (what the tokenizer adds)
//
// Figures: the renderer's RSS (the page and its worker live in one renderer process) sampled every 50 ms
// from /proc, and its peak as the larger of the samples and the kernel's high-water mark (VmHWM: the samples
// can miss a peak between them, and the kernel updates VmHWM lazily, missing pages given back without an
// unmap, as V8 and PartitionAlloc give them back),
// against the weights' bytes (lm.weightBytes); the whole browser's RSS (every process of this profile)
// at its sampled peak; the worker's wasm heap (memory(): its size, the bytes in use, their peak); time
// to first token = from loadModel() to the first token of a 32-token prompt (the load, then one prefill),
// beside a second prefill of the same prompt (no V8 tier-up left to pay); that token's id (the same in
// every run: the weights arrived intact).
//
// Usage: node bench/worker_memory.mjs [--shape qwen2.5-0.5b] [--dir <checkpoint folder>] [--runs url,file,iso,weights]
//        [--prompt 32] [--bindings <folder>] [--json]
// --bindings serves another copy of bindings/ (a candidate change to the loader, measured the same way).
// Without --dir the checkpoint is written into a temporary folder and removed afterwards (942 MiB for
// Qwen2.5-0.5B's shape, about 10 s). Not a test: nothing is asserted. Needs /usr/bin/chromium and
// playwright-core, as the browser tests do.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeMachine } from './lib.mjs';
import { SHAPES, writeCheckpoint } from '../tools/make_checkpoint.mjs';
import { writeTokenizer } from '../tools/make_tokenizer.mjs';
import { startServer } from '../tools/serve.mjs';
import { launchChromium } from '../tests/browser/chromium.mjs';

const argv = process.argv.slice(2);
const opt = (name, d) => { const i = argv.indexOf(name); return i < 0 ? d : argv[i + 1]; };
const SHAPE = opt('--shape', 'qwen2.5-0.5b');
const RUNS = opt('--runs', 'url,file,iso,weights').split(',');
const BINDINGS = opt('--bindings', null);
const PROMPT_TOKENS = Number(opt('--prompt', 32));
const JSON_OUT = argv.includes('--json');
const MiB = 2 ** 20;
const SAMPLE_MS = 50;

if (!SHAPES[SHAPE]) throw new Error(`--shape: one of ${Object.keys(SHAPES).join(', ')}, got ${SHAPE}`);
for (const r of RUNS) if (!['url', 'file', 'iso', 'weights'].includes(r)) throw new Error(`--runs: url, file, iso or weights, got ${r}`);

const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>attnwasm worker memory</title>
<script type="importmap">{ "imports": { "attnwasm/worker": "/bindings/worker.js" } }</script>
<input type="file" id="files" multiple>
<script type="module">
import { createWorker } from 'attnwasm/worker';
let rt = null, lm = null;
const prompt = (n) => Array.from({ length: n }, (_, i) => 300 + ((i * 7919) % 20000));
async function firstToken(n) {
  const t0 = performance.now();
  const g = lm.generate(prompt(n), { maxNewTokens: 1, stopTokens: [] });
  let id = null;
  for await (const t of g) id = t.id;
  return { ms: performance.now() - t0, id };
}
window.api = {
  async start() {
    rt = await createWorker();
    return { caps: rt.startCapabilities, isolated: crossOriginIsolated, memory: await rt.memory() };
  },
  /** Loads from a base URL or from the picked files, then one prefill: the times, the model's figures. */
  async open(what, n) {
    const weightsOnly = what.endsWith('model.safetensors');
    const source = what === 'file' ? document.getElementById('files').files : what;
    const t0 = performance.now();
    let events = 0;
    const config = weightsOnly ? await (await fetch(what.replace(/model\.safetensors$/, 'config.json'))).json() : undefined;
    lm = await rt.loadModel(source, { onProgress: () => { events++; }, config });
    const loadMs = performance.now() - t0;
    const first = await firstToken(n);
    const ttftMs = performance.now() - t0;
    const second = await firstToken(n);
    return { loadMs, prefillMs: first.ms, ttftMs, secondPrefillMs: second.ms, firstId: first.id, tokenizer: lm.tokenizer !== null,
      events, fileBytes: lm.fileBytes, weightBytes: lm.weightBytes,
      weightTypes: lm.weightTypes, memory: await rt.memory() };
  },
  async uaMemory() {
    if (typeof performance.measureUserAgentSpecificMemory !== 'function' || !crossOriginIsolated) return null;
    const m = await performance.measureUserAgentSpecificMemory();
    const by = {};
    for (const b of m.breakdown) {
      const scope = b.attribution.map((a) => a.scope).join('+') || 'shared';
      for (const t of b.types.length ? b.types : ['?']) by[scope + ' ' + t] = (by[scope + ' ' + t] ?? 0) + b.bytes;
    }
    return { bytes: m.bytes, by };
  },
  async close() { await rt.close(); rt = null; lm = null; },
};
window.ready = true;
</script>`;

/** VmRSS / VmHWM (bytes) of a process from /proc, or null once it is gone. */
function procMemory(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
  } catch {
    return null;
  }
}

/** The processes of the browser whose profile is `profile`: [{ pid, type }] (type 'browser' for the main one). */
function browserProcesses(profile) {
  const out = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let cmd;
    // (Zygote-forked processes rewrite their command line as one string: split on NULs and spaces alike.)
    try { cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replaceAll('\0', ' '); } catch { continue; }
    if (!cmd.includes(profile)) continue;
    const type = /--type=(\S+)/.exec(cmd)?.[1] ?? 'browser';
    out.push({ pid: Number(d), type });
  }
  return out;
}

/**
 * Samples every SAMPLE_MS, until stop(): each renderer's RSS (and its first value), the peak of the whole
 * browser's summed RSS. read() gives { renderers: pid → { first, peak, last, hwm }, browserPeak, browserLast }.
 */
function sampler(profile) {
  const renderers = new Map();
  const byType = {};
  let browserPeak = 0, browserLast = 0;
  const tick = () => {
    let sum = 0;
    for (const p of browserProcesses(profile)) {
      const m = procMemory(p.pid);
      if (!m) continue;
      sum += m.rss;
      const key = p.type === 'utility' ? 'utility' : p.type;
      byType[key] = Math.max(byType[key] ?? 0, m.hwm);
      if (p.type !== 'renderer') continue;
      const r = renderers.get(p.pid) ?? { first: m.rss, peak: 0 };
      r.peak = Math.max(r.peak, m.rss);
      r.last = m.rss;
      r.hwm = m.hwm;
      renderers.set(p.pid, r);
    }
    browserPeak = Math.max(browserPeak, sum);
    browserLast = sum;
  };
  tick();
  const timer = setInterval(tick, SAMPLE_MS);
  return {
    read() { tick(); return { renderers, browserPeak, browserLast, byType }; },
    stop() { clearInterval(timer); },
  };
}

/** The renderer that holds the page and its worker: the one whose peak is highest. */
const pageRenderer = (renderers) => [...renderers.entries()].sort((a, b) => b[1].hwm - a[1].hwm)[0];

async function measure(kind, { dir, servers }) {
  const isolated = kind === 'iso';
  const server = isolated ? servers.isolated : servers.plain;
  // ForceEagerMeasureMemory: measureUserAgentSpecificMemory() answers at once instead of at the next GC.
  const browser = await launchChromium({ args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--enable-blink-features=ForceEagerMeasureMemory'] });
  const s = sampler(browser.profile);
  try {
    const page = await browser.context.newPage();
    const problems = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${server.url}bench/page/index.html`);
    await page.waitForFunction(() => window.ready === true);
    if (kind === 'file') {
      await page.setInputFiles('#files', readdirSync(dir).filter((f) => !f.startsWith('.')).map((f) => join(dir, f)));
    }
    const start = await page.evaluate(() => window.api.start());
    await page.waitForTimeout(500);
    const before = pageRenderer(s.read().renderers);
    const beforeRss = before?.[1].last ?? 0;
    const source = kind === 'file' ? 'file' : kind === 'weights' ? `${server.url}ckpt/model.safetensors` : `${server.url}ckpt/`;
    const opened = await page.evaluate(([w, n]) => window.api.open(w, n), [source, PROMPT_TOKENS]);
    const during = s.read();
    const [pid, r] = pageRenderer(during.renderers);
    const ua = isolated ? await page.evaluate(() => window.api.uaMemory()) : null;
    // Settled: a second later, the load's transient buffers collected.
    await page.waitForTimeout(1500);
    const settled = procMemory(pid)?.rss ?? null;
    await page.evaluate(() => window.api.close());
    // Given back: the worker's heap goes once the page's garbage collector has dropped the worker.
    const cdp = await browser.context.newCDPSession(page);
    let closed = null;
    for (let i = 0; i < 10 && !(closed !== null && closed < beforeRss + 100 * MiB); i++) {
      await cdp.send('HeapProfiler.collectGarbage');
      await page.waitForTimeout(300);
      closed = procMemory(pid)?.rss ?? null;
    }
    return {
      kind, isolated, threads: start.caps.threads, build: start.caps.build, problems,
      ...opened,
      renderer: { before: beforeRss, peakSampled: r.peak, hwm: r.hwm, peak: Math.max(r.peak, r.hwm), settled, afterClose: closed },
      browser: { peakSampled: during.browserPeak, peakByType: during.byType },
      ua,
    };
  } finally {
    s.stop();
    await browser.close();
  }
}

const f = (b) => `${(b / MiB).toFixed(0)} MiB`;
const x = (b, w) => `${(b / w).toFixed(2)}×`;

async function main() {
  let dir = opt('--dir', null);
  let tmp = null;
  if (!dir) {
    tmp = mkdtempSync(join(tmpdir(), 'attnwasm-worker-memory-'));
    dir = join(tmp, 'ckpt');
    const t0 = performance.now();
    writeCheckpoint(SHAPE, dir);
    writeTokenizer(dir, SHAPES[SHAPE].vocab_size);
    console.error(`# ${SHAPE}: checkpoint written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } else if (!existsSync(join(dir, 'config.json'))) {
    throw new Error(`--dir ${dir}: no config.json (make one: node tools/make_checkpoint.mjs ${SHAPE} ${dir} && node tools/make_tokenizer.mjs ${dir} --vocab ${SHAPES[SHAPE].vocab_size})`);
  }
  const pageDir = mkdtempSync(join(tmpdir(), 'attnwasm-worker-memory-page-'));
  mkdirSync(join(pageDir, 'page'));
  writeFileSync(join(pageDir, 'page', 'index.html'), PAGE);
  const mounts = { '/ckpt/': dir, '/bench/': pageDir, ...(BINDINGS ? { '/bindings/': BINDINGS } : {}) };
  const servers = { plain: await startServer({ isolated: false, mounts }), isolated: await startServer({ isolated: true, mounts }) };
  const results = [];
  try {
    for (const kind of RUNS) results.push(await measure(kind, { dir, servers }));
  } finally {
    for (const sv of Object.values(servers)) await sv.close();
    rmSync(pageDir, { recursive: true, force: true });
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
  if (JSON_OUT) {
    console.log(JSON.stringify({ machine: describeMachine(), shape: SHAPE, promptTokens: PROMPT_TOKENS, results }, null, 2));
    return;
  }
  console.log(`# ${describeMachine()}`);
  console.log(`# ${SHAPE} (BF16, random weights), opened through attnwasm/worker in headless Chromium (${process.env.CHROMIUM ?? '/usr/bin/chromium'}); `
    + `prompt ${PROMPT_TOKENS} tokens${BINDINGS ? `; bindings/ served from ${BINDINGS}` : ''}`);
  for (const r of results) {
    const w = r.weightBytes;
    const label = { url: 'from its URL', file: 'from disk (<input type=file>)', iso: 'from its URL, cross-origin isolated',
      weights: 'from its URL, weights only (no tokenizer)' }[r.kind];
    console.log(`\n## ${label}: ${r.threads ? `${r.threads} threads` : '1 thread'} (${r.build})`);
    console.log(`weights ${f(w)} (${Object.entries(r.weightTypes).map(([k, v]) => `${k} ${f(v)}`).join(', ')}); file ${f(r.fileBytes)}`);
    console.log(`renderer RSS: ${f(r.renderer.before)} before the load; peak ${f(r.renderer.peak)} = ${x(r.renderer.peak, w)} the weights `
      + `(sampled every ${SAMPLE_MS} ms: ${f(r.renderer.peakSampled)}; VmHWM ${f(r.renderer.hwm)}); over its start ${f(r.renderer.peak - r.renderer.before)} = ${x(r.renderer.peak - r.renderer.before, w)}; `
      + `${f(r.renderer.settled)} settled after the load; ${f(r.renderer.afterClose)} after close()`);
    console.log(`whole browser (every process, sampled): peak ${f(r.browser.peakSampled)} = ${x(r.browser.peakSampled, w)}; `
      + `each kind's largest peak (VmHWM): ${Object.entries(r.browser.peakByType).map(([k, v]) => `${k} ${f(v)}`).join(', ')}`);
    console.log(`worker's wasm heap: ${f(r.memory.heapBytes)} (in use ${f(r.memory.inUseBytes)}, peak in use ${f(r.memory.peakInUseBytes)}, `
      + `working memory ${f(r.memory.workingMemoryBytes)}) = ${x(r.memory.heapBytes, w)}`);
    if (r.ua) {
      console.log(`measureUserAgentSpecificMemory: ${f(r.ua.bytes)} = ${x(r.ua.bytes, w)}; ${Object.entries(r.ua.by).map(([k, v]) => `${k} ${f(v)}`).join(', ')}`);
    }
    console.log(`time to first token: ${(r.ttftMs / 1000).toFixed(2)} s = load ${(r.loadMs / 1000).toFixed(2)} s (${(r.fileBytes / MiB / (r.loadMs / 1000)).toFixed(0)} MiB/s, `
      + `${r.events} progress events) + first prefill of ${PROMPT_TOKENS} tokens ${r.prefillMs.toFixed(0)} ms (a second one: ${r.secondPrefillMs.toFixed(0)} ms); `
      + `first token id ${r.firstId}${r.tokenizer ? '' : ' (no tokenizer loaded)'}`);
    if (r.problems.length) console.log(`page problems: ${r.problems.join('; ')}`);
  }
}

await main();
