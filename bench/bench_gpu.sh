#!/bin/sh
# bench_gpu.sh BUILD [SECTION] -- the CUDA benchmark (`make bench-gpu`):
# runs bench_gpu (SECTION: all, reference, throughput, accuracy or multi)
# on one device (RT_CUDA_DEVICES=1), then the several-device section on
# all devices, full output to $LOG_DIR/bench_gpu.log (default BUILD/gpu),
# summary printed.
b=${1:-build}
log=${LOG_DIR:-$b/gpu}
mkdir -p "$log"
sec=${2:-all}
if [ "$sec" = multi ]; then
    "$b/bench/bench_gpu" multi >"$log/bench_gpu.log" 2>&1
else
    RT_CUDA_DEVICES=1 timeout ${BENCH_TIMEOUT:-1200} "$b/bench/bench_gpu" "$sec" >"$log/bench_gpu.log" 2>&1
fi
r=$?
if [ "$sec" = all ] && [ $r -ne 77 ]; then
    timeout ${MULTI_TIMEOUT:-600} "$b/bench/bench_gpu" multi >"$log/bench_gpu_multi.log" 2>&1
    sed -n '/==== summary ====/,$p' "$log/bench_gpu_multi.log" | grep -i multi
fi
[ $r -eq 77 ] && { echo "bench-gpu: skipped: no CUDA device"; exit 77; }
sed -n '/==== summary ====/,$p' "$log/bench_gpu.log"
[ $r -eq 0 ] || { echo "bench_gpu exit $r"; tail -n 20 "$log/bench_gpu.log"; }
exit $r
