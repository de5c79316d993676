#!/bin/sh
# gpu_pending.sh -- what waits for a device, in one call (bench/RESULTS.md,
# "tenth session"): each step in order of what it decides, and only while
# LIMIT seconds (default 570) allow it. Binaries built on the build machine
# and carried in .gpudata (bench/gpu_e2e.sh's layout): .gpudata/bin (main:
# retarget, retargetd, tests/test_cuda, bench/bench_gpu, bench_corpus,
# bench_load, and COMMIT holding its commit), .gpudata/pc (the
# gpu-pair-cull branch: retarget, tests/test_cuda, bench/bench_gpu), the
# shared data in .gpudata, libcjson1, libmicrohttpd12 and libzip4 in .debs.
#   1. the CLI at --lanes 1 and --lanes 2, alternating (gpu_ab.sh cli, R=4),
#      every output file compared: whether the side lane becomes the CUDA
#      default;
#   2. the CPU backend on 16 windows at 16, 1, 16 threads, against
#      .gpudata/old where there is one, CSVs compared;
#   3. test_cuda in full of bin (GPU == CPU bits, the lanes side by side);
#   4. bench_gpu windows at the CLI's call sizes;
#   5. pc against bin: the six BVH clips onto the G1 (collisions on),
#      alternating, outputs compared; bench_gpu reference and windows 131072
#      of both; test_cuda (RT_CUDA_QUICK=1) of pc;
#   6. bench-e2e (N=512, K=16);
#   7. compute-sanitizer memcheck and racecheck (RT_CUDA_QUICK=1).
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
# 1. the CLI, one lane against two, alternating, every output compared
t0=$(date +%s)
SETS="bin bin@--lanes,2" R=4 timeout 150 sh bench/gpu_ab.sh cli > /dev/null 2>&1
echo "[1] gpu_ab cli exit $? ($(( $(date +%s) - t0 )) s)"
cat "$OUT/summary.txt"
# 2. the CPU backend, 16 windows: 16 and 1 threads, alternating with .gpudata/old/retarget where
#    there is one (an A/B of a CPU-solver change), the CSVs compared
if [ "$(left)" -gt 60 ]; then
    mkdir -p /tmp/cc
    $B/bench/bench_corpus .gpudata/reference/g1/dance1_subject1.csv /tmp/cc 16 11 > /dev/null
    cpus="bin"; [ -x .gpudata/old/retarget ] && cpus="old bin"
    for t in 16 1 16; do
        for d in $cpus; do
            [ "$(left)" -gt 25 ] || break
            s0=$(date +%s%N)
            RT_CPU_PROFILE=1 timeout $(( $(left) - 5 )) .gpudata/$d/retarget solve /tmp/cc/*.csv --source-robot g1 --robot g1 \
                --batch --backend cpu --threads $t --quiet -o /tmp/cpu_${d}_$t --stats /tmp/cpu_st.json 2> /tmp/cpu_prof.txt
            s1=$(date +%s%N)
            echo "cpu $d threads $t: wall $(((s1 - s0) / 1000000)) ms; $(cat /tmp/cpu_prof.txt | tr '\n' ' ')" >> "$OUT/cpu.txt"
            echo "[2] cpu $d threads $t: wall $(((s1 - s0) / 1000000)) ms; $(grep 'cpu profile' /tmp/cpu_prof.txt | sed 's/.*total/total/')"
        done
    done
    for d in $cpus; do
        same=0; all=0
        for f in /tmp/cpu_bin_16/*.csv; do all=$((all + 1)); cmp -s "$f" "/tmp/cpu_${d}_1/${f##*/}" && same=$((same + 1)); done
        echo "[2] cpu: $same of $all CSVs of $d at 1 thread == bin at 16"
    done
