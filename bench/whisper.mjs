// Whisper at whisper-tiny's shape (39 M parameters) and whisper-base's (73 M): attnwasm's SpeechRecognizer against
// onnxruntime-web 1.30 (wasm EP, float32, Optimum's encoder_model + decoder_model + decoder_with_past_model, as
// transformers.js runs them) on the same random weights, in one Node process, 1 thread, engines alternated per
// round so that a noisy machine slows both alike. Not a test. Both engines run the same search: Whisper's short-form
// generate (bindings/speech_generate.js: init tokens, Whisper's logits processors) over the shared seq2seq search
// (bindings/seq2seq_generate.js) — attnwasm through SpeechRecognizer#generate, onnxruntime-web through the same
// planSpeechGeneration + generateSeq2Seq over a stepper written here.
//
// Workloads (issue 41), one thread, 30 s of a fixed signal (a chirp and noise, tests/data/whisper_signals.mjs):
//   encoder        one 30 s window: attnwasm's stepper begin (speechBegin: the conv stem, the encoder and every
//                  decoder layer's cross-attention keys / values) against onnxruntime-web's encoder_model (the
//                  encoder alone; its cross keys / values come in decoder_model's first step) — target >= 1.5x;
//                  also "encoder + first step" on both sides, the same work
//   transcription  the features of the 30 s (attnwasm/audio's WhisperFeatureExtractor, the same JS for both) →
//                  encoder → the 4 init tokens (<|startoftranscript|> <|en|> <|transcribe|> <|notimestamps|>) →
//                  100 greedy tokens with Whisper's processors (generate(…, { language: 'en', maxNewTokens: 100 })) —
//                  target >= 2x; the sequences must agree (every disagreement is printed)
//   memory         attnwasm's wasm heap and the process's RSS after each of 10 consecutive transcribe() calls on 10
//                  different 30 s signals (a fresh process): must be flat
//   real time      audio seconds / wall seconds of transcribe() on 30 s, 100 tokens, at 1 and 2 threads, each engine
//                  and thread count in its own process
//   first call     each engine's first transcription in a fresh process (V8 tiers: Liftoff first), and the next two
// plus where attnwasm's time goes (features, begin, the steps, the search in JS) and each engine's GFLOP/s on the
// encoder against this run's SIMD peak. Random weights whose <|endoftext|> logit is 0 (export_whisper_onnx.py):
// greedy never stops early, every transcription is exactly 100 tokens (checked).
//
// onnxruntime-web's session.run is asynchronous and the search's stepper is synchronous, so its sessions live in a
// worker thread of this process and the stepper waits on Atomics for each call (the search and Whisper's
// processors stay on the main thread, as in attnwasm's case); the cost of that hand-off is measured and printed.
//
// Needs bench/onnx/whisper (/usr/bin/python3 bench/export_whisper_onnx.py) and bench/node_modules (npm ci).
// Usage: node bench/whisper.mjs [--rounds 3] [--json] [--model tiny|base] [--max-new-tokens 100] [--no-memory]
//        [--no-first-call] [--no-rtf] [--dtypes bf16,q8 (real time also for attnwasm with these weight types, against
//        the same float32 onnxruntime-web: faster, not float32's numbers)] [--cpu N (the CPU the 1-thread figures run
//        pinned to; bench/lib.mjs pinToOneCpu)]; node bench/whisper.mjs --render saved.json (the report of a --json run);
//        node bench/whisper.mjs --profile [--model tiny|base] (the encoder's parts through the public layers)
import { execFileSync } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, workerData, parentPort, Worker, MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { BENCH_DIR, describeMachine, median, nodeChild, peakProbe, pinToOneCpu, readBandwidth } from './lib.mjs';
import { generateSeq2Seq } from '../bindings/seq2seq_generate.js';
import { planSpeechGeneration } from '../bindings/speech_generate.js';
import { WhisperFeatureExtractor } from '../bindings/audio/index.js';
import { signal } from '../tests/data/whisper_signals.mjs';

const DIR = join(BENCH_DIR, 'onnx', 'whisper');
const HERE = fileURLToPath(import.meta.url);
const MODELS = ['tiny', 'base'];
const SECONDS = 30, RATE = 16000, FRAMES = 3000, SOURCE = 1500;

function args() {
  const a = process.argv.slice(2);
  const value = (k, d) => { const i = a.indexOf(k); return i >= 0 ? a[i + 1] : d; };
  const rounds = Number(value('--rounds', 3));
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError(`--rounds: expected an integer >= 1, got ${value('--rounds')}`);
  const maxNewTokens = Number(value('--max-new-tokens', 100));
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1) throw new RangeError(`--max-new-tokens: expected an integer >= 1, got ${value('--max-new-tokens')}`);
  const model = value('--model', null);
  if (model !== null && !MODELS.includes(model)) throw new RangeError(`--model: expected ${MODELS.join(' or ')}, got ${model}`);
  const dtypes = value('--dtypes', '').split(',').filter(Boolean);
  for (const d of dtypes) if (!['bf16', 'f16', 'q8', 'q4'].includes(d)) throw new RangeError(`--dtypes: expected a list of bf16, f16, q8, q4, got ${d}`);
  return {
    dtype: value('--dtype', 'f32'), dtypes,
    rounds, maxNewTokens, models: model ? [model] : MODELS, json: a.includes('--json'),
    memory: !a.includes('--no-memory'), firstCall: !a.includes('--no-first-call'), rtf: !a.includes('--no-rtf'),
    render: value('--render', null), profile: a.includes('--profile'), child: value('--child', null), engine: value('--engine', null), threads: Number(value('--threads', 1)),
  };
}

