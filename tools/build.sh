#!/usr/bin/env bash
# Builds both targets: native (static library + GoogleTest tests, build/native)
# and wasm (build/wasm): dist/attnwasm_core.mjs + .wasm (single-thread),
# dist/attnwasm_core_mt.mjs + .wasm + .worker.js + package.json (pthreads),
# the same two with relaxed SIMD (dist/attnwasm_core_rs.*, dist/attnwasm_core_mt_rs.*;
# their GEMM by em++ on clang-19, see CMakeLists.txt) and the kernel tests as
# a wasm program (build/wasm/attnwasm_kernel_tests_rs.js). Incremental.
# Parts: `tools/build.sh native` (build/native), `wasm` (every wasm target), `modules` (only the
# modules the pages and the package serve: what npm run demo needs), `tests_rs` (the wasm kernel
# tests), `bench` (the kernel-timing modules of bench/, build/wasm/attnwasm_bench{,_rs}.mjs, not
# shipped); several may be given. Set AW_RELAXED_SIMD=OFF to build without the relaxed-SIMD
# modules (no clang-19 or npm binaryen needed).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(bash tools/jobs.sh)}
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(all)
# npm run (npm test, npm run build) puts node_modules/.bin first on PATH; its
# wasm-opt (npm binaryen, for the relaxed builds only, called by path) must
# never be the one em++ finds: em++'s -O3 would minify the glue's import names
# against another wasm-opt's and the baseline .wasm would not instantiate
# ("Import #0 "a" "a": function import requires a callable").
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v 'node_modules/\.bin' | paste -sd: -)
export PATH
# Debian's emscripten needs NODE_PATH for acorn; Node 20 rejects the default emulator's flag.
export NODE_PATH=/usr/share/nodejs
# em++ is a shell wrapper that runs "${EMSDK_PYTHON:-python3}": the python3 first on PATH, which on a machine with
# pyenv is its shim (a bash script that runs pyenv, which runs the Python it picks: 40 processes, 0.3 s), for each of
# the ~210 compiles and links. Debian's Python is the one Debian's emscripten is packaged for. Measured: an em++
# compile of an empty file took 0.65 s through the shim, 0.24 s on /usr/bin/python3.
[ -x /usr/bin/python3 ] && export EMSDK_PYTHON=/usr/bin/python3

wasm_configured() {
  if [ ! -f build/wasm/CMakeCache.txt ]; then
    emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node \
      -DAW_RELAXED_SIMD="${AW_RELAXED_SIMD:-ON}" >/dev/null
  fi
}
for what in "${parts[@]}"; do
  case "$what" in
    all | native)
      cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
      cmake --build build/native -j"$JOBS" ;;&
    all | wasm) wasm_configured; cmake --build build/wasm -j"$JOBS" ;;
    modules) wasm_configured; cmake --build build/wasm -j"$JOBS" --target aw_modules ;;
    tests_rs) wasm_configured; cmake --build build/wasm -j"$JOBS" --target attnwasm_kernel_tests_rs ;;
    bench) wasm_configured; cmake --build build/wasm -j"$JOBS" --target attnwasm_bench attnwasm_bench_rs ;;
    native) ;;
    *) echo "usage: tools/build.sh [all|native|wasm|modules|tests_rs|bench]..." >&2; exit 2 ;;
  esac
done
