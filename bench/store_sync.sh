#!/bin/sh
# store_sync.sh BUILD [DIR] -- the cost of --sync full against normal: the
# store's writes of a job's life (bench/bench_store.c), on a database in DIR
# (default var/, where `make run` keeps the daemon's). Appends one section
# to bench/RESULTS.md.
set -eu
b=${1:-build}; dir=${2:-var}
mkdir -p "$dir"
out=$(mktemp)
"$b/bench/bench_store" "$dir" 300 | tee "$out"
{
    echo
    echo "## bench_store $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') (shared with other work), $(df -T "$dir" | awk 'NR==2 {print $2}') on $(df "$dir" | awk 'NR==2 {print $1}')"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- command: \`sh bench/store_sync.sh $*\` ($b/bench/bench_store $dir 300)"
    echo
    cat "$out"
} >> bench/RESULTS.md
rm -f "$out"
