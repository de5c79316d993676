#!/bin/sh
# golden.sh BUILD OUT -- the outputs a user relies on, for the check that a
# change of structure changes none of them: every shared clip onto the G1
# and the H1 (`retarget solve`, one clip per call, and the six main clips
# in one --batch call), the G1 and H1 reference trajectories round-tripped
# and the G1 reference onto the H1, and a set of clips and a trajectory
# through the daemon (submit, wait, fetch). Each NAME.csv is kept as it is;
# each report loses only its timing field ("seconds") and, for the daemon,
# the job id; a clip that fails leaves NAME.err with the one-line error.
# Writes OUT/SUMS (sha256 of every file, sorted by path).
#
# tests/test_golden.sh compares SUMS with tests/golden/SUMS.
set -u
b=$1; out=$2
data=${RT_SHARED_DATA:-../shared/data}
rt="$b/retarget"
rm -rf "$out"; mkdir -p "$out"

# solve DIR ARGS...: one `retarget solve`; a failure leaves DIR/NAME.err.
solve() {
    d=$1; shift
    mkdir -p "$out/$d"
    if ! "$rt" solve "$@" --threads 2 --quiet -o "$out/$d" 2>"$out/$d/stderr"; then
        for s in "$@"; do case $s in *.bvh|*.csv) n=$(basename "$s"); n=${n%.*}
            sed "s#$data#DATA#g" "$out/$d/stderr" >"$out/$d/$n.err";; esac; break; done
    fi
    rm -f "$out/$d/stderr"
}

for robot in g1 h1; do
    for c in "$data"/clips/*.bvh "$data"/clips/edge/*.bvh; do
        solve "solo_$robot" "$c" --robot "$robot"
    done
    solve "batch_$robot" "$data"/clips/*.bvh --robot "$robot" --batch
done
solve roundtrip_g1 "$data/reference/g1/dance1_subject1.csv" --source-robot g1 --robot g1
solve roundtrip_h1 "$data/reference/h1/dance1_subject1.csv" --source-robot h1 --robot h1
solve g1_to_h1 "$data/reference/g1/dance1_subject1.csv" --source-robot g1 --robot h1

# The daemon on a free loopback port, no auth, its own database.
db="$out/daemon.db"
. tests/daemon_util.sh
rt_daemon_start "$out/daemon.log" --db "$db" --no-auth --backend cpu --solver-threads 2 ||
    { echo "golden: daemon did not start" >&2; exit 1; }
pid=$rt_pid
url="http://127.0.0.1:$rt_port"
mkdir -p "$out/daemon"
submit() { # NAME SOURCE ARGS...
    n=$1; shift
    id=$("$rt" submit "$@" --server "$url" 2>"$out/daemon/$n.err") || { sed "s#$data#DATA#g" -i "$out/daemon/$n.err"; return; }
    rm -f "$out/daemon/$n.err"
    "$rt" wait "$id" --server "$url" >/dev/null 2>&1
    curl -sf "$url/v1/jobs/$id/result.csv" >"$out/daemon/$n.csv"
    curl -sf "$url/v1/jobs/$id/result?trajectory=0" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
r.pop("id", None)
r["report"]["solver"].pop("seconds", None)
print(json.dumps(r, sort_keys=True, indent=1))' >"$out/daemon/$n.report.json"
}
for c in jumping_jacks run_forward cmu_12_01_walk; do
    submit "${c}_g1" "$data/clips/$c.bvh" --robot g1
    submit "${c}_h1" "$data/clips/$c.bvh" --robot h1
done
submit example_g1 "$data/clips/edge/example.bvh" --robot g1
submit h1_roundtrip "$data/reference/h1/dance1_subject1.csv" --source-robot h1 --robot h1
kill $pid; wait $pid 2>/dev/null
rm -f "$db" "$db"-* "$db".lock "$out/daemon.log"

# Reports without their timing field.
find "$out" -name '*.report.json' ! -path "$out/daemon/*" | while read -r f; do
    grep -v '"seconds":' "$f" | sed "s#$data#DATA#g" >"$f.tmp" && mv "$f.tmp" "$f"
done
(cd "$out" && find . -type f ! -name SUMS | LC_ALL=C sort | xargs sha256sum) >"$out/SUMS"
