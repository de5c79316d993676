#!/bin/sh
# gpu_run.sh [SECTION] -- one lent-GPU session (see bench/RESULTS.md): uses
# binaries built on the build machine (carried .gpudata/bin/tests/test_cuda
# and .gpudata/bin/bench/bench_gpu), unpacks the carried .debs (libcjson1)
# into /tmp/debs, points the programs at the carried data (.gpudata), then
# runs bench_gpu.sh and gpu_check.sh with logs under $OUT. SECTION: all
# (default), bench, check. Time limits: BENCH_TIMEOUT, TEST_TIMEOUT,
# SAN_TIMEOUT (seconds).
set -u
. bench/gpu_env.sh
export LOG_DIR=$OUT
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
cat "$OUT/nvidia-smi.txt"
B=${BIN:-.gpudata/bin}
ldd $B/tests/test_cuda | grep "not found"
what=${1:-all}
if [ "$what" != check ]; then sh bench/bench_gpu.sh $B all > "$OUT/bench_summary.txt" 2>&1; echo "bench_gpu exit $?" >> "$OUT/bench_summary.txt"; fi
if [ "$what" != bench ]; then sh bench/gpu_check.sh $B > "$OUT/check_summary.txt" 2>&1; echo "gpu_check exit $?" >> "$OUT/check_summary.txt"; fi
cat "$OUT/check_summary.txt" "$OUT/bench_summary.txt" 2>/dev/null
