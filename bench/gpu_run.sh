#!/bin/sh
# gpu_run.sh -- one lent-GPU session (see bench/RESULTS.md): uses binaries
# built on the build machine (carried build/tests/test_cuda and
# build/bench/bench_gpu), unpacks the carried .debs (libcjson1) into
# /tmp/debs, points the programs at the carried data (.gpudata), then runs
# gpu_check.sh and bench_gpu.sh with logs under $OUT.
set -u
for f in .debs/*.deb; do dpkg -x "$f" /tmp/debs; done
export LD_LIBRARY_PATH=/tmp/debs/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export RT_SHARED_DATA=$PWD/.gpudata
export LOG_DIR=$OUT
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
cat "$OUT/nvidia-smi.txt"
B=${BIN:-.gpudata/bin}
ldd $B/tests/test_cuda | grep "not found"
sh bench/gpu_check.sh $B; echo "gpu_check exit $?"
sh bench/bench_gpu.sh $B ${1:-all}; echo "bench_gpu exit $?"
