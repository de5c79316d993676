#!/bin/sh
# gpu_e2e.sh [check|e2e|all] -- one lent-GPU call (bench/RESULTS.md):
# binaries built on the build machine and carried in .gpudata/bin (retarget,
# retargetd, tests/test_cuda, bench/bench_gpu, bench_corpus, bench_load),
# the shared data it needs in .gpudata, libcjson1 and libmicrohttpd12 from
# .debs. check: gpu_check.sh (GPU == CPU bits, sanitizers); e2e: `make
# bench-e2e` (N=${N:-512} windows, K=${K:-16} clients) on the CUDA backend.
# Logs under $OUT; the tables last.
set -u
mkdir -p /tmp/debs
for f in .debs/*.deb; do dpkg -x "$f" /tmp/debs; done
export LD_LIBRARY_PATH=/tmp/debs/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export RT_SHARED_DATA=$PWD/.gpudata
export LOG_DIR=$OUT
B=.gpudata/bin
what=${1:-all}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/nvidia-smi.txt" 2>&1
nproc >> "$OUT/nvidia-smi.txt"
ldd $B/retargetd | grep "not found" >> "$OUT/nvidia-smi.txt"
if [ "$what" != e2e ]; then
    t0=$(date +%s)
    TEST_TIMEOUT=${TEST_TIMEOUT:-200} SAN_TIMEOUT=${SAN_TIMEOUT:-120} sh bench/gpu_check.sh $B > "$OUT/check_summary.txt" 2>&1
    echo "gpu_check exit $? ($(( $(date +%s) - t0 )) s)" >> "$OUT/check_summary.txt"
fi
if [ "$what" != check ]; then
    t0=$(date +%s)
    E2E_BACKEND=cuda E2E_COMMIT=${E2E_COMMIT:-unknown} TMPDIR=${TMPDIR:-/tmp} \
        timeout ${E2E_TIMEOUT:-400} sh bench/e2e.sh $B ${N:-512} ${K:-16} > "$OUT/e2e.txt" 2>&1
    echo "e2e exit $? ($(( $(date +%s) - t0 )) s)" >> "$OUT/e2e.txt"
fi
cat "$OUT/nvidia-smi.txt" "$OUT/check_summary.txt" 2>/dev/null
tail -n 40 "$OUT/e2e.txt" 2>/dev/null
