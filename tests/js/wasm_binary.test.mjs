// The shipped .wasm really contains SIMD128 code (counted with wabt's
// wasm-objdump) and stays within its size budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const wasm = fileURLToPath(new URL('../../dist/attnwasm_core.wasm', import.meta.url));

test('the .wasm contains SIMD128 instructions', (t) => {
  const dis = execFileSync('wasm-objdump', ['-d', wasm], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const simd = dis.match(/\b(f32x4|i32x4|v128|i8x16|i16x8)\.\w+/g) ?? [];
  const fma = simd.filter((s) => s === 'f32x4.mul' || s === 'f32x4.add').length;
  t.diagnostic(`SIMD128 instructions: ${simd.length} (f32x4.mul/add: ${fma})`);
  assert.ok(simd.length > 500, `expected hundreds of SIMD128 instructions, found ${simd.length}`);
  assert.ok(fma > 100, `expected vector multiply-adds in the kernels, found ${fma}`);
});

test('the .wasm stays under 400 KB', (t) => {
  const size = statSync(wasm).size;
  t.diagnostic(`attnwasm_core.wasm: ${size} bytes`);
  assert.ok(size < 400 * 1024, `${size} bytes`);
});
