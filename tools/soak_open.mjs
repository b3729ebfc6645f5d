#!/usr/bin/env node
// The open page's soak (issue 37): web/open/ in headless Chromium, served by tools/serve.mjs, loads a real-size
// checkpoint from picked files again and again, beside busy loops, and counts the steps that never end. The
// checkpoint is SmolLM2-135M's shape with random BF16 weights in 2 shards and their index (~270 MB,
// tools/make_checkpoint.mjs), with the byte-level tokenizer and the ChatML chat template of the open page's test
// (tools/make_tokenizer.mjs), written once and kept. Two loops, through the page's own controls:
//  1. picked files: the folder's files given to the Files input, Load, until the page says it is loaded; N times;
//  2. a working session: pick and Load, a chat turn to its end, a long chat turn stopped while it writes, a plain
//     completion to its end; M times, each load replacing the model the last one chatted with.
// A step past its deadline is a hang: the page's and the worker's state are recorded, a fresh page takes over,
// the loop goes on. Long (8 minutes at the defaults on 2 cores) and a matter of chance, so never part of `npm
// test`: the hangs it looks for come from timing (a garbage collection at the wrong moment: docs/reliability.md,
// "Reads that never settled") and show in a long run or not at all. Exits 1 on any hang, failed step, or console
// error or warning of the page.
//
// Usage: npm run soak:open -- [--loads N] [--cycles M] [--busy K] [--deadline-ms D] [--gc-ms G] [--dir PATH] [--json OUT]
//   defaults: 100 loads, 50 cycles, 2 busy loops (`node -e "for(;;){}"`), 60 000 ms a step, no forced collections
//   (--gc-ms G: Chromium with --expose-gc, the runtime's worker collecting garbage every G ms), the checkpoint in
//   $TMPDIR/attnwasm-soak-open (written on the first run, ~30 s); --json: the summary and every load's time.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from './serve.mjs';
import { SHAPES, writeCheckpoint } from './make_checkpoint.mjs';
import { writeTokenizer } from './make_tokenizer.mjs';
import { launchChromium, watchedPage } from '../tests/browser/chromium.mjs';

const SHAPE = 'smollm2-135m';
/** Written last into the checkpoint's folder: the folder is complete (and this script's to reuse). */
const STAMP = 'soak_open.json';

// ------------------------------------------------------------------ options
const USAGE = 'usage: node tools/soak_open.mjs [--loads N] [--cycles M] [--busy K] [--deadline-ms D] [--gc-ms G] [--dir PATH] [--json OUT]';
let opt;
try {
  ({ values: opt } = parseArgs({
    options: {
      loads: { type: 'string', default: '100' }, cycles: { type: 'string', default: '50' }, busy: { type: 'string', default: '2' },
      'deadline-ms': { type: 'string', default: '60000' }, 'gc-ms': { type: 'string', default: '0' }, dir: { type: 'string', default: join(tmpdir(), 'attnwasm-soak-open') },
      json: { type: 'string' }, help: { type: 'boolean', default: false },
    },
  }));
} catch (e) {
  console.error(`${e.message}\n${USAGE}`);
  process.exit(2);
}
if (opt.help) {
  console.log(USAGE);
  process.exit(0);
}
const count = (name, min) => {
  const n = Number(opt[name]);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name}: expected an integer ≥ ${min}, got '${opt[name]}'`);
    process.exit(2);
  }
  return n;
};
const LOADS = count('loads', 0), CYCLES = count('cycles', 0), BUSY = count('busy', 0), DEADLINE = count('deadline-ms', 1000);
const GC_MS = count('gc-ms', 0);
const DIR = resolve(opt.dir);

// ------------------------------------------------------------------ the checkpoint, written once
/** The folder's files, but the stamp: what a user picks. */
const checkpointFiles = () => readdirSync(DIR).filter((f) => f !== STAMP).sort().map((f) => join(DIR, f));

function ensureCheckpoint() {
  if (existsSync(join(DIR, STAMP))) return false;
  if (existsSync(DIR) && readdirSync(DIR).length) {
    console.error(`--dir ${DIR}: not empty and not a checkpoint this script wrote (no ${STAMP}): give an empty or new folder`);
    process.exit(2);
  }
  const partial = `${DIR}.partial`;  // renamed when complete: an interrupted write is never reused
  rmSync(partial, { recursive: true, force: true });
  const { files, bytes } = writeCheckpoint(SHAPE, partial, { shards: 2 });
  writeTokenizer(partial, SHAPES[SHAPE].vocab_size);
  writeFileSync(join(partial, STAMP), JSON.stringify({ shape: SHAPE, shards: files, bytes }, null, 2));
  rmSync(DIR, { recursive: true, force: true });  // empty here, if it exists
  renameSync(partial, DIR);
  return true;
}

// ------------------------------------------------------------------ busy loops, never left running
const busy = [];
const stopBusy = () => { for (const c of busy.splice(0)) c.kill('SIGKILL'); };
process.on('exit', stopBusy);
let cleanup = async () => {};
let stopping = false;  // a signal came: the loops end instead of counting the closed browser as failures
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    stopping = true;
    stopBusy();
    console.error(`\n${sig}: stopped`);
    const bye = () => process.exit(130);
    Promise.race([cleanup(), new Promise((r) => { setTimeout(r, 5000); })]).then(bye, bye);
  });
}

// ------------------------------------------------------------------ the page and its steps
/** A step that did not end by its deadline. */
class Hang extends Error {}
/** A step that ended, but not as it should. */
class Failure extends Error {}

const problems = [];  // console errors and warnings, page errors: '<page n>: text'
let pageNo = 0;
/** What the last page's worker said to the forced collections ('every N ms', 'off', or why not). */
let gcForced = 'off';

async function openPage(context, url) {
  const n = ++pageNo;
  const { page, problems: seen } = await watchedPage(context);
  seen.push = (...items) => problems.push(...items.map((p) => `page ${n}: ${p}`));
  const forced = new Promise((res) => {
    page.on('worker', (w) => {
      if (!w.url().endsWith('/bindings/worker_main.js')) return;
      w.evaluate((ms) => { if (typeof gc !== 'function') return 'no gc()'; setInterval(() => gc(), ms); return `every ${ms} ms`; }, GC_MS).then(res, (e) => res(e.message));
    });
  });
  await page.goto(url);
  await waitFor(page, 'the page ready', () => document.body.dataset.ready);
  const ready = await page.evaluate(() => document.body.dataset.ready);
  if (ready !== 'true') throw new Failure(`the page did not start: body[data-ready] = ${ready}; ${problems.slice(-3).join('; ')}`);
  if (GC_MS) {
    gcForced = await Promise.race([forced, new Promise((res) => { setTimeout(() => res('no worker_main.js worker seen'), DEADLINE); })]);
    if (!gcForced.startsWith('every')) throw new Error(`--gc-ms: the runtime's worker does not collect garbage: ${gcForced}`);
  }
  return page;
}