const f1g = (x) => x.toFixed(1);
const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));

/** 30 s of speech-like audio number k: a chirp and noise (k shifts the chirp's range and the noise's seed). */
function audio(k = 0) {
  const n = SECONDS * RATE;
  return signal({ kind: 'mix', samples: n, parts: [
    { kind: 'chirp', samples: n, f0: 80 + 20 * k, f1: 4000 - 100 * k, amp: 0.5 },
    { kind: 'noise', samples: n, seed: 44 + k, ampLog2: -6 },
  ] }, RATE);
}

// ---- onnxruntime-web in a worker thread, called synchronously ---------------------------------------------------

// ctrl: [REQ] the request's sequence number, [DONE] the last one answered, [OP], [A] its argument, [ERR] 1 when it
// failed (the message comes on the port). ints: the step's ids; floats: the step's logits; feats: (B, 80, 3000).
const REQ = 0, DONE = 1, OP = 2, A = 3, ERR = 4;
const OPS = { encode: 1, begin: 2, step: 3, free: 4, ping: 5, stats: 6, exit: 7 };

async function ortEngine({ dir, layers, threads, ctrlBuf, intsBuf, floatsBuf, featsBuf, port }) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = 'error';
  const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 };
  const encoder = await ort.InferenceSession.create(join(dir, 'encoder_model.onnx'), opts);
  const first = await ort.InferenceSession.create(join(dir, 'decoder_model.onnx'), opts);
  const next = await ort.InferenceSession.create(join(dir, 'decoder_with_past_model.onnx'), opts);
  const ctrl = new Int32Array(ctrlBuf), ints = new Int32Array(intsBuf), floats = new Float32Array(floatsBuf), feats = new Float32Array(featsBuf);
  const names = (p, parts) => Array.from({ length: layers }, (_, i) => parts.map((x) => `${p}.${i}.${x}`)).flat();
  const presentDec = names('present', ['decoder.key', 'decoder.value']);
  const presentEnc = names('present', ['encoder.key', 'encoder.value']);
  const pastDec = names('past_key_values', ['decoder.key', 'decoder.value']);
  const pastEnc = names('past_key_values', ['encoder.key', 'encoder.value']);
  const big = (src, n) => BigInt64Array.from(src.subarray(0, n), (v) => BigInt(v));
  const zero = () => ({ encoderMs: 0, firstMs: 0, nextMs: 0, nextSteps: 0, copyMs: 0, calls: 0 });
  let stats = zero(), state = null;
  const encode = async (b) => {
    const t0 = performance.now();
    const input = new ort.Tensor('float32', feats.slice(0, b * 80 * FRAMES), [b, 80, FRAMES]);
    const h = (await encoder.run({ input_features: input })).last_hidden_state;
    stats.encoderMs += performance.now() - t0;
    return h;
  };
  const ops = {
    async [OPS.encode]() { await encode(ctrl[A]); },
    async [OPS.begin]() {
      if (state !== null) throw new Error('begin: a state is open');
      state = { hidden: await encode(ctrl[A]), dec: null, enc: null };
    },
    async [OPS.step]() {
      const rows = ctrl[A];
      const inputIds = new ort.Tensor('int64', big(ints, rows), [rows, 1]);
      const t0 = performance.now();
      let out;
      if (state.dec === null) {
        out = await first.run({ input_ids: inputIds, encoder_hidden_states: state.hidden });
        state.enc = presentEnc.map((n) => out[n]);
        state.hidden = null;
        stats.firstMs += performance.now() - t0;
      } else {
        const feeds = { input_ids: inputIds };
        pastDec.forEach((n, i) => { feeds[n] = state.dec[i]; });
        pastEnc.forEach((n, i) => { feeds[n] = state.enc[i]; });
        out = await next.run(feeds);
        stats.nextMs += performance.now() - t0;
        stats.nextSteps++;
      }
      state.dec = presentDec.map((n) => out[n]);
      const t1 = performance.now();
      floats.set(out.logits.data);
      stats.copyMs += performance.now() - t1;
    },
    async [OPS.free]() { state = null; },
    async [OPS.ping]() {},
    async [OPS.stats]() { port.postMessage(stats); stats = zero(); },
  };
  parentPort.postMessage('ready');
  for (let seen = 0; ;) {
    Atomics.wait(ctrl, REQ, seen);
    seen = Atomics.load(ctrl, REQ);
    const op = ctrl[OP];
    if (op === OPS.exit) break;
    try {
      stats.calls++;
      await ops[op]();
      ctrl[ERR] = 0;
    } catch (e) {
      ctrl[ERR] = 1;
      port.postMessage(e?.stack ?? String(e));
    }
    Atomics.store(ctrl, DONE, seen);
    Atomics.notify(ctrl, DONE);
  }
  await Promise.all([encoder.release(), first.release(), next.release()]);
  port.close();
}

