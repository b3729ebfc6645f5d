#!/usr/bin/env bash
# Builds both targets: native (static library + GoogleTest tests, build/native)
# and wasm (build/wasm): dist/attnwasm_core.mjs + .wasm (single-thread) and
# dist/attnwasm_core_mt.mjs + .wasm + .worker.js + package.json (pthreads).
# Incremental.
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
fi
