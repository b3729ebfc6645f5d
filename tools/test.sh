#!/usr/bin/env bash
# The test command (npm test): set up if needed, build all targets, run the
# native tests (ctest), the same under sanitizers (with a replay of every fuzz
# corpus file), the fuzz gate (fixed seed, fixed number of inputs: the same
# on every run), the kernel tests built to wasm with relaxed SIMD, and the JS
# tests (node --test) twice: with --experimental-wasm-relaxed-simd (Node then
# runs the relaxed-SIMD builds; Chromium runs them by default) and without
# (the baseline builds). Deterministic: the open-ended fuzz search is
# `npm run fuzz`, never part of this.
# The two node --test passes run two test files at a time (--test-concurrency=2:
# most of a browser or CLI test is waiting on another process; on 2 cores this
# takes the JS passes from about 6 to 4.5 minutes). Each phase prints its time.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
phase() { echo "test: $1 done at $((SECONDS - t0)) s"; }
bash tools/setup.sh;                      phase setup
bash tools/build.sh;                      phase build
(cd build/native && ctest --output-on-failure -j2); phase ctest
bash tools/sanitize.sh;                   phase sanitizers   # the native tests again under ASan + UBSan (build/asan)
bash tools/fuzz.sh gate;                  phase 'fuzz gate'  # each libFuzzer target, fixed seed and run count (build/fuzz)
# The relaxed instantiation of the kernels against the scalar references, in
# wasm: it must exit 0 and say "[  PASSED  ] N tests." with N > 0.
log=build/wasm/kernel_tests_rs.log
rc=0
node --experimental-wasm-relaxed-simd build/wasm/attnwasm_kernel_tests_rs.js > "$log" 2>&1 || rc=$?
grep -E '^\[  (PASSED|FAILED) ' "$log" || true
if [ "$rc" -ne 0 ] || ! grep -qE '^\[  PASSED  \] [1-9][0-9]* tests?\.$' "$log"; then
  echo "test: the wasm kernel tests (relaxed SIMD) failed (exit $rc): $log"
  exit 1
fi
phase 'wasm kernel tests'
node --experimental-wasm-relaxed-simd --test --test-concurrency=2 tests/js/ tests/browser/   # relaxed-SIMD builds (Chromium: by default)
phase 'node --test, relaxed SIMD'
node --test --test-concurrency=2 tests/js/                                                   # baseline builds
phase 'node --test, baseline'