/** The main thread's end of the worker: call(op, a) returns when the worker has done it (or throws its error). */
class OrtLink {
  static async open(dir, layers, V, threads = 1) {
    const ctrlBuf = new SharedArrayBuffer(64), intsBuf = new SharedArrayBuffer(4 * 64), floatsBuf = new SharedArrayBuffer(4 * V);
    const featsBuf = new SharedArrayBuffer(4 * 80 * FRAMES);
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(HERE, { workerData: { role: 'ort-engine', dir, layers, threads, ctrlBuf, intsBuf, floatsBuf, featsBuf, port: port2 }, transferList: [port2] });
    await new Promise((res, rej) => { worker.once('message', res); worker.once('error', rej); });
    return new OrtLink(worker, port1, ctrlBuf, intsBuf, floatsBuf, featsBuf);
  }

  constructor(worker, port, ctrlBuf, intsBuf, floatsBuf, featsBuf) {
    this.worker = worker; this.port = port; this.seq = 0;
    this.ctrl = new Int32Array(ctrlBuf); this.ints = new Int32Array(intsBuf); this.floats = new Float32Array(floatsBuf);
    this.feats = new Float32Array(featsBuf);
  }

  call(op, a = 0) {
    const ctrl = this.ctrl;
    ctrl[OP] = op; ctrl[A] = a;
    const seq = ++this.seq;
    Atomics.store(ctrl, REQ, seq);
    Atomics.notify(ctrl, REQ);
    for (let d; (d = Atomics.load(ctrl, DONE)) !== seq;) Atomics.wait(ctrl, DONE, d);
    if (ctrl[ERR]) throw new Error(`onnxruntime-web worker: ${receiveMessageOnPort(this.port)?.message}`);
  }

  /** The worker's time since the last call of stats(): session runs, the copy of the logits. */
  stats() {
    this.call(OPS.stats);
    return receiveMessageOnPort(this.port).message;
  }

  async close() {
    const ctrl = this.ctrl;
    ctrl[OP] = OPS.exit;
    Atomics.store(ctrl, REQ, ++this.seq);
    Atomics.notify(ctrl, REQ);
    await new Promise((res) => this.worker.once('exit', res));
    this.port.close();
  }
}

/** onnxruntime-web's stepper over features ({ data, shape: [1, 80, 3000] }): one state at a time, one row. */
function ortStepper(link, features, V) {
  return {
    vocabSize: V,
    logSoftmax: false,  // greedy only here: the search never asks for log-probabilities
    begin(rows) {
      if (rows !== 1) throw new Error('ortStepper: one row only (greedy, one source)');
      link.feats.set(features.data);
      link.call(OPS.begin, 1);
      return { rows };
    },
    step(state, tokens, o) {
      if (o?.logSoftmax === true) throw new Error('ortStepper: no log-probabilities (greedy only)');
      link.ints.set(tokens);
      link.call(OPS.step, tokens.length);
      return link.floats.subarray(0, tokens.length * V);
    },
    reorder() { throw new Error('ortStepper: no beams'); },
    free() { link.call(OPS.free); },
  };
}

// ---- timing of the stepper's calls ------------------------------------------------------------------------------

const zeroSplit = () => ({ total: 0, features: 0, begin: 0, first: 0, next: 0, nextSteps: 0, free: 0 });

/** The stepper with each call's time added to split (begin, the first step, later steps, free). */
function timed(stepper, split) {
  const steps = new WeakMap();
  const clock = (k, f) => (...a) => {
    const t0 = performance.now();
    try { return f(...a); } finally { split[k] += performance.now() - t0; }
  };
  return {
    vocabSize: stepper.vocabSize,
    logSoftmax: stepper.logSoftmax,
    begin: clock('begin', (rows, capacity) => { const st = stepper.begin(rows, capacity); steps.set(st, 0); return st; }),
    step: (state, tokens, o) => {
      const n = steps.get(state);
      steps.set(state, n + 1);
      const t0 = performance.now();
      try { return stepper.step(state, tokens, o); } finally {
        const ms = performance.now() - t0;
        if (n === 0) split.first += ms; else { split.next += ms; split.nextSteps++; }
      }
    },
    reorder: (state, parents) => stepper.reorder(state, parents),
    free: clock('free', (state) => stepper.free(state)),
  };
}

// ---- the engines ------------------------------------------------------------------------------------------------

/**
 * The engines of one model: e.transcribe(engine, audio) → the sequence (features, then generate with language
 * 'en' and maxNewTokens), e.encode(engine, features) (the encoder alone), with their calls timed into e.split.
 */
