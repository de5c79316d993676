#!/bin/sh
# gpu_ab.sh [quick|cli|e2e|cpu|host]... -- one lent-GPU call that compares two sets
# of binaries on the same lend (lends differ by 10-30% in host speed, so a
# comparison across calls says little): .gpudata/old and .gpudata/bin
# (retarget, retargetd, bench/bench_corpus, bench/bench_load; bin also
# tests/test_cuda and bench/bench_gpu), the shared data in .gpudata,
# libcjson1, libmicrohttpd12 and libzip4 from .debs (bench/gpu_e2e.sh's
# layout).
#   quick: test_cuda with RT_CUDA_QUICK=1 (GPU == CPU bits on small
#          batches and on the other robots).
#   cli:   `retarget solve --batch --backend cuda --stats` over bench-e2e's
#          corpus (N windows + the BVH clips), the sets alternating, R
#          rounds; the process's wall from date around it; every
#          trajectory file of each set compared with the first set's (the
#          reports hold their run's seconds).
#   e2e:   `sh bench/e2e.sh` (N, K) with old and new alternating, R rounds.
#   cpu:   the CPU backend on CPU_N windows (default 16; the issue's table
#          measured 64) at CPU_THREADS threads (default
#          "1 2 16": the 16 / 1 and 2-core targets), each set of SETS
#          present in turn, with --stats and RT_CPU_PROFILE's solve line;
#          every CSV compared with the first set's at the first count.
#   host:  bench/bench_host (the host's stages on one thread of this host)
#          of old and new over the cli corpus, solved by bin's CLI.
# Several modes may be named: each named one runs, in the order above, in
# one device call.
# SETS (default "old bin") names the binary sets of .gpudata that cli and
# e2e alternate; in e2e a set may be DIR@ARGS, the daemon of .gpudata/DIR
# run with ARGS (commas for spaces: "bin bin@--sources,raw" compares two
# settings of one build); in cli likewise, ARGS given to `retarget solve`. Logs under $OUT; a summary last.
set -u
. bench/gpu_env.sh
modes=${*:-quick}
n=${N:-512}
k=${K:-16}
rounds=${R:-2}
sets=${SETS:-old bin}
sum=$OUT/summary.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } >>"$sum" 2>&1
for b in $sets; do ldd ".gpudata/${b%%@*}/retargetd" | grep "not found" >>"$sum"; done
has() { case " $modes " in *" $1 "*) return 0 ;; esac; return 1; }
if has quick; then
    t0=$(date +%s)
    RT_CUDA_QUICK=1 timeout ${TEST_TIMEOUT:-300} .gpudata/bin/tests/test_cuda >"$OUT/test_cuda.log" 2>&1
    echo "test_cuda (quick): exit $? ($(($(date +%s) - t0)) s): $(tail -n 1 "$OUT/test_cuda.log")" >>"$sum"
    grep -E "BITS" "$OUT/test_cuda.log" >>"$sum"
fi
if has cli; then
    mkdir -p /tmp/ab/c
    .gpudata/bin/bench/bench_corpus .gpudata/reference/g1/dance1_subject1.csv /tmp/ab/c "$n" 11 >/dev/null
    cp .gpudata/clips/*.bvh /tmp/ab/c/
    for r in $(seq 1 "$rounds"); do
        for b in $sets; do
            d=${b%%@*}
            a=""
            case $b in *@*) a=$(echo "${b#*@}" | tr ',' ' ') ;; esac
            t=$(echo "$b" | tr -c 'A-Za-z0-9_\n' '_')
            rm -rf /tmp/ab/o
            s0=$(date +%s%N)
            # shellcheck disable=SC2086 # a set's ARGS are a list of words
            .gpudata/$d/retarget solve /tmp/ab/c/*.csv /tmp/ab/c/*.bvh --source-robot g1 --robot g1 --batch \
                --backend cuda --quiet -o /tmp/ab/o --stats /tmp/ab/st.json $a 2>>"$OUT/cli.log"
            s1=$(date +%s%N)
            echo "cli $b round $r: process wall $(((s1 - s0) / 1000000)) ms, exec at $s0 ns, exit at $s1 ns; $(cat /tmp/ab/st.json)" >>"$OUT/cli.txt"
            echo "cli $b round $r: process wall $(((s1 - s0) / 1000000)) ms" >>"$sum"
            [ -d /tmp/ab/keep_$t ] || mv /tmp/ab/o /tmp/ab/keep_$t
        done
    done
    # Every output file of every set against the first set's (round 1 each).
    first=$(echo "$sets" | awk '{ print $1 }' | tr -c 'A-Za-z0-9_\n' '_')
    for b in $sets; do
        t=$(echo "$b" | tr -c 'A-Za-z0-9_\n' '_')
        [ "$t" = "$first" ] && continue
        [ -d /tmp/ab/keep_$t ] || continue
        all=0; same=0
        for f in /tmp/ab/keep_$first/*; do
            case $f in *.report.json) continue ;; esac # a report holds its run's seconds
            all=$((all + 1))
            cmp -s "$f" "/tmp/ab/keep_$t/${f##*/}" && same=$((same + 1))
        done
        echo "cli: $same of $all trajectory files of $b == $(echo "$sets" | awk '{ print $1 }')'s bytes" >>"$sum"
    done
    s0=$(date +%s%N)
    .gpudata/bin/retarget solve /tmp/ab/c/w0000.csv --source-robot g1 --robot g1 --backend cuda --quiet \
        -o /tmp/ab/o1 --stats /tmp/ab/st1.json
    s1=$(date +%s%N)
    echo "one window (bin): process wall $(((s1 - s0) / 1000000)) ms, exec at $s0 ns, exit at $s1 ns; $(cat /tmp/ab/st1.json)" >>"$OUT/cli.txt"
    echo "one window (bin): process wall $(((s1 - s0) / 1000000)) ms" >>"$sum"
