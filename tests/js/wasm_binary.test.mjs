// The shipped .wasm files really contain SIMD128 code (counted with wabt's
// wasm-objdump), the relaxed-SIMD builds relaxed_madd and the baseline builds
// none, the pthreads builds a shared memory, and each stays within its size
// budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BUILDS = [
  { file: 'attnwasm_core.wasm', relaxed: false, threads: false },
  { file: 'attnwasm_core_mt.wasm', relaxed: false, threads: true },
  { file: 'attnwasm_core_rs.wasm', relaxed: true, threads: false },
  { file: 'attnwasm_core_mt_rs.wasm', relaxed: true, threads: true },
];
const path = (f) => fileURLToPath(new URL(`../../dist/${f}`, import.meta.url));
const objdump = (...args) => execFileSync('wasm-objdump', args, { encoding: 'utf8', maxBuffer: 1 << 28 });

for (const { file, relaxed, threads } of BUILDS) {
  test(`${file}: SIMD128 instructions, ${relaxed ? 'relaxed_madd' : 'no relaxed SIMD'}, ${threads ? 'a shared memory' : 'no threads'}`, (t) => {
    const dis = objdump('-d', path(file));
    const simd = dis.match(/\b(f32x4|i32x4|v128|i8x16|i16x8)\.\w+/g) ?? [];
    const mulAdd = simd.filter((s) => s === 'f32x4.mul' || s === 'f32x4.add').length;
    const madd = simd.filter((s) => s === 'f32x4.relaxed_madd').length;
    t.diagnostic(`${file}: SIMD128 instructions: ${simd.length} (f32x4.mul/add: ${mulAdd}, f32x4.relaxed_madd: ${madd})`);
    assert.ok(simd.length > 500, `expected hundreds of SIMD128 instructions, found ${simd.length}`);
    assert.ok(mulAdd > 100, `expected vector multiplies and adds in the kernels, found ${mulAdd}`);
    assert.ok(!/\bf32x4\.(fma|relaxed_nmadd)\b/.test(dis));
    if (relaxed) assert.ok(madd >= 8, `expected the micro-kernel's relaxed_madd instructions, found ${madd}`);
    else assert.equal(madd, 0);
    const imports = objdump('-x', '-j', 'Import', path(file));
    if (threads) assert.match(imports, /memory\[0\].*shared/);
    else assert.doesNotMatch(imports, /shared|pthread/);
  });
}

test('each .wasm stays at or under 500 000 bytes', (t) => {
  for (const { file } of BUILDS) {
    const size = statSync(path(file)).size;
    t.diagnostic(`${file}: ${size} bytes`);
    assert.ok(size <= 500000, `${file}: ${size} bytes, over the 500 000-byte line (docs/architecture.md, "Sizes")`);
  }
});

// musl's printf (vfprintf with its float formatting, 6-9 KB of each .wasm) stays out: numbers become text through
// core/num_str (NumStr) and std::to_string of integers. A std::to_string(double) brought it back once (a seq2seq
// info field, issue 40) and cost every build 9 KB. Its format-flag table is in every build that links it.
test('no .wasm links printf (its float formatting is 6-9 KB): numbers go through NumStr', () => {
  const marker = Buffer.from('-0X+0X 0X-0x+0x 0x');
  for (const { file } of BUILDS) {
    assert.equal(readFileSync(path(file)).indexOf(marker), -1, `${file}: links musl's printf (a std::to_string(double) or snprintf somewhere?)`);
  }
});
