// Whisper's log-mel features of 30 s of audio (attnwasm/audio, pure JS) against transformers' own feature extractor
// (v4.40.2 through tools/hf_env: its numpy path, and its torch path, which transformers takes when torch is
// installed), on the same samples; plus the resampler (30 s at 44.1 / 48 kHz → 16 kHz) and WAV decoding. One Node
// process, one thread. Not a test. Medians of --runs timed calls after --warmup calls; the first call (cold, V8's
// baseline tier) is reported apart. Python's times come from one child process (timeit, the same counts).
// Usage: node bench/whisper_features.mjs [--runs 15] [--warmup 3] [--mels 80|128] [--no-python] [--json]
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine, median } from './lib.mjs';
import { WhisperFeatureExtractor, resample, decodeWav } from '../bindings/audio/index.js';
import { signal } from '../tests/data/whisper_signals.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? Number(argv[i + 1]) : dflt; };
const RUNS = opt('--runs', 15), WARMUP = opt('--warmup', 3), MELS = opt('--mels', 80);
const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** 30 s of speech-like audio: a chirp and noise, as the goldens' 'speechy' case. */
function audio(rate, seconds = 30) {
  const n = Math.round(rate * seconds);
  return signal({ kind: 'mix', samples: n, parts: [{ kind: 'chirp', samples: n, f0: 80, f1: 4000, amp: 0.5 }, { kind: 'noise', samples: n, seed: 44, ampLog2: -6 }] }, rate);
}

function time(f) {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
}

function timed(name, f) {
  const first = time(f);
  for (let i = 1; i < WARMUP; i++) f();
  const ts = Array.from({ length: RUNS }, () => time(f));
  return { name, firstMs: first, medianMs: median(ts), minMs: Math.min(...ts), runs: RUNS };
}

function wav16(x, rate) {
  const b = new Uint8Array(44 + 2 * x.length), v = new DataView(b.buffer);
  [...'RIFF'].forEach((c, i) => v.setUint8(i, c.charCodeAt(0)));
  v.setUint32(4, 36 + 2 * x.length, true);
  [...'WAVEfmt '].forEach((c, i) => v.setUint8(8 + i, c.charCodeAt(0)));
  v.setUint32(16, 16, true); v.setUint16(20, 1, true); v.setUint16(22, 1, true); v.setUint32(24, rate, true);
  v.setUint32(28, 2 * rate, true); v.setUint16(32, 2, true); v.setUint16(34, 16, true);
  [...'data'].forEach((c, i) => v.setUint8(36 + i, c.charCodeAt(0)));
  v.setUint32(40, 2 * x.length, true);
  for (let i = 0; i < x.length; i++) v.setInt16(44 + 2 * i, Math.max(-32768, Math.min(32767, Math.round(x[i] * 32768))), true);
  return b;
}

function python(x) {
  const dir = mkdtempSync(join(tmpdir(), 'aw-bench-'));
  try {
    const input = join(dir, 'x.f32');
    writeFileSync(input, new Uint8Array(x.buffer));
    const script = `
import sys, time, json, statistics
sys.path.insert(0, ${JSON.stringify(join(ROOT, 'tools'))}); import hf_env; hf_env.setup()
import numpy as np, torch
torch.set_num_threads(1)
import transformers.models.whisper.feature_extraction_whisper as fxw
from transformers import WhisperFeatureExtractor
x = np.fromfile(${JSON.stringify(input)}, dtype='<f4')
fe = WhisperFeatureExtractor(feature_size=${MELS})
out = {}
for name, on in (('numpy', False), ('torch', True)):
    fxw.is_torch_available = (lambda: True) if on else (lambda: False)
    t0 = time.perf_counter(); fe(x, sampling_rate=16000, return_tensors='np'); first = (time.perf_counter() - t0) * 1e3
    for _ in range(${WARMUP - 1}): fe(x, sampling_rate=16000, return_tensors='np')
    ts = []
    for _ in range(${RUNS}):
        t0 = time.perf_counter(); fe(x, sampling_rate=16000, return_tensors='np'); ts.append((time.perf_counter() - t0) * 1e3)
    out[name] = {'firstMs': first, 'medianMs': statistics.median(ts), 'minMs': min(ts), 'runs': ${RUNS}}
print(json.dumps(out))`;
    return JSON.parse(execFileSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const x16 = audio(16000), x44 = audio(44100), x48 = audio(48000);
const fe = new WhisperFeatureExtractor({ feature_size: MELS });
const rows = [
  timed(`features, 30 s, ${MELS} mel bins`, () => fe.features(x16)),
  timed('resample 44.1 kHz → 16 kHz, 30 s', () => resample(x44, 44100, 16000)),
  timed('resample 48 kHz → 16 kHz, 30 s', () => resample(x48, 48000, 16000)),
  timed('decodeWav, 30 s 16-bit mono 16 kHz', (() => { const b = wav16(x16, 16000); return () => decodeWav(b); })()),
];
let py = null;
if (!argv.includes('--no-python')) {
  try { py = python(x16); } catch (e) { console.error(`(transformers not timed: ${e.message.split('\n')[0]})`); }
}
const machine = describeMachine();
if (argv.includes('--json')) {
  console.log(JSON.stringify({ machine, node: process.version, loadavg: loadavg()[0], rows, transformers: py }, null, 1));
} else {
  console.log(`Whisper features benchmark — ${machine}; Node ${process.version}; load average ${loadavg()[0].toFixed(2)}; median of ${RUNS} after ${WARMUP} warm-up calls`);
  console.log('| workload | median ms | min ms | first call ms |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(`| attnwasm/audio: ${r.name} | ${r.medianMs.toFixed(1)} | ${r.minMs.toFixed(1)} | ${r.firstMs.toFixed(1)} |`);
  if (py) {
    for (const [k, r] of Object.entries(py)) console.log(`| transformers ${k} path: features, 30 s, ${MELS} mel bins | ${r.medianMs.toFixed(1)} | ${r.minMs.toFixed(1)} | ${r.firstMs.toFixed(1)} |`);
    console.log(`\nattnwasm/audio features vs transformers' numpy path: ${(py.numpy.medianMs / rows[0].medianMs).toFixed(2)}× its speed; vs its torch path: ${(py.torch.medianMs / rows[0].medianMs).toFixed(2)}×`);
  }
}