async function openEngines(name, aw, which, { threads = 1, maxNewTokens = 100, dtype = 'f32' } = {}) {
  const dir = join(DIR, name);
  const config = readJson(join(dir, 'model', 'config.json'));
  const generationConfig = readJson(join(dir, 'model', 'generation_config.json'));
  const preprocessor = readJson(join(dir, 'model', 'preprocessor_config.json'));
  const V = config.vocab_size;
  const e = { name, dir, config, V, split: zeroSplit(), loadMs: {}, fe: new WhisperFeatureExtractor(preprocessor) };
  const options = { language: 'en', maxNewTokens };
  if (which.includes('attnwasm')) {
    const t0 = performance.now();
    const m = await aw.loadModel(join(dir, 'model'), dtype === 'f32' ? {} : { dtype });
    e.loadMs.attnwasm = performance.now() - t0;
    // Time the calls of the model's own stepper (an instance property over SpeechRecognizer#_stepper).
    const own = m._stepper;
    m._stepper = (features) => timed(own.call(m, features), e.split);
    e.model = m;
  }
  if (which.includes('ort')) {
    const t0 = performance.now();
    e.link = await OrtLink.open(dir, config.decoder_layers, V, threads);
    e.loadMs.ort = performance.now() - t0;
  }
  // What planSpeechGeneration reads of a SpeechRecognizer, for onnxruntime-web's run of the same plan.
  const face = { generationConfig, config, vocabSize: V, maxTargetPositions: config.max_target_positions };
  e.features = (samples) => {
    const t0 = performance.now();
    const f = e.fe.features(samples);
    e.split.features += performance.now() - t0;
    return f;
  };
  e.generate = async (engine, features) => {
    if (engine === 'attnwasm') return (await e.model.generate(features, options)).sequences[0];
    const plan = planSpeechGeneration(face, 1, options, () => { throw new Error('language given: nothing to detect'); });
    const stepper = timed(ortStepper(e.link, features, V), e.split);
    return (await generateSeq2Seq(stepper, plan.settings, { batchSize: 1, decoderInputIds: plan.prompt })).sequences[0];
  };
  e.transcribe = async (engine, samples) => e.generate(engine, e.features(samples));
  /** The encoder of one window alone (attnwasm: speechBegin, with the cross-attention keys / values). */
  e.encode = (engine, features) => {
    const t0 = performance.now();
    if (engine === 'attnwasm') {
      const st = e.model._stepper(features);
      st.free(st.begin(1, 8));
    } else {
      e.link.feats.set(features.data);
      e.link.call(OPS.encode, 1);
    }
    return performance.now() - t0;
  };
  /** The encoder and the first decoder step (<|startoftranscript|>): the same work on both sides. */
  e.encodeFirst = (engine, features) => {
    const st = engine === 'attnwasm' ? e.model._stepper(features) : ortStepper(e.link, features, V);
    const t0 = performance.now();
    const s = st.begin(1, 8);
    st.step(s, Int32Array.of(generationConfig.decoder_start_token_id));
    const ms = performance.now() - t0;
    st.free(s);
    return ms;
  };
  e.close = async () => { e.model?.dispose(); await e.link?.close(); };
  return e;
}

/** Both steppers (and attnwasm's forward) on check.json's teacher-forced ids: max |logits − torch|. */
function checkAgainstTorch(e) {
  const c = readJson(join(e.dir, 'check.json'));
  const f32 = (x) => { const b = Buffer.from(x.base64, 'base64'); return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)); };
  const want = f32(c.logits), features = { data: f32(c.features), shape: c.features.shape };
  const [, T] = c.decoderShape, V = e.V, dec = Int32Array.from(c.decoderInputIds);
  const forced = (stepper) => {
    const state = stepper.begin(1, T);
    let d = 0;
    try {
      for (let t = 0; t < T; t++) {
        const logits = stepper.step(state, Int32Array.of(dec[t]));
        for (let v = 0; v < V; v++) d = Math.max(d, Math.abs(logits[v] - want[t * V + v]));
      }
    } finally { stepper.free(state); }
    return d;
  };
  const out = {};
  const f = e.model.forward({ inputFeatures: features, decoderInputIds: { data: dec, shape: [1, T] } }).logits.data;
  out['attnwasm forward'] = want.reduce((m, w, i) => Math.max(m, Math.abs(f[i] - w)), 0);
  out['attnwasm stepper'] = forced(e.model._stepper(features));
  out['ort stepper'] = forced(ortStepper(e.link, features, V));
  const scale = want.reduce((m, w) => Math.max(m, Math.abs(w)), 0);
  for (const [k, d] of Object.entries(out)) if (!(d < 1e-3)) throw new Error(`${e.name} ${k}: max |logits - torch| ${d}`);
  out['max |torch logits|'] = scale;
  e.split = zeroSplit();
  e.link.stats();
  return out;
}

// ---- children: fresh processes for first calls, real time and memory ----------------------------------------------

async function initAttnwasm(threads) {
  const { init } = await import('../bindings/index.js');
  return init({ threads });
}

async function childFirstCall(o) {
  const name = o.models[0];
  const aw = o.engine === 'attnwasm' ? await initAttnwasm(1) : null;
  const e = await openEngines(name, aw, [o.engine], { maxNewTokens: o.maxNewTokens });
  const samples = audio(0);
  const calls = [];
  for (let i = 0; i < 3; i++) {
    e.split = zeroSplit();
    const t0 = performance.now();
    const seq = await e.transcribe(o.engine, samples);
    calls.push({ ms: performance.now() - t0, tokens: seq.length, featuresMs: e.split.features, beginMs: e.split.begin, firstStepMs: e.split.first, laterStepsMs: e.split.next });
  }
  await e.close();
  aw?.close();
  return { engine: o.engine, model: name, loadMs: e.loadMs[o.engine], calls };
}

