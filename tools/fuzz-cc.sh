#!/usr/bin/env bash
# Compiler launcher of the fuzz build (tools/fuzz.sh sets it as CMake's
# CMAKE_CXX_COMPILER_LAUNCHER): `fuzz-cc.sh ROOT compiler args…` runs the
# compiler with every ROOT/… path CMake passes (sources, include folders)
# made relative to the folder it compiles in. Sanitizer metadata and
# assertion strings keep the paths they are given, so with absolute ones a
# clone at another path built a binary with another memory layout, and the
# deterministic fuzz gate tried other inputs. With relative ones every clone
# builds the same binary.
set -euo pipefail
root=$1; shift
rel=$(realpath --relative-to="$PWD" "$root")
args=()
for a in "$@"; do args+=("${a//$root\//$rel/}"); done
exec "${args[@]}"
