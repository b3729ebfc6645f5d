#!/usr/bin/env bash
# Builds the native library and GoogleTest tests with AddressSanitizer and
# UndefinedBehaviorSanitizer (build/asan, -DAW_SANITIZE=ON) and runs them with
# ctest. Any report (memory error, leak, undefined behaviour) fails the test
# that triggered it, so this script exits non-zero. Incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(bash tools/jobs.sh)}
BUILD=build/asan

# clang when present: on 2 cores it builds this tree with sanitizers in about
# a fifth of g++'s time (measured: 56 s vs ~300 s) and runs the tests twice as
# fast. RelWithDebInfo: -O2 keeps the tests fast, -g gives file:line in reports.
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  if command -v clang++ >/dev/null; then export CC=clang CXX=clang++; fi
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAW_SANITIZE=ON >/dev/null
fi
cmake --build "$BUILD" -j"$JOBS"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$BUILD" && ctest --output-on-failure -j"$JOBS")