/** Waits until fn() (run in the page) is truthy; past the deadline, a Hang naming `what`. */
async function waitFor(page, what, fn, arg) {
  try {
    await page.waitForFunction(fn, arg, { timeout: DEADLINE, polling: 50 });
  } catch (e) {
    if (e.name === 'TimeoutError') throw new Hang(`${what}: not within ${DEADLINE} ms`);
    throw e;
  }
}

/** The page's and the worker's state, for a step that hung (as tests/browser/open_page.serial.mjs prints it). */
async function pageState(page) {
  const timeout = new Promise((r) => { setTimeout(() => r({ page: 'silent for 10 s' }), 10_000); });
  return Promise.race([timeout, page.evaluate(async () => ({
    loaded: document.body.dataset.loaded, stats: document.getElementById('stats').dataset.state,
    summary: document.getElementById('source-summary').textContent, progress: document.getElementById('progress-text').textContent,
    loadError: document.getElementById('load-error').textContent, loadDisabled: document.getElementById('load').disabled,
    demo: window.openDemo?.state && { ...window.openDemo.state, messages: window.openDemo.state.messages.length, checkpoint: undefined },
    worker: await Promise.race([window.openDemo.runtime.memory().then((m) => `answers: heap ${m.heapBytes}`, (err) => `rejects: ${err.message}`),
      new Promise((r) => { setTimeout(() => r('silent for 5 s'), 5000); })]),
  })).catch((e) => ({ page: `evaluate failed: ${e.message}` }))]);
}

/** Picks the checkpoint's files and waits for the page to read their headers (what fits). */
async function pick(page, files) {
  // choose() writes the summary anew: blank it so that the last pick's summary is not taken for this one's. And
  // empty the input, as a page does after reading it: Chromium fires no 'change' for the same files picked again.
  await page.evaluate(() => {
    document.getElementById('source-summary').textContent = '';
    document.getElementById('pick-files').value = '';
  });
  await page.setInputFiles('#pick-files', files, { timeout: DEADLINE });
  await waitFor(page, 'the headers read', () => /weight file\(s\)/.test(document.getElementById('source-summary').textContent)
    || !document.getElementById('source-error').classList.contains('hidden'));
  const error = await page.evaluate(() => (document.getElementById('source-error').classList.contains('hidden') ? null : document.getElementById('source-error').textContent));
  if (error) throw new Failure(`the files picked were refused: ${error}`);
}

