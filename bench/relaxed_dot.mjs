// The integer dot products a q4 kernel can use, as the engine runs them: independent chains of one
// instruction each (8 accumulators, the loop unrolled twice), multiply-adds per second, one thread.
//   i32x4.dot_i16x8_s + i32x4.add                 8 multiply-adds (the baseline build's q8, q4a16 and q4)
//   i16x8.relaxed_dot_i8x16_i7x16_s + i16x8.add   16 (the relaxed build's q4: src/kernels/qgemm_a8_simd.cpp)
//   i32x4.relaxed_dot_i8x16_i7x16_add_s           16 (one instruction; vpdpbusd where the engine emits it)
// Why q4's kernel uses the i16x8 form: in Node 20 (V8 11.3) the i32x4 form ran at a quarter of its rate here.
// Usage: node --experimental-wasm-relaxed-simd bench/relaxed_dot.mjs [--rounds 5]
import { describeMachine, median } from './lib.mjs';

const argv = process.argv.slice(2);
const ROUNDS = Number(argv.includes('--rounds') ? argv[argv.indexOf('--rounds') + 1] : 5);
const N = 8;  // accumulators
const FORMS = {
  'i32x4.dot_i16x8_s + add': { macs: 8, step: (i) => `(local.set $a${i} (i32x4.add (local.get $a${i}) (i32x4.dot_i16x8_s (local.get $x) (local.get $y))))` },
  'i16x8.relaxed_dot_i8x16_i7x16_s + add': { macs: 16, step: (i) => `(local.set $a${i} (i16x8.add (local.get $a${i}) (i16x8.relaxed_dot_i8x16_i7x16_s (local.get $x) (local.get $y))))` },
  'i32x4.relaxed_dot_i8x16_i7x16_add_s': { macs: 16, step: (i) => `(local.set $a${i} (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $x) (local.get $y) (local.get $a${i})))` },
};
const func = (name, step) => {
  const body = Array.from({ length: N }, (_, i) => step(i)).join('\n');
  const sum = Array.from({ length: N - 1 }, (_, i) => i + 1).reduce((e, i) => `(i32x4.add ${e} (local.get $a${i}))`, '(local.get $a0)');
  return `(func (export "${name}") (param $n i32) (result i32) (local $x v128) (local $y v128)
    ${Array.from({ length: N }, (_, i) => `(local $a${i} v128)`).join(' ')}
    (local.set $x (i8x16.splat (i32.const 3))) (local.set $y (i8x16.splat (i32.const 5)))
    (loop $l ${body}\n${body} (br_if $l (local.tee $n (i32.sub (local.get $n) (i32.const 1)))))
    (i32x4.extract_lane 0 ${sum}))`;
};
const names = Object.keys(FORMS);
const wat = `(module ${names.map((n, i) => func(`f${i}`, FORMS[n].step)).join('\n')})`;
const { default: initWabt } = await import('wabt');
const wabt = await initWabt();
const mod = wabt.parseWat('relaxed_dot.wat', wat, { simd: true, relaxed_simd: true });
const { buffer } = mod.toBinary({});
mod.destroy();
const { instance } = await WebAssembly.instantiate(buffer);
console.log(`# ${describeMachine()}; Node ${process.version}`);
const ITER = 5_000_000;
const rate = Object.fromEntries(names.map((n) => [n, []]));
for (let r = 0; r < ROUNDS; r++) {
  names.forEach((n, i) => {
    const f = instance.exports[`f${i}`];
    f(1000);
    const t0 = performance.now();
    f(ITER);
    rate[n].push(ITER * 2 * N * FORMS[n].macs / ((performance.now() - t0) / 1000));
  });
}
for (const n of names) console.log(`${n.padEnd(40)} ${(median(rate[n]) / 1e9).toFixed(1)} G multiply-adds/s (median of ${ROUNDS})`);
