#!/bin/sh
# gpu_pending.sh -- what waits for a device, in one call (bench/RESULTS.md,
# "tenth session" and "eleventh session"): each step in order of what it
# decides, and only while LIMIT seconds (default 570) allow it. Binaries
# built on the build machine and carried in .gpudata (bench/gpu_e2e.sh's
# layout): .gpudata/bin (main: retarget, retargetd, tests/test_cuda,
# bench/bench_gpu, bench_corpus, bench_load, and COMMIT holding its commit),
# optionally .gpudata/old/retarget (a CPU-solver change's baseline), the
# shared data in .gpudata, libcjson1, libmicrohttpd12 and libzip4 in .debs.
#   1. the CLI at --lanes 1 and at its default (two lanes on CUDA),
#      alternating (gpu_ab.sh cli, R=4), every trajectory compared;
#   2. the CPU backend on 16 windows at 16, 1, 16 threads (gpu_ab.sh cpu),
#      against .gpudata/old where there is one, CSVs compared;
#   3. test_cuda in full (GPU == CPU bits, the lanes side by side);
#   4. bench_gpu windows at the CLI's call sizes, and reference;
#   5. bench-e2e (N=512, K=16);
#   6. compute-sanitizer memcheck and racecheck (RT_CUDA_QUICK=1).
# Logs under $OUT; each step prints its lines as it ends.
set -u
T0=$(date +%s)
left() { echo $(( ${LIMIT:-570} - ($(date +%s) - T0) )); }
. bench/gpu_env.sh
export LOG_DIR=$OUT
B=.gpudata/bin
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem,driver_version --format=csv,noheader > "$OUT/nvidia-smi.txt" 2>&1
lscpu | grep -E "Model name|^CPU\(s\)" >> "$OUT/nvidia-smi.txt"
ldd $B/retargetd | grep "not found" >> "$OUT/nvidia-smi.txt"
cat "$OUT/nvidia-smi.txt"
# 1. the CLI, one lane against the default, alternating, every trajectory compared
t0=$(date +%s)
SETS="bin@--lanes,1 bin" R=4 timeout 150 sh bench/gpu_ab.sh cli > /dev/null 2>&1
echo "[1] gpu_ab cli exit $? ($(( $(date +%s) - t0 )) s)"
cat "$OUT/summary.txt"
# 2. the CPU backend, 16 windows, 16 / 1 / 16 threads, against .gpudata/old where there is one
if [ "$(left)" -gt 60 ]; then
    n0=$(cat "$OUT/summary.txt" 2>/dev/null | wc -l)
    SETS="old bin" CPU_THREADS="16 1 16" CPU_TIMEOUT=30 timeout $(( $(left) - 25 )) sh bench/gpu_ab.sh cpu > /dev/null 2>&1
    echo "[2] gpu_ab cpu exit $?"
    tail -n +$((n0 + 1)) "$OUT/summary.txt" | grep -E "^cpu"
fi
# 3. test_cuda in full (the side-by-side lanes, the mimic chain)
t0=$(date +%s)
q=0; [ "$(left)" -lt 240 ] && q=1 # too little time for the full run: the quick one
RT_CUDA_QUICK=$q timeout $(( $(left) < 240 ? $(left) - 20 : 220 )) $B/tests/test_cuda > "$OUT/test_cuda.log" 2>&1
echo "[3] test_cuda (RT_CUDA_QUICK=$q): exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$OUT/test_cuda.log")"
grep -c "BITS EQUAL" "$OUT/test_cuda.log"; grep -E "DIFF|FAIL|side" "$OUT/test_cuda.log" | head -n 20
# 4. bench_gpu at the CLI's call sizes, and the reference batch
RT_CUDA_DEVICES=1 timeout 40 $B/bench/bench_gpu windows 131072 33316 > "$OUT/bench_gpu_windows.txt" 2>&1
echo "[4] $(grep -E 'frames/s' "$OUT/bench_gpu_windows.txt" | tr '\n' ' ')"
RT_CUDA_DEVICES=1 RT_CUDA_PROFILE=1 timeout 60 $B/bench/bench_gpu reference > "$OUT/bench_ref.txt" 2>&1
echo "[4] bench_gpu reference: $(grep 'cuda profile' "$OUT/bench_ref.txt" | tail -n 1)"
# 5. bench-e2e, default settings
if [ "$(left)" -gt 130 ]; then
    t0=$(date +%s)
    E2E_BACKEND=cuda E2E_COMMIT=$(cat $B/COMMIT) TMPDIR=/tmp timeout $(( $(left) - 60 )) \
        sh bench/e2e.sh $B 512 16 > "$OUT/e2e.txt" 2>&1
    echo "[5] e2e: exit $? ($(( $(date +%s) - t0 )) s)"
    grep -E "^- byte check|^\| (CLI|daemon)|^Daemon: |^Daemon worker|^Daemon submit|^Daemon database" "$OUT/e2e.txt"
fi
# 6. the sanitizers (quick test_cuda)
san=$(command -v compute-sanitizer 2>/dev/null || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
    if [ "$(left)" -gt 60 ]; then
        RT_CUDA_UNROLLED_CG=1 RT_CUDA_QUICK=1 timeout $(( $(left) - 10 )) "$san" --tool $tool --error-exitcode 9 \
            $B/tests/test_cuda > "$OUT/$tool.log" 2>&1
        echo "[6] $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tail -n 1))"
    fi
done
echo "done at $(( $(date +%s) - T0 )) s"
