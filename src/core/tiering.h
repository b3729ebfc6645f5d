// Hot loops in functions that are entered many times per call, so that the
// first call of a long operation runs at full speed.
//
// V8 runs wasm first as baseline code (Liftoff) and swaps in optimised code
// (TurboFan) for a hot function in the background; a function already on the
// stack keeps its baseline code until it returns (wasm has no on-stack
// replacement). A kernel whose hot loop sits in a function entered once per
// call therefore runs a big first call entirely at baseline speed, 3–8×
// slower (docs/TOOLCHAIN.md, "V8 tiers"). The remedy: cut the work into
// blocks and give the block its own function, entered per block: after the
// first block or two, later blocks enter the optimised code.
//
// AW_TIER_ENTRY marks such a block function. It must stay a function of its
// own through both compilers: clang must not inline it (noinline), and
// binaryen's wasm-opt (Emscripten's link step) inlines any function that has
// a single caller, whatever its size and loops. TierEntry(f) returns f
// through a volatile read, so every call is indirect: the function's address
// is taken (it is in the wasm table, which binaryen never inlines from) and
// no optimiser can turn the call back into a direct one. One load and one
// call_indirect per block: nothing next to a block's work.
#pragma once

#define AW_TIER_ENTRY __attribute__((noinline))

namespace aw {

// TierEntry<&f>()(args…) calls f through its volatile address.
template <auto F>
inline decltype(F) TierEntry() {
  static const volatile decltype(F) entry = F;  // constant-initialised: a word in the data segment
  return entry;
}

}  // namespace aw
