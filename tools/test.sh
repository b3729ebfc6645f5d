#!/usr/bin/env bash
# The test command (npm test): set up if needed, build both targets, run the
# native tests (ctest) and the JS tests (node --test).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
(cd build/native && ctest --output-on-failure -j2)
node --test tests/js/ tests/browser/
