#!/usr/bin/env bash
# The main job (npm run demo): set up, build the wasm modules the pages serve, serve the browser
# demos on http://127.0.0.1:8080/ (PORT=N or --port N to change; Ctrl-C stops).
# A first run installs and builds for several minutes: it says so and shows
# the build's progress; when everything is built already it prints nothing
# but the server's address.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh demo
if [ ! -f dist/attnwasm_core.wasm ]; then
  echo "demo: first run: building the wasm modules the pages serve (a few minutes on 2 cores; later runs rebuild only what changed)"
fi
# The build's progress lines ([ 42%] Building …, Linking …), nothing when it is up to date.
set +e
bash tools/build.sh modules 2>&1 | grep --line-buffered -E '^\[ *[0-9]+%\] (Building|Linking)|error|Error' | sed -u 's/^/demo: /'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "demo: the wasm build failed (exit $status); run 'bash tools/build.sh modules' to see its whole output" >&2
  exit "$status"
fi
for m in models/translator/translator.safetensors models/vit/vit.safetensors models/lm/lm.safetensors; do
  [ -f "$m" ] || echo "demo: $m is missing; train it with /usr/bin/python3 tools/models/train_$(basename "$(dirname "$m")").py" >&2
done
exec node tools/serve.mjs "$@"
