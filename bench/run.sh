#!/usr/bin/env bash
# The benchmark in one command: installs what it needs (idempotent), exports the
# ONNX files and weights, checks that all engines agree, times them and writes
# bench/results.md, bench/ratios.svg and bench/results.json. See bench/README.md.
# Arguments go to bench/run.mjs (e.g. --only mha_S1,matmul --rounds 1 --no-wait).
set -euo pipefail
cd "$(dirname "$0")/.."

# 1. attnwasm itself (dist/ is not checked in): build it only if it is missing.
if [ ! -f dist/attnwasm_core.wasm ] || [ ! -f dist/attnwasm_core.mjs ]; then
  bash tools/setup.sh
  bash tools/build.sh wasm
fi

# 2. System packages: Node (any ≥ 20 on PATH will do), Debian's torch and onnx for the export.
want=()
for p in python3-torch python3-onnx; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || want+=("$p")
done
command -v node >/dev/null && command -v npm >/dev/null || want+=(nodejs npm)
if [ ${#want[@]} -gt 0 ]; then
  echo "bench: installing ${want[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
fi
node -e 'if (+process.versions.node.split(".")[0] < 20) { console.error(`bench: Node >= 20 needed, got ${process.version}`); process.exit(1); }'

# 3. The peers (bench/package.json, pinned in bench/package-lock.json, into bench/node_modules).
if [ ! -d bench/node_modules ] || [ bench/package-lock.json -nt bench/node_modules/.package-lock.json ]; then
  echo "bench: npm ci (onnxruntime-web, tfjs-core, tfjs-backend-wasm, wabt)"
  (cd bench && npm ci --no-audit --no-fund --loglevel=error)
fi

# 4. ONNX files and weights from the torch modules (redone when the script changes).
if [ ! -f bench/onnx/cases.json ] || [ bench/export_onnx.py -nt bench/onnx/cases.json ]; then
  echo "bench: exporting ONNX (opset 17) and safetensors to bench/onnx/"
  /usr/bin/python3 bench/export_onnx.py 2> >(grep -v -E 'TracerWarning|^\s*(if|assert|return|elif)|UserWarning|warnings.warn' >&2)
fi

# 5. Check, wait for a quiet machine, time, write the results.
exec node bench/run.mjs "$@"