/** transcribe() of 30 s (attnwasm) or features + the same generate (onnxruntime-web), at o.threads: seconds of audio per second. */
async function childRealTime(o) {
  const name = o.models[0];
  const aw = o.engine === 'attnwasm' ? await initAttnwasm(o.threads) : null;
  const e = await openEngines(name, aw, [o.engine], { threads: o.threads, maxNewTokens: o.maxNewTokens, dtype: o.dtype });
  const samples = audio(0);
  const run = o.engine === 'attnwasm'
    ? () => e.model.transcribe(samples, { language: 'en', maxNewTokens: o.maxNewTokens })
    : () => e.transcribe('ort', samples);
  await run();
  await run();
  const ms = [];
  for (let i = 0; i < o.rounds; i++) {
    const t0 = performance.now();
    await run();
    ms.push(performance.now() - t0);
  }
  await e.close();
  aw?.close();
  return { engine: o.engine, model: name, threads: o.threads, dtype: o.dtype, ms, rtf: SECONDS / (median(ms) / 1000) };
}

/** attnwasm's heap and the process's RSS after each of 10 transcribe() calls on 10 different 30 s signals. */
async function childMemory(o) {
  const name = o.models[0];
  const aw = await initAttnwasm(1);
  const m = await aw.loadModel(join(DIR, name, 'model'));
  const loaded = { ...aw.memory(), rss: process.memoryUsage().rss };
  const series = [];
  for (let k = 0; k < 10; k++) {
    const r = await m.transcribe(audio(k), { language: 'en', maxNewTokens: o.maxNewTokens });
    const mem = aw.memory();
    series.push({ heapBytes: mem.heapBytes, inUseBytes: mem.inUseBytes, peakInUseBytes: mem.peakInUseBytes, rss: process.memoryUsage().rss, textChars: r.text.length });
  }
  m.dispose();
  const disposed = aw.memory();
  aw.close();
  return { model: name, weightBytes: m.weightBytes, loaded, series, disposed };
}

