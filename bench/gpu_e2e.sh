#!/bin/sh
# gpu_e2e.sh [check|e2e|cpu|csv|all] -- one lent-GPU call (bench/RESULTS.md):
# binaries built on the build machine and carried in .gpudata/bin (retarget,
# retargetd, tests/test_cuda, bench/bench_gpu, bench_corpus, bench_load),
# the shared data it needs in .gpudata, libcjson1 and libmicrohttpd12 from
# .debs. check: gpu_check.sh (GPU == CPU bits, sanitizers); e2e: `make
# bench-e2e` (N=${N:-512} windows, K=${K:-16} clients) on the CUDA backend;
# cpu: the CPU backend at 1, 2, 4 and 16 threads on 16 windows; csv: every
# clip of .gpudata/clips onto four robots on both backends, CSVs compared;
# cli: the CLI alone on the bench-e2e corpus, ${R:-3} runs with --stats
# (its timeline), one more with RT_CUDA_PROFILE=1, a one-window run (the
# backend's start), and bench_gpu windows 131072 beside it.
# Logs under $OUT; the tables last.
set -u
. bench/gpu_env.sh
export LOG_DIR=$OUT
B=.gpudata/bin
what=${1:-all}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/nvidia-smi.txt" 2>&1
nproc >> "$OUT/nvidia-smi.txt"
ldd $B/retargetd | grep "not found" >> "$OUT/nvidia-smi.txt"
if [ "$what" = check ] || [ "$what" = all ]; then
    t0=$(date +%s)
    TEST_TIMEOUT=${TEST_TIMEOUT:-200} SAN_TIMEOUT=${SAN_TIMEOUT:-120} sh bench/gpu_check.sh $B > "$OUT/check_summary.txt" 2>&1
    echo "gpu_check exit $? ($(( $(date +%s) - t0 )) s)" >> "$OUT/check_summary.txt"
