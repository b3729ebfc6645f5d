// Encoder–decoders at opus-mt-en-de's shape (Marian, 74 M parameters) and t5-small's (T5, 61 M): attnwasm's Seq2SeqLM
// (its own generate()) against onnxruntime-web 1.30 (wasm EP, float32, Optimum's three graphs as transformers.js runs
// them) on the same random weights, in one Node process, 1 thread, engines alternated per round so that a noisy
// machine slows both alike. Not a test. Both engines run the same search: transformers 4.40's generate() in
// bindings/seq2seq_generate.js — attnwasm through Seq2SeqLM#generate (streamSeq2Seq for one source greedy,
// generateSeq2Seq for beams), onnxruntime-web through the same two functions over a stepper written here.
//
// Workloads (issue 40), one thread, maxNewTokens capped (--max-new-tokens, default 32) so that the work is bounded:
//   greedy      20 seeded sentences of 10–40 source tokens, greedy, one at a time: sentences/s (target >= 2x)
//   beam 4      the same with numBeams 4 (target >= 2x)
//   first token one sentence's encoder + first decoder step, a fresh generate() each time (target >= 1.5x faster)
//   greedy, one batch  the same 20 sentences as one right-padded batch with its attention mask, greedy: what
//               translate(texts) does, and what transformers.js's translation pipeline does with a list of texts
//               (tokenizer(texts, { padding: true }), one generate()): sentences/s
// Both engines must produce the same sequences: every disagreement is printed. Also: max |logits − torch| of both
// engines' steppers on check.json's teacher-forced batch (and attnwasm's forward()), the first call of each engine
// in a fresh process (V8 tiers: Liftoff first), where each engine's time goes (stepper calls: encoder, first step,
// later steps, reorders; the rest is the search in JS and its event-loop turns), this run's SIMD peak and read
// bandwidth (a 1-row decoder step reads every weight once), and the wasm heap of loading the Marian checkpoint
// as stored (F32) and as q8, in bytes per parameter (targets <= 4.3, <= 1.4), and after dispose().
//
// onnxruntime-web's session.run is asynchronous and the search's stepper is synchronous, so its sessions live in a
// worker thread of this process and the stepper waits on Atomics for each call (the search, the logits processors
// and the log_softmax stay on the main thread, as in attnwasm's case); the cost of that hand-off (a round trip and
// a copy of the logits) is measured and printed. Its stepper does what transformers.js does: the encoder once per
// source, its states repeated for the beams; decoder_model for the first step, decoder_with_past after it, the
// present tensors fed back as the next past; reorder = a gather of the self-attention past's rows in JS (the
// cross-attention past is the same for a source's beams, as transformers' _reorder_cache leaves it); log_softmax
// in a plain double loop (stepper.logSoftmax, so that neither engine pays the float32-exact JS one).
//
// Needs bench/onnx/seq2seq (/usr/bin/python3 bench/export_seq2seq_onnx.py) and bench/node_modules (npm ci).
// Usage: node bench/seq2seq.mjs [--rounds 3] [--json] [--model marian|t5] [--max-new-tokens 32] [--no-memory]
//        [--no-first-call] [--q8 (also attnwasm with dtype 'q8', against the same float32 onnxruntime-web)]
//        [--bounded-head (also attnwasm loaded with boundedHead: greedy's bounded pass, docs/seq2seq.md)]
//        [--workloads greedy,beam,first,batch,ragged,raggedBeam (some of them; all by default)] [--cpu N (the CPU it
//        runs pinned to, with taskset; default the first it may use: bench/lib.mjs pinToOneCpu says why)]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, workerData, parentPort, Worker, MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { BENCH_DIR, describeMachine, median, peakProbe, pinToOneCpu, readBandwidth, rng } from './lib.mjs';
import { resolveGenerationConfig, generateSeq2Seq, streamSeq2Seq } from '../bindings/seq2seq_generate.js';

const DIR = join(BENCH_DIR, 'onnx', 'seq2seq');
const HERE = fileURLToPath(import.meta.url);
const SENTENCES = 20, MIN_TOKENS = 10, MAX_TOKENS = 40;
// The range of ids each model's seeded sources are drawn from (its special ids left out).
const MODELS = {
  marian: { lo: 1, hi: 58100 },  // eos 0, pad 58100
  t5: { lo: 3, hi: 32100 },      // pad 0, eos 1, unk 2; 32100… are extra ids
};

function args() {
  const a = process.argv.slice(2);
  const value = (k, d) => { const i = a.indexOf(k); return i >= 0 ? a[i + 1] : d; };
  const rounds = Number(value('--rounds', 3));
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError(`--rounds: expected an integer >= 1, got ${value('--rounds')}`);
  const maxNewTokens = Number(value('--max-new-tokens', 32));
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1) throw new RangeError(`--max-new-tokens: expected an integer >= 1, got ${value('--max-new-tokens')}`);
  const model = value('--model', null);
  if (model !== null && !(model in MODELS)) throw new RangeError(`--model: expected ${Object.keys(MODELS).join(' or ')}, got ${model}`);
  const only = value('--workloads', null)?.split(',') ?? null;
  for (const w of only ?? []) if (!WORKLOAD_MODES.includes(w)) throw new RangeError(`--workloads: expected a comma-separated list of ${WORKLOAD_MODES.join(', ')}, got ${w}`);
  return {
    rounds, maxNewTokens, models: model ? [model] : Object.keys(MODELS), json: a.includes('--json'),
    memory: !a.includes('--no-memory'), firstCall: !a.includes('--no-first-call'), q8: a.includes('--q8'), boundedHead: a.includes('--bounded-head'),
    child: value('--child', null), engine: value('--engine', null), dtype: value('--dtype', 'f32'), only,
  };
}

