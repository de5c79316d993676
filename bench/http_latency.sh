#!/bin/sh
# http_latency.sh BUILD [RETARGETD] -- GET /v1/health and a status poll
# while six clients submit a 12.8 MB trajectory job in a loop
# (bench/bench_http.c), against the daemon started three ways: planning on
# the HTTP threads (--plan-threads 0, as before the validation pool), and
# the default (2 validation threads). RETARGETD (default BUILD/retargetd)
# may be another build, e.g. an older commit's, for a baseline; it is then
# run with its own defaults only. Appends one section to bench/RESULTS.md.
set -eu
b=${1:-build}; d=${2:-$b/retargetd}
out=$(mktemp); tmp=$(mktemp -d)
port=$(( 21000 + $$ % 20000 ))
run() { # LABEL ARGS...
    label=$1; shift
    rm -f "$tmp"/b.db*
    "$d" --listen "127.0.0.1:$port" --db "$tmp/b.db" --no-auth --quiet --backend cpu \
        --batch-wait-ms 3600000 --solver-threads 1 "$@" 2>/dev/null &
    pid=$!
    sleep 1
    { echo; echo "### $label"; echo; echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"; echo;
      "$b/bench/bench_http" "$port" 6 20; } | tee -a "$out"
    kill "$pid"; wait "$pid" 2>/dev/null || true
}
if [ $# -ge 2 ]; then
    run "$d (its defaults)"
else
    run "--plan-threads 0 (submissions planned on the HTTP threads)" --plan-threads 0
    run "default (--plan-threads 2)"
fi
{
    echo
    echo "## bench_http $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') (shared with other work)"
    echo "- command: \`sh bench/http_latency.sh $*\` (daemon $d; bench_http PORT 6 20: 6 submitters, 20 s)"
    cat "$out"
} >> bench/RESULTS.md
rm -rf "$out" "$tmp"
