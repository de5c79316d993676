#!/bin/sh
# run.sh BUILD -- runs the CPU benchmarks and appends their output to
# bench/RESULTS.md as a new section (date, commit, machine, command).
# Usage: sh bench/run.sh BUILD_DIR [section...]   (sections: speed cg conv reduce)
set -eu
b=${1:-build}; shift || true
data=${RT_SHARED_DATA:-../shared/data}
out=$(mktemp)
cmd="$b/bench/bench_solver $data $*"
$cmd | tee "$out"
{
    echo
    echo "## bench_solver $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- command: \`sh bench/run.sh $b $*\` ($cmd)"
    cat "$out"
} >> bench/RESULTS.md
rm -f "$out"
