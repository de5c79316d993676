#!/bin/sh
# gpu_session_init.sh -- one lent-GPU call comparing the two init-solve
# executors (RT_CUDA_INIT=full vs RT_CUDA_INIT=warp, the default):
# test_cuda (GPU == CPU bits, batched == solo, run == run) with each,
# bench_gpu throughput with each, then compute-sanitizer memcheck and
# racecheck (RT_CUDA_QUICK=1, RT_CUDA_UNROLLED_CG=1) on the binaries'
# default (RT_CUDA_INIT unset; "full" was the default of the build measured
# on 2026-11-30, bench/RESULTS.md fifth session).
# Binaries built here and carried in .gpudata/new; logs under $OUT, short
# table last.
set -u
for f in .debs/*.deb; do dpkg -x "$f" /tmp/debs; done
export LD_LIBRARY_PATH=/tmp/debs/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export RT_SHARED_DATA=$PWD/.gpudata
B=${BIN:-.gpudata/new}
san=$(command -v compute-sanitizer 2>/dev/null || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
for m in full warp; do
    t0=$(date +%s)
    RT_CUDA_INIT=$m RT_CUDA_DEVICES=1 timeout ${TEST_TIMEOUT:-100} $B/tests/test_cuda > "$OUT/test_cuda_$m.log" 2>&1
    echo "test_cuda $m exit $? ($(( $(date +%s) - t0 )) s)" >> "$OUT/test_cuda_$m.log"
done
for m in full warp; do
    RT_CUDA_INIT=$m RT_CUDA_DEVICES=1 timeout ${BENCH_TIMEOUT:-70} $B/bench/bench_gpu throughput > "$OUT/bench_$m.log" 2>&1
    echo "bench $m exit $?" >> "$OUT/bench_$m.log"
done
RT_CUDA_UNROLLED_CG=1 RT_CUDA_QUICK=1 timeout ${SAN_TIMEOUT:-70} "$san" --tool memcheck --leak-check full \
    --error-exitcode 9 $B/tests/test_cuda > "$OUT/memcheck.log" 2>&1
echo "memcheck exit $?" >> "$OUT/memcheck.log"
RT_CUDA_UNROLLED_CG=1 RT_CUDA_QUICK=1 timeout ${SAN_TIMEOUT:-70} "$san" --tool racecheck --error-exitcode 9 \
    $B/tests/test_cuda > "$OUT/racecheck.log" 2>&1
echo "racecheck exit $?" >> "$OUT/racecheck.log"
cat "$OUT/nvidia-smi.txt"
for m in full warp; do
    echo "---- RT_CUDA_INIT=$m ----"
    grep -E "BITS|frames batched|batch of|^DIFF|passed" "$OUT/test_cuda_$m.log" | tail -n 12
    tail -n 1 "$OUT/test_cuda_$m.log"
    grep -E "^throughput|exit" "$OUT/bench_$m.log"
done
grep -E 'ERROR SUMMARY|exit' "$OUT/memcheck.log" | tail -n 2
grep -E 'RACECHECK SUMMARY|exit' "$OUT/racecheck.log" | tail -n 2
