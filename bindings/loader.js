// attnwasm's loader: loading the build init() chose (plan.js: threads,
// relaxed SIMD) — fetching and compiling the .wasm (wasm_load.js), starting
// the Emscripten glue, falling back to another build — and createInit(),
// with which each package entry (index.js, inline.js) makes its init().
//
// The single-thread glue is imported statically: its top-level await keeps
// require('attnwasm') failing with Node's clear ESM error (docs/install.md, CommonJS).
// The pthreads glue and the relaxed-SIMD builds' glues are imported by
// index.js in init() only when they are used.
import createAttnwasmModule from '../dist/attnwasm_core.mjs';
import { AttnWasm, saveWorkerGlobal, unrefWorkers } from './runtime.js';
import { AttnWasmError, typeError, describe } from './errors.js';
import { isNode, checkBool, checkInteger, checkOptions, checkBytes } from './checks.js';
import { SIMD_SUPPORTED, WasmLoadFailure, compileFirst, showUrl, startGlue } from './wasm_load.js';
import { planRelaxed, planThreads } from './plan.js';
import * as boundary from './boundary.js';

/**
 * How long init() waits, by default, for the pthreads build's workers to
 * start before it falls back to the single-thread build. Measured start-up:
 * ~0.1 s in Node and headless Chromium on 2 cores; the bound is for a worker
 * script that never arrives (a stalled request), not a slow device.
 */
const THREAD_START_TIMEOUT_MS = 10000;

/**
 * The URL a pool worker starts from. Vite inlines small assets, the worker
 * script among them, as data: URLs; a worker started from a data: URL runs at
 * an opaque origin and cannot import the glue, so it starts from a blob: URL
 * of the same script (the page's origin) instead. Node's Worker takes a file:
 * URL object, a browser's the URL string.
 */
function workerScript(url) {
  if (isNode) return url;
  const s = String(url);
  if (!s.startsWith('data:')) return s;
  const comma = s.indexOf(',');
  const body = s.slice(comma + 1);
  const script = s.slice(0, comma).endsWith(';base64')
    ? Uint8Array.from(atob(body), (c) => c.charCodeAt(0))
    : decodeURIComponent(body);
  return URL.createObjectURL(new Blob([script], { type: 'text/javascript' }));
}

/**
 * Starts the pthreads build — glue factory `createMt`, its compiled
 * `wasmModule` (from `wasmWhere`), `files` { mtWorker, mtGlue } — with
 * `threads - 1` pool workers. Resolves to { core } once every worker has
 * loaded; to { cause } (and stops the workers) when one cannot start: its
 * script fails to load or is refused (a blocked URL, a
 * Content-Security-Policy, a 404), `new Worker` throws, or the workers are
 * not all up within `timeoutMs`; to { failure } (a WasmLoadFailure) when the
 * module does not link with the glue. Never hangs, never rejects.
 */
