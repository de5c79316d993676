#!/bin/sh
# run.sh BUILD TEST... -- runs each test binary (or tests/test_*.sh script,
# given BUILD as its argument) from the repository root.
# Exit 0 is a pass, 77 a skip, anything else (a signal included) a failure.
# Prints "== N passed, N failed, N skipped" and exits non-zero on any failure.
b=$1; shift
pass=0; fail=0; skip=0; failed=""
export ASAN_OPTIONS="${ASAN_OPTIONS:-protect_shadow_gap=0:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export RT_BUILD="$b"
for t in "$@"; do
    name=$(basename "$t")
    log="$b/tests/$name.log"
    case $t in
        *.sh) name=${name%.sh}; log="$b/tests/$name.log"; sh "$t" "$b" >"$log" 2>&1 ;;
        *) "$t" >"$log" 2>&1 ;;
    esac
    rc=$?
    if [ $rc -eq 0 ]; then pass=$((pass+1)); echo "PASS $name: $(tail -n 1 "$log")"
    elif [ $rc -eq 77 ]; then skip=$((skip+1)); echo "SKIP $name: $(grep -m1 skipped "$log")"
    else fail=$((fail+1)); failed="$failed $name"; echo "FAIL $name (exit $rc):"; tail -n 30 "$log" | sed 's/^/    /'
    fi
done
echo "== $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
