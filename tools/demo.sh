#!/usr/bin/env bash
# The main job (npm run demo): set up, build the wasm module, run the Node example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh wasm >/dev/null
node examples/node_example.mjs