fi
if has e2e; then
    for r in $(seq 1 "$rounds"); do
        for b in $sets; do
            d=${b%%@*}
            a=""
            case $b in *@*) a=$(echo "${b#*@}" | tr ',' ' ') ;; esac
            log=$OUT/e2e_$(echo "$b" | tr -c 'A-Za-z0-9_\n' '_')_$r.txt
            E2E_BACKEND=cuda E2E_COMMIT=$b E2E_DAEMON_ARGS="$a" TMPDIR=/tmp timeout ${E2E_TIMEOUT:-200} \
                sh bench/e2e.sh ".gpudata/$d" "$n" "$k" >"$log" 2>&1
            echo "e2e $b round $r: exit $?" >>"$sum"
            grep -E "^- byte check|^\| (CLI|daemon)|^Daemon: |^Daemon worker|^Daemon submit|^Daemon database" "$log" >>"$sum"
        done
    done
fi
if has cpu; then
    mkdir -p /tmp/ab/cc
    .gpudata/bin/bench/bench_corpus .gpudata/reference/g1/dance1_subject1.csv /tmp/ab/cc "${CPU_N:-16}" 11 >/dev/null
    for t in ${CPU_THREADS:-1 2 16}; do
        for b in $sets; do
            d=${b%%@*}
            [ -x .gpudata/$d/retarget ] || continue
            a=""
            case $b in *@*) a=$(echo "${b#*@}" | tr ',' ' ') ;; esac
            o=/tmp/ab/cpu_$(echo "$b" | tr -c 'A-Za-z0-9_\n' '_')_$t
            rm -rf "$o"
            s0=$(date +%s%N)
            # shellcheck disable=SC2086 # a set's ARGS are a list of words
            RT_CPU_PROFILE=1 timeout ${CPU_TIMEOUT:-60} .gpudata/$d/retarget solve /tmp/ab/cc/*.csv --source-robot g1 \
                --robot g1 --batch --backend cpu --threads $t --quiet -o "$o" --stats /tmp/ab/cpu_st.json $a \
                2>/tmp/ab/cpu_prof.txt
            s1=$(date +%s%N)
            echo "cpu $b threads $t: wall $(((s1 - s0) / 1000000)) ms; $(grep 'cpu profile' /tmp/ab/cpu_prof.txt | sed 's/.*total/solve/')" >>"$sum"
            echo "cpu $b threads $t: wall $(((s1 - s0) / 1000000)) ms; $(tr '\n' ' ' </tmp/ab/cpu_prof.txt) $(cat /tmp/ab/cpu_st.json)" >>"$OUT/cpu.txt"
        done
    done
    # Every CSV of every run against the first set's at the first thread count.
    ref=/tmp/ab/cpu_$(echo "$sets" | awk '{ print $1 }' | tr -c 'A-Za-z0-9_\n' '_')_$(echo ${CPU_THREADS:-1} | awk '{ print $1 }')
    for o in /tmp/ab/cpu_*_*; do
        [ -d "$o" ] && [ "$o" != "$ref" ] || continue
        all=0; same=0
        for f in "$ref"/*.csv; do all=$((all + 1)); cmp -s "$f" "$o/${f##*/}" && same=$((same + 1)); done
        echo "cpu: $same of $all CSVs of ${o#/tmp/ab/cpu_} == ${ref#/tmp/ab/cpu_}'s bytes" >>"$sum"
    done
fi
if has host; then
    mkdir -p /tmp/ab/c /tmp/ab/hs
    [ -f /tmp/ab/c/w0000.csv ] || {
        .gpudata/bin/bench/bench_corpus .gpudata/reference/g1/dance1_subject1.csv /tmp/ab/c "$n" 11 >/dev/null
        cp .gpudata/clips/*.bvh /tmp/ab/c/
    }
    .gpudata/bin/retarget solve /tmp/ab/c/*.csv /tmp/ab/c/*.bvh --source-robot g1 --robot g1 --batch \
        --backend cuda --quiet -o /tmp/ab/hs 2>>"$OUT/host.log"
    for r in $(seq 1 "$rounds"); do
        for b in old bin; do
            [ -x .gpudata/$b/bench/bench_host ] || continue
            .gpudata/$b/bench/bench_host /tmp/ab/c /tmp/ab/hs 2 >"$OUT/host_${b}_$r.txt" 2>&1
            echo "host $b round $r: $(tr -s ' ' <"$OUT/host_${b}_$r.txt" | tr '\n' ' ')" >>"$sum"
        done
    done
fi
cat "$sum"