function child(args) {
  const t = args.indexOf('--threads');
  const [file, argv] = nodeChild([HERE, ...args], t >= 0 ? Number(args[t + 1]) : 1);  // a 2-thread child runs on every CPU
  const out = execFileSync(file, argv, { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').pop());
}

// ---- main --------------------------------------------------------------------------------------------------------

/** FLOPs (2·m·n·k of the matrix products) of one window's encoder: the conv stem, the layers' projections and FFN,
 * Q·Kᵀ and P·V over 1500 positions; the cross-attention keys / values of every decoder layer. */
function shapeOf(c) {
  const E = c.d_model, F = c.encoder_ffn_dim, Le = c.encoder_layers, Ld = c.decoder_layers, M = c.num_mel_bins, S = SOURCE;
  const stem = 2 * FRAMES * M * E * 3 + 2 * S * E * E * 3;
  const layers = Le * (2 * S * (4 * E * E + 2 * E * F) + 4 * S * S * E);
  const Fd = c.decoder_ffn_dim, V = c.vocab_size;
  return {
    encoderFlops: stem + layers, stemFlops: stem, attnFlops: Le * 4 * S * S * E, crossKvFlops: Ld * 2 * S * 2 * E * E,
    // A one-row decoder step reads every decoder weight and the tied head once, and every layer's cross K/V.
    stepWeightBytes: 4 * (Ld * (6 * E * E + 2 * E * Fd) + V * E), stepCrossBytes: 4 * Ld * 2 * S * E,
  };
}

async function benchModel(name, aw, o) {
  const engines = ['attnwasm', 'ort'];
  const e = await openEngines(name, aw, engines, { maxNewTokens: o.maxNewTokens });
  const check = checkAgainstTorch(e);
  for (let i = 0; i < 200; i++) e.link.call(OPS.ping);
  const pings = Array.from({ length: 1000 }, () => { const t0 = performance.now(); e.link.call(OPS.ping); return performance.now() - t0; });
  e.link.stats();
  const samples = audio(0);
  const features = e.fe.features(samples);
  const r = { check, handoffUs: 1000 * median(pings), loadMs: e.loadMs, workloads: {}, disagreements: [] };
  // Warm-up: each engine's encoder and two transcriptions.
  for (const engine of engines) { e.encode(engine, features); e.encodeFirst(engine, features); await e.transcribe(engine, samples); await e.transcribe(engine, samples); }
  e.link.stats();
  // encoder: 3 calls per engine per round; encoder + first step likewise.
  for (const [label, f] of [['encoder', e.encode], ['encoder + first step', e.encodeFirst]]) {
    const w = Object.fromEntries(engines.map((x) => [x, []]));
    for (let k = 0; k < o.rounds; k++) {
      for (const engine of engines.map((_, i) => engines[(i + k) % engines.length])) {
        const ms = [f(engine, features), f(engine, features), f(engine, features)];
        w[engine].push(median(ms));
      }
    }
    r.workloads[label] = { ms: w, median: Object.fromEntries(engines.map((x) => [x, median(w[x])])) };
    r.workloads[label].ratio = r.workloads[label].median.ort / r.workloads[label].median.attnwasm;
  }
  e.link.stats();
  // transcription: one per engine per round.
  const w = Object.fromEntries(engines.map((x) => [x, { ms: [], split: [], seq: null }]));
  const worker = [];
  for (let k = 0; k < o.rounds; k++) {
    for (const engine of engines.map((_, i) => engines[(i + k) % engines.length])) {
      e.split = zeroSplit();
      const t0 = performance.now();
      const seq = await e.transcribe(engine, samples);
      const ms = performance.now() - t0;
      w[engine].ms.push(ms);
      w[engine].split.push({ ...e.split, total: ms });
      w[engine].seq ??= seq;
      if (engine === 'ort') worker.push(e.link.stats());
    }
  }
  const [a, b] = [w.attnwasm.seq, w.ort.seq];
  const at = a.length === b.length ? a.findIndex((t, j) => t !== b[j]) : Math.min(a.length, b.length);
  if (at >= 0) r.disagreements.push({ at, attnwasm: Array.from(a.slice(Math.max(0, at - 2), at + 3)), ort: Array.from(b.slice(Math.max(0, at - 2), at + 3)), lengths: [a.length, b.length] });
  const t = { ms: {}, median: {}, split: {}, tokens: { attnwasm: a.length, ort: b.length }, promptTokens: 4 };
  for (const x of engines) {
    t.ms[x] = w[x].ms;
    t.median[x] = median(w[x].ms);
    const s = Object.fromEntries(Object.keys(zeroSplit()).map((k) => [k, median(w[x].split.map((q) => q[k]))]));
    s.search = median(w[x].split.map((q) => q.total - q.features - q.begin - q.first - q.next - q.free));
    t.split[x] = s;
  }
  t.ratio = t.median.ort / t.median.attnwasm;
  t.ratioWithoutFeatures = (t.median.ort - t.split.ort.features) / (t.median.attnwasm - t.split.attnwasm.features);
  t.ortWorker = Object.fromEntries(Object.keys(worker[0]).map((k) => [k, median(worker.map((s) => s[k]))]));
  r.workloads.transcription = t;
  const shape = shapeOf(e.config);
  r.shape = shape;
  r.rates = {
    encoderGflops: {
      attnwasm: (shape.encoderFlops + shape.crossKvFlops) / r.workloads.encoder.median.attnwasm / 1e6,
      ort: shape.encoderFlops / r.workloads.encoder.median.ort / 1e6,
    },
  };
  await e.close();
  return r;
}

/**
 * Where an encoder pass's time goes, through the public layers at the encoder's shapes (each with its JS copies in
 * and out): per layer the q/k/v projection (Linear E → 3E over 1500 rows), the output projection, fc1 and fc2, and
 * the attention core (scaledDotProductAttention, (H, 1500, 64), not causal); the conv stem's two GEMMs as Linear
 * (3·mels → E over 3000 rows, 3E → E over 1500); the cross-attention keys / values (E → 2E per decoder layer); and
 * the decoder's head (E → V over 1 row: the largest weight a step reads). Medians of 5 calls after 2, the model's
 * own begin (speechBegin) beside them; LayerNorm, GELU, the residuals and the stem's window gather are not timed
 * apart (they are the difference).
 */
async function profile(name, aw) {
  const c = readJson(join(DIR, name, 'model', 'config.json'));
  const E = c.d_model, F = c.encoder_ffn_dim, H = c.encoder_attention_heads, hd = E / H, S = SOURCE, M = c.num_mel_bins;
  const data = (n) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37));
  const time = (f, reps = 5) => { f(); f(); return median(Array.from({ length: reps }, () => { const t0 = performance.now(); f(); return performance.now() - t0; })); };
  const linear = (k, n, rows) => {
    const l = new aw.Linear(k, n);
    const x = { data: data(rows * k), shape: [rows, k] };
    try { return { ms: time(() => l.forward(x)), flops: 2 * rows * k * n }; } finally { l.dispose(); }
  };
  const q = { data: data(H * S * hd), shape: [H, S, hd] };
  const parts = {
    'q/k/v projection': linear(E, 3 * E, S),
    'output projection': linear(E, E, S),
    fc1: linear(E, F, S),
    fc2: linear(F, E, S),
    'attention core': { ms: time(() => aw.scaledDotProductAttention(q, q, q)), flops: 4 * H * S * S * hd },
  };
  const stem = { conv1: linear(3 * M, E, FRAMES), conv2: linear(3 * E, E, S) };
  const cross = linear(E, 2 * E, S);
  const head = linear(E, c.vocab_size, 1);
  const m = await aw.loadModel(join(DIR, name, 'model'));
  const features = m.features(audio(0));
  const st = m._stepper(features);
  const beginMs = time(() => st.free(st.begin(1, 8)));
  m.dispose();
  const layerMs = Object.values(parts).reduce((a, p) => a + p.ms, 0);
  return {
    model: name, parts, stem, cross, head, beginMs, layers: c.encoder_layers, decoderLayers: c.decoder_layers,
    sumMs: c.encoder_layers * layerMs + stem.conv1.ms + stem.conv2.ms + c.decoder_layers * cross.ms,
  };
}

function reportProfile(p) {
  const f1 = (x) => x.toFixed(1), gf = (x) => `${f1(x.flops / x.ms / 1e6)} GFLOP/s`;
  console.log(`\n${p.model}: the model's begin (speechBegin: stem, ${p.layers} encoder layers, ${p.decoderLayers} layers' cross K/V) ${f1(p.beginMs)} ms; the parts through the public layers sum to ${f1(p.sumMs)} ms:`);
  for (const [k, x] of Object.entries(p.parts)) console.log(`  per layer ${k.padEnd(18)} ${f1(x.ms).padStart(7)} ms × ${p.layers} = ${f1(x.ms * p.layers).padStart(7)} ms  ${gf(x)}`);
  for (const [k, x] of Object.entries(p.stem)) console.log(`  stem ${k} (as Linear)     ${f1(x.ms).padStart(7)} ms  ${gf(x)}`);
  console.log(`  cross K/V per decoder layer   ${f1(p.cross.ms).padStart(7)} ms × ${p.decoderLayers} = ${f1(p.cross.ms * p.decoderLayers)} ms  ${gf(p.cross)}`);
  console.log(`  decoder head (1 row, E → V)   ${f1(p.head.ms).padStart(7)} ms  (${f1(p.head.flops / 2 * 4 / p.head.ms / 1e6)} GB/s of float32 weights)`);
}

