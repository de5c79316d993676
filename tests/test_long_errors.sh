#!/bin/sh
# test_long_errors.sh BUILD -- errors of any length reach the user whole
# (base/status.h, "Sizes of an error's text"): the longest joint names a
# BVH may have (KIN_BVH_MAX_NAME - 1 = 127 bytes), six of them in one
# message; a path of about 3800 bytes and a 250-byte file name in `where`;
# a 250-byte option key in a JSON field path. Each through `retarget solve`
# stderr and through the daemon's JSON error body. A name one byte longer
# is refused with the limit named. Needs nothing from ../shared.
set -u
b=$1
tmp=$(mktemp -d /tmp/test_long_errors.XXXXXX)
rt_pid=""
trap 'rm -rf "$tmp"; [ -n "$rt_pid" ] && kill "$rt_pid" 2>/dev/null' EXIT
pass=0; fail=0

# check WHAT FILE NEEDLE: FILE holds NEEDLE (a fixed string).
check() {
    if grep -qF -- "$3" "$2"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "test_long_errors: $1: not found: $3" >&2
        echo "  in: $(head -c 600 "$2")" >&2
    fi
}

# name I LEN: a joint name of LEN bytes (no Left/Right marker), distinct per I.
name() { printf "J%d" "$1"; head -c $(($2 - 1 - ${#1})) /dev/zero | tr '\0' 'a'; }

# bvh FILE N LEN [DUP]: a chain of N joints with names of LEN bytes (the
# last one repeating the first with DUP=dup).
bvh() {
    {
        printf 'HIERARCHY\nROOT %s\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n' "$(name 1 "$3")"
        i=2
        while [ $i -le "$2" ]; do
            n=$(name $i "$3")
            [ $i -eq "$2" ] && [ "${4:-}" = dup ] && n=$(name 1 "$3")
            printf ' JOINT %s\n {\n OFFSET 0 10 0\n CHANNELS 3 Zrotation Yrotation Xrotation\n' "$n"
            i=$((i + 1))
        done
        printf ' End Site\n {\n OFFSET 0 10 0\n }\n'
        i=1
        while [ $i -le "$2" ]; do printf '}\n'; i=$((i + 1)); done
        printf 'MOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0 0 0 0'
        i=2
        while [ $i -le "$2" ]; do printf ' 0 0 0'; i=$((i + 1)); done
        printf '\n'
    } >"$1"
}

solve() { "$b/retarget" solve "$@" --robot g1 --threads 1 --backend cpu -o "$tmp/out" 2>"$tmp/stderr" >/dev/null; }

# 1. Six 127-byte names in one message (the skeleton recognizer lists them).
bvh "$tmp/seven.bvh" 7 127
solve "$tmp/seven.bvh"
for i in 1 2 3 4 5 6; do check "solve: name $i whole" "$tmp/stderr" "$(name $i 127)"; done
check "solve: the list's end" "$tmp/stderr" "$(name 6 127), ...)"

# 2. A repeated 127-byte name; a 128-byte name is refused naming the limit.
bvh "$tmp/dup.bvh" 3 127 dup
solve "$tmp/dup.bvh"
check "solve: repeated name whole" "$tmp/stderr" "a second joint named '$(name 1 127)': joint names must be unique"
bvh "$tmp/long.bvh" 2 128
solve "$tmp/long.bvh"
check "solve: name past the limit" "$tmp/stderr" "long.bvh:2: ROOT name longer than 127 bytes"

# 3. A long path (about 3800 bytes) and a 250-byte file name in `where`.
dir=$tmp
while [ ${#dir} -lt 3500 ]; do dir=$dir/$(head -c 200 /dev/zero | tr '\0' 'd'); done
mkdir -p "$dir"
base=$(head -c 246 /dev/zero | tr '\0' 'f').bvh
printf 'HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 x\n' >"$dir/$base"
solve "$dir/$base"
check "solve: long file name in where" "$tmp/stderr" "retarget: $base:4: OFFSET value 3 is not a number: 'x'"
solve "$dir/m$base"
check "solve: long path whole" "$tmp/stderr" "retarget: $dir/m$base: cannot open: No such file or directory"

# 4. The daemon's JSON error: the same messages whole, and a long field path.
. tests/daemon_util.sh
: >"$tmp/daemon.log"
if ! rt_daemon_start "$tmp/daemon.log" --db "$tmp/d.db" --no-auth --backend cpu --solver-threads 1; then
    echo "test_long_errors: the daemon did not start" >&2
    exit 1
fi
url="http://127.0.0.1:$rt_port"
curl -s --data-binary @"$tmp/seven.bvh" "$url/v1/jobs?robot=g1" >"$tmp/r1.json"
for i in 1 2 3 4 5 6; do check "daemon: name $i whole" "$tmp/r1.json" "$(name $i 127)"; done
curl -s --data-binary @"$tmp/dup.bvh" "$url/v1/jobs?robot=g1" >"$tmp/r2.json"
check "daemon: repeated name whole" "$tmp/r2.json" "a second joint named '$(name 1 127)'"
key=$(head -c 250 /dev/zero | tr '\0' 'k')
printf '{"robot":"g1","clip":"x","options":{"%s":1}}' "$key" >"$tmp/body.json"
curl -s --data-binary @"$tmp/body.json" "$url/v1/jobs" >"$tmp/r3.json"
check "daemon: long field path whole" "$tmp/r3.json" "\"where\":\"body.options.$key\""
# The replies are JSON that reads back with the whole message.
if /usr/bin/python3 - "$tmp/r1.json" "$(name 6 127)" <<'EOF'
import json, sys
e = json.load(open(sys.argv[1]))["error"]
sys.exit(0 if sys.argv[2] in e["message"] and e["code"] == "invalid argument" else 1)
EOF
then pass=$((pass + 1)); else fail=$((fail + 1)); echo "test_long_errors: daemon: r1 is not the JSON error expected: $(head -c 300 "$tmp/r1.json")" >&2; fi
kill "$rt_pid"; wait "$rt_pid" 2>/dev/null; rt_pid=""

echo "test_long_errors: $pass passed, $fail failed"
[ $fail -eq 0 ]
