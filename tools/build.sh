#!/usr/bin/env bash
# Builds both targets: native (static library + GoogleTest tests, build/native)
# and wasm (build/wasm): dist/attnwasm_core.mjs + .wasm (single-thread),
# dist/attnwasm_core_mt.mjs + .wasm + .worker.js + package.json (pthreads),
# the same two with relaxed SIMD (dist/attnwasm_core_rs.*, dist/attnwasm_core_mt_rs.*;
# their GEMM by em++ on clang-19, see CMakeLists.txt) and the kernel tests as
# a wasm program (build/wasm/attnwasm_kernel_tests_rs.js). Incremental.
# `tools/build.sh bench`: the kernel-timing modules of bench/ only
# (build/wasm/attnwasm_bench{,_rs}.mjs, not shipped; needs the wasm build set up).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
what=${1:-all}
# npm run (npm test, npm run build) puts node_modules/.bin first on PATH; its
# wasm-opt (npm binaryen, for the relaxed builds only, called by path) must
# never be the one em++ finds: em++'s -O3 would minify the glue's import names
# against another wasm-opt's and the baseline .wasm would not instantiate
# ("Import #0 "a" "a": function import requires a callable").
PATH=$(printf '%s' "$PATH" | tr ':' '\n' | grep -v 'node_modules/\.bin' | paste -sd: -)
export PATH

if [ "$what" = all ] || [ "$what" = native ]; then
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/native -j"$JOBS"
fi
if [ "$what" = all ] || [ "$what" = wasm ]; then
  # Debian's emscripten needs NODE_PATH for acorn; Node 20 rejects the default emulator's flag.
  export NODE_PATH=/usr/share/nodejs
  if [ ! -f build/wasm/CMakeCache.txt ]; then
    emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node >/dev/null
  fi
  cmake --build build/wasm -j"$JOBS"
fi
if [ "$what" = bench ]; then
  export NODE_PATH=/usr/share/nodejs
  cmake --build build/wasm -j"$JOBS" --target attnwasm_bench attnwasm_bench_rs
fi
