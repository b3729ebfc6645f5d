#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz (clang, ASan + UBSan, build/fuzz), in two
# modes:
#
#   tools/fuzz.sh gate             deterministic, part of `npm test`: each target
#                                  starts from a fresh copy of its checked-in
#                                  corpus (tests/fuzz/corpus/<t>) and runs a
#                                  fixed number of inputs from a fixed seed, so
#                                  a commit gets the same inputs on every run and
#                                  every machine. Nothing is kept afterwards.
#   tools/fuzz.sh search [SECONDS] open-ended search (`npm run fuzz`): each target
#                                  runs SECONDS (default 600) from a random seed,
#                                  starting from the checked-in corpus plus what
#                                  earlier searches found (build/fuzz/corpus-work/<t>,
#                                  kept between runs). Never part of CI.
#
# A crash, leak, timeout or out-of-memory leaves its reproducer in
# build/fuzz/artifacts/<t>/ and makes the script exit 1. To keep a finding
# forever (README, "Reliability"): minimise it
#   build/fuzz/fuzz_<t> -minimize_crash=1 -runs=10000 <reproducer>
# copy it to tests/fuzz/corpus/<t>/crash-<what-it-was>, fix the bug; the
# GoogleTest replay (tests/fuzz/corpus_replay_test.cpp, also under ASan/UBSan)
# and the gate then run it on every test run.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-gate}
JOBS=${JOBS:-$(bash tools/jobs.sh)}
BUILD=build/fuzz

case "$MODE" in
  gate) ;;
  search) SECONDS_PER_TARGET=${2:-600} ;;
  *) echo "usage: tools/fuzz.sh gate | search [seconds_per_target]" >&2; exit 2 ;;
esac

# Inputs per target in the gate, and its seed. Chosen to take 10-40 s per
# target on one core here (2-core AMD EPYC); change them only together with
# the README's reliability table.
declare -A GATE_RUNS=([attention]=150000 [model_config]=200000 [safetensors]=1000000)
GATE_SEED=20261123

# tools/fuzz-cc.sh makes every path the compiler sees relative (see there).
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAW_FUZZ=ON \
    "-DCMAKE_CXX_COMPILER_LAUNCHER=$PWD/tools/fuzz-cc.sh;$PWD" >/dev/null
fi
cmake --build "$BUILD" -j"$JOBS"

# The gate runs with address-space randomisation off: with it on, heap and
# stack addresses change from run to run, and so does the code's behaviour
# wherever it depends on them (measured: a different corpus and coverage
# on every run).
NO_ASLR=()
GATE_EXTRA=()
if [ "$MODE" = gate ]; then
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    NO_ASLR=(setarch "$(uname -m)" -R)
  else
    # Without it no libFuzzer setting made two runs agree: stay
    # deterministic by only replaying the checked-in corpus.
    echo "fuzz gate: setarch -R is not permitted on this machine: replaying the corpus only (no mutation)" >&2
    GATE_EXTRA=(-runs=0)
  fi
fi

