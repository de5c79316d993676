#!/bin/sh
# run.sh BUILD -- `make run`: the most complete main job that exists.
# 1. inspect the bundled robot and the bundled clip;
# 2. retarget the clip offline onto the G1 (out/), and, when the shared data
#    folder is beside the checkout, round-trip the real G1 reference trajectory;
# 3. start the daemon when it has been built, and retarget the sample clip
#    through it (submit, wait, fetch), then keep it in the foreground.
set -eu
b=${1:-build}
out=out
# The daemon's port: PORT=N (make run PORT=N), 8080 by default. A port
# already taken stops the run at once, before any work.
port=${PORT:-8080}
case $port in
    ''|*[!0-9]*) echo "make run: PORT='$port' is not a port number" >&2; exit 2 ;;
esac
if [ -x "$b/retargetd" ] && ! python3 -c "
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try: s.bind(('127.0.0.1', $port))
except OSError as e: sys.exit(1)
" 2>/dev/null; then
    echo "make run: port $port on 127.0.0.1 is taken (another retargetd, or another program): stop it, or run make run PORT=N" >&2
    exit 1
fi
echo "== make run: the daemon will listen on 127.0.0.1:$port (make run PORT=N for another port)"
mkdir -p "$out"
echo "== retarget inspect g1"
"$b/retarget" inspect g1 | cut -c1-300; echo "..."
echo "== retarget inspect examples/jumping_jacks.bvh"
"$b/retarget" inspect examples/jumping_jacks.bvh | cut -c1-300; echo "..."
echo "== retarget solve examples/jumping_jacks.bvh --robot g1 -o $out"
if "$b/retarget" solve examples/jumping_jacks.bvh --robot g1 -o "$out"; then
    echo "wrote $out/jumping_jacks.csv and $out/jumping_jacks.report.json"
fi
ref=../shared/data/reference/g1/dance1_subject1.csv
if [ -f "$ref" ]; then
    echo "== retarget solve $ref --source-robot g1 --robot g1 -o $out"
    "$b/retarget" solve "$ref" --source-robot g1 --robot g1 -o "$out"
    python3 -c "import json;r=json.load(open('$out/dance1_subject1.report.json'));print('quality:',json.dumps(r['quality'].get('position_error_m')),'solver:',json.dumps(r['solver']))"
fi
if [ -x "$b/retargetd" ]; then
    # 4. the daemon on loopback (auth off there, and it says so), the bundled
    #    G1 and LAFAN1-style profile checked, the sample clip end to end.
    mkdir -p var
    url=http://127.0.0.1:$port
    echo "== retargetd --listen 127.0.0.1:$port --db var/retargetd.db --no-auth (background)"
    "$b/retargetd" --listen "127.0.0.1:$port" --db var/retargetd.db --no-auth &
    pid=$!
    trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null' INT TERM
    up=0
    for _ in $(seq 50); do
        if python3 -c "import urllib.request;urllib.request.urlopen('$url/v1/health',timeout=1)" 2>/dev/null; then up=1; break; fi
        kill -0 $pid 2>/dev/null || break
        sleep 0.1
    done
    if [ $up != 1 ]; then
        echo "make run: retargetd did not come up on $url (its error is above)" >&2
        exit 1
    fi
    if [ $up = 1 ]; then
        echo "== GET /v1/robots, /v1/profiles (bundled g1 and lafan1_g1 are built in)"
        python3 - "$url" <<'PY'
import json, sys, urllib.request
u = sys.argv[1]
robots = [r["name"] for r in json.load(urllib.request.urlopen(u + "/v1/robots"))["robots"]]
profiles = [p["name"] for p in json.load(urllib.request.urlopen(u + "/v1/profiles"))["profiles"]]
print("robots:", robots); print("profiles:", profiles)
assert "g1" in robots and "lafan1_g1" in profiles, "bundled g1 / lafan1_g1 missing"
PY
        echo "== retarget submit examples/jumping_jacks.bvh --robot g1 --server $url"
        id=$("$b/retarget" submit examples/jumping_jacks.bvh --robot g1 --server "$url")
        echo "job $id"
        "$b/retarget" wait "$id" --server "$url"
        "$b/retarget" fetch "$id" -o "$out/daemon" --server "$url"
        echo "wrote $out/daemon/jumping_jacks.csv and $out/daemon/jumping_jacks.report.json"
        if cmp -s "$out/daemon/jumping_jacks.csv" "$out/jumping_jacks.csv"; then
            echo "daemon result == offline result (byte for byte)"
        fi
        echo "== retargetd keeps running on $url (Ctrl-C stops it)"
    fi
    wait $pid
fi
