#!/bin/sh
# test_python_package.sh BUILD -- clients/python is a package: pip installs
# it (from a copy, so nothing is built in the source tree) into a fresh
# virtual environment with Debian's python3 and setuptools, offline
# (--no-build-isolation --no-index); then `import retarget_client` comes
# from the environment and the `retarget-client` command answers --help and
# `health` against the real daemon (BUILD/retargetd on a free loopback
# port). Skips (77) without /usr/bin/python3's venv, pip or setuptools 61+
# (make test installs python3-venv, python3-pip, python3-setuptools as root).
b=$1
py=/usr/bin/python3
skip() { echo "test_python_package: skipped: $1"; exit 77; }
[ -x $py ] || skip "no $py"
$py -c 'import venv, ensurepip' 2>/dev/null || skip "no python3-venv"
$py -c 'import setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 61)' 2>/dev/null ||
    skip "no setuptools 61 or later for $py (python3-setuptools)"
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "test_python_package: $1"; [ -f "$tmp/log" ] && tail -n 20 "$tmp/log"; exit 1; }

cp -r clients/python "$tmp/src"
$py -m venv --system-site-packages "$tmp/venv" >"$tmp/log" 2>&1 || fail "python3 -m venv failed"
"$tmp/venv/bin/python" -m pip install --no-build-isolation --no-index --no-deps --quiet "$tmp/src" >"$tmp/log" 2>&1 ||
    fail "pip install clients/python failed"
where=$(cd "$tmp" && "$tmp/venv/bin/python" -c 'import retarget_client; print(retarget_client.__file__)') ||
    fail "import retarget_client failed after the install"
case $where in "$tmp/venv/"*) ;; *) fail "retarget_client came from $where, not the environment" ;; esac
echo "ok   import retarget_client: $where"
[ -x "$tmp/venv/bin/retarget-client" ] || fail "no retarget-client command in the environment"
"$tmp/venv/bin/retarget-client" --help >"$tmp/help" 2>&1 || fail "retarget-client --help failed"
grep -q "usage: retarget-client" "$tmp/help" || fail "retarget-client --help: $(head -n 1 "$tmp/help")"
echo "ok   retarget-client --help"

. tests/daemon_util.sh
rt_daemon_start "$tmp/log" --db "$tmp/rt.db" --no-auth --backend cpu || fail "the daemon did not start"
pid=$rt_pid
port=$rt_port
i=0
until RETARGET_SERVER="http://127.0.0.1:$port" "$tmp/venv/bin/retarget-client" health >"$tmp/health" 2>&1; do
    i=$((i + 1))
    [ $i -gt 100 ] && fail "retarget-client health did not answer: $(cat "$tmp/health")"
    sleep 0.1
done
grep -q '"status": "ok"' "$tmp/health" || fail "retarget-client health: $(cat "$tmp/health")"
echo "ok   retarget-client health: $(cat "$tmp/health")"
RETARGET_SERVER="http://127.0.0.1:$port" "$tmp/venv/bin/retarget-client" status 7 >"$tmp/out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "404 not found" "$tmp/out" || fail "retarget-client status 7: exit $rc, $(cat "$tmp/out")"
echo "ok   retarget-client status 7: $(cat "$tmp/out") (exit 1)"
echo "test_python_package: 4 passed, 0 failed"
