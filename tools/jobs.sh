#!/usr/bin/env bash
# How many compile jobs the build scripts run (unless JOBS is set): one per logical CPU, at most one per 1.5 GB of
# available memory (an em++ or ASan compile of the largest sources peaks near 1 GB), at least one. On the 2-core
# development machine that is 2, what the scripts always used; a larger CI machine builds in parallel.
cpus=$(nproc 2>/dev/null || echo 2)
kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || true)
by_mem=$(( ${kb:-0} > 0 ? ${kb:-0} / 1500000 : cpus ))  # no MemAvailable: by CPUs alone
n=$(( cpus < by_mem ? cpus : by_mem ))
[ "$n" -ge 1 ] || n=1
echo "$n"
