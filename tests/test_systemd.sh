#!/bin/sh
# test_systemd.sh BUILD -- deploy/retargetd.service as systemd reads it:
#   1. `systemd-analyze verify --root=ROOT retargetd.service` in a temporary
#      root that holds the unit in etc/systemd/system/, BUILD/retargetd at the
#      unit's ExecStart path (usr/local/bin/) and a copy of the system's units
#      (the targets the unit is ordered against): it must exit 0 and print
#      nothing (an unknown key or a bad value is only a warning to systemd),
#      and the same unit with a misspelt key must draw a warning;
#   2. the unit's ExecStart command line, with its Environment= defaults put
#      in, the state directory moved into a temporary folder and port 0, runs
#      BUILD/retargetd: every flag it passes is accepted, and the daemon
#      answers GET /v1/health.
# Skips (77) where systemd-analyze is not installed (`make test` installs
# Debian's systemd for it, as root, through deploy/deps.sh --optional).
b=${1:-build}
unit=deploy/retargetd.service
skip() { echo "test_systemd: skipped: $1"; exit 77; }
fail() { echo "test_systemd: FAILED: $1"; exit 1; }
command -v systemd-analyze >/dev/null 2>&1 ||
    skip "no systemd-analyze (Debian's systemd; deploy/deps.sh --optional systemd, as root)"
units=""
for d in /usr/lib/systemd/system /lib/systemd/system; do
    [ -f "$d/multi-user.target" ] && { units=$d; break; }
done
[ -n "$units" ] || skip "no system units (multi-user.target) to verify the unit against"
[ -x "$b/retargetd" ] || fail "no $b/retargetd"

tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# 1. verify in a root laid out as the unit's Install comment says.
exec_path=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$unit")
case $exec_path in /*) ;; *) fail "ExecStart='$exec_path' is not an absolute path" ;; esac
root=$tmp/root
mkdir -p "$root/etc/systemd/system" "$root/usr/lib/systemd" "$root$(dirname "$exec_path")"
cp -r "$units" "$root/usr/lib/systemd/system"
cp "$unit" "$root/etc/systemd/system/"
cp "$b/retargetd" "$root$exec_path"
systemd-analyze verify --root="$root" retargetd.service >"$tmp/verify.out" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ -s "$tmp/verify.out" ]; then
    cat "$tmp/verify.out"
    fail "systemd-analyze verify exited $rc and said the above"
fi
# The check itself: the same root with an unknown key in the unit must not be clean.
sed 's/^ProtectHome=/ProtectHomme=/' "$unit" >"$root/etc/systemd/system/retargetd.service"
systemd-analyze verify --root="$root" retargetd.service >"$tmp/bad.out" 2>&1
grep -q ProtectHomme "$tmp/bad.out" || fail "systemd-analyze verify said nothing of an unknown key (ProtectHomme)"
echo "test_systemd: systemd-analyze verify $unit: clean ($(systemd-analyze --version | head -n 1))"

# 2. the ExecStart line, run: ${VAR} and $VAR from the unit's Environment=
# lines, /var/lib/retargetd -> a temporary folder, the port -> 0.
state=$tmp/state
mkdir -p "$state"
cmd=$(python3 - "$unit" "$b/retargetd" "$state" <<'PY'
import re, shlex, sys
unit, binary, state = sys.argv[1:]
env, exec_start = {}, None
for line in open(unit):
    line = line.strip()
    if line.startswith("Environment="):
        k, _, v = line[len("Environment="):].partition("=")
        env[k] = v
    elif line.startswith("ExecStart="):
        exec_start = line[len("ExecStart="):]
env["RETARGETD_LISTEN"] = "127.0.0.1:0"
# systemd: ${VAR} is one word, $VAR splits on white space (empty: no word).
words = []
for w in exec_start.split():
    if re.fullmatch(r"\$[A-Za-z_][A-Za-z0-9_]*", w):
        words += env.get(w[1:], "").split()
    else:
        words.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), w))
words[0] = binary
words = [w.replace("/var/lib/retargetd", state) for w in words]
print(" ".join(shlex.quote(w) for w in words))
PY
) || fail "cannot read ExecStart from $unit"
# exec: $! is the daemon itself, not a shell around it, so the trap stops it.
eval "exec $cmd" >"$tmp/daemon.log" 2>&1 &
pid=$!
port=""
i=0
while :; do
    [ -z "$port" ] && port=$(sed -n 's/.*listening on port \([0-9][0-9]*\).*/\1/p' "$tmp/daemon.log" | head -n 1)
    [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/v1/health" >/dev/null 2>&1 && break
    i=$((i + 1))
    if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
        tail -n 5 "$tmp/daemon.log"
        fail "the unit's ExecStart did not bring the daemon up: $cmd"
    fi
    sleep 0.1
done
[ -f "$state/retargetd.db" ] || fail "the daemon did not create its database in the state directory"
echo "test_systemd: the unit's ExecStart ($(echo "$cmd" | sed "s|$tmp|TMP|g")) serves /v1/health"
echo "test_systemd: ok"