async function startPthreads(createMt, wasmModule, wasmWhere, files, threads, timeoutMs) {
  const workerName = showUrl(files.mtWorker);
  const workerUrl = workerScript(files.mtWorker);
  const moduleArg = {
    awPoolSize: threads - 1,
    // Each worker imports the glue by this URL (a string: it is posted to the
    // worker), not relative to itself, so a bundler may move the files.
    mainScriptUrlOrBlob: String(files.mtGlue),
    locateFile: (path, dir) => (path.endsWith('.worker.js') ? workerUrl : dir + path),
  };
  const saved = saveWorkerGlobal();
  let ready;
  try {
    // The glue creates the pool workers synchronously inside this call.
    ready = startGlue(createMt, moduleArg, wasmModule, wasmWhere);
  } catch (e) {
    saved.restore();
    return { cause: `creating a Web Worker for ${workerName} failed: ${e && e.message ? e.message : e}` };
  }
  const workers = [...(moduleArg.PThread?.unusedWorkers ?? [])];
  const stopWorkers = () => { for (const w of workers) try { w.terminate(); } catch { /* already gone */ } };
  let timer;
  const failed = new Promise((resolve) => {
    const fail = (cause) => resolve({ cause });
    for (const w of workers) {
      const onError = (e) => fail(`the worker script ${workerName} failed to load${e && e.message ? `: ${e.message}` : ''}`);
      if (typeof w.addEventListener === 'function') w.addEventListener('error', onError);
      else w.on('error', onError);
      if (isNode) {
        // The glue's own handler rethrows from inside an EventEmitter
        // listener, which would end the Node process: keep it, minus the throw.
        let glueOnError = null;
        Object.defineProperty(w, 'onerror', {
          configurable: true,
          get: () => glueOnError,
          set: (fn) => { glueOnError = (e) => { try { fn(e); } catch { /* reported by onError */ } }; },
        });
      }
    }
    timer = setTimeout(() => fail(`the pthread workers did not start within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    const outcome = await Promise.race([ready.then((core) => ({ core }), (failure) => ({ failure })), failed]);
    if (!outcome.core) {
      stopWorkers();
      // A module that comes up after all must not keep its workers either.
      ready.then((late) => { for (const w of [...late.PThread.unusedWorkers, ...late.PThread.runningWorkers]) w.terminate(); }, () => {});
      return outcome;
    }
    boundary.setThreads(outcome.core, threads);
    // The Worker global the glue uses for later threads (Node: worker_threads).
    outcome.core.awWorkerGlobal = globalThis.Worker;
    return outcome;
  } finally {
    clearTimeout(timer);
    saved.restore();
  }
}

// ---- init(): which .wasm, from where; what a failure says ----

const ST_WASM = 'attnwasm_core.wasm';
const MT_WASM = 'attnwasm_core_mt.wasm';
const ST_RS_WASM = 'attnwasm_core_rs.wasm';
const MT_RS_WASM = 'attnwasm_core_mt_rs.wasm';

/** The dist/ files of a pthreads build in a set of locations(): { wasm, worker, glue }. */
function pthreadsFiles(set, relaxed) {
  return relaxed
    ? { wasm: set.mtRsWasm, mtWorker: set.mtRsWorker, mtGlue: set.mtRsGlue }
    : { wasm: set.mtWasm, mtWorker: set.mtWorker, mtGlue: set.mtGlue };
}

/**
 * The one-sentence fix of an ERR_WASM_LOAD for `file`, by where the .wasm
 * came from (`origin`: 'wasmUrl', 'wasmBinary', 'embedded', 'installed' — the
 * package's own file in Node — or 'bundled' — the package's file as a page
 * or a bundle locates it).
 */
function loadFix(file, origin, failure) {
  if (failure.kind === 'no-simd') {
    return 'Fix: run it on an engine with WebAssembly SIMD (Chrome/Edge 91+, Firefox 89+, Safari 16.4+, Node 16.4+).';
  }
  switch (origin) {
    case 'wasmUrl':
      return `Fix: init({ wasmUrl }) must be the URL of ${file} itself, of this attnwasm version (node_modules/attnwasm/dist/${file}).`;
    case 'wasmBinary':
      return `Fix: init({ wasmBinary }) must hold the bytes of ${file} of this attnwasm version (node_modules/attnwasm/dist/${file}).`;
    case 'embedded':
      return 'Fix: reinstall attnwasm (its dist/attnwasm_inline.mjs is damaged).';
    case 'installed':
      return `Fix: reinstall attnwasm (its dist/${file} is missing or damaged), or pass init({ wasmBinary }).`;
    default:
      return `Fix: copy node_modules/attnwasm/dist/*.wasm next to your bundle, or pass init({ wasmUrl }) with the URL where ${file} is served (README, "Install and bundle").`;
  }
}

/** AttnWasmError ERR_WASM_LOAD from the failed attempts (WasmLoadFailure) to load `file`. */
function wasmLoadError(file, failures, origin) {
  const [first] = failures;
  const tried = failures.length === 1
    ? `from ${first.where}: ${first.problem}`
    : failures.map((f) => `from ${f.where} (${f.problem})`).join(' nor ');
  return new AttnWasmError('ERR_WASM_LOAD', `${file} did not load ${tried}. ${loadFix(file, origin, first)}`, {
    url: origin === 'wasmBinary' || origin === 'embedded' ? undefined : first.where,
    status: first.status,
    cause: first,
  });
}

/** The attempts of a failed load in one phrase: 'where: problem; where: problem'. */
const listFailures = (failures) => failures.map((f) => `${f.where}: ${f.problem}`).join('; ');

/**
 * Compiles the first source that loads and starts `factory`'s glue with it
 * (a single-thread build): { core }, or { failures } (WasmLoadFailure, every
 * attempt) when none loads or the module does not link with the glue.
 */
async function trySingleThread(factory, sources, compiling = compileFirst(sources)) {
  let compiled;
  try {
    compiled = await compiling;
  } catch (e) {
    if (!e.failures) throw e;
    return { failures: e.failures };
  }
  try {
    return { core: await startGlue(factory, {}, compiled.module, compiled.where) };
  } catch (e) {
    if (e instanceof WasmLoadFailure) return { failures: [e] };
    throw e;
  }
}

/** The baseline single-thread build from `sources`; throws ERR_WASM_LOAD naming every attempt. */
async function startSingleThread(sources, origin) {
  const r = await trySingleThread(createAttnwasmModule, sources);
  if (r.failures) throw wasmLoadError(ST_WASM, r.failures, origin);
  return r.core;
}

/**
 * Starts the relaxed-SIMD single-thread build from the package's files:
 * { core }, or { cause } when it does not load and the baseline build should
 * take over.
 */
async function startRelaxedSingleThread(entry) {
  // The glue is a dynamic import: its fetch and the .wasm's fetch and
  // compilation run at once instead of one after the other.
  const sources = entry.locations().sets.map((s) => ({ url: s.rsWasm }));
  const compiling = compileFirst(sources);
  compiling.catch(() => {});   // awaited below, or left when the glue fails
  let factory;
  try {
    ({ default: factory } = await entry.importRelaxed());
  } catch (e) {
    return { cause: `the relaxed-SIMD glue did not load (${e && e.message ? e.message : e})` };
  }
  const r = await trySingleThread(factory, sources, compiling);
  return r.core ? r : { cause: `${ST_RS_WASM} did not load (${listFailures(r.failures)})` };
}

/**
 * Starts a pthreads build (`relaxed`: the relaxed-SIMD one): { core }, or
 * { cause, buildFailed } when it cannot and another build should take over.
 * buildFailed: the build itself failed (its glue or its .wasm did not load,
 * or they do not fit together), so the other pthreads build may still work;
 * otherwise its workers did not start, and the single-thread build takes
 * over. A .wasm the caller named (`custom`, baseline only) that does not load
 * throws ERR_WASM_LOAD instead of falling back.
 */
async function startThreaded(entry, custom, threads, timeoutMs, relaxed) {
  const file = relaxed ? MT_RS_WASM : MT_WASM;
  // The glue (a dynamic import) and the .wasm load at once.
  const sets = entry.locations().sets.map((s) => pthreadsFiles(s, relaxed));
  const sources = custom ? [custom.source] : sets.map((s) => ({ url: s.wasm }));
  const compiling = compileFirst(sources);
  compiling.catch(() => {});   // awaited below, or left when the glue fails
  let createMt;
  try {
    ({ default: createMt } = await (relaxed ? entry.importRelaxedPthreads() : entry.importPthreads()));
  } catch (e) {
    return { cause: `the ${relaxed ? 'relaxed-SIMD ' : ''}pthreads glue did not load (${e && e.message ? e.message : e})`, buildFailed: true };
  }
  let compiled;
  try {
    compiled = await compiling;
  } catch (e) {
    if (!e.failures) throw e;
    if (custom) throw wasmLoadError(file, e.failures, custom.origin);
    return { cause: `${file} did not load (${listFailures(e.failures)})`, buildFailed: true };
  }
  const files = sets[custom ? 0 : compiled.index];
  const started = await startPthreads(createMt, compiled.module, compiled.where, files, threads, timeoutMs);
  if (started.failure) {
    if (custom) throw wasmLoadError(file, [started.failure], custom.origin);
    return { cause: `${file} from ${started.failure.where}: ${started.failure.problem}`, buildFailed: true };
  }
  return started;
}
/** The caller's wasmUrl / wasmBinary: { source, origin, build } or null; `build` is the one `threads` asks for. */
function customWasm(options, requested) {
  const build = requested === undefined || requested === 1 ? 'single-thread' : 'pthreads';
  if (options.wasmBinary !== undefined) {
    return { source: { bytes: checkBytes(options.wasmBinary, 'wasmBinary'), where: 'init({ wasmBinary })' }, origin: 'wasmBinary', build };
  }
  if (options.wasmUrl !== undefined) {
    if (typeof options.wasmUrl !== 'string' && !(options.wasmUrl instanceof URL)) {
      throw typeError(`wasmUrl: expected a string or a URL, got ${describe(options.wasmUrl)}`);
    }
    return { source: { url: options.wasmUrl }, origin: 'wasmUrl', build };
  }
  return null;
}

/**
 * Makes the init() of a package entry. `entry`:
 *   name              its import specifier, for messages ('attnwasm', 'attnwasm/inline')
 *   locations()       index.js: { sets, moved }: the dist/ files' URLs { wasm, mtWasm,
 *                     mtWorker, mtGlue, rsWasm, mtRsWasm, mtRsWorker, mtRsGlue },
 *                     candidate sets tried in order, and whether a bundler moved this
 *                     code away from them
 *   importPthreads()  index.js: import() of the pthreads glue
 *   importRelaxed(), importRelaxedPthreads()
 *                     index.js: import() of the relaxed-SIMD builds' glues
 *   embedded()        inline.js, instead of the four above: a promise of the
 *                     single-thread baseline build's .wasm bytes
 */
export function createInit(entry) {
  const optionNames = entry.embedded
    ? ['threads', 'relaxedSimd', 'workingMemory']
    : ['wasmUrl', 'wasmBinary', 'threads', 'threadStartTimeoutMs', 'relaxedSimd', 'workingMemory'];
  return async function init(options = {}) {
    checkOptions(options, optionNames, 'init');
    const requested = options.threads;
    if (requested !== undefined && requested !== 'auto' && typeof requested !== 'number') {
      throw typeError(`threads: expected an integer or 'auto', got ${describe(requested)}`);
    }
    const relaxedRequested = checkBool(options.relaxedSimd, 'relaxedSimd', true);
    const timeoutMs = options.threadStartTimeoutMs === undefined
      ? THREAD_START_TIMEOUT_MS
      : checkInteger(options.threadStartTimeoutMs, 'threadStartTimeoutMs', { min: 1, max: 600000 });
    if (options.workingMemory !== undefined) checkInteger(options.workingMemory, 'workingMemory');
    const custom = customWasm(options, requested);
    let plan = requested === undefined && custom
      ? { threads: 1, reason: 'wasmUrl/wasmBinary given without threads (single-thread build)' }
      : await planThreads(requested);
    if (entry.embedded && plan.threads > 1) {
      plan = { threads: 1, reason: `${entry.name} embeds the single-thread build only (import 'attnwasm' for threads)` };
    }
    let relaxed = planRelaxed(relaxedRequested, entry, custom);
    let core;
    if (plan.threads > 1) {
      // The relaxed pthreads build first; if it fails as a build, the baseline
      // pthreads build; if its workers do not start, one thread (the baseline
      // pthreads build's workers would not start either).
      for (const rs of relaxed.relaxed ? [true, false] : [false]) {
        const started = await startThreaded(entry, custom?.build === 'pthreads' ? custom : null, plan.threads, timeoutMs, rs);
        if (started.core) {
          core = started.core;
          unrefWorkers(core);
          break;
        }
        if (rs && started.buildFailed) {
          relaxed = { relaxed: false, reason: `${started.cause}; running the baseline build` };
          continue;
        }
        plan = { threads: 1, reason: `${started.cause}; running the single-thread build` };
        break;
      }
    }
    if (!core && relaxed.relaxed) {
      const started = await startRelaxedSingleThread(entry);
      if (started.core) core = started.core;
      else relaxed = { relaxed: false, reason: `${started.cause}; running the baseline build` };
    }
    if (!core) {
      // A wasmUrl/wasmBinary given with threads > 1 names the pthreads build's
      // .wasm: the single-thread one then comes from the package.
      if (custom?.build === 'single-thread') {
        core = await startSingleThread([custom.source], custom.origin);
      } else if (entry.embedded) {
        core = await startSingleThread([{ bytes: await entry.embedded(), where: `the .wasm embedded in ${entry.name}` }], 'embedded');
      } else {
        const { sets, moved } = entry.locations();
        core = await startSingleThread(sets.map((s) => ({ url: s.wasm })), isNode && !moved ? 'installed' : 'bundled');
      }
    }
    const rt = new AttnWasm(core);
    rt._threadPlan = plan;
    rt._relaxedPlan = relaxed;
    // The working-memory budget (docs/memory.md); its range is the native rule's.
    if (options.workingMemory !== undefined) {
      try {
        boundary.setWorkBudget(rt, options.workingMemory);
      } catch (e) {
        await rt.close();
        throw e;
      }
    }
    return rt;
  };
}
