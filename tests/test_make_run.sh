#!/bin/sh
# test_make_run.sh BUILD -- `make run` (deploy/run.sh) stops at once, with
# a message naming the port and PORT=N, when its port is taken; and refuses
# a PORT that is not a number. (The full main job keeps its daemon in the
# foreground, so it is not run here.)
b=$1
[ -x "$b/retargetd" ] || { echo "test_make_run: no $b/retargetd"; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "test_make_run: skipped: no python3"; exit 77; }
tmp=$(mktemp -d)
trap 'kill $hold 2>/dev/null; rm -rf "$tmp"' EXIT
# Hold a free port with a listening socket for the test's life.
python3 -c "
import socket, time, sys
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)
open(sys.argv[1], 'w').write(str(s.getsockname()[1])); time.sleep(60)
" "$tmp/port" &
hold=$!
i=0; while [ ! -s "$tmp/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
port=$(cat "$tmp/port")
start=$(date +%s)
PORT=$port sh deploy/run.sh "$b" >"$tmp/out" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
fail=0
[ $rc -eq 1 ] || { echo "test_make_run: exit $rc with port $port taken, want 1"; fail=1; }
grep -q "port $port on 127.0.0.1 is taken" "$tmp/out" || { echo "test_make_run: no message naming port $port:"; cat "$tmp/out"; fail=1; }
grep -q "PORT=N" "$tmp/out" || { echo "test_make_run: the message does not say PORT=N"; fail=1; }
[ "$took" -le 5 ] || { echo "test_make_run: took $took s: it did work before checking the port"; fail=1; }
PORT=80x sh deploy/run.sh "$b" >"$tmp/out2" 2>&1
[ $? -eq 2 ] && grep -q "is not a port number" "$tmp/out2" || { echo "test_make_run: PORT=80x not refused"; fail=1; }
[ $fail -eq 0 ] && echo "test_make_run: port $port taken: stopped in ${took}s with the message; PORT=80x refused"
exit $fail