/** Clicks Load and waits for the page's loaded state; returns the load's milliseconds (click to loaded). */
async function load(page) {
  // load() sets body[data-loaded] to 'loading' only after disposing the last model: clear the last load's 'true'.
  await page.evaluate(() => { delete document.body.dataset.loaded; });
  const t0 = performance.now();
  await page.click('#load', { timeout: DEADLINE });
  await waitFor(page, 'the load', () => ['true', 'error'].includes(document.body.dataset.loaded));
  const ms = performance.now() - t0;
  const s = await page.evaluate(() => ({ loaded: document.body.dataset.loaded, error: document.getElementById('load-error').textContent, kind: window.openDemo.state.kind }));
  if (s.loaded !== 'true') throw new Failure(`the load failed: ${s.error}`);
  if (s.kind !== 'CausalLM') throw new Failure(`loaded a ${s.kind}, expected a CausalLM`);
  return ms;
}

/**
 * One generation through the page's form: `mode` 'chat' or 'complete', up to `maxTokens`; with `stopAt`, Stop is
 * clicked once that many tokens are written. Returns the page's state when #stats says it ended.
 */
async function generate(page, { mode, maxTokens, prompt, stopAt = 0 }) {
  await page.check(mode === 'chat' ? '#mode-chat' : '#mode-complete', { timeout: DEADLINE });
  await page.fill('#max-tokens', String(maxTokens), { timeout: DEADLINE });
  await page.fill('#prompt', prompt, { timeout: DEADLINE });
  await page.evaluate(() => { delete document.getElementById('stats').dataset.state; });  // the last run's 'done'
  await page.click('#send', { timeout: DEADLINE });
  if (stopAt) {
    await waitFor(page, `${stopAt} tokens of a ${mode}`, (n) => window.openDemo.state.tokens >= n, stopAt);
    await page.click('#stop', { timeout: DEADLINE });
  }
  await waitFor(page, `the end of a ${mode}${stopAt ? ' after Stop' : ''}`, () => ['done', 'error'].includes(document.getElementById('stats').dataset.state));
  const s = await page.evaluate(() => window.openDemo.state);
  const want = stopAt ? ['aborted'] : ['length', 'stop'];
  if (!want.includes(s.stopReason) || s.tokens > maxTokens || (!stopAt && s.stopReason === 'length' && s.tokens !== maxTokens)) {
    throw new Failure(`a ${mode}${stopAt ? ' stopped' : ''} ended with ${s.stopReason} (${s.endText}) after ${s.tokens} of ${maxTokens} tokens`);
  }
  return s;
}

/** One session of loop 2: load, chat to the end, a long chat stopped, a completion to the end. Returns the load's ms. */
async function session(page, files) {
  await pick(page, files);
  const ms = await load(page);
  await generate(page, { mode: 'chat', maxTokens: 16, prompt: 'What is attention?' });
  await generate(page, { mode: 'chat', maxTokens: 2000, prompt: 'Tell me a long story.', stopAt: 3 });
  await generate(page, { mode: 'complete', maxTokens: 16, prompt: 'Once upon a time' });
  return ms;
}

// ------------------------------------------------------------------ the loops
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN; };
const max = (xs) => (xs.length ? Math.max(...xs) : NaN);
const sec = (ms) => `${(ms / 1000).toFixed(2)} s`;

/**
 * Runs `n` iterations of `body(page)` (which returns a load's ms) on one page; a Hang or a Failure is recorded
 * and a fresh page takes over. Returns { ok, hung, failed, loadMs, events }.
 */
async function loop(name, n, context, url, body) {
  const r = { ok: 0, hung: 0, failed: 0, loadMs: [], events: [] };
  let page = await openPage(context, url);
  const t0 = performance.now();
  for (let i = 1; i <= n; i++) {
    try {
      r.loadMs.push(await body(page));
      r.ok++;
    } catch (e) {
      if (stopping) throw e;
      const hung = e instanceof Hang;
      if (hung) r.hung++; else r.failed++;
      const event = { loop: name, iteration: i, kind: hung ? 'hang' : 'failure', message: e.message, state: await pageState(page) };
      r.events.push(event);
      console.log(`${name} ${i}: ${event.kind}: ${e.message}\n  the page: ${JSON.stringify(event.state)}`);
      await Promise.race([page.close({ runBeforeUnload: false }), new Promise((res) => { setTimeout(res, 10_000); })]).catch(() => {});
      page = await openPage(context, url);
    }
    if (i % 10 === 0 || i === n) {
      console.log(`${name}: ${i}/${n}, ok ${r.ok}, hung ${r.hung}, failed ${r.failed}; load median ${sec(median(r.loadMs))}, `
        + `max ${sec(max(r.loadMs))}, ${((performance.now() - t0) / 60_000).toFixed(1)} min`);
    }
  }
  await page.close();
  return r;
}

