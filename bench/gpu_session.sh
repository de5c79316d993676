#!/bin/sh
# gpu_session.sh [NCU] -- one lent-GPU call (bench/RESULTS.md): binaries built
# on the build machine and carried in .gpudata/new (tests/test_cuda,
# bench/bench_gpu), libcjson1 from .debs. Runs gpu_check.sh (test_cuda,
# memcheck, racecheck), bench_gpu on one device, and with NCU=1 Nsight
# Compute on the warp-per-frame kernels of the reference batch; logs under
# $OUT, short table last. Each step has its own time limit so the whole
# fits one 600 s call.
set -u
. bench/gpu_env.sh
export LOG_DIR=$OUT
B=${BIN:-.gpudata/new}
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv > "$OUT/nvidia-smi.txt" 2>&1
t0=$(date +%s)
TEST_TIMEOUT=${TEST_TIMEOUT:-150} SAN_TIMEOUT=${SAN_TIMEOUT:-100} sh bench/gpu_check.sh $B > "$OUT/check_summary.txt" 2>&1
echo "gpu_check exit $? ($(( $(date +%s) - t0 )) s)" >> "$OUT/check_summary.txt"
t1=$(date +%s)
RT_CUDA_DEVICES=1 timeout ${BENCH_TIMEOUT:-150} $B/bench/bench_gpu all > "$OUT/bench_gpu.log" 2>&1
echo "bench_gpu exit $? ($(( $(date +%s) - t1 )) s)" >> "$OUT/bench_gpu.log"
if [ "${1:-0}" = 1 ]; then
    ncu=$(command -v ncu 2>/dev/null || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
    RT_CUDA_DEVICES=1 timeout ${NCU_TIMEOUT:-90} $ncu --clock-control none -k 'regex:init_kernel|lin_kernel|precond_kernel|cost_kernel|matvec_kernel|cg_update_kernel' \
        --launch-skip 0 --launch-count 6 --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis $B/bench/bench_gpu reference > "$OUT/ncu.txt" 2>&1
    echo "ncu exit $?" >> "$OUT/ncu.txt"
fi
cat "$OUT/nvidia-smi.txt" "$OUT/check_summary.txt"
sed -n '/==== summary ====/,$p' "$OUT/bench_gpu.log"
tail -n 1 "$OUT/bench_gpu.log"
