#!/bin/sh
# gpu_session_cg.sh -- one lent-GPU call (bench/RESULTS.md, sixth session):
# the v2 kernels (RT_CUDA_CG=v2 RT_CUDA_INIT=v2; the defaults of the build
# measured on 2026-11-30, not the defaults since; CG v2: cp.async staging, two block-product rows per
# lane, 64 warps per SM for the update; init v2: block product rows and
# pred's dot products side by side) against the old kernels
# (the defaults), binaries built on the build machine and
# carried in .gpudata/new. test_cuda (GPU == CPU bits, batched == solo,
# run == run) on v2; bench_gpu throughput and reference with
# each; memcheck + racecheck (RT_CUDA_QUICK=1, RT_CUDA_UNROLLED_CG=1) on v2. Logs under $OUT, short table last.
set -u
for f in .debs/*.deb; do dpkg -x "$f" /tmp/debs; done
export LD_LIBRARY_PATH=/tmp/debs/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export RT_SHARED_DATA=$PWD/.gpudata
export RT_CUDA_DEVICES=1
B=${BIN:-.gpudata/new}
san=$(command -v compute-sanitizer 2>/dev/null || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
t0=$(date +%s)
RT_CUDA_CG=v2 RT_CUDA_INIT=v2 timeout ${TEST_TIMEOUT:-90} $B/tests/test_cuda > "$OUT/test_cuda_new.log" 2>&1
echo "test_cuda new exit $? ($(( $(date +%s) - t0 )) s)" >> "$OUT/test_cuda_new.log"
for m in new old; do
    t1=$(date +%s)
    if [ $m = old ]; then unset RT_CUDA_CG RT_CUDA_INIT; else export RT_CUDA_CG=v2 RT_CUDA_INIT=v2; fi
    timeout ${BENCH_TIMEOUT:-75} $B/bench/bench_gpu throughput > "$OUT/bench_tp_$m.log" 2>&1
    echo "bench throughput $m exit $? ($(( $(date +%s) - t1 )) s)" >> "$OUT/bench_tp_$m.log"
done
for m in new old; do
    t1=$(date +%s)
    if [ $m = old ]; then unset RT_CUDA_CG RT_CUDA_INIT; else export RT_CUDA_CG=v2 RT_CUDA_INIT=v2; fi
    timeout ${REF_TIMEOUT:-35} $B/bench/bench_gpu reference > "$OUT/bench_ref_$m.log" 2>&1
    echo "bench reference $m exit $? ($(( $(date +%s) - t1 )) s)" >> "$OUT/bench_ref_$m.log"
done
export RT_CUDA_CG=v2 RT_CUDA_INIT=v2
RT_CUDA_UNROLLED_CG=1 RT_CUDA_QUICK=1 timeout ${SAN_TIMEOUT:-55} "$san" --tool memcheck --leak-check full \
    --error-exitcode 9 $B/tests/test_cuda > "$OUT/memcheck.log" 2>&1
echo "memcheck exit $?" >> "$OUT/memcheck.log"
RT_CUDA_UNROLLED_CG=1 RT_CUDA_QUICK=1 timeout ${RACE_TIMEOUT:-90} "$san" --tool racecheck --error-exitcode 9 \
    $B/tests/test_cuda > "$OUT/racecheck.log" 2>&1
echo "racecheck exit $?" >> "$OUT/racecheck.log"
cat "$OUT/nvidia-smi.txt"
echo "---- test_cuda (v2) ----"
grep -E "BITS|frames batched|batch of|^DIFF" "$OUT/test_cuda_new.log" | tail -n 12
tail -n 2 "$OUT/test_cuda_new.log"
for m in new old; do
    echo "---- $m ----"
    grep -E "^copy|^reference|CG iteration|batched vs solo|exit" "$OUT/bench_ref_$m.log"
    grep -E "^throughput|exit" "$OUT/bench_tp_$m.log"
done
grep -E 'ERROR SUMMARY|exit' "$OUT/memcheck.log" | tail -n 2
grep -E 'RACECHECK SUMMARY|exit' "$OUT/racecheck.log" | tail -n 2
