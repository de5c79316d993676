#!/bin/sh
# gpu_profile.sh -- where a GPU solve's time goes (one lent-GPU call, like
# gpu_session.sh; binaries carried in .gpudata/new): the phase profile of
# cuda_lm_solve (RT_CUDA_PROFILE=1: a stream synchronization after each
# phase, one line per solve) for 64 and 256 clips of the real clip and for
# the reference batch, then Nsight Systems' kernel summary and Nsight
# Compute on one PCG iteration at 64 clips where those tools are installed.
# Logs under $OUT; the short lines last.
set -u
. bench/gpu_env.sh
export RT_CUDA_DEVICES=1
B=${BIN:-.gpudata/new}
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$O/profile.txt" 2>&1
for nc in ${PROFILE_SIZES:-64 256}; do
    RT_CUDA_PROFILE=1 timeout 60 $B/bench/bench_gpu throughput $nc >> "$O/profile.txt" 2>&1
done
[ -n "${PROFILE_REFERENCE-1}" ] && RT_CUDA_PROFILE=1 timeout 60 $B/bench/bench_gpu reference >> "$O/profile.txt" 2>&1
nsys=$(command -v nsys 2>/dev/null || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -n 1)
if [ -n "$nsys" ]; then
    timeout 120 "$nsys" profile -o "$O/tp64" --force-overwrite true $B/bench/bench_gpu throughput 64 > "$O/nsys.txt" 2>&1
    timeout 60 "$nsys" stats --report cuda_gpu_kern_sum --report cuda_gpu_mem_time_sum "$O/tp64.nsys-rep" >> "$O/nsys.txt" 2>&1
    rm -f "$O/tp64.nsys-rep" "$O/tp64.sqlite"
else
    echo "nsys: not installed" >> "$O/profile.txt"
fi
ncu=$(command -v ncu 2>/dev/null || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
if [ -n "$ncu" ]; then
    # the CG unrolled (RT_CUDA_UNROLLED_CG=1): Nsight Compute does not profile
    # the kernels of the while-node graph; skip 20 launches to land in a CG iteration
    RT_CUDA_UNROLLED_CG=1 timeout ${NCU_TIMEOUT:-150} "$ncu" --clock-control none \
        -k "regex:${NCU_KERNELS:-matvec|cg_update|cg_p_kernel|reduce_level}" \
        --launch-skip ${NCU_SKIP:-20} --launch-count ${NCU_COUNT:-12} --section SpeedOfLight --section WarpStateStats --section Occupancy \
        --section LaunchStats --section MemoryWorkloadAnalysis $B/bench/bench_gpu throughput 64 > "$O/ncu_cg.txt" 2>&1
    echo "ncu exit $?" >> "$O/ncu_cg.txt"
else
    echo "ncu: not installed" > "$O/ncu_cg.txt"
fi
grep -E "cuda profile|^throughput|^reference|CG iteration|clocks|H200" "$O/profile.txt"
[ -f "$O/nsys.txt" ] && grep -E "Time \(%\)|_kernel|reduce" "$O/nsys.txt" | head -40
grep -E "^  [a-z_]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per" "$O/ncu_cg.txt" | head -80