const readJson = (p) => JSON.parse(readFileSync(p, 'utf8'));

/** The seeded sources of a model: SENTENCES rows of 10–40 ids, the last one eos, as its tokenizer ends them. */
function sentences(name, eos) {
  const { lo, hi } = MODELS[name];
  const r = rng(40);
  return Array.from({ length: SENTENCES }, () => {
    const n = MIN_TOKENS + Math.floor(r() * (MAX_TOKENS - MIN_TOKENS + 1));
    const ids = Int32Array.from({ length: n }, () => lo + Math.floor(r() * (hi - lo)));
    ids[n - 1] = eos;
    return ids;
  });
}

// ---- onnxruntime-web in a worker thread, called synchronously ---------------------------------------------------

// ctrl: [REQ] the request's sequence number, [DONE] the last one answered, [OP], [A], [B], [C] its arguments,
// [ERR] 1 when it failed (the message comes on the port). ints: the request's ids; floats: the step's logits.
const REQ = 0, DONE = 1, OP = 2, A = 3, B = 4, C = 5, ERR = 6;
const OPS = { begin: 1, step: 2, reorder: 3, free: 4, ping: 5, stats: 6, exit: 7 };

async function ortEngine({ dir, layers, ctrlBuf, intsBuf, floatsBuf, port }) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const opts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', logSeverityLevel: 3 };
  const encoder = await ort.InferenceSession.create(join(dir, 'encoder_model.onnx'), opts);
  const first = await ort.InferenceSession.create(join(dir, 'decoder_model.onnx'), opts);
  const next = await ort.InferenceSession.create(join(dir, 'decoder_with_past_model.onnx'), opts);
  const ctrl = new Int32Array(ctrlBuf), ints = new Int32Array(intsBuf), floats = new Float32Array(floatsBuf);
  const names = (p, parts) => Array.from({ length: layers }, (_, i) => parts.map((x) => `${p}.${i}.${x}`)).flat();
  const presentDec = names('present', ['decoder.key', 'decoder.value']);
  const presentEnc = names('present', ['encoder.key', 'encoder.value']);
  const pastDec = names('past_key_values', ['decoder.key', 'decoder.value']);
  const pastEnc = names('past_key_values', ['encoder.key', 'encoder.value']);
  const big = (src, n) => BigInt64Array.from(src.subarray(0, n), (v) => BigInt(v));
  const zero = () => ({ encoderMs: 0, firstMs: 0, nextMs: 0, nextSteps: 0, reorderMs: 0, copyMs: 0, calls: 0 });
  let stats = zero(), state = null;
  const ops = {
    async [OPS.begin]() {
      const [b, s, rows] = [ctrl[A], ctrl[B], ctrl[C]];
      if (state !== null) throw new Error('begin: a state is open');
      const t0 = performance.now();
      const h = (await encoder.run({
        input_ids: new ort.Tensor('int64', big(ints, b * s), [b, s]),
        attention_mask: new ort.Tensor('int64', big(ints.subarray(b * s), b * s), [b, s]),
      })).last_hidden_state;
      // transformers' _expand_inputs_for_generation: each source's states and mask repeated for its rows.
      const k = rows / b, E = h.dims[2], mask = new BigInt64Array(rows * s);
      let hidden = h;
      if (k > 1) {
        const x = new Float32Array(rows * s * E);
        for (let r = 0; r < rows; r++) x.set(h.data.subarray(Math.floor(r / k) * s * E, (Math.floor(r / k) + 1) * s * E), r * s * E);
        hidden = new ort.Tensor('float32', x, [rows, s, E]);
      }
      for (let r = 0; r < rows; r++) for (let j = 0; j < s; j++) mask[r * s + j] = BigInt(ints[b * s + Math.floor(r / k) * s + j]);
      state = { rows, hidden, mask: new ort.Tensor('int64', mask, [rows, s]), dec: null, enc: null };
      stats.encoderMs += performance.now() - t0;
    },
    async [OPS.step]() {
      const rows = ctrl[A];
      const inputIds = new ort.Tensor('int64', big(ints, rows), [rows, 1]);
      const t0 = performance.now();
      let out;
      if (state.dec === null) {
        out = await first.run({ input_ids: inputIds, encoder_hidden_states: state.hidden, encoder_attention_mask: state.mask });
        state.enc = presentEnc.map((n) => out[n]);
        state.hidden = null;
        stats.firstMs += performance.now() - t0;
      } else {
        const feeds = { input_ids: inputIds, encoder_attention_mask: state.mask };
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
    async [OPS.reorder]() {
      const rows = ctrl[A], t0 = performance.now();
      const parents = ints.slice(0, rows);
      state.dec = state.dec.map((t) => {
        const row = t.data.length / rows, x = new Float32Array(t.data.length);
        for (let r = 0; r < rows; r++) x.set(t.data.subarray(parents[r] * row, (parents[r] + 1) * row), r * row);
        return new ort.Tensor('float32', x, t.dims);
      });
      stats.reorderMs += performance.now() - t0;
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

/** The main thread's end of the worker: call(op, a, b, c) returns when the worker has done it (or throws its error). */
class OrtLink {
  static async open(dir, layers, V, maxRows = 8, maxInts = 1 << 16) {
    const ctrlBuf = new SharedArrayBuffer(64), intsBuf = new SharedArrayBuffer(4 * maxInts), floatsBuf = new SharedArrayBuffer(4 * maxRows * V);
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(HERE, { workerData: { role: 'ort-engine', dir, layers, ctrlBuf, intsBuf, floatsBuf, port: port2 }, transferList: [port2] });
    await new Promise((res, rej) => { worker.once('message', res); worker.once('error', rej); });
    return new OrtLink(worker, port1, ctrlBuf, intsBuf, floatsBuf);
  }

  constructor(worker, port, ctrlBuf, intsBuf, floatsBuf) {
    this.worker = worker; this.port = port; this.seq = 0;
    this.ctrl = new Int32Array(ctrlBuf); this.ints = new Int32Array(intsBuf); this.floats = new Float32Array(floatsBuf);
  }

  call(op, a = 0, b = 0, c = 0) {
    const ctrl = this.ctrl;
    ctrl[OP] = op; ctrl[A] = a; ctrl[B] = b; ctrl[C] = c;
    const seq = ++this.seq;
    Atomics.store(ctrl, REQ, seq);
    Atomics.notify(ctrl, REQ);
    for (let d; (d = Atomics.load(ctrl, DONE)) !== seq;) Atomics.wait(ctrl, DONE, d);
    if (ctrl[ERR]) throw new Error(`onnxruntime-web worker: ${receiveMessageOnPort(this.port)?.message}`);
  }

  /** The worker's time since the last call of stats(): session runs, the gather, the copy of the logits. */
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

/** log_softmax of each row of x (rows × V) into out, in double: max, Σ exp, x − log Σ. */
function logSoftmaxRows(x, V, out) {
  for (let o = 0; o < x.length; o += V) {
    let max = -Infinity;
    for (let i = o; i < o + V; i++) if (x[i] > max) max = x[i];
    let sum = 0;
    for (let i = o; i < o + V; i++) sum += Math.exp(x[i] - max);
    const lse = max + Math.log(sum);
    for (let i = o; i < o + V; i++) out[i] = x[i] - lse;
  }
}

/** onnxruntime-web's stepper for sources ids / mask ({ data: Int32Array, shape: [B, S] }): one state at a time. */
function ortStepper(link, ids, mask, V) {
  const [b, s] = ids.shape;
  return {
    vocabSize: V,
    logSoftmax: true,
    begin(rows) {
      link.ints.set(ids.data, 0);
      link.ints.set(mask.data, b * s);
      link.call(OPS.begin, b, s, rows);
      return { rows, scores: null };
    },
    step(state, tokens, o) {
      link.ints.set(tokens);
      link.call(OPS.step, tokens.length);
      const logits = link.floats.subarray(0, tokens.length * V);
      if (o?.logSoftmax !== true) return logits;
      state.scores ??= new Float32Array(state.rows * V);
      logSoftmaxRows(logits, V, state.scores);
      return state.scores;
    },
    reorder(state, parents) {
      link.ints.set(parents);
      link.call(OPS.reorder, parents.length);
    },
    free() { link.call(OPS.free); },
  };
}

// ---- timing of the stepper's calls ------------------------------------------------------------------------------

const zeroSplit = () => ({ total: 0, begin: 0, first: 0, next: 0, nextSteps: 0, reorder: 0, free: 0, rowSteps: 0, candidates: 0, candidateRows: 0 });

/**
 * The stepper with each call's time added to split (begin, the first step, later steps, reorder (and keep), free),
 * and the rows it stepped (rowSteps). keep is passed on where the stepper has it (attnwasm's: the sources the search
 * is done with leave the state; onnxruntime-web's stepper, as transformers.js, steps every row to the end).
 */
function timed(stepper, split) {
  const clock = (k, f) => (...a) => {
    const t0 = performance.now();
    try { return f(...a); } finally { split[k] += performance.now() - t0; }
  };
  const steps = new WeakMap();
  // A step's time: the first of a state, or a later one.
  const stepClock = (f) => (state, tokens, o) => {
    const n = steps.get(state);
    steps.set(state, n + 1);
    const t0 = performance.now();
    try { return f(state, tokens, o); } finally {
      const ms = performance.now() - t0;
      split.rowSteps += tokens.length;
      if (n === 0) split.first += ms; else { split.next += ms; split.nextSteps++; }
    }
  };
  return {
    vocabSize: stepper.vocabSize,
    logSoftmax: stepper.logSoftmax,
    begin: clock('begin', (rows, capacity) => { const st = stepper.begin(rows, capacity); steps.set(st, 0); return st; }),
    step: stepClock((state, tokens, o) => stepper.step(state, tokens, o)),
    // The bounded pass (boundedHead, greedy): the bounds' step counts as a step, the candidates' choice (select)
    // and exact logits as part of the step they complete.
    ...(stepper.stepBounded ? {
      bounded: (state) => stepper.bounded(state),
      stepBounded: stepClock((state, tokens) => stepper.stepBounded(state, tokens)),
      select: (state, counts, exclude, cap) => {
        const t0 = performance.now();
        try { return stepper.select(state, counts, exclude, cap); } finally {
          split[steps.get(state) === 1 ? 'first' : 'next'] += performance.now() - t0;
        }
      },
      exact: (state, row, ids) => {
        const t0 = performance.now();
        split.candidates += ids.length;
        split.candidateRows++;
        try { return stepper.exact(state, row, ids); } finally {
          split[steps.get(state) === 1 ? 'first' : 'next'] += performance.now() - t0;
        }
      },
    } : {}),
    reorder: clock('reorder', (state, parents) => stepper.reorder(state, parents)),
    ...(stepper.keep ? { keep: clock('reorder', (state, places) => stepper.keep(state, places)) } : {}),
    free: clock('free', (state) => stepper.free(state)),
  };
}

// ---- the engines ------------------------------------------------------------------------------------------------

const BATCH_MODES = ['batch', 'ragged', 'raggedBeam'];
// The workloads' modes, as --workloads names them.
const WORKLOAD_MODES = ['greedy', 'beam', 'first', 'batch', 'ragged', 'raggedBeam'];

/** The sources as one right-padded batch (pad ids) with its attention mask. */
function paddedBatch(ids, pad) {
  const B = ids.length, S = Math.max(...ids.map((x) => x.length));
  const src = { data: new Int32Array(B * S).fill(pad), shape: [B, S] }, mask = { data: new Int32Array(B * S), shape: [B, S] };
  ids.forEach((x, r) => { src.data.set(x, r * S); mask.data.fill(1, r * S, r * S + x.length); });
  return { src, mask };
}

/** Both engines of one model: run(engine, ids, mode) → the sequence, with its stepper's calls timed into split. */
async function openEngines(name, aw, which = ['attnwasm', 'ort']) {
  const dir = join(DIR, name);
  const config = readJson(join(dir, 'model', 'config.json'));
  const genPath = join(dir, 'model', 'generation_config.json');
  const generation = existsSync(genPath) ? readJson(genPath) : null;
  const layers = config.decoder_layers ?? config.num_decoder_layers ?? config.num_layers;
  const V = config.vocab_size;
  const e = { name, dir, config, generation, V, split: zeroSplit() };
  e.models = {};
  for (const [engine, options] of [['attnwasm', {}], ['attnwasm-q8', { dtype: 'q8' }], ['attnwasm-bounded', { boundedHead: true }]]) {
    if (!which.includes(engine)) continue;
    const t0 = performance.now();
    const m = await aw.loadModel(join(dir, 'model'), options);
    (e.loadMs ??= {})[engine] = performance.now() - t0;
    // Time the calls of the model's own stepper (an instance property over Seq2SeqLM#_stepper; nothing else changes).
    const own = m._stepper;
    m._stepper = (ids, mask) => timed(own.call(m, ids, mask), e.split);
    e.models[engine] = m;
  }
  e.model = e.models.attnwasm ?? null;
  if (which.includes('ort')) {
    const t0 = performance.now();
    e.link = await OrtLink.open(dir, layers, V, 4 * SENTENCES);  // beam 4 over the batch: 4 rows a source
    (e.loadMs ??= {}).ort = performance.now() - t0;
  }
  const settings = (o) => resolveGenerationConfig(generation, config, o);
  const pad = config.pad_token_id ?? 0;
  e.run = async (engine, ids, mode, maxNewTokens) => {
    const o = { numBeams: mode === 'beam' || mode === 'raggedBeam' ? 4 : 1, maxNewTokens };
    // Ragged: the batch with sentences that end at different lengths, as a translation's do. This random checkpoint
    // repeats one token to the end, so no_repeat_ngram_size 1 makes its outputs vary and e.stops (tokens met at
    // spread-out positions of a first run: benchModel sets them) end them, for both engines alike.
    if (mode === 'ragged' || mode === 'raggedBeam') Object.assign(o, { noRepeatNgramSize: 1, eosTokenId: e.stops });
    if (BATCH_MODES.includes(mode)) {  // ids: the sources, as one right-padded batch with its attention mask
      const B = ids.length, { src, mask } = paddedBatch(ids, pad);
      if (engine !== 'ort') return (await e.models[engine].generate({ inputIds: src, attentionMask: mask }, o)).sequences;
      return (await generateSeq2Seq(timed(ortStepper(e.link, src, mask, V), e.split), settings(o), { batchSize: B })).sequences;
    }
    if (engine !== 'ort') {
      const m = e.models[engine];
      if (mode === 'beam') return (await m.generate({ inputIds: [ids] }, o)).sequences[0];
      const g = m.generate({ inputIds: [ids] }, o);
      if (mode === 'first') { await g.next(); await g.return(); return null; }
      for await (const _ of g);  // eslint-disable-line no-unused-vars
      return g.sequence;
    }
    const src = { data: ids, shape: [1, ids.length] }, mask = { data: new Int32Array(ids.length).fill(1), shape: [1, ids.length] };
    const stepper = timed(ortStepper(e.link, src, mask, V), e.split);
    if (mode === 'beam') return (await generateSeq2Seq(stepper, settings(o), { batchSize: 1 })).sequences[0];
    const g = streamSeq2Seq(stepper, settings(o));
    if (mode === 'first') { await g.next(); await g.return(); return null; }
    for await (const _ of g);  // eslint-disable-line no-unused-vars
    return g.sequence;
  };
  e.close = async () => { for (const m of Object.values(e.models)) m.dispose(); await e.link?.close(); };
  return e;
}

/** Both steppers (and attnwasm's forward) on check.json's teacher-forced batch: max |logits − torch|. */
function checkAgainstTorch(e) {
  const c = readJson(join(e.dir, 'check.json'));
  const bytes = Buffer.from(c.logits.base64, 'base64');
  const want = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const [b, s] = c.idsShape, [, T] = c.decoderShape, V = e.V;
  const ids = { data: Int32Array.from(c.inputIds), shape: [b, s] }, mask = { data: Int32Array.from(c.attentionMask), shape: [b, s] };
  const dec = Int32Array.from(c.decoderInputIds);
  const out = {};
  const forced = (stepper) => {
    const state = stepper.begin(b, T);
    let d = 0;
    try {
      for (let t = 0; t < T; t++) {
        const logits = stepper.step(state, Int32Array.from({ length: b }, (_, r) => dec[r * T + t]));
        for (let r = 0; r < b; r++) for (let v = 0; v < V; v++) d = Math.max(d, Math.abs(logits[r * V + v] - want[(r * T + t) * V + v]));
      }
    } finally { stepper.free(state); }
    return d;
  };
  if (e.model) {
    const f = e.model.forward({ inputIds: ids, attentionMask: mask, decoderInputIds: { data: dec, shape: [b, T] } }).logits.data;
    out['attnwasm forward'] = want.reduce((m, w, i) => Math.max(m, Math.abs(f[i] - w)), 0);
    const src = e.model._sources({ inputIds: ids, attentionMask: mask }, {}, 'inputIds');
    out['attnwasm stepper'] = forced(e.model._stepper(src.ids, src.mask));
  }
  if (e.link) out['ort stepper'] = forced(ortStepper(e.link, ids, mask, V));
  for (const [k, d] of Object.entries(out)) if (!(d < 1e-3)) throw new Error(`${e.name} ${k}: max |logits - torch| ${d}`);
  if (e.models['attnwasm-q8']) {  // int8 weights: no float32 tolerance, shown for what it is
    const q = e.models['attnwasm-q8'], src = q._sources({ inputIds: ids, attentionMask: mask }, {}, 'inputIds');
    out['attnwasm q8 stepper (not checked)'] = forced(q._stepper(src.ids, src.mask));
  }
  e.split = zeroSplit();
  e.link?.stats();
  return out;
}

// ---- children: a fresh process for first calls and for memory ---------------------------------------------------

async function childFirstCall(o) {
  const name = o.models[0];
  let aw = null;
  if (o.engine === 'attnwasm') aw = await (await import('../bindings/index.js')).init({ threads: 1 });
  const e = await openEngines(name, aw, [o.engine]);
  const ids = sentences(name, e.config.eos_token_id)[0];
  const times = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const seq = await e.run(o.engine, ids, 'greedy', o.maxNewTokens);
    times.push({ ms: performance.now() - t0, steps: seq.length - 1, beginMs: e.split.begin, firstStepMs: e.split.first });
    e.split = zeroSplit();
  }
  await e.close();
  aw?.close();
  return { engine: o.engine, model: name, sourceTokens: ids.length, calls: times };
}

async function childMemory(o) {
  const name = o.models[0];
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads: 1 });
  const params = readJson(join(DIR, name, 'check.json')).parameters;
  const before = aw.memory();
  aw.resetPeakMemory();
  const t0 = performance.now();
  // 'f32-bounded': as stored, with boundedHead (the head's q8 copy beside it).
  const options = o.dtype === 'f32' ? undefined : o.dtype === 'f32-bounded' ? { boundedHead: true } : { dtype: o.dtype };
  const m = await aw.loadModel(join(DIR, name, 'model'), options);
  const loadMs = performance.now() - t0;
  const loaded = aw.memory();
  const ids = sentences(name, m.eosTokenId).reduce((a, x) => (x.length > a.length ? x : a));
  aw.resetPeakMemory();
  await m.generate({ inputIds: [ids] }, { numBeams: 4, maxNewTokens: o.maxNewTokens });
  const generated = aw.memory();
  m.dispose();
  const disposed = aw.memory();
  aw.close();
  return { model: name, dtype: o.dtype, params, loadMs, weightBytes: m.weightBytes, before, loaded, generated, disposed, longestSource: ids.length };
}

function child(o, args) {
  const out = execFileSync(process.execPath, [HERE, ...args], { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').pop());
}

// ---- main --------------------------------------------------------------------------------------------------------

/** The shape's work: FLOPs of the encoder and of the cross-attention keys / values over S source tokens, FLOPs and
 * float32 weight bytes of one decoder step of one row (self-attention, cross-attention's q and o, FFN, head). */
function shapeOf(c) {
  const E = c.d_model, F = c.encoder_ffn_dim ?? c.d_ff, Le = c.encoder_layers ?? c.num_layers;
  const Ld = c.decoder_layers ?? c.num_decoder_layers ?? c.num_layers, V = c.vocab_size;
  const stepWeights = Ld * (6 * E * E + 2 * E * F) + V * E;
  return {
    encoderFlops: (S) => 2 * Le * S * (4 * E * E + 2 * E * F) + 4 * Le * S * S * E,
    crossKvFlops: (S) => 2 * Ld * S * 2 * E * E,
    stepFlops: 2 * stepWeights,
    stepBytes: 4 * stepWeights,
    // attnwasm-bounded's greedy steps read the head's q8 copy only (its bounded pass: 288 bytes per 8 outputs and
    // 32 inputs; the candidates' exact logits: a few 16 KB panels).
    boundedStepBytes: 4 * (stepWeights - V * E) + Math.ceil(V / 8) * Math.ceil(E / 32) * 288,
  };
}

async function benchModel(name, aw, o) {
  const engines = ['attnwasm', 'ort', ...(o.q8 ? ['attnwasm-q8'] : []), ...(o.boundedHead ? ['attnwasm-bounded'] : [])];
  const e = await openEngines(name, aw, engines);
  const check = checkAgainstTorch(e);
  const srcs = sentences(name, e.config.eos_token_id);
  // The hand-off to the worker alone: a round trip with nothing to do.
  for (let i = 0; i < 200; i++) e.link.call(OPS.ping);
  const pings = Array.from({ length: 1000 }, () => { const t0 = performance.now(); e.link.call(OPS.ping); return performance.now() - t0; });
  e.link.stats();
  const r = { sourceTokens: srcs.map((x) => x.length), check, handoffUs: 1000 * median(pings), loadMs: e.loadMs, workloads: {}, disagreements: [] };
  const workloads = [
    ['greedy', 'greedy', srcs],
    ['beam 4', 'beam', srcs],
    ['first token', 'first', Array(5).fill(srcs[0])],  // 5 fresh calls per round
    ['greedy, one batch', 'batch', [srcs]],  // the 20 sources as one padded batch: translate(texts), transformers.js's pipeline
    // The same batch with sentences ending at different lengths (e.stops), greedy and beam 4: attnwasm drops the
    // sources it is done with from its steps, transformers.js steps every row to the end.
    ['greedy, one batch, ragged lengths', 'ragged', [srcs]],
    ['beam 4, one batch, ragged lengths', 'raggedBeam', [srcs]],
  ].filter(([, mode]) => !o.only || o.only.includes(mode));
  {  // e.stops: the tokens at spread-out positions of the even sentences' outputs (no_repeat_ngram_size 1)
    const { src, mask } = paddedBatch(srcs, e.config.pad_token_id ?? 0);
    const probe = await e.models.attnwasm.generate({ inputIds: src, attentionMask: mask }, { numBeams: 1, maxNewTokens: o.maxNewTokens, noRepeatNgramSize: 1 });
    const early = new Set(probe.sequences.flatMap((q) => [...q.slice(1, 4)]));  // none ends a sentence before its 4th token
    e.stops = [...new Set(probe.sequences.filter((_, i) => i % 2 === 0).map((q, i) => q[4 + ((7 * i) % Math.max(1, q.length - 4))]))]
      .filter((t) => t !== undefined && !early.has(t));
  }
  const warm = async (engine) => {
    for (const [, mode] of workloads) await e.run(engine, BATCH_MODES.includes(mode) ? srcs.slice(0, 4) : srcs[1], mode, o.maxNewTokens);
  };
  for (const engine of engines) { await warm(engine); await warm(engine); }
  e.split = zeroSplit();
  e.link.stats();
  const keys = Object.keys(zeroSplit());
  for (const [label, mode, list] of workloads) {
    const w = Object.fromEntries(engines.map((x) => [x, { ms: [], split: [], seqs: null }]));
    const worker = [];
    for (let k = 0; k < o.rounds; k++) {
      // Engines alternated: each round starts one further along the list.
      for (const engine of engines.map((_, i) => engines[(i + k) % engines.length])) {
        e.split = zeroSplit();
        const t0 = performance.now();
        const got = [];
        for (const ids of list) {
          const seq = await e.run(engine, ids, mode, o.maxNewTokens);
          if (BATCH_MODES.includes(mode)) got.push(...seq); else got.push(seq);
        }
        const ms = performance.now() - t0;
        w[engine].ms.push(ms);
        w[engine].split.push({ ...e.split, total: ms });
        if (engine === 'ort') worker.push(e.link.stats());
        w[engine].seqs ??= got;
      }
    }
    let generated = null;
    if (mode !== 'first') {
      const [a, b] = [w.attnwasm.seqs, w.ort.seqs];
      a.forEach((x, i) => {
        const y = b[i];
        const at = x.length === y.length ? x.findIndex((t, j) => t !== y[j]) : Math.min(x.length, y.length);
        if (at >= 0) r.disagreements.push({ workload: label, sentence: i, at, attnwasm: Array.from(x.slice(Math.max(0, at - 2), at + 3)), ort: Array.from(y.slice(Math.max(0, at - 2), at + 3)), lengths: [x.length, y.length] });
      });
      generated = Object.fromEntries(engines.map((x) => [x, w[x].seqs.reduce((n, q) => n + q.length - 1, 0)]));
    }
    const out = { perCallMs: {}, perSecond: {}, ratio: {}, split: {}, generated };
    const n = BATCH_MODES.includes(mode) ? list[0].length : list.length;  // sentences per round (figures are per sentence)
    for (const x of engines) {
      const med = median(w[x].ms);
      out.perCallMs[x] = med / n;
      out.perSecond[x] = 1000 * n / med;
      const m = Object.fromEntries(keys.map((k) => [k, median(w[x].split.map((s) => s[k])) / n]));
      m.search = median(w[x].split.map((s) => s.total - s.begin - s.first - s.next - s.reorder - s.free)) / n;
      out.split[x] = m;  // ms per sentence (nextSteps: per sentence too)
    }
    for (const x of engines) if (x !== 'ort') out.ratio[x] = out.perCallMs.ort / out.perCallMs[x];  // > 1: attnwasm faster
    // The same ratio round by round (both engines ran back to back in each round): its median and range, which a
    // machine whose speed drifts between rounds moves less than the ratio of the medians.
    out.roundRatio = Object.fromEntries(engines.filter((x) => x !== 'ort').map((x) => {
      const q = w.ort.ms.map((t, k) => t / w[x].ms[k]).sort((a, b) => a - b);
      return [x, { median: median(q), min: q[0], max: q[q.length - 1] }];
    }));
    out.ortWorker = Object.fromEntries(Object.keys(worker[0]).map((k) => [k, median(worker.map((s) => s[k])) / n]));
    r.workloads[label] = out;
  }
  const shape = shapeOf(e.config), S0 = srcs[0].length;
  const first = r.workloads['first token'];
  r.rates = {
    firstSourceTokens: S0,
    // attnwasm's begin: the encoder and every layer's cross-attention keys / values; ORT's encoder session alone.
    encoderGflops: first && {
      attnwasm: (shape.encoderFlops(S0) + shape.crossKvFlops(S0)) / first.split.attnwasm.begin / 1e6,
      ort: shape.encoderFlops(S0) / first.ortWorker.encoderMs / 1e6,
    },
    // A greedy step after the first reads every decoder weight and the head once (float32; with boundedHead the
    // head's q8 copy).
    stepBytes: shape.stepBytes,
    boundedStepBytes: shape.boundedStepBytes,
    greedyStepGBs: r.workloads.greedy && Object.fromEntries(engines.filter((x) => x !== 'attnwasm-q8').map((x) => {
      const s = r.workloads.greedy.split[x];
      return [x, (x === 'attnwasm-bounded' ? shape.boundedStepBytes : shape.stepBytes) / (s.next / s.nextSteps) / 1e6];
    })),
  };
  await e.close();
  return r;
}

async function main() {
  const o = args();
  const cpu = pinToOneCpu();  // both engines' threads on one CPU (lib.mjs); re-runs this script under taskset
  if (o.child === 'first') return console.log(JSON.stringify(await childFirstCall(o)));
  if (o.child === 'memory') return console.log(JSON.stringify(await childMemory(o)));
  for (const name of o.models) {
    if (!existsSync(join(DIR, name, 'decoder_with_past_model.onnx'))) throw new Error(`${join(DIR, name)} is missing: run /usr/bin/python3 bench/export_seq2seq_onnx.py`);
  }
  const result = { machine: describeMachine(), cpu, node: process.version, rounds: o.rounds, maxNewTokens: o.maxNewTokens, loadAverage: { start: loadavg() }, models: {} };
  const probe = await peakProbe();
  const peaks = [median(Array.from({ length: 5 }, () => probe(40)))];
  // First calls: each engine alone in a fresh process (V8 compiles wasm with Liftoff first, TurboFan later).
  if (o.firstCall) {
    for (const name of o.models) {
      result.models[name] = { firstCall: {} };
      for (const engine of ['attnwasm', 'ort']) {
        result.models[name].firstCall[engine] = child(o, ['--child', 'first', '--engine', engine, '--model', name, '--max-new-tokens', String(o.maxNewTokens)]);
      }
    }
  }
  const { init } = await import('../bindings/index.js');
  const aw = await init({ threads: 1 });
  for (const name of o.models) {
    result.models[name] = { ...result.models[name], ...(await benchModel(name, aw, o)) };
  }
  aw.close();
  peaks.push(median(Array.from({ length: 5 }, () => probe(40))));
  result.peakGflops = median(peaks);
  result.readGBs = (await readBandwidth()) / 1e9;
  if (o.memory) {
    result.memory = ['f32', 'q8', ...(o.boundedHead ? ['f32-bounded'] : [])].map((dtype) => child(o, ['--child', 'memory', '--model', 'marian', '--dtype', dtype, '--max-new-tokens', String(o.maxNewTokens)]));
  }
  result.loadAverage.end = loadavg();
  if (o.json) return console.log(JSON.stringify(result));
  report(result, o);
}

function report(result, o) {
  const f1 = (x) => x.toFixed(1), f2 = (x) => x.toFixed(2), MB = (b) => `${(b / 1e6).toFixed(1)} MB`;
  console.log(`${result.machine}; ${result.cpu === null ? 'not pinned to one CPU (no taskset): the engines\' threads may run on CPUs of different speeds' : `pinned to CPU ${result.cpu} (taskset): both engines' threads and the probes`}`);
  console.log(`Node ${result.node}, 1 thread, median of ${o.rounds} rounds (engines alternated), maxNewTokens ${o.maxNewTokens}; this run's SIMD peak ${f1(result.peakGflops)} GFLOP/s, read bandwidth ${f1(result.readGBs)} GB/s; load average ${result.loadAverage.start.map(f1).join(' ')} at the start, ${result.loadAverage.end.map(f1).join(' ')} at the end`);
  for (const [name, r] of Object.entries(result.models)) {
    console.log(`\n${name} (sources of ${Math.min(...r.sourceTokens)}–${Math.max(...r.sourceTokens)} tokens); max |logits - torch|: ${Object.entries(r.check).map(([k, v]) => `${k} ${v.toExponential(1)}`).join(', ')}; onnxruntime-web hand-off round trip ${f1(r.handoffUs)} µs`);
    for (const [label, w] of Object.entries(r.workloads)) {
      const others = Object.keys(w.ratio).filter((x) => x !== 'attnwasm');
      const rate = label === 'first token'
        ? `attnwasm ${f1(w.perCallMs.attnwasm)} ms, onnxruntime-web ${f1(w.perCallMs.ort)} ms: ${f2(w.ratio.attnwasm)}x faster (target 1.5x)`
        : `attnwasm ${f2(w.perSecond.attnwasm)} sentences/s, onnxruntime-web ${f2(w.perSecond.ort)}: ${f2(w.ratio.attnwasm)}x (target 2x)`;
      const extra = others.map((x) => `; ${x} ${label === 'first token' ? `${f1(w.perCallMs[x])} ms` : `${f2(w.perSecond[x])} sentences/s`}: ${f2(w.ratio[x])}x onnxruntime-web (f32)`).join('');
      const gen = w.generated ? ` (tokens generated: ${Object.entries(w.generated).map(([x, n]) => `${x} ${n}`).join(', ')}; rows stepped per sentence: ${Object.entries(w.split).map(([x, sp]) => `${x} ${f1(sp.rowSteps)}`).join(', ')})` : '';
      const rr = w.roundRatio.attnwasm;
      console.log(`  ${label}: ${rate}${extra}${gen}; round by round: median ${f2(rr.median)}x (${f2(rr.min)}–${f2(rr.max)})`);
      for (const [engine, s] of Object.entries(w.split)) {
        const per = (s.nextSteps ? ` (${f1(s.next / s.nextSteps)} ms × ${f1(s.nextSteps)})` : '') +
          (s.candidateRows ? ` (the bounded pass: ${f2(s.candidates / s.candidateRows)} candidates a row)` : '');
        console.log(`    ${engine.padEnd(11)} per sentence ${f1(s.total)} ms: begin ${f1(s.begin)}, first step ${f1(s.first)}, later steps ${f1(s.next)}${per}, reorders ${f1(s.reorder)}, free ${f1(s.free)}, outside the stepper (the search in JS, event-loop turns) ${f1(s.search)} = ${f1(100 * s.search / s.total)} %`);
      }
      const k = w.ortWorker;
      console.log(`    ort worker: encoder ${f1(k.encoderMs)}, decoder_model ${f1(k.firstMs)}, decoder_with_past ${f1(k.nextMs)}, past gather ${f1(k.reorderMs)}, logits copy ${f1(k.copyMs)} ms per sentence`);
    }
    const t = r.rates;
    const rates = [
      t.encoderGflops && `encoder over the ${t.firstSourceTokens}-token source ${f1(t.encoderGflops.attnwasm)} GFLOP/s attnwasm (begin: encoder + cross-attention K/V), ${f1(t.encoderGflops.ort)} onnxruntime-web (encoder session)`,
      t.greedyStepGBs && `a greedy step reads ${MB(t.stepBytes)} of float32 weights: ${f1(t.greedyStepGBs.attnwasm)} GB/s attnwasm, ${f1(t.greedyStepGBs.ort)} onnxruntime-web${t.greedyStepGBs['attnwasm-bounded'] ? `, ${f1(t.greedyStepGBs['attnwasm-bounded'])} attnwasm-bounded (${MB(t.boundedStepBytes)}: the head's q8 copy)` : ''} (read bandwidth ${f1(result.readGBs)})`,
    ].filter(Boolean);
    if (rates.length) console.log(`  rates: ${rates.join('; ')}`);
    for (const d of r.disagreements) console.log(`  DISAGREE ${d.workload} sentence ${d.sentence} at ${d.at}: attnwasm ${d.attnwasm.join(' ')} | ort ${d.ort.join(' ')} (lengths ${d.lengths.join(' / ')})`);
    if (r.disagreements.length === 0) console.log('  attnwasm and onnxruntime-web generated the same sequences');
    for (const [engine, c] of Object.entries(r.firstCall ?? {})) {
      console.log(`  first call in a fresh process, ${engine}: greedy, ${c.sourceTokens}-token source, ${c.calls[0].steps} tokens: ${f1(c.calls[0].ms)} ms (begin ${f1(c.calls[0].beginMs)}, first step ${f1(c.calls[0].firstStepMs)}); the next calls ${c.calls.slice(1).map((x) => f1(x.ms)).join(', ')} ms`);
    }
  }
  for (const m of result.memory ?? []) {
    const per = (b) => (b / m.params).toFixed(2);
    console.log(`\nmemory, ${m.model} ${m.dtype} (${(m.params / 1e6).toFixed(1)} M parameters, a fresh process): wasm heap ${MB(m.before.heapBytes)} after init(); after loadModel ${MB(m.loaded.heapBytes)} = ${per(m.loaded.heapBytes)} B/param (${m.dtype === 'f32-bounded' ? 'no target: the float32 target is as loaded by default' : `target ${m.dtype === 'q8' ? 1.4 : 4.3}`}; peak in use ${per(m.loaded.peakInUseBytes)}, in use ${per(m.loaded.inUseBytes)}, weights ${per(m.weightBytes)}); ` +
      `a beam-4 generate (${m.longestSource}-token source): heap ${MB(m.generated.heapBytes)}, peak in use ${MB(m.generated.peakInUseBytes - m.loaded.inUseBytes)} above the weights; after dispose(): in use ${MB(m.disposed.inUseBytes)}, heap ${MB(m.disposed.heapBytes)} (wasm memory does not shrink)`);
  }
}

if (!isMainThread && workerData?.role === 'ort-engine') await ortEngine(workerData);
else await main();
