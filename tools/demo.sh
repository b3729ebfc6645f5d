#!/usr/bin/env bash
# The main job (npm run demo): set up, build the wasm module, serve the browser
# demos on http://127.0.0.1:8080/ (PORT=N or --port N to change; Ctrl-C stops).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh wasm >/dev/null
for m in models/translator/translator.safetensors models/vit/vit.safetensors; do
  [ -f "$m" ] || echo "demo: $m is missing; train it with /usr/bin/python3 tools/models/train_$(basename "$(dirname "$m")").py" >&2
done
exec node tools/serve.mjs "$@"