async function main() {
  const o = args();
  // One CPU for the 1-thread comparisons (lib.mjs pinToOneCpu: the engines' threads on vCPUs of different speeds
  // skew the ratio); the 2-thread real-time children run on every CPU (nodeChild). Re-runs this script under taskset.
  const cpu = o.render || o.threads > 1 ? null : pinToOneCpu();
  if (o.profile) {
    const aw = await initAttnwasm(1);
    const probe = await peakProbe();
    const peak = median(Array.from({ length: 5 }, () => probe(40)));
    const out = { machine: describeMachine(), peakGflops: peak, profiles: [] };
    for (const name of o.models) out.profiles.push(await profile(name, aw));
    aw.close();
    if (o.json) return console.log(JSON.stringify(out));
    console.log(`${out.machine}\nthis run's SIMD peak ${f1g(peak)} GFLOP/s`);
    out.profiles.forEach(reportProfile);
    return;
  }
  if (o.render) { const saved = readJson(o.render); return report(saved, { ...o, rounds: saved.rounds, maxNewTokens: saved.maxNewTokens }); }
  if (o.child === 'first') return console.log(JSON.stringify(await childFirstCall(o)));
  if (o.child === 'rtf') return console.log(JSON.stringify(await childRealTime(o)));
  if (o.child === 'memory') return console.log(JSON.stringify(await childMemory(o)));
  for (const name of o.models) {
    if (!existsSync(join(DIR, name, 'decoder_with_past_model.onnx'))) throw new Error(`${join(DIR, name)} is missing: run /usr/bin/python3 bench/export_whisper_onnx.py`);
  }
  const result = { machine: describeMachine(), cpu, node: process.version, rounds: o.rounds, maxNewTokens: o.maxNewTokens, date: new Date().toISOString(), loadAverage: { start: loadavg() }, models: {} };
  const probe = await peakProbe();
  const peaks = [median(Array.from({ length: 5 }, () => probe(40)))];
  const aw = await initAttnwasm(1);
  for (const name of o.models) result.models[name] = await benchModel(name, aw, o);
  aw.close();
  peaks.push(median(Array.from({ length: 5 }, () => probe(40))));
  result.peakGflops = median(peaks);
  result.readGBs = (await readBandwidth()) / 1e9;
  const common = (name) => ['--model', name, '--max-new-tokens', String(o.maxNewTokens)];
  for (const name of o.models) {
    const r = result.models[name];
    // First calls: each engine alone in a fresh process (V8 compiles wasm with Liftoff first, TurboFan later).
    if (o.firstCall) r.firstCall = Object.fromEntries(['attnwasm', 'ort'].map((x) => [x, child(['--child', 'first', '--engine', x, ...common(name)])]));
    if (o.rtf) {
      r.realTime = [];
      const runs = [['attnwasm', 1], ['ort', 1], ['attnwasm', 2], ['ort', 2]];
      for (const dtype of o.dtypes) runs.push(['attnwasm', 1, dtype]);
      for (const [engine, threads, dtype = 'f32'] of runs) r.realTime.push(child(['--child', 'rtf', '--engine', engine, '--threads', String(threads), '--dtype', dtype, '--rounds', String(o.rounds), ...common(name)]));
    }
    if (o.memory) r.memory = child(['--child', 'memory', ...common(name)]);
  }
  result.loadAverage.end = loadavg();
  if (o.json) return console.log(JSON.stringify(result));
  report(result, o);
}

