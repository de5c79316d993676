#!/bin/sh
# bench_gpu.sh BUILD [SECTION] -- the CUDA benchmark (`make bench-gpu`):
# runs bench_gpu (SECTION: all, reference, throughput or accuracy), full
# output to $LOG_DIR/bench_gpu.log (default BUILD/gpu), summary printed.
b=${1:-build}
log=${LOG_DIR:-$b/gpu}
mkdir -p "$log"
"$b/bench/bench_gpu" ${2:-all} >"$log/bench_gpu.log" 2>&1
r=$?
[ $r -eq 77 ] && { echo "bench-gpu: skipped: no CUDA device"; exit 77; }
sed -n '/==== summary ====/,$p' "$log/bench_gpu.log"
[ $r -eq 0 ] || { echo "bench_gpu exit $r"; tail -n 20 "$log/bench_gpu.log"; }
exit $r
