#!/usr/bin/env bash
# Builds all targets: native (static library + GoogleTest tests, build/native),
# wasm (build/wasm): dist/attnwasm_core.mjs + .wasm (single-thread) and
# dist/attnwasm_core_mt.mjs + .wasm + .worker.js + package.json (pthreads),
# and the relaxed-SIMD wasm (build/wasm-relaxed): dist/attnwasm_core_rs.* and
# dist/attnwasm_core_mt_rs.*, plus the kernel tests as a wasm program.
# Incremental. `tools/build.sh wasm` builds both wasm directories.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
what=${1:-all}

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
  # The relaxed build runs em++ on Debian's clang-19 (docs/TOOLCHAIN.md, SIMD):
  # these variables are read by every em++/emar call of this directory.
  # Never put node_modules/.bin (npm binaryen) on PATH for em++: the glue
  # would then be minified against another wasm-opt's names.
  (
    export EM_LLVM_ROOT=/usr/lib/llvm-19/bin EM_LLVM_ADD_VERSION= EM_CLANG_ADD_VERSION=
    if [ ! -f build/wasm-relaxed/CMakeCache.txt ]; then
      emcmake cmake -S . -B build/wasm-relaxed -DCMAKE_BUILD_TYPE=Release -DAW_RELAXED_SIMD=ON \
        -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node >/dev/null
    fi
    cmake --build build/wasm-relaxed -j"$JOBS"
  )
fi
