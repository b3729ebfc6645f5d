#!/usr/bin/env bash
# Installs what attnwasm's build and tests need on a fresh Debian 12 machine.
# Idempotent: installs only what is missing, `npm ci` only when node_modules
# differs from package-lock.json. `tools/setup.sh demo` installs only what the
# demo's modules need (npm run demo: no GoogleTest, Chromium, fuzzing clang).
set -euo pipefail
cd "$(dirname "$0")/.."

# clang + libclang-rt-14-dev: libFuzzer and the sanitizer runtimes (tools/fuzz.sh, tools/sanitize.sh).
# clang-19 lld-19 llvm-19: em++ runs on them for the relaxed-SIMD build (build/wasm-relaxed;
# docs/TOOLCHAIN.md, SIMD), whose .wasm a current wasm-opt from npm (`binaryen`, a devDependency) optimises.
APT_PACKAGES=(cmake make emscripten libxsimd-dev clang-19 lld-19 llvm-19 nodejs npm)
if [ "${1:-all}" != demo ]; then
  APT_PACKAGES+=(g++ libgtest-dev wabt chromium clang libclang-rt-14-dev)
fi
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# nodejs/npm may come from elsewhere (e.g. a preinstalled Node 20): accept any on PATH.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs/}"); missing=("${missing[@]/npm/}")
fi
want=()
for p in "${missing[@]}"; do [ -n "$p" ] && want+=("$p"); done
if [ ${#want[@]} -gt 0 ]; then
  echo "setup: installing ${want[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
fi

# npm ci when node_modules does not hold exactly what package-lock.json pins
# (npm's own record of what it installed, node_modules/.package-lock.json,
# compared package by package: a file's date says nothing after a git checkout).
in_sync=$(node -e '
  const fs = require("fs");
  try {
    const want = JSON.parse(fs.readFileSync("package-lock.json", "utf8")).packages;
    const have = JSON.parse(fs.readFileSync("node_modules/.package-lock.json", "utf8")).packages;
    const ok = Object.entries(want).every(([k, v]) => k === "" || (have[k] && have[k].version === v.version && fs.existsSync(k)));
    process.stdout.write(ok ? "yes" : "no");
  } catch { process.stdout.write("no"); }')
if [ "$in_sync" != yes ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
