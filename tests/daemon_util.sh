# daemon_util.sh -- sourced by the shell tests that need a daemon: starts
# $b/retargetd on a free loopback port (it binds port 0 and logs the port it
# got, so two tests, or a test and anything else on the machine, never race
# for a port) and waits until GET /v1/health answers.
#
# rt_daemon_start LOG ARGS...: starts `retargetd --listen 127.0.0.1:0 ARGS`
# with its output in LOG; sets rt_port and rt_pid. Returns 1 (LOG's tail
# on stderr) when the daemon does not come up within 10 s. Callers kill
# $rt_pid when done (and pass no --quiet: the port is an info line).
rt_daemon_start() {
    rt_log=$1; shift
    "$b/retargetd" --listen 127.0.0.1:0 "$@" >"$rt_log" 2>&1 &
    rt_pid=$!
    rt_port=""
    rt_i=0
    while :; do
        [ -z "$rt_port" ] && rt_port=$(sed -n 's/.*listening on port \([0-9][0-9]*\).*/\1/p' "$rt_log" | head -n 1)
        if [ -n "$rt_port" ] && curl -sf "http://127.0.0.1:$rt_port/v1/health" >/dev/null 2>&1; then return 0; fi
        rt_i=$((rt_i + 1))
        if [ $rt_i -gt 100 ] || ! kill -0 "$rt_pid" 2>/dev/null; then
            echo "retargetd did not start:" >&2
            tail -n 5 "$rt_log" >&2
            return 1
        fi
        sleep 0.1
    done
}
