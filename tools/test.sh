#!/usr/bin/env bash
# The test command (npm test): set up if needed, build both targets, run the
# native tests (ctest), the same under sanitizers (with a replay of every fuzz
# corpus file), the fuzz gate (fixed seed, fixed number of inputs: the same
# on every run), and the JS tests (node --test). Deterministic: the
# open-ended fuzz search is `npm run fuzz`, never part of this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
(cd build/native && ctest --output-on-failure -j2)
bash tools/sanitize.sh                    # the native tests again under ASan + UBSan (build/asan)
bash tools/fuzz.sh gate                   # each libFuzzer target, fixed seed and run count (build/fuzz)
node --test tests/js/ tests/browser/