# One target: prints its line (and any reproducer); returns 1 on a finding.
run_one() {
  local src=$1 name target artifacts log work runs limits dict start rc secs execs final written reproducers slow crashes seed f
  name=$(basename "$src" .cpp)  # fuzz_<target>
  target=${name#fuzz_}
  artifacts="$BUILD/artifacts/$target"
  log="$BUILD/$target.$MODE.log"
  mkdir -p "$artifacts"
  if [ "$MODE" = gate ]; then
    # A fresh working corpus: what a previous run found must not change this one.
    work="$BUILD/gate-corpus/$target"
    rm -rf "$work"
    runs=${GATE_RUNS[$target]:?"no gate run count for fuzz target $target (tools/fuzz.sh GATE_RUNS)"}
    # -reload=0: never re-read the corpus folder (a timer would decide when).
    # -print_funcs=0: no symbolizing of newly covered functions; it reads the
    # debug info (absolute paths) with the program's own heap, which moved
    # later allocations and so the inputs by where the clone lives.
    # -use_cmp=0: no mutations towards the operands of recent comparisons;
    # some operands are addresses or otherwise vary from run to run, and with
    # comparison tracing one gate run in six tried other inputs (measured;
    # the dictionaries still steer the mutations).
    limits=(-seed="$GATE_SEED" -runs="$runs" -reload=0 -print_funcs=0 -use_cmp=0)
    if [ ${#GATE_EXTRA[@]} -gt 0 ]; then limits=(-reload=0 -print_funcs=0 -use_cmp=0 "${GATE_EXTRA[@]}"); fi
  else
    work="$BUILD/corpus-work/$target"
    limits=(-max_total_time="$SECONDS_PER_TARGET")
  fi
  mkdir -p "$work"
  cp tests/fuzz/corpus/"$target"/* "$work"/
  dict=()
  [ -f "tests/fuzz/$target.dict" ] && dict=(-dict="../../tests/fuzz/$target.dict")
  start=$(date +%s%N)
  rc=0
  # Every sanitizer report ends the run as a crash (with its reproducer).
  # -timeout is far above any input's time (kMaxWork bounds the work), so a
  # busy machine cannot turn a slow input into a "timeout" finding.
  # Run from build/fuzz with relative paths and a fixed environment: with
  # ASLR off, argv and the environment decide where the stack lies, and
  # stack addresses reach libFuzzer's comparison tracing.
  (cd "$BUILD" && env -i PATH=/usr/bin:/bin ASAN_OPTIONS=detect_leaks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ${NO_ASLR[@]+"${NO_ASLR[@]}"} "./$name" "${work#$BUILD/}" "${dict[@]}" "${limits[@]}" -print_final_stats=1 \
    -timeout=60 -rss_limit_mb=2048 -artifact_prefix="${artifacts#$BUILD/}/") >"$log" 2>&1 || rc=$?
  secs=$(( ($(date +%s%N) - start) / 1000000000 ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  # The last status line: coverage (cov), features (ft) and corpus size. For
  # the gate they are the same on every run of a commit.
  final=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' || true)
  # Units libFuzzer writes: crash-/leak-/timeout-/oom- (failures) and
  # slow-unit- (an input that took over 10 s: reported, not a failure).
  written=$(sed -n 's/.*Test unit written to //p' "$log" | sed "s|^|$BUILD/|")
  reproducers=$(printf '%s\n' "$written" | grep -v '/slow-unit-' | grep . || true)
  slow=$(printf '%s\n' "$written" | grep '/slow-unit-' || true)
  crashes=$(printf '%s' "$reproducers" | grep -c . || true)
  [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1  # died without writing one
  seed=$(sed -n 's/^INFO: Seed: //p' "$log" | head -1)
  echo "fuzz $MODE $target: ${execs:-0} execs in $secs s (seed $seed; $final), $crashes crashes"
  for f in $slow; do
    echo "  slow input (> 10 s; $(sed -n 's/^Slowest unit: //p' "$log" | tail -1)): $f" >&2
  done
  if [ "$rc" -ne 0 ]; then
    echo "  exit code $rc, log $log:" >&2
    grep -E 'ERROR: |runtime error|contract violation|SUMMARY' "$log" | head -5 | sed 's/^/    /' >&2 || true
    for f in $reproducers; do
      echo "  reproducer: $f   (replay: $BUILD/$name $f)" >&2
    done
    return 1
  fi
  return 0
}

status=0
srcs=(tests/fuzz/fuzz_*.cpp)
if [ "$MODE" = gate ]; then
  # The gate's targets run at once (each is one process on one core; its
  # inputs depend on its seed, corpus and run count only), their reports
  # printed in order: the gate takes about its longest target's time.
  pids=()
  for src in "${srcs[@]}"; do
    t=$(basename "$src" .cpp)
    run_one "$src" >"$BUILD/${t#fuzz_}.gate.out" 2>&1 &
    pids+=($!)
  done
  for i in "${!srcs[@]}"; do
    t=$(basename "${srcs[$i]}" .cpp)
    wait "${pids[$i]}" || status=1
    cat "$BUILD/${t#fuzz_}.gate.out"
  done
else
  for src in "${srcs[@]}"; do run_one "$src" || status=1; done
fi
exit $status
