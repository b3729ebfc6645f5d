#!/usr/bin/env bash
# The test command (npm test), and its parts (npm run test:native | test:js | test:browser):
#   all      (default) everything below, in this order; what CI runs
#   native   set up; the native tests under ASan + UBSan, with a replay of every fuzz corpus file (build/asan,
#            clang -O2, GoogleTest shards); the fuzz gate (fixed seed, fixed number of inputs: the same on every
#            run); the kernel tests built to wasm with relaxed SIMD. The plain Release tree (build/native, g++ -O3:
#            tools/build.sh native) is not built here: it runs the same 412 tests without the sanitizers, and took
#            200 of CI's seconds to build for nothing the sanitized run does not check.
#   js       set up, build the wasm modules, node --test tests/js/ twice: with --experimental-wasm-relaxed-simd
#            (Node then runs the relaxed-SIMD builds, as Chromium does by default) and without (the baseline)
#   browser  set up, build the wasm modules, node --test tests/browser/ (headless Chromium, relaxed by default),
#            then tests/browser/*.serial.mjs one at a time (they time the main thread)
# One file: node --test tests/js/<file>.test.mjs (after a build); one native test:
#   build/native/attnwasm_tests --gtest_filter='CausalLm*' (tests/README.md, "Running one test").
# Deterministic: the open-ended fuzz search is `npm run fuzz`, never part of this.
# The node --test passes run two test files at a time (--test-concurrency=2: most of a browser or CLI test
# waits on another process). Each phase prints its time.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in all | native | js | browser) ;; *) echo "usage: tools/test.sh [all|native|js|browser]" >&2; exit 2 ;; esac
t0=$SECONDS
phase() { echo "test: $1 done at $((SECONDS - t0)) s"; }
bash tools/setup.sh;                                  phase setup
if [ "$what" = all ]; then bash tools/build.sh wasm; elif [ "$what" = native ]; then bash tools/build.sh tests_rs;
else bash tools/build.sh modules; fi;                 phase build

if [ "$what" = all ] || [ "$what" = native ]; then
  bash tools/sanitize.sh;                   phase sanitizers   # the native tests under ASan + UBSan (build/asan)
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
fi
# The browser files that time the page's main thread (no task over 50 ms) run after the others, one at a time:
# two Chromiums on two cores make long tasks of their own (tests/README.md, "Serial browser tests").
# Each pass prints TAP, then its ten slowest files (tools/slowest_files.mjs).
REPORT=(--test-reporter=tap --test-reporter-destination=stdout --test-reporter=./tools/slowest_files.mjs --test-reporter-destination=stdout)
serial() { node --test "${REPORT[@]}" --test-concurrency=1 tests/browser/*.serial.mjs; phase 'node --test tests/browser/*.serial.mjs, one at a time'; }
if [ "$what" = all ]; then
  node --experimental-wasm-relaxed-simd --test "${REPORT[@]}" --test-concurrency=2 tests/js/ tests/browser/   # relaxed-SIMD builds (Chromium: by default)
  phase 'node --test, relaxed SIMD'
  serial
elif [ "$what" = js ]; then
  node --experimental-wasm-relaxed-simd --test "${REPORT[@]}" --test-concurrency=2 tests/js/
  phase 'node --test tests/js, relaxed SIMD'
elif [ "$what" = browser ]; then
  node --test "${REPORT[@]}" --test-concurrency=2 tests/browser/
  phase 'node --test tests/browser'
  serial
fi
# The baseline pass runs the files whose outcome depends on the build their own process loads. Left out, as
# the relaxed pass already ran them as they would run here: the files that never instantiate a module
# (tokenizers, chat templates, audio features, number words, typings, the .wasm files read as bytes: pure JS),
# and the CLI's, whose processes start without --experimental-wasm-relaxed-simd (the baseline build in either
# pass). tests/js/ files not named here run in both passes.
SAME_IN_BOTH='^(audio_(chunks|features|fft|files|resample)|chat_(template|tokenize)|numberwords|tokenizer(_[a-z_]+)?|typings|wasm_binary|cli(_embed|_hub|_inspect|_text_tasks|_image_tasks)?)\.test\.mjs$'
baseline_files=()
for f in tests/js/*.test.mjs; do [[ $(basename "$f") =~ $SAME_IN_BOTH ]] || baseline_files+=("$f"); done
if [ "$what" = all ] || [ "$what" = js ]; then
  node --test "${REPORT[@]}" --test-concurrency=2 "${baseline_files[@]}"                                    # baseline builds
  phase 'node --test, baseline'
fi
