#!/bin/sh
# test_browser.sh BUILD -- the web page in a real browser: the real daemon
# (BUILD/retargetd on a free loopback port, a fresh database) and headless
# Chromium driven by playwright-core (tests/browser/*.mjs):
#   ui.mjs   without auth: the page loads with no console error; a clip
#            submitted through the form onto g1 finishes and its view opens;
#            the canvas is not blank; 1 s of the page's clock plays 30
#            frames of the 30 fps clip; the slider sets every robot joint to
#            its row of the result CSV; the curves' frame line follows;
#            BUILD/ui-job.png is a screenshot of the job view;
#   auth.mjs with auth: the page asks for the token, then lists the jobs;
#            the token stays for the tab; admin actions only for an admin.
# Skips (77) without node, the page's npm packages (web/node_modules, which
# make installs), a built page, Chromium (make test installs Debian's as
# root) or ../shared/data.
b=$1
data=${RT_SHARED_DATA:-../shared/data}
clip="$data/clips/jumping_jacks.bvh"
chromium=${RT_CHROMIUM:-/usr/bin/chromium}
skip() { echo "test_browser: skipped: $1"; exit 77; }
command -v node >/dev/null 2>&1 || skip "no node"
[ -d web/node_modules/playwright-core ] || skip "no web/node_modules/playwright-core (npm ci in web/ did not run)"
[ -f "$b/web/.placeholder" ] && skip "the web page was not built ($b/web/.placeholder)"
[ -f "$b/web/index.html" ] || skip "no $b/web/index.html"
[ -x "$chromium" ] || skip "no $chromium (apt-get install chromium)"
[ -f "$clip" ] || skip "no $clip"
[ -x "$b/retargetd" ] || { echo "test_browser: no $b/retargetd"; exit 1; }

tmp=$(mktemp -d)
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT

. tests/daemon_util.sh
# start_daemon DB ARGS...: the daemon on a free port ($port), up when /v1/health answers.
start_daemon() {
    db=$1; shift
    rt_daemon_start "$tmp/daemon-$(basename "$db").log" --db "$db" --backend cpu --solver-threads 2 "$@" ||
        { echo "test_browser: the daemon did not start"; exit 1; }
    pids="$pids $rt_pid"
    port=$rt_port
    cat "$tmp/daemon-$(basename "$db").log" >>"$tmp/daemon.log"
}

start_daemon "$tmp/noauth.db" --no-auth
node tests/browser/ui.mjs "http://127.0.0.1:$port" "$clip" "$b/ui-job.png" "$tmp/profile-ui"
rc_ui=$?

bob=$("$b/retargetd" token add bob --db "$tmp/auth.db") || exit 1
alice=$("$b/retargetd" token add alice --admin --db "$tmp/auth.db") || exit 1
start_daemon "$tmp/auth.db"
aport=$port
job=$(curl -sf -H "Authorization: Bearer $bob" --data-binary @"$data/clips/run_forward.bvh" \
      "http://127.0.0.1:$aport/v1/jobs?robot=g1&name=run_forward" | sed -n 's/^{"id":\([0-9]*\),.*/\1/p')
[ -n "$job" ] || { echo "test_browser: could not submit a job with bob's token"; exit 1; }
node tests/browser/auth.mjs "http://127.0.0.1:$aport" "$bob" "$alice" "$job" "$tmp/profile-auth"
rc_auth=$?

if [ $rc_ui -ne 0 ] || [ $rc_auth -ne 0 ]; then
    echo "test_browser: failed (ui $rc_ui, auth $rc_auth); daemon log:"; tail -n 20 "$tmp/daemon.log"
    exit 1
fi
echo "test_browser: screenshot $b/ui-job.png; ui and auth passed"
