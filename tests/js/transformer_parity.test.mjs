// Parity of the Transformer blocks with PyTorch: every file of
// tests/data/goldens/transformer (written by tests/data/make_transformer_goldens.py
// with torch 1.13, fixed seeds) is read with aw.loadSafetensors — so the
// goldens also exercise the safetensors reader, F16 and BF16 included — and
// the module its metadata describes is built, loaded and run through the JS API.
// Tolerance per case from its metadata: |got − expected| ≤ atol + rtol·|expected|,
// 1e-5 for elementwise layers and 1e-4 for attention stacks (float32 sums in a
// different order, through up to 4 layers of order-1 activations).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { init } from '../../bindings/index.js';

const aw = await init();
const DIR = new URL('../data/goldens/transformer/', import.meta.url);
const files = readdirSync(DIR).filter((f) => f.endsWith('.safetensors')).sort();

/** Builds a module from its golden description (torch-like constructors). */
function build(spec) {
  switch (spec.module) {
    case 'TransformerEncoder':
    case 'TransformerDecoder': {
      const Layer = spec.module === 'TransformerEncoder' ? aw.TransformerEncoderLayer : aw.TransformerDecoderLayer;
      const layer = new Layer(...spec.layer.args, spec.layer.options);
      const norm = spec.norm ? new aw.LayerNorm(...spec.norm.args, spec.norm.options) : null;
      const stack = new aw[spec.module](layer, spec.numLayers, { norm });
      layer.dispose();
      norm?.dispose();
      return stack;
    }
    case 'ReLU':
      return new aw.ReLU();
    case 'GELU':
      return new aw.GELU(spec.options);
    default:
      return new aw[spec.module](...(spec.args ?? []), spec.options);
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

const summary = [];
for (const file of files) {
  test(`golden ${file}`, () => {
    const { tensors, metadata } = aw.loadSafetensors(readFileSync(new URL(file, DIR)), { metadata: true });
    const spec = JSON.parse(metadata.case);
    const arg = (v) => (typeof v === 'string' && v.startsWith('input.') ? tensors[v] : v);
    const inputs = spec.inputs.map((n) => tensors[`input.${n}`]);
    const options = Object.fromEntries(Object.entries(spec.forward ?? {}).map(([k, v]) => [k, arg(v)]));
    const checks = [];
    const made = [];
    try {
      if (spec.module === 'VitTiny') {
        const [patch, pos, encoder, head] = ['patch', 'pos', 'encoder', 'head'].map((p) => {
          const m = build(spec[p]);
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
        const m = build(spec);
        made.push(m);
        load(m, tensors, 'param.');
        checks.push(['output', m.forward(...inputs, ...(Object.keys(options).length ? [options] : [])), tensors['expected.output']]);
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
  assert.ok(files.length >= 30, `expected the golden files, found ${files.length}`);
});
