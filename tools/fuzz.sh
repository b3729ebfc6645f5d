#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, build/fuzz)
# and runs each for N seconds (default 60): tools/fuzz.sh [seconds_per_target]
#
# Each target starts from a copy of its seed corpus (tests/fuzz/corpus/<t>,
# copied into build/fuzz/corpus-work/<t>, so the repository is never written);
# inputs it finds are kept there for the next run. A crash, leak, timeout or
# out-of-memory leaves its reproducer in build/fuzz/artifacts/<t>/ and makes
# this script exit 1. To keep a fixed crash forever: minimise it
#   build/fuzz/fuzz_<t> -minimize_crash=1 -runs=10000 <reproducer>
# and copy it to tests/fuzz/corpus/<t>/crash-<what> (the gtest replays it).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-60}
JOBS=${JOBS:-2}
BUILD=build/fuzz

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAW_FUZZ=ON >/dev/null
fi
cmake --build "$BUILD" -j"$JOBS"

status=0
for src in tests/fuzz/fuzz_*.cpp; do
  name=$(basename "$src" .cpp)  # fuzz_<target>
  target=${name#fuzz_}
  work="$BUILD/corpus-work/$target"
  artifacts="$BUILD/artifacts/$target"
  log="$BUILD/$target.log"
  mkdir -p "$work" "$artifacts"
  cp tests/fuzz/corpus/"$target"/* "$work"/
  dict=()
  [ -f "tests/fuzz/$target.dict" ] && dict=(-dict="tests/fuzz/$target.dict")
  start=$(date +%s%N)
  rc=0
  # Every sanitizer report ends the run as a crash (with its reproducer).
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$BUILD/$name" "$work" "${dict[@]}" -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$artifacts/" >"$log" 2>&1 || rc=$?
  secs=$(( ($(date +%s%N) - start) / 1000000000 ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  reproducers=$(sed -n 's/.*Test unit written to //p' "$log")
  crashes=$(printf '%s' "$reproducers" | grep -c . || true)
  [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1  # died without writing one
  echo "fuzz $target: ${execs:-0} execs in $secs s, $crashes crashes"
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "  exit code $rc, log $log:" >&2
    grep -E 'ERROR: |runtime error|contract violation|SUMMARY' "$log" | head -5 | sed 's/^/    /' >&2 || true
    for f in $reproducers; do
      echo "  reproducer: $f   (replay: $BUILD/$name $f)" >&2
    done
  fi
done
exit $status
