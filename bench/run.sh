#!/bin/sh
# run.sh BUILD [section...] -- runs the CPU benchmarks and appends their
# output to bench/RESULTS.md as new sections (date, commit, machine, command).
# Sections: speed cg conv reduce (bench_solver) and retarget (bench_retarget:
# every clip onto G1 and H1, trajectory solve and --per-frame). No section
# given: all of them.
set -eu
b=${1:-build}; shift || true
data=${RT_SHARED_DATA:-../shared/data}
solver_secs=""; retarget=0
[ $# -eq 0 ] && set -- speed cg conv reduce retarget
for s in "$@"; do
    case $s in
    retarget) retarget=1 ;;
    speed | cg | conv | reduce) solver_secs="$solver_secs $s" ;;
    *) echo "run.sh: unknown section '$s'" >&2; exit 2 ;;
    esac
done
record() { # TITLE COMMAND OUTPUT
    {
        echo
        echo "## $1 $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo
        echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
        echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
        echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "- command: \`make bench\` ($2)"
        cat "$3"
    } >> bench/RESULTS.md
}
out=$(mktemp)
if [ -n "$solver_secs" ]; then
    cmd="$b/bench/bench_solver $data$solver_secs"
    $cmd | tee "$out"
    record bench_solver "$cmd" "$out"
fi
if [ $retarget = 1 ]; then
    cmd="$b/bench/bench_retarget"
    { echo; echo "### Trajectory solve"; echo; RT_SHARED_DATA=$data $cmd; \
      echo; echo "### --per-frame baseline"; echo; RT_SHARED_DATA=$data $cmd --per-frame; } | tee "$out"
    record bench_retarget "$cmd; $cmd --per-frame" "$out"
fi
rm -f "$out"
