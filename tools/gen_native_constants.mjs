#!/usr/bin/env node
// Writes bindings/native_constants.js from the C++ sources that define them, so that the JS layer never
// mirrors a native table by hand: the error codes (src/core/status.h Code), the tensor element types
// (src/core/tensor.h DType), the causal biases (src/ops/scaled_dot_product_attention.h CausalBias), the
// thread limit (src/core/parallel.h kMaxThreads), the weight types (src/core/module.h WeightType), the
// pooling modes (src/models/encoder.h Pooling) and the family registry's rows (src/models/*_family.cpp, their
// model_types where each family writes them). The wasm build runs it (CMakeLists.txt); with --check it writes
// nothing and exits 1 when the committed file differs; tests/js/native_constants.test.mjs also compares the
// family rows with the runtime's own registry.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const read = (rel) => readFileSync(new URL(rel, root), 'utf8');

/** The enumerators of `enum class name … { … }` in order, with their values (explicit or counted). */
function enumerators(text, name, file) {
  const m = new RegExp(`enum class ${name}\\b[^{]*\\{([^}]*)\\}`).exec(text);
  if (!m) throw new Error(`${file}: no enum class ${name}`);
  const out = [];
  let next = 0;
  for (const line of m[1].replace(/\/\/[^\n]*/g, '').split(',')) {
    const e = /^\s*(k\w+)\s*(?:=\s*(\d+))?\s*$/.exec(line);
    if (!e) {
      if (line.trim()) throw new Error(`${file}: cannot read '${line.trim()}' in enum class ${name}`);
      continue;
    }
    const value = e[2] === undefined ? next : Number(e[2]);
    out.push([e[1], value]);
    next = value + 1;
  }
  return out;
}

/** kInvalidArgument → INVALID_ARGUMENT */
const upperSnake = (k) => k.slice(1).replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** The registry's rows from the families' own files (src/models/*_family.cpp), in families.cpp's order. */
function families() {
  const order = [...read('src/models/families.cpp').matchAll(/&(\w+)Family\(\)/g)].map((m) => m[1]);
  const files = readdirSync(new URL('src/models/', root)).filter((f) => f.endsWith('_family.cpp'));
  const rows = new Map();
  for (const f of files) {
    const text = read(`src/models/${f}`);
    const field = (name) => {
      const m = new RegExp(`/\\*${name}=\\*/([^,\\n]+),`).exec(text);
      if (!m) throw new Error(`${f}: no /*${name}=*/ field`);
      const v = m[1].trim();
      return v === 'nullptr' ? null : v.startsWith('"') ? JSON.parse(v) : v;
    };
    const fn = /^const Family& (\w+)Family\(\)/m.exec(text)?.[1];
    if (!fn) throw new Error(`${f}: no row function`);
    rows.set(fn, { kind: field('kind'), className: field('class_name'), noun: field('noun'), modelTypes: modelTypes(field('model_types'), f),
      ownModel: field('own_model') });
  }
  return order.map((fn) => {
    if (!rows.has(fn)) throw new Error(`families.cpp names ${fn}Family, which no src/models/*_family.cpp defines`);
    return rows.get(fn);
  });
}

/** The model_types a row's function gives, read where that family writes them. */
function modelTypes(expr, file) {
  if (expr === null) return [];
  if (expr === 'CausalLmModelTypes()') return [...read('src/models/causal_lm_config.cpp').matchAll(/\w+\.model_type = "([^"]+)";/g)].map((m) => m[1]);
  if (expr === 'EncoderModelTypes()') {
    const m = /EncoderModelTypes\(\) \{\s*static const char\* const types\[\] = \{([^}]*)\}/.exec(read('src/models/encoder_config.cpp'));
    return [...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]);
  }
  // A row's own list in its file: const char* const kModelTypes[] = {"modernbert", nullptr};
  const own = new RegExp(`const char\\* const ${expr}\\[\\] = \\{([^}]*)\\}`).exec(read(`src/models/${file}`));
  if (own) return [...own[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]);
  throw new Error(`${file}: model_types ${expr}: tools/gen_native_constants.mjs does not know where it is written`);
}

export function generate() {
  const status = read('src/core/status.h');
  const codes = enumerators(status, 'Code', 'status.h');
  const names = [];
  for (const [k, v] of codes) names[v] = k === 'kOk' ? 'OK' : `ERR_${upperSnake(k)}`;
  const dtypes = enumerators(read('src/core/tensor.h'), 'DType', 'tensor.h').map(([k, v]) => [upperSnake(k), v]);
  const bias = enumerators(read('src/ops/scaled_dot_product_attention.h'), 'CausalBias', 'scaled_dot_product_attention.h')
    .map(([k, v]) => [upperSnake(k), v]);
  const threads = /constexpr int kMaxThreads = (\d+);/.exec(read('src/core/parallel.h'));
  if (!threads) throw new Error('parallel.h: no kMaxThreads');
  const weightTypes = enumerators(read('src/core/module.h'), 'WeightType', 'module.h').map(([k]) => k.slice(1).toLowerCase());
  const pooling = enumerators(read('src/models/encoder.h'), 'Pooling', 'encoder.h').map(([k, v]) => [upperSnake(k).toLowerCase(), v]);
  const obj = (pairs) => `Object.freeze({ ${pairs.map(([k, v]) => `${k}: ${v}`).join(', ')} })`;
  const rows = families().map((f) => `  Object.freeze(${JSON.stringify({ ...f, modelTypes: undefined }).replace(/,"modelTypes":undefined/, '').slice(0, -1)}, "modelTypes": Object.freeze(${JSON.stringify(f.modelTypes)}) })`);
  return `// Generated by tools/gen_native_constants.mjs from the C++ headers — do not edit. The headers are the one
// source: the wasm build regenerates this file, and tests/js/native_constants.test.mjs fails when it is stale.

/** Error code names by the numeric code of src/core/status.h Code. */
export const NATIVE_CODES = Object.freeze(${JSON.stringify(names).replace(/,/g, ', ')});
/** Element types a tensor crosses the boundary with: src/core/tensor.h DType. */
export const DTYPE = ${obj(dtypes)};
/** scaledDotProductAttention's causal biases: src/ops/scaled_dot_product_attention.h CausalBias. */
export const CAUSAL_BIAS = ${obj(bias)};
/** The most threads a runtime may use: src/core/parallel.h kMaxThreads. */
export const MAX_THREADS = ${threads[1]};
/** The weight types a model's matrices may be kept as, by the value of src/core/module.h WeightType. */
export const WEIGHT_TYPES = Object.freeze(${JSON.stringify(weightTypes).replace(/,/g, ', ')});
/** sentence-transformers' pooling modes, numbered in the order several are concatenated: src/models/encoder.h Pooling. */
export const POOLING = ${obj(pooling)};
/**
 * The family registry's rows (src/models/family.h): kind (what info().kind says), className, noun, the config.json
 * model_types the family reads, and the "model" of its own files' attnwasm.config (null: none).
 */
export const FAMILIES = Object.freeze([
${rows.join(',\n')},
]);
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = new URL('bindings/native_constants.js', root);
  const text = generate();
  if (process.argv.includes('--check')) {
    const now = readFileSync(out, 'utf8');
    if (now !== text) {
      console.error('bindings/native_constants.js is stale: run node tools/gen_native_constants.mjs');
      process.exit(1);
    }
  } else {
    let old = null;
    try { old = readFileSync(out, 'utf8'); } catch { /* first time */ }
    if (old !== text) writeFileSync(out, text);
  }
}