function report(result, o) {
  const f0 = (x) => x.toFixed(0), f1 = (x) => x.toFixed(1), f2 = (x) => x.toFixed(2), MB = (b) => `${(b / 1e6).toFixed(1)} MB`;
  const range = (xs) => `${f0(Math.min(...xs))}–${f0(Math.max(...xs))}`;
  console.log(`${result.machine}${result.cpu === undefined ? '' : result.cpu === null ? '; not pinned to one CPU' : `; 1-thread figures pinned to CPU ${result.cpu} (taskset), 2-thread ones on every CPU`}`);
  console.log(`Node ${result.node}, ${result.date}, 1 thread unless stated, median of ${o.rounds} rounds (engines alternated), 30 s of audio, ${o.maxNewTokens} new tokens; this run's SIMD peak ${f1(result.peakGflops)} GFLOP/s; load average ${result.loadAverage.start.map(f1).join(' ')} at the start, ${result.loadAverage.end.map(f1).join(' ')} at the end`);
  for (const [name, r] of Object.entries(result.models)) {
    console.log(`\n${name}: max |logits - torch| ${Object.entries(r.check).map(([k, v]) => `${k} ${v.toExponential(1)}`).join(', ')}; onnxruntime-web hand-off round trip ${f1(r.handoffUs)} µs; load ${Object.entries(r.loadMs).map(([k, v]) => `${k} ${f0(v)} ms`).join(', ')}`);
    for (const label of ['encoder', 'encoder + first step']) {
      const w = r.workloads[label];
      console.log(`  ${label}: attnwasm ${f0(w.median.attnwasm)} ms (${range(w.ms.attnwasm)}), onnxruntime-web ${f0(w.median.ort)} ms (${range(w.ms.ort)}): ${f2(w.ratio)}x${label === 'encoder' ? ' (target 1.5x)' : ''}`);
    }
    console.log(`    encoder GFLOP/s: attnwasm ${f1(r.rates.encoderGflops.attnwasm)} (conv stem + layers + cross K/V, ${f1((r.shape.encoderFlops + r.shape.crossKvFlops) / 1e9)} GFLOP), onnxruntime-web ${f1(r.rates.encoderGflops.ort)} (${f1(r.shape.encoderFlops / 1e9)} GFLOP; of it attention Q·Kᵀ, P·V ${f1(r.shape.attnFlops / 1e9)}, conv stem ${f1(r.shape.stemFlops / 1e9)})`);
    const t = r.workloads.transcription;
    console.log(`  transcription (features + encoder + ${t.promptTokens} init tokens + greedy; tokens generated attnwasm ${t.tokens.attnwasm - t.promptTokens}, onnxruntime-web ${t.tokens.ort - t.promptTokens}): attnwasm ${f0(t.median.attnwasm)} ms (${range(t.ms.attnwasm)}), onnxruntime-web ${f0(t.median.ort)} ms (${range(t.ms.ort)}): ${f2(t.ratio)}x (target 2x); without the features (the same JS on both sides) ${f2(t.ratioWithoutFeatures)}x`);
    for (const [engine, s] of Object.entries(t.split)) {
      console.log(`    ${engine.padEnd(8)} ${f0(s.total)} ms: features ${f0(s.features)}, begin ${f0(s.begin)}, first step ${f1(s.first)}, later steps ${f0(s.next)} (${f2(s.next / s.nextSteps)} ms × ${s.nextSteps}), free ${f1(s.free)}, the search in JS ${f0(s.search)} = ${f1(100 * s.search / s.total)} %`);
    }
    const sh = shapeOf(readJson(join(DIR, name, 'model', 'config.json'))), stepBytes = sh.stepWeightBytes + sh.stepCrossBytes;
    console.log(`    a step reads ${MB(sh.stepWeightBytes)} of float32 weights + ${MB(sh.stepCrossBytes)} of cross K/V: attnwasm ${f1(stepBytes / (t.split.attnwasm.next / t.split.attnwasm.nextSteps) / 1e6)} GB/s, onnxruntime-web ${f1(stepBytes / (t.split.ort.next / t.split.ort.nextSteps) / 1e6)} GB/s${result.readGBs ? ` (this run's read bandwidth ${f1(result.readGBs)} GB/s)` : ''}`);
    const k = t.ortWorker;
    console.log(`    ort worker: encoder ${f0(k.encoderMs)}, decoder_model ${f1(k.firstMs)}, decoder_with_past ${f0(k.nextMs)} (${f2(k.nextMs / k.nextSteps)} ms × ${k.nextSteps}), logits copy ${f1(k.copyMs)} ms`);
    for (const d of r.disagreements) console.log(`  DISAGREE at ${d.at}: attnwasm ${d.attnwasm.join(' ')} | ort ${d.ort.join(' ')} (lengths ${d.lengths.join(' / ')})`);
    if (r.disagreements.length === 0) console.log('  attnwasm and onnxruntime-web generated the same sequence');
    for (const [engine, c] of Object.entries(r.firstCall ?? {})) {
      const c0 = c.calls[0];
      console.log(`  first call in a fresh process, ${engine}: ${f0(c0.ms)} ms (features ${f0(c0.featuresMs)}, begin ${f0(c0.beginMs)}, first step ${f0(c0.firstStepMs)}, later steps ${f0(c0.laterStepsMs)}); the next calls ${c.calls.slice(1).map((x) => f0(x.ms)).join(', ')} ms; load ${f0(c.loadMs)} ms`);
    }
    for (const x of r.realTime ?? []) console.log(`  real time, ${x.engine}${(x.dtype ?? 'f32') === 'f32' ? '' : ` dtype ${x.dtype} (not float32's numbers)`} ${x.threads} thread${x.threads > 1 ? 's' : ''}: ${f2(x.rtf)}x real time (${x.ms.map(f0).join(', ')} ms per 30 s)`);
    const m = r.memory;
    if (m) {
      console.log(`  memory (a fresh process, 10 transcribe() of different 30 s signals): weights ${MB(m.weightBytes)}; after loadModel heap ${MB(m.loaded.heapBytes)}, in use ${MB(m.loaded.inUseBytes)}, RSS ${MB(m.loaded.rss)}`);
      console.log(`    heap   ${m.series.map((s) => MB(s.heapBytes)).join(', ')}`);
      console.log(`    in use ${m.series.map((s) => MB(s.inUseBytes)).join(', ')} (peak ${MB(Math.max(...m.series.map((s) => s.peakInUseBytes)))})`);
      console.log(`    RSS    ${m.series.map((s) => MB(s.rss)).join(', ')}`);
      console.log(`    after dispose(): in use ${MB(m.disposed.inUseBytes)}, heap ${MB(m.disposed.heapBytes)}`);
    }
  }
}

if (!isMainThread && workerData?.role === 'ort-engine') await ortEngine(workerData);
else await main();
