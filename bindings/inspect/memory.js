// What a checkpoint's weights take in memory once loaded, for each dtype a load may ask for, ESTIMATED from the
// tensors' dtypes and shapes alone (the standalone level of inspect; a runtime's inspect gives the loader's
// exact bytes). The rule: a 2-D float tensor is a weight matrix, kept in the dtype asked for (as stored: BF16
// and F16 as they are, F32 and F64 as float32 — the loader keeps F64 as float32); any other float tensor (a
// norm, a bias, a 1-D or 3-D table) is float32; an integer tensor is a buffer the loader never keeps.
// Where the loader's bytes differ, and by how much (docs/inspect.md):
//   - each matrix is laid out in panels: its rows rounded up to 8 (f32, q8, q4) or 16 (bf16, f16), for q8 and
//     q4 (q4a16) its columns to 32, plus 64 bytes — the loader's bytes are then higher, by at most that padding;
//   - a tensor the model does not keep (a task head it skips, a tied lm_head stored anyway) still counts here,
//     and a 2-D tensor the model keeps as float32 counts in the dtype asked for — then the rule is off either way.
import { WEIGHT_TYPES } from '../native_constants.js';
import { FLOAT_DTYPES } from './header.js';

/**
 * Bytes per element of a matrix kept as each weight type: float32, the two 16-bit floats, and the quantized
 * types (groups of 32 weights of one output share a float32 scale: q8 36 bytes a group, q4 and q4a16 20).
 */
export const ELEMENT_BYTES = Object.freeze({ f32: 4, bf16: 2, f16: 2, q8: 36 / 32, q4: 20 / 32, q4a16: 20 / 32 });
for (const t of WEIGHT_TYPES) if (!(t in ELEMENT_BYTES)) throw new Error(`inspect: no bytes per element for weight type '${t}'`);

/** The dtypes inspect sizes: 'stored' (no dtype: the weights as stored), then every weight type. */
export const SIZED = Object.freeze(['stored', ...WEIGHT_TYPES]);

/** The type a matrix stored as `dtype` keeps when loaded as stored. */
const storedType = (dtype) => (dtype === 'BF16' ? 'bf16' : dtype === 'F16' ? 'f16' : 'f32');

/**
 * The estimate for every dtype: { stored: { weightBytes, weightTypes }, f32: …, bf16, f16, q8, q4 } — the shape
 * of a loaded model's weightBytes and weightTypes (bytes by the type kept, the types held only).
 * @param {{dtype: string, shape: number[]}[]} tensors
 */
export function estimateBytes(tensors) {
  const out = {};
  for (const as of SIZED) {
    const types = {};
    for (const t of tensors) {
      if (!FLOAT_DTYPES.includes(t.dtype)) continue;
      const numel = t.shape.reduce((a, d) => a * d, 1);
      const type = t.shape.length !== 2 ? 'f32' : as === 'stored' ? storedType(t.dtype) : as;
      types[type] = (types[type] ?? 0) + Math.ceil(numel * ELEMENT_BYTES[type]);
    }
    const weightTypes = Object.fromEntries(WEIGHT_TYPES.filter((t) => types[t]).map((t) => [t, types[t]]));
    out[as] = { weightBytes: Object.values(weightTypes).reduce((a, b) => a + b, 0), weightTypes };
  }
  return out;
}

/**
 * The most the loader's bytes can exceed the estimate for one dtype by the panels alone (the first way above),
 * for tests and for a caller that wants a bound: per matrix (n rows, k columns), the rows padded to a panel and
 * for q8 / q4 the columns to a group, plus 64 bytes.
 * @param {{dtype: string, shape: number[]}[]} tensors @param {string} as 'stored' or a weight type
 */
export function paddingBound(tensors, as) {
  let b = 0;
  for (const t of tensors) {
    if (!FLOAT_DTYPES.includes(t.dtype) || t.shape.length !== 2) continue;
    const [n, k] = t.shape;
    const type = as === 'stored' ? storedType(t.dtype) : as;
    const rows = type === 'bf16' || type === 'f16' ? 16 : 8;
    const cols = type === 'q8' || type === 'q4' || type === 'q4a16' ? 32 : 1;
    const padded = Math.ceil(n / rows) * rows * Math.ceil(k / cols) * cols;
    b += Math.ceil((padded - n * k) * ELEMENT_BYTES[type]) + 64;
  }
  return b;
}
