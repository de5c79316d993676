#!/bin/sh
# fuzz.sh SECONDS FUZZER... -- runs each libFuzzer binary for SECONDS with a
# seed corpus and prints one summary line per fuzzer:
#   NAME: SECONDS s, EXECUTIONS executions, CRASHES crashes (artifacts: DIR)
# Seeds: fuzz_urdf gets the shared robot files (robots/*.urdf), fuzz_mjcf
# their MJCF twins (robots/*.xml), fuzz_bvh the shared clips
# (clips/**/*.bvh), fuzz_profile the bundled profiles, fuzz_traj
# the first rows of the shared reference trajectories, fuzz_http a few
# requests (URL, query and body lines), copied into build/fuzz/corpus_NAME, which
# keeps what the fuzzer finds between runs. tests/NAME.dict is passed as a
# dictionary when it exists. Crash, leak, timeout and OOM inputs are written
# to build/fuzz/artifacts_NAME/. Exits non-zero when any fuzzer found one.
# The shared data folder is $RT_SHARED_DATA or ../shared/data.
set -u
[ $# -ge 2 ] || { echo "usage: fuzz.sh SECONDS FUZZER..." >&2; exit 2; }
secs=$1; shift
case $secs in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a number" >&2; exit 2 ;; esac
data=${RT_SHARED_DATA:-../shared/data}
status=0
for f in "$@"; do
    name=$(basename "$f")
    corpus=build/fuzz/corpus_$name
    art=build/fuzz/artifacts_$name
    log=build/fuzz/$name.log
    mkdir -p "$corpus" "$art"
    case $name in
    fuzz_urdf) [ -d "$data/robots" ] && find "$data/robots" -name '*.urdf' -exec cp {} "$corpus"/ \; ;;
    fuzz_mjcf) [ -d "$data/robots" ] && find "$data/robots" -name '*.xml' -exec cp {} "$corpus"/ \; ;;
    fuzz_bvh) [ -d "$data/clips" ] && find "$data/clips" -name '*.bvh' -exec cp {} "$corpus"/ \; ;;
    fuzz_profile) cp profiles/*.json "$corpus"/ ;;
    fuzz_traj) # the column-count byte (7 + 29 for G1, 7 + 19 for H1), then the first rows of
        # the real trajectories
        for src in "$data"/reference/*/*.csv; do
            [ -f "$src" ] || continue
            robot=$(basename "$(dirname "$src")")
            case $robot in h1) b='\023' ;; *) b='\035' ;; esac
            { printf "$b"; head -c 20000 "$src"; } > "$corpus/$robot.csv"
        done ;;
    fuzz_http) # URL, then the query, then the body (tests/fuzz_http.c)
        printf '/v1/jobs\n\n{"robot":"g1","name":"a\\u00e9","clip":"HIERARCHY\\nROOT a","options":{"max_lm_iters":3}}' \
            > "$corpus/json"
        printf '/v1/jobs\n\n{"robot":"h1","source_robot":"g1","trajectory":"0,0,0.8,0,0,0,1\\n","options":{"fps":60}}' \
            > "$corpus/traj"
        printf '/v1/jobs\nrobot=g1&profile=cmu_g1&name=caf%%C3%%A9\nHIERARCHY\nROOT Hips\n' > "$corpus/raw"
        printf '/v1/robots/g1\nlimit=1&before=2\n[[{"a":1,"a":2}]] x' > "$corpus/dup"
        printf '/v1/jobs/12/result.csv\nheader=0\n' > "$corpus/result" ;;
    esac
    dict=""
    [ -f "tests/$name.dict" ] && dict="-dict=tests/$name.dict"
    # Whole capture clips are megabytes: past 64 KiB an input only adds rows,
    # and executions per second drop a hundredfold.
    maxlen=""
    case $name in fuzz_bvh | fuzz_traj) maxlen="-max_len=65536" ;; esac
    before=$(ls "$art" | wc -l)
    # -print_final_stats prints stat::number_of_executed_units at the end.
    "$f" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$art/" $dict $maxlen "$corpus" \
        >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    crashes=$(( $(ls "$art" | wc -l) - before ))
    if [ $rc -ne 0 ] && [ $crashes -eq 0 ]; then crashes=1; fi # died without an artifact
    echo "$name: $secs s, ${execs:-0} executions, $crashes crashes (artifacts: $art, log: $log)"
    [ $crashes -eq 0 ] || status=1
done
exit $status
