#!/bin/sh
# run.sh BUILD [section...] -- runs the CPU benchmarks and appends their
# output to bench/RESULTS.md as new sections (date, commit, machine, command).
# Sections: speed cg conv reduce (bench_solver), retarget (bench_retarget:
# every clip onto G1 and H1, trajectory solve and --per-frame) and host
# (bench_host: the host's stages per frame, one thread, on 16 windows of the
# bench-e2e corpus and the BVH clips, solved first by `retarget solve`). No
# section given: all of them.
set -eu
b=${1:-build}; shift || true
data=${RT_SHARED_DATA:-../shared/data}
solver_secs=""; retarget=0; host=0
[ $# -eq 0 ] && set -- speed cg conv reduce retarget host
for s in "$@"; do
    case $s in
    retarget) retarget=1 ;;
    host) host=1 ;;
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
if [ $host = 1 ]; then
    dir=$(mktemp -d)
    mkdir -p "$dir/corpus" "$dir/solved"
    "$b/bench/bench_corpus" "$data/reference/g1/dance1_subject1.csv" "$dir/corpus" 16 11 >/dev/null
    cp "$data"/clips/*.bvh "$dir/corpus/"
    "$b/retarget" solve "$dir"/corpus/*.csv "$dir"/corpus/*.bvh --source-robot g1 --robot g1 --batch \
        --backend cpu --quiet -o "$dir/solved"
    cmd="$b/bench/bench_host CORPUS SOLVED 5"
    "$b/bench/bench_host" "$dir/corpus" "$dir/solved" 5 | tee "$out"
    record bench_host "$cmd (CORPUS: bench_corpus 16 windows, seed 11, and the BVH clips; SOLVED: retarget solve --batch --backend cpu)" "$out"
    rm -rf "$dir"
fi
rm -f "$out"
