#!/bin/sh
# test_openapi.sh BUILD -- GET /v1/openapi.json (server/openapi.json) against
# the real daemon's replies: BUILD/retargetd with auth on a free loopback
# port and a fresh database, checked by tests/openapi_check.py (every
# operation exercised; every reply's status, content type and JSON body as
# described). Skips (77) without /usr/bin/python3 or ../shared/data.
b=$1
data=${RT_SHARED_DATA:-../shared/data}
[ -x /usr/bin/python3 ] || { echo "test_openapi: skipped: no /usr/bin/python3"; exit 77; }
[ -f "$data/clips/run_forward.bvh" ] || { echo "test_openapi: skipped: no $data/clips"; exit 77; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
admin=$("$b/retargetd" token add alice --admin --db "$tmp/rt.db") || exit 1
user=$("$b/retargetd" token add bob --db "$tmp/rt.db") || exit 1
. tests/daemon_util.sh
rt_daemon_start "$tmp/log" --db "$tmp/rt.db" --backend cpu --solver-threads 2 ||
    { echo "test_openapi: the daemon did not start"; exit 1; }
pid=$rt_pid
port=$rt_port
/usr/bin/python3 tests/openapi_check.py "http://127.0.0.1:$port" "$admin" "$user" "$data"