function cpuName() {
  try {
    const m = execFileSync('lscpu', { encoding: 'utf8' }).match(/^Model name:\s*(.+)$/m);
    if (m) return `${m[1].trim()}, ${cpus().length} CPUs`;
  } catch { /* no lscpu: Node's name */ }
  return `${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} CPUs`;
}

async function main() {
  const t0 = performance.now();
  const wrote = ensureCheckpoint();
  const files = checkpointFiles();
  const stamp = JSON.parse(readFileSync(join(DIR, STAMP), 'utf8'));
  console.log(`checkpoint: ${SHAPE}, ${stamp.shards.length} shards, ${(stamp.bytes / 1e6).toFixed(0)} MB, ${wrote ? 'written to' : 'kept in'} ${DIR}`);

  for (let i = 0; i < BUSY; i++) busy.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  const server = await startServer({ port: 0 });
  // Signals are this script's (above): it stops the busy loops, then closes the browser and removes its profile.
  const browser = await launchChromium({ viewport: { width: 1200, height: 1500 }, extraArgs: GC_MS ? ['--js-flags=--expose-gc'] : [],
    handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false });
  cleanup = async () => { await browser.close(); await server.close(); };
  const url = `${server.url}web/open/`;
  let picked, cycles, about;
  try {
    const probe = await openPage(browser.context, url);
    about = await probe.evaluate(() => ({ userAgent: navigator.userAgent, threads: document.querySelector('[data-cap="threads"]')?.textContent }));
    await probe.close();
    console.log(`${cpuName()}; ${BUSY} busy loop(s); ${about.userAgent.match(/Chrome\/[\d.]+/)?.[0]}, threads in the worker: ${about.threads}; `
      + `garbage collections forced in the worker: ${gcForced}; deadline ${DEADLINE} ms a step`);
    picked = await loop('picked files', LOADS, browser.context, url, async (page) => { await pick(page, files); return load(page); });
    cycles = await loop('load-chat-stop-complete', CYCLES, browser.context, url, (page) => session(page, files));
  } finally {
    stopBusy();
    await cleanup();
  }

  const all = [...picked.loadMs, ...cycles.loadMs];
  const summary = {
    date: new Date().toISOString(), cpu: cpuName(), busyLoops: BUSY, gcEveryMs: GC_MS || null, deadlineMs: DEADLINE, browser: about.userAgent, workerThreads: about.threads,
    checkpoint: { shape: SHAPE, dir: DIR, shards: stamp.shards, bytes: stamp.bytes },
    picked: { runs: LOADS, ok: picked.ok, hung: picked.hung, failed: picked.failed, loadMedianMs: median(picked.loadMs), loadMaxMs: max(picked.loadMs) },
    cycles: { runs: CYCLES, ok: cycles.ok, hung: cycles.hung, failed: cycles.failed, loadMedianMs: median(cycles.loadMs), loadMaxMs: max(cycles.loadMs) },
    loadMs: { picked: picked.loadMs.map(Math.round), cycles: cycles.loadMs.map(Math.round) },
    events: [...picked.events, ...cycles.events], problems, minutes: (performance.now() - t0) / 60_000,
  };
  if (opt.json) writeFileSync(opt.json, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`\nsoak of the open page, ${summary.date}, ${summary.minutes.toFixed(1)} min; ${summary.cpu}; ${BUSY} busy loop(s)`
    + `${GC_MS ? `; garbage collected in the worker every ${GC_MS} ms` : ''}`);
  for (const [name, r] of [['picked files', summary.picked], ['load-chat-stop-complete', summary.cycles]]) {
    console.log(`  ${name}: ${r.ok}/${r.runs} ok, ${r.hung} hung, ${r.failed} failed; load median ${sec(r.loadMedianMs)}, max ${sec(r.loadMaxMs)}`);
  }
  console.log(`  every load: ${all.length}, median ${sec(median(all))}, max ${sec(max(all))}`);
  console.log(`  console errors and page errors: ${problems.length}${problems.map((p) => `\n    ${p}`).join('')}`);
  const bad = picked.hung + picked.failed + cycles.hung + cycles.failed + problems.length;
  console.log(bad ? 'FAIL' : 'PASS');
  return bad ? 1 : 0;
}

main().then((code) => { process.exitCode = code; }, (e) => {
  stopBusy();
  if (!stopping) console.error(e);
  process.exitCode = 1;
});
