// Shared helpers of the JS tests: golden decoding and error measurement,
// bitwise comparison, and what the layer tests of tests/js/layers/ share (the
// golden runners, the error-table runner and the valid calls it checks after
// each case).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';

const DATA = new URL('../data/', import.meta.url);

const NONFINITE = { inf: Infinity, '-inf': -Infinity, nan: NaN };

/** Decodes a golden tensor {shape, dtype, data} into the API's { data, shape }. */
export function decodeTensor(t) {
  if (t === null || t === undefined) return null;
  if (t.dtype === 'bool') return { data: Uint8Array.from(t.data), shape: t.shape };
  return { data: Float32Array.from(t.data, (x) => (typeof x === 'string' ? NONFINITE[x] : x)), shape: t.shape };
}

export function loadGoldens(file) {
  return JSON.parse(readFileSync(new URL(`goldens/${file}`, DATA), 'utf8'));
}

/** max |a - b| over all elements; Infinity if shapes differ or a NaN appears. */
export function maxAbsDiff(actual, expected) {
  if (JSON.stringify(actual.shape) !== JSON.stringify(expected.shape)) return Infinity;
  let m = 0;
  for (let i = 0; i < expected.data.length; i++) {
    const d = Math.abs(actual.data[i] - expected.data[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}

/** Deterministic pseudo-random Float32Array in [-1, 1). */
export function randomData(n, seed = 1) {
  let s = seed >>> 0 || 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    out[i] = (s / 2 ** 32) * 2 - 1;
  }
  return out;
}

export function randomTensor(shape, seed) {
  return { data: randomData(shape.reduce((a, b) => a * b, 1), seed), shape };
}

/** Bitwise equality of two Float32Arrays (NaN payloads and -0 included). */
export function assertSameBits(a, b, what) {
  assert.deepEqual(a.shape, b.shape, `${what}: shape`);
  const x = new Uint32Array(a.data.buffer, a.data.byteOffset, a.data.length);
  const y = new Uint32Array(b.data.buffer, b.data.byteOffset, b.data.length);
  assert.equal(x.length, y.length, `${what}: length`);
  for (let i = 0; i < x.length; i++) {
    if (x[i] !== y[i]) assert.fail(`${what}: element ${i} differs: ${a.data[i]} vs ${b.data[i]}`);
  }
}

export function causalMask(L) {
  const data = new Float32Array(L * L);
  for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) data[i * L + j] = -Infinity;
  return { data, shape: [L, L] };
}

// ---- the SDPA and MHA goldens (tests/data/goldens/{sdpa,mha}.json) ----
// Tolerance: max |attnwasm − torch| ≤ 1e-5 for outputs of order 1.
// Why 1e-5: both sides compute in float32 but sum in different orders (SIMD
// lanes, blocked GEMM, q scaled before vs after the dot product); the observed
// differences are ~1e-7 to 1e-6, so 1e-5 leaves headroom yet catches any
// semantic error (a wrong mask, head or scale changes values by ≥ 1e-3).
export const ATOL = 1e-5;

export function check(name, what, actual, expected, worst) {
  const d = maxAbsDiff(actual, expected);
  worst.value = Math.max(worst.value, d);
  assert.ok(
    d <= ATOL,
    `${name}: ${what} max abs error ${d} > ${ATOL} (shape ${JSON.stringify(actual.shape)} vs ${JSON.stringify(expected.shape)})`,
  );
}

/** The constructor arguments of an mha.json case's module. */
export function mhaGoldenArgs(c) {
  const cfg = c.config;
  return [cfg.embedDim, cfg.numHeads, {
    dropout: cfg.dropout ?? 0,
    bias: cfg.bias,
    addBiasKv: cfg.addBiasKv,
    addZeroAttn: cfg.addZeroAttn,
    kdim: cfg.kdim,
    vdim: cfg.vdim,
    batchFirst: cfg.batchFirst,
  }];
}

/** An mha.json case's state dict and forward arguments (query, key, value, options). */
export function mhaGoldenCall(c) {
  const sd = Object.fromEntries(Object.entries(c.stateDict).map(([k, v]) => [k, decodeTensor(v)]));
  const query = decodeTensor(c.query);
  const key = c.selfAttention ? query : decodeTensor(c.key);
  const value = c.selfAttention ? query : decodeTensor(c.value);
  const options = {
    keyPaddingMask: decodeTensor(c.keyPaddingMask),
    attnMask: decodeTensor(c.attnMask),
    needWeights: c.needWeights,
    averageAttnWeights: c.averageAttnWeights,
    isCausal: c.isCausal,
  };
  return { sd, args: [query, key, value, options] };
}

// ---- the Transformer-block goldens (tests/data/goldens/transformer/*.safetensors) ----
// Written by tests/data/make_transformer_goldens.py with torch 1.13, fixed
// seeds; read with aw.loadSafetensors — so the goldens also exercise the
// safetensors reader, F16 and BF16 included — and the module its metadata
// describes is built, loaded and run through the JS API. Tolerance per case
// from its metadata: |got − expected| ≤ atol + rtol·|expected|, 1e-5 for
// elementwise layers and 1e-4 for attention stacks (float32 sums in a
// different order, through up to 4 layers of order-1 activations).
const TRANSFORMER_GOLDENS = new URL('../data/goldens/transformer/', import.meta.url);

/** Which golden files belong to which layer's test file (tests/js/layers/). */
export const GOLDEN_FILES = {
  Linear: /^linear_/,
  LayerNorm: /^layernorm_/,
  Embedding: /^embedding/,
  activations: /^(relu|gelu)/,
  TransformerEncoderLayer: /^enc_layer_/,
  TransformerDecoderLayer: /^dec_layer_/,
  TransformerEncoder: /^enc_stack/,
  TransformerDecoder: /^dec_stack/,
  Transformer: /^transformer_/,
  'positional encodings': /^(sinusoidal_pe|learned_pe)_/,
  PatchEmbedding: /^(patch_embed_|vit_tiny)/,
};

export function transformerGoldenFiles(re = /./) {
  return goldenFiles(TRANSFORMER_GOLDENS, re);
}

// ---- the small-LM block goldens (tests/data/goldens/lm/blocks/*.safetensors) ----
// Written by tests/data/make_lm_goldens.py (torch 1.13 has no nn.RMSNorm, RoPE
// module, enable_gqa or causal_lower_right: float64 from the formulas of
// tools/causal_lm.py), in the layout of the Transformer-block goldens; the
// same runner. Tolerances from each file: 1e-5 + 1e-5·|expected| elementwise
// (RMSNorm, SiLU, RoPE), 1e-4 + 1e-4·|expected| for attention.
const LM_BLOCK_GOLDENS = new URL('../data/goldens/lm/blocks/', import.meta.url);

/** Which LM block golden files belong to which test file (tests/js/layers/). */
export const LM_BLOCK_FILES = {
  RMSNorm: /^rmsnorm_/,
  SiLU: /^silu/,
  RotaryPositionalEmbeddings: /^rope_/,
  scaledDotProductAttention: /^sdpa_/,
};

/** The golden folders a layer's goldens may live in: their files and which layer each file belongs to. */
const GOLDEN_SETS = {
  transformer: { dir: TRANSFORMER_GOLDENS, groups: GOLDEN_FILES },
  lm: { dir: LM_BLOCK_GOLDENS, groups: LM_BLOCK_FILES },
};

function goldenFiles(dir, re = /./) {
  return readdirSync(dir).filter((f) => f.endsWith('.safetensors') && re.test(f)).sort();
}

/** Builds a module from its golden description (torch-like constructors), in runtime `rt`. */
export function buildFromSpec(rt, spec) {
  switch (spec.module) {
    case 'TransformerEncoder':
    case 'TransformerDecoder': {
      const Layer = spec.module === 'TransformerEncoder' ? rt.TransformerEncoderLayer : rt.TransformerDecoderLayer;
      const layer = new Layer(...spec.layer.args, spec.layer.options);
      const norm = spec.norm ? new rt.LayerNorm(...spec.norm.args, spec.norm.options) : null;
      const stack = new rt[spec.module](layer, spec.numLayers, { norm });
      layer.dispose();
      norm?.dispose();
      return stack;
    }
    case 'ReLU':
      return new rt.ReLU();
    case 'GELU':
      return new rt.GELU(spec.options);
    default:
      return new rt[spec.module](...(spec.args ?? []), spec.options);
  }
}

function subStateDict(tensors, prefix) {
  const out = {};
  for (const [k, v] of Object.entries(tensors)) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
  return out;
}

function load(module, tensors, prefix) {
  if (module.loadStateDict) module.loadStateDict(subStateDict(tensors, prefix));
}

function worstExcess(got, want, atol, rtol) {
  assert.deepEqual(got.shape, want.shape, 'shape');
  let worst = 0, at = -1, maxAbs = 0;
  for (let i = 0; i < want.data.length; i++) {
    const d = Math.abs(got.data[i] - want.data[i]);
    if (!(d <= maxAbs)) maxAbs = Number.isNaN(d) ? Infinity : d;
    const excess = d / (atol + rtol * Math.abs(want.data[i]));
    if (!(excess <= worst)) { worst = Number.isNaN(excess) ? Infinity : excess; at = i; }
  }
  return { worst, at, maxAbs };
}

/**
 * A golden file's tensors, case description, inputs and forward options. An
 * LM block golden's attnMask "causalLowerRight" / "causalUpperLeft" becomes
 * that mask object of the call's (L, S), made in runtime `rt`.
 */
function readGolden(rt, file, dir = TRANSFORMER_GOLDENS) {
  const { tensors, metadata } = rt.loadSafetensors(readFileSync(new URL(file, dir)), { metadata: true });
  const spec = JSON.parse(metadata.case);
  const inputs = spec.inputs.map((n) => tensors[`input.${n}`]);
  const arg = (k, v) => {
    if (typeof v === 'string' && v.startsWith('input.')) return tensors[v];
    if (k === 'attnMask' && typeof v === 'string') return rt[v](inputs[0].shape.at(-2), inputs[1].shape.at(-2));
    return v;
  };
  const options = Object.fromEntries(Object.entries(spec.forward ?? {}).map(([k, v]) => [k, arg(k, v)]));
  return { tensors, spec, inputs, options };
}

/** Runs a golden's module (or function) in runtime `rt` on its inputs. */
function runGolden(rt, module, spec, inputs, options) {
  const opts = Object.keys(options).length ? [options] : [];
  if (spec.module === 'scaledDotProductAttention') return rt.scaledDotProductAttention(...inputs, ...opts).output;
  return module.forward(...inputs, ...opts);
}

/**
 * The tests `golden <file>` of one layer (GOLDEN_FILES[layer]) through `aw`,
 * and `golden summary: worst max abs error per module`, which also checks
 * that the layer has at least `minFiles` golden files and that every golden
 * file belongs to a layer.
 */
export function transformerGoldenTests(aw, layer, minFiles) {
  goldenTests(aw, 'transformer', layer, minFiles);
}

/** The same for the LM block goldens of `layer` (LM_BLOCK_FILES[layer]). */
export function lmBlockGoldenTests(aw, layer, minFiles) {
  goldenTests(aw, 'lm', layer, minFiles);
}

function goldenTests(aw, set, layer, minFiles) {
  const { dir, groups } = GOLDEN_SETS[set];
  const files = goldenFiles(dir, groups[layer]);
  const summary = [];
  for (const file of files) {
    test(`golden ${file}`, () => {
      const { tensors, spec, inputs, options } = readGolden(aw, file, dir);
      const checks = [];
      const made = [];
      try {
        if (spec.module === 'VitTiny') {
          const [patch, pos, encoder, head] = ['patch', 'pos', 'encoder', 'head'].map((p) => {
            const m = buildFromSpec(aw, spec[p]);
            made.push(m);
            load(m, tensors, `param.${p}.`);
            return m;
          });
          const features = encoder.forward(pos.forward(patch.forward(inputs[0])));
          const [B, T, D] = features.shape;
          const cls = new Float32Array(B * D);
          for (let b = 0; b < B; b++) cls.set(features.data.subarray(b * T * D, b * T * D + D), b * D);
          checks.push(['features', features, tensors['expected.features']]);
          checks.push(['output', head.forward({ data: cls, shape: [B, D] }), tensors['expected.output']]);
        } else {
          const m = spec.module === 'scaledDotProductAttention' ? null : buildFromSpec(aw, spec);
          if (m) made.push(m);
          if (m) load(m, tensors, 'param.');
          checks.push(['output', runGolden(aw, m, spec, inputs, options), tensors['expected.output']]);
        }
        for (const [what, got, want] of checks) {
          const { worst, at, maxAbs } = worstExcess(got, want, spec.atol, spec.rtol);
          summary.push({ name: spec.name, module: spec.module, what, maxAbs, paramDtype: spec.paramDtype ?? 'F32' });
          assert.ok(worst <= 1, `${spec.name} ${what}: at index ${at} got ${got.data[at]}, expected ${want.data[at]} (atol ${spec.atol}, rtol ${spec.rtol}); max abs error ${maxAbs}`);
        }
      } finally {
        for (const m of made) m.dispose?.();
      }
    });
  }

  test('golden summary: worst max abs error per module', (t) => {
    const per = {};
    for (const s of summary) {
      const k = `${s.module}${s.paramDtype !== 'F32' ? ` (${s.paramDtype})` : ''}`;
      per[k] = Math.max(per[k] ?? 0, s.maxAbs);
    }
    for (const [k, v] of Object.entries(per)) t.diagnostic(`${k}: ${v.toExponential(2)}`);
    assert.ok(files.length >= minFiles, `expected the ${layer} golden files, found ${files.length}`);
    const orphans = goldenFiles(dir).filter((f) => !Object.values(groups).some((re) => re.test(f)));
    assert.deepEqual(orphans, [], `golden files no layer test runs (tests/js/helpers.mjs ${set === 'lm' ? 'LM_BLOCK_FILES' : 'GOLDEN_FILES'})`);
  });
}

/**
 * The Transformer-block goldens of `layer` through the pthreads build `mt`:
 * within the same tolerances of torch, and bit-identical to the single-thread
 * build `st`.
 */
export function assertGoldensThroughThreads(mt, st, layer, minFiles, set = 'transformer') {
  const { dir, groups } = GOLDEN_SETS[set];
  const files = goldenFiles(dir, groups[layer]);
  assert.ok(files.length >= minFiles, `found ${files.length} golden files`);
  for (const file of files) {
    const { tensors, spec, inputs, options } = readGolden(mt, file, dir);
    const sd = subStateDict(tensors, 'param.');
    const outs = [mt, st].map((rt) => {
      const m = spec.module === 'scaledDotProductAttention' ? null : buildFromSpec(rt, spec);
      try {
        if (m?.loadStateDict) m.loadStateDict(sd);
        return runGolden(rt, m, spec, inputs, options);
      } finally {
        m?.dispose?.();
      }
    });
    const want = tensors['expected.output'];
    for (let i = 0; i < want.data.length; i++) {
      const d = Math.abs(outs[0].data[i] - want.data[i]);
      if (!(d <= spec.atol + spec.rtol * Math.abs(want.data[i]))) assert.fail(`${file}: index ${i}: ${outs[0].data[i]} vs ${want.data[i]}`);
    }
    assertSameBits(outs[0], outs[1], file);
  }
}

// ---- the non-finite goldens (tests/data/goldens/nonfinite.json) ----
// NaN and ±Infinity in input data are not errors: they propagate as in PyTorch.
// Goldens: tests/data/make_nonfinite_goldens.py (torch 1.13, fixed seed). The
// output must have NaN exactly where torch has NaN, the same infinities, and
// the finite values within 1e-5.
function runNonFinite(aw, c) {
  const x = Object.fromEntries(Object.entries(c.inputs).map(([k, v]) => [k, decodeTensor(v)]));
  const state = c.state && Object.fromEntries(Object.entries(c.state).map(([k, v]) => [k, decodeTensor(v)]));
  const withModule = (m, f) => { try { m.loadStateDict(state); return f(m); } finally { m.dispose(); } };
  switch (c.op) {
    case 'sdpa': return aw.scaledDotProductAttention(x.query, x.key, x.value, { attnMask: x.attnMask ?? null }).output;
    case 'mha': return withModule(new aw.MultiheadAttention(c.args.embedDim, c.args.numHeads, { batchFirst: true }),
      (m) => m.forward(x.query, x.key, x.value, { needWeights: false }).output);
    case 'linear': return withModule(new aw.Linear(c.args.inFeatures, c.args.outFeatures), (m) => m.forward(x.input));
    case 'layernorm': return withModule(new aw.LayerNorm(c.args.normalizedShape), (m) => m.forward(x.input));
    case 'relu': return aw.relu(x.input);
    case 'gelu': return aw.gelu(x.input);
    case 'gelu_tanh': return aw.gelu(x.input, { approximate: 'tanh' });
    case 'encoder_layer': return withModule(new aw.TransformerEncoderLayer(c.args.dModel, c.args.nhead,
      { dimFeedforward: c.args.dimFeedforward, dropout: 0, batchFirst: true }), (m) => m.forward(x.src));
    default: throw new Error(`unknown op ${c.op}`);
  }
}

/** The tests `non-finite: <case>` of the nonfinite.json cases whose op is one of `ops`. */
export function nonFiniteTests(aw, ops) {
  const TOL = 1e-5;
  const cases = loadGoldens('nonfinite.json').cases.filter((c) => ops.includes(c.op));
  assert.ok(cases.length > 0, `no non-finite goldens for ${ops}`);
  for (const c of cases) {
    test(`non-finite: ${c.name}`, () => {
      const want = decodeTensor(c.expected);
      const got = runNonFinite(aw, c);
      assert.deepEqual(got.shape, want.shape);
      let nan = 0, inf = 0, worst = 0;
      for (let i = 0; i < want.data.length; i++) {
        const w = want.data[i], g = got.data[i];
        if (Number.isNaN(w)) { assert.ok(Number.isNaN(g), `[${i}]: torch NaN, got ${g}`); nan++; continue; }
        if (!Number.isFinite(w)) { assert.equal(g, w, `[${i}]: torch ${w}, got ${g}`); inf++; continue; }
        assert.ok(Number.isFinite(g), `[${i}]: torch ${w}, got ${g}`);
        worst = Math.max(worst, Math.abs(g - w));
      }
      assert.ok(worst <= TOL, `max abs error ${worst} > ${TOL}`);
      assert.ok(nan + inf > 0, 'the case must exercise a non-finite output');
    });
  }
}

// ---- error tables ----
// Bad input gets a clear error, never a crash: each case must throw an Error
// with a stable `code` and a message naming the argument (and the expected and
// received shape where there is one); after every case a valid call still
// gives the same result (`stillWorks`).

/**
 * The tests `<prefix>: <name>` of cases [name, () => call, code, message regex].
 * With `AttnWasmError`, errors other than ERR_INVALID_TYPE / ERR_OUT_OF_RANGE
 * must be instances of it.
 */
export function errorTests(prefix, cases, stillWorks, AttnWasmError = null) {
  for (const [name, call, code, re] of cases) {
    test(`${prefix}: ${name}`, () => {
      assert.throws(call, (e) => {
        assert.ok(e instanceof Error, 'an Error subclass');
        assert.equal(e.code, code, `code of: ${e.message}`);
        assert.match(e.message, re);
        if (AttnWasmError && code.startsWith('ERR_') && !['ERR_INVALID_TYPE', 'ERR_OUT_OF_RANGE'].includes(code)) assert.ok(e instanceof AttnWasmError);
        return true;
      });
      stillWorks();
    });
  }
}

/**
 * The valid SDPA and MHA calls the attention error tables run after every
 * case: q, k, v, mha (batchFirst, E = 8, 2 heads), x, mem and `stillWorks`.
 */
export function attentionProbe(aw) {
  const q = randomTensor([2, 3, 5, 8], 1), k = randomTensor([2, 3, 7, 8], 2), v = randomTensor([2, 3, 7, 4], 3);
  const mha = new aw.MultiheadAttention(8, 2, { batchFirst: true });
  const x = randomTensor([2, 5, 8], 4), mem = randomTensor([2, 7, 8], 5);
  const goodSdpa = () => aw.scaledDotProductAttention(q, k, v).output;
  const goodMha = () => mha.forward(x, mem, mem).output;
  const refSdpa = goodSdpa(), refMha = goodMha();
  const stillWorks = () => {
    // The module keeps working, with the same results.
    assert.deepEqual(goodSdpa().data, refSdpa.data);
    assert.deepEqual(goodMha().data, refMha.data);
  };
  return { q, k, v, mha, x, mem, stillWorks };
}

/**
 * The valid encoder- and decoder-layer calls the layer error tables run after
 * every case: enc, dec (dModel 8, 2 heads, batchFirst), src, mem and `stillWorks`.
 */
export function transformerProbe(aw) {
  const enc = new aw.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, batchFirst: true });
  const dec = new aw.TransformerDecoderLayer(8, 2, { dimFeedforward: 16, batchFirst: true });
  const src = randomTensor([2, 5, 8], 2), mem = randomTensor([2, 7, 8], 3);
  const good = () => [enc.forward(src).data, dec.forward(src, mem).data];
  const ref = good();
  const stillWorks = () => {
    const now = good();
    assert.deepEqual(now[0], ref[0]);
    assert.deepEqual(now[1], ref[1]);
  };
  return { enc, dec, src, mem, stillWorks };
}

/** A bool mask tensor of `shape`, every element `fill`. */
export const boolMask = (shape, fill = 0) => ({ data: new Uint8Array(shape.reduce((a, b) => a * b, 1)).fill(fill), shape });

/**
 * The worst |got − want| / (atol + rtol·|want|) of rows of `data` against the golden cases: row i against
 * cases[i][key] (every row as long as the first's).
 */
export function worstOfCases(data, cases, key, { atol, rtol }) {
  let w = 0;
  cases.forEach((c, i) => {
    const want = c[key];
    for (let k = 0; k < want.length; k++) w = Math.max(w, Math.abs(data[i * want.length + k] - want[k]) / (atol + rtol * Math.abs(want[k])));
  });
  return w;
}

/** Rows of ints (an array of equal-length arrays) as an int32 tensor { data, shape: [rows, columns] }. */
export const ints = (rows) => ({ data: Int32Array.from(rows.flat()), shape: [rows.length, rows[0].length] });
/** A Python name (num_beams) as this API spells it (numBeams). */
export const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
/** transformers' generate() keyword arguments (a golden case's kwargs) as this API's options. */
export const optionsOf = (kwargs) => Object.fromEntries(Object.entries(kwargs).map(([k, v]) => [camel(k), v]));