fi
if [ "$what" = all ] || [ "$what" = cpu ]; then
    # The CPU backend's scaling on this host: the same 16 windows at 1, 2, 4
    # and 16 threads, end to end (retarget solve --batch --backend cpu).
    mkdir -p /tmp/cpuscale/c
    $B/bench/bench_corpus .gpudata/reference/g1/dance1_subject1.csv /tmp/cpuscale/c 16 11 > /dev/null
    for t in 1 2 4 16; do
        s0=$(date +%s%N)
        $B/retarget solve /tmp/cpuscale/c/*.csv --source-robot g1 --robot g1 --batch --backend cpu \
            --threads $t --quiet -o /tmp/cpuscale/o$t --stats /tmp/cpuscale/st$t.json
        s1=$(date +%s%N)
        echo "cpu threads $t: wall $(( (s1 - s0) / 1000000 )) ms; $(cat /tmp/cpuscale/st$t.json)" >> "$OUT/cpu_scale.txt"
    done
    # A 2-core machine: the process pinned to two cores of distinct
    # physical cores (lscpu -e in the log), 1 and 2 threads.
    lscpu -e=CPU,CORE,SOCKET > "$OUT/lscpu.txt" 2>&1
    two=$(awk 'NR > 1 && !seen[$2]++ { printf "%s%s", n++ ? "," : "", $1 } n == 2 { exit }' "$OUT/lscpu.txt")
    for t in 1 2; do
        s0=$(date +%s%N)
        taskset -c "$two" $B/retarget solve /tmp/cpuscale/c/*.csv --source-robot g1 --robot g1 --batch --backend cpu \
            --threads $t --quiet -o /tmp/cpuscale/p$t --stats /tmp/cpuscale/sp$t.json
        s1=$(date +%s%N)
        echo "cpu threads $t pinned to cores $two: wall $(( (s1 - s0) / 1000000 )) ms; $(cat /tmp/cpuscale/sp$t.json)" >> "$OUT/cpu_scale.txt"
    done
    for t in 2 4 16; do cmp -s /tmp/cpuscale/o1/w0003.csv /tmp/cpuscale/o$t/w0003.csv && echo "threads $t == 1: same bytes" >> "$OUT/cpu_scale.txt"; done
fi
if [ "$what" = all ] || [ "$what" = csv ]; then
    # GPU == CPU through the CLI: every clip of .gpudata/clips (and edge/)
    # onto G1, H1, T1 (URDF) and T1 (MJCF) with the defaults, `cmp` of the
    # CSVs of --backend cuda and --backend cpu.
    for r in g1 h1 .gpudata/robots/T1_serial.urdf .gpudata/robots/T1_serial.xml; do
        n=$(basename $r)
        for be in cuda cpu; do
            $B/retarget solve .gpudata/clips/*.bvh .gpudata/clips/edge/*.bvh --robot $r --batch --backend $be \
                --threads 16 --quiet -o /tmp/csv/$n.$be > /tmp/csv.$n.$be.log 2>&1
        done
        same=0; all=0
        for f in /tmp/csv/$n.cpu/*.csv; do
            all=$((all + 1))
            cmp -s "$f" "/tmp/csv/$n.cuda/$(basename "$f")" && same=$((same + 1))
        done
        echo "$n: $same of $all CSVs GPU == CPU" >> "$OUT/csv.txt"
    done
fi
if [ "$what" = cli ]; then
    mkdir -p /tmp/clic
    $B/bench/bench_corpus .gpudata/reference/g1/dance1_subject1.csv /tmp/clic ${N:-512} 11 > /dev/null
    cp .gpudata/clips/*.bvh /tmp/clic/
    for k in $(seq 1 ${R:-3}); do
        rm -rf /tmp/clio
        s0=$(date +%s%N)
        $B/retarget solve /tmp/clic/*.csv /tmp/clic/*.bvh --source-robot g1 --robot g1 --batch --backend cuda \
            --quiet -o /tmp/clio --stats /tmp/clis$k.json ${CLI_ARGS:-}
        s1=$(date +%s%N)
        echo "cli run $k: process wall $(( (s1 - s0) / 1000000 )) ms, exec at $s0 ns, exit at $s1 ns; $(cat /tmp/clis$k.json)" >> "$OUT/cli.txt"
    done
    rm -rf /tmp/clio
    RT_CUDA_PROFILE=1 $B/retarget solve /tmp/clic/*.csv /tmp/clic/*.bvh --source-robot g1 --robot g1 --batch \
        --backend cuda --quiet -o /tmp/clio --stats /tmp/clip.json ${CLI_ARGS:-} 2> "$OUT/cli_profile.txt"
    echo "profiled run: $(cat /tmp/clip.json)" >> "$OUT/cli.txt"
    s0=$(date +%s%N)
    $B/retarget solve /tmp/clic/w0000.csv --source-robot g1 --robot g1 --backend cuda --quiet -o /tmp/clio1 \
        --stats /tmp/cli1.json
    s1=$(date +%s%N)
    echo "one window: process wall $(( (s1 - s0) / 1000000 )) ms, exec at $s0 ns, exit at $s1 ns; $(cat /tmp/cli1.json)" >> "$OUT/cli.txt"
    $B/bench/bench_gpu windows 131072 >> "$OUT/cli.txt" 2>&1
fi
if [ "$what" != check ] && [ "$what" != cpu ] && [ "$what" != csv ] && [ "$what" != cli ]; then
    t0=$(date +%s)
    E2E_BACKEND=cuda E2E_COMMIT=${E2E_COMMIT:-unknown} TMPDIR=${TMPDIR:-/tmp} \
        timeout ${E2E_TIMEOUT:-400} sh bench/e2e.sh $B ${N:-512} ${K:-16} > "$OUT/e2e.txt" 2>&1
    echo "e2e exit $? ($(( $(date +%s) - t0 )) s)" >> "$OUT/e2e.txt"
fi
cat "$OUT/nvidia-smi.txt" "$OUT/check_summary.txt" "$OUT/cpu_scale.txt" "$OUT/csv.txt" "$OUT/cli.txt" 2>/dev/null
tail -n 40 "$OUT/e2e.txt" 2>/dev/null