fi
# 3. test_cuda in full (the side-by-side lanes, the mimic chain: never run on a device)
t0=$(date +%s)
q=0; [ "$(left)" -lt 240 ] && q=1 # too little time for the full run: the quick one
RT_CUDA_QUICK=$q timeout $(( $(left) < 240 ? $(left) - 20 : 220 )) $B/tests/test_cuda > "$OUT/test_cuda.log" 2>&1
echo "[3] test_cuda (RT_CUDA_QUICK=$q): exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$OUT/test_cuda.log")"
grep -c "BITS EQUAL" "$OUT/test_cuda.log"; grep -E "DIFF|FAIL|side" "$OUT/test_cuda.log" | head -n 20
# 4. bench_gpu at the CLI's call sizes
RT_CUDA_DEVICES=1 timeout 40 $B/bench/bench_gpu windows 131072 33316 > "$OUT/bench_gpu_windows.txt" 2>&1
echo "[4] $(grep -E 'frames/s' "$OUT/bench_gpu_windows.txt" | tr '\n' ' ')"
# 5. pc (the GPU pair cull) against bin on the BVH clips (collisions on), alternating
if [ "$(left)" -gt 200 ]; then
    for r in 1 2 3; do
        for d in bin pc; do
            rm -rf /tmp/bv_$d
            s0=$(date +%s%N)
            RT_CUDA_PROFILE=1 .gpudata/$d/retarget solve .gpudata/clips/*.bvh --robot g1 --batch --backend cuda --quiet \
                -o /tmp/bv_$d --stats /tmp/bv_st.json 2>> "$OUT/bvh_profile_${d}_$r.txt"
            s1=$(date +%s%N)
            echo "bvh $d round $r: process wall $(((s1 - s0) / 1000000)) ms; $(cat /tmp/bv_st.json)" >> "$OUT/bvh.txt"
            echo "[5] bvh $d round $r: process wall $(((s1 - s0) / 1000000)) ms"
        done
    done
    same=0; all=0
    for f in /tmp/bv_bin/*; do all=$((all + 1)); cmp -s "$f" "/tmp/bv_pc/${f##*/}" && same=$((same + 1)); done
    echo "[5] bvh: $same of $all output files pc == bin"
    for d in bin pc; do
        RT_CUDA_DEVICES=1 RT_CUDA_PROFILE=1 timeout 60 .gpudata/$d/bench/bench_gpu reference > "$OUT/bench_ref_$d.txt" 2>&1
        echo "[5] bench_gpu reference $d: $(grep -E 'frames/s' "$OUT/bench_ref_$d.txt" | tail -n 2 | tr '\n' ' ')"
    done
    for d in pc bin pc; do
        RT_CUDA_DEVICES=1 timeout 40 .gpudata/$d/bench/bench_gpu windows 131072 > "$OUT/bench_win_$d.txt" 2>&1
        echo "[5] bench_gpu windows 131072 $d: $(grep -E 'frames/s' "$OUT/bench_win_$d.txt" | tr '\n' ' ')"
    done
    t0=$(date +%s)
    RT_CUDA_QUICK=1 timeout 150 .gpudata/pc/tests/test_cuda > "$OUT/test_cuda_pc.log" 2>&1
    echo "[5] test_cuda pc (quick): exit $? ($(( $(date +%s) - t0 )) s): $(tail -n 1 "$OUT/test_cuda_pc.log")"
    grep -c "BITS EQUAL" "$OUT/test_cuda_pc.log"; grep -E "DIFF|FAIL" "$OUT/test_cuda_pc.log" | head -n 20
fi
# 6. bench-e2e, default settings
if [ "$(left)" -gt 130 ]; then
    t0=$(date +%s)
    E2E_BACKEND=cuda E2E_COMMIT=$(cat $B/COMMIT) TMPDIR=/tmp timeout $(( $(left) - 60 )) \
        sh bench/e2e.sh $B 512 16 > "$OUT/e2e.txt" 2>&1
    echo "[6] e2e: exit $? ($(( $(date +%s) - t0 )) s)"
    grep -E "^- byte check|^\| (CLI|daemon)|^Daemon: |^Daemon worker|^Daemon submit|^Daemon database" "$OUT/e2e.txt"
fi
# 7. the sanitizers (quick test_cuda)
san=$(command -v compute-sanitizer 2>/dev/null || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
    if [ "$(left)" -gt 60 ]; then
        RT_CUDA_UNROLLED_CG=1 RT_CUDA_QUICK=1 timeout $(( $(left) - 10 )) "$san" --tool $tool --error-exitcode 9 \
            $B/tests/test_cuda > "$OUT/$tool.log" 2>&1
        echo "[7] $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$tool.log" | tail -n 1))"
    fi
done
echo "done at $(( $(date +%s) - T0 )) s"
