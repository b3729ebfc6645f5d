#!/usr/bin/env bash
# The test command (npm test): set up if needed, build both targets, run the
# native tests (ctest), the same under sanitizers, the fuzzers for a while, and
# the JS tests (node --test).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
(cd build/native && ctest --output-on-failure -j2)
bash tools/sanitize.sh                    # the native tests again under ASan + UBSan (build/asan)
bash tools/fuzz.sh "${FUZZ_SECONDS:-45}"  # each libFuzzer target for FUZZ_SECONDS s (build/fuzz)
node --test tests/js/ tests/browser/
