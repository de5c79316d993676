#!/bin/sh
# e2e.sh BUILD [N] [K] -- `make bench-e2e`: a corpus end to end through the
# CLI and through the daemon, on whichever backend is there.
#  1. The corpus: N windows of the real G1 trajectory
#     DATA/reference/g1/dance1_subject1.csv (BUILD/bench/bench_corpus, a
#     fixed seed, so every machine builds the same files) plus the BVH clips
#     of DATA/clips, all onto the G1.
#  2. The CLI: one `retarget solve --batch` over the corpus into DIR/cli
#     (with --stats when the CLI has it); its peak RSS from /usr/bin/time -v,
#     else from python3's getrusage of the child.
#  3. The daemon: retargetd on a free loopback port with its own database
#     (--no-auth, --backend, then $E2E_DAEMON_ARGS); BUILD/bench/bench_load
#     runs K concurrent clients that submit, poll and fetch every clip into
#     DIR/daemon; /v1/metrics and the daemon's VmHWM are read before it stops,
#     the database's size after.
#  4. Every fetched result.csv must equal the CLI's NAME.csv (cmp).
#  5. With the daemon on CUDA and BUILD/bench/bench_gpu there: the solver
#     inside the daemon against bench-gpu at the same batch sizes. The
#     daemon logs each solver call (clips, source kind, frames, seconds);
#     its calls of trajectory windows (csv) of at least E2E_GPU_MIN_FRAMES
#     (5000) frames are set against `bench_gpu windows` at sizes spanning
#     theirs (log-linear between them): their seconds over bench-gpu's at
#     the same frames. The other calls (the BVH clips', small ones) are
#     reported apart.
#  6. Prints a section for bench/RESULTS.md: date, commit, machine, command,
#     the corpus, the byte check, a table per path (wall, frames, frames/s,
#     the solver's share, submit and poll latency, peak RSS) and the host
#     seconds per stage ("n/a" where the CLI or the daemon does not expose it).
# Environment: RT_SHARED_DATA (default ../shared/data), E2E_BACKEND
# (cpu|cuda|auto, default auto), E2E_SEED (11), E2E_DAEMON_ARGS,
# E2E_CLI_ARGS, E2E_POLL_MS (20), E2E_PORT (0: a free one), E2E_DIR (the
# work folder, kept; default a temporary folder, removed after a clean run),
# E2E_RECORD=1 (also append the section to bench/RESULTS.md).
# Exit status 0 when every step ran and every result matched, 1 otherwise,
# 2 for a bad command line or missing programs.
set -u
b=${1:-build}
n=${2:-16}
k=${3:-4}
data=${RT_SHARED_DATA:-../shared/data}
backend=${E2E_BACKEND:-auto}
seed=${E2E_SEED:-11}
daemon_args=${E2E_DAEMON_ARGS:-}
cli_args=${E2E_CLI_ARGS:-}
poll_ms=${E2E_POLL_MS:-20}
src=$data/reference/g1/dance1_subject1.csv

die() { echo "e2e: $*" >&2; exit 2; }
case $n in '' | *[!0-9]*) die "N: expected a number of windows, got '$n'" ;; esac
case $k in '' | *[!0-9]*) die "K: expected a number of clients, got '$k'" ;; esac
[ "$k" -ge 1 ] || die "K: at least 1 client"
for p in retarget retargetd bench/bench_corpus bench/bench_load; do
    [ -x "$b/$p" ] || die "$b/$p: not built (make $b/$p)"
done
[ -f "$src" ] || die "$src: not found (RT_SHARED_DATA=$data)"

if [ -n "${E2E_DIR:-}" ]; then
    dir=$E2E_DIR
    keep=1
    rm -rf "$dir/corpus" "$dir/cli" "$dir/daemon"
else
    dir=$(mktemp -d "${TMPDIR:-/tmp}/rt-e2e.XXXXXX") || die "mktemp failed"
    keep=0
fi
mkdir -p "$dir/corpus" "$dir/cli" "$dir/daemon" || die "$dir: cannot create"
failed=""
fail() { echo "e2e: $*" >&2; failed="$failed; $*"; }
now() { date +%s.%N; }
# calc EXPR [FORMAT]: awk arithmetic over the shell's values; "n/a" when
# any operand is missing.
calc() {
    case $1 in *n/a*) echo n/a; return ;; esac
    awk "BEGIN { x = $1; printf \"${2:-%.3f}\\n\", x }" 2>/dev/null || echo n/a
}
orna() { if [ -n "$1" ]; then echo "$1"; else echo n/a; fi; }

pid=""
stop_daemon() {
    if [ -n "$pid" ]; then
        kill -TERM "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        pid=""
    fi
}
trap stop_daemon EXIT
trap 'stop_daemon; exit 130' INT TERM

# run_rss FILE CMD...: runs CMD; FILE gets its peak RSS in kB (empty when
# no way to measure it is there). Returns CMD's status.
run_rss() {
    rf=$1
    shift
    : >"$rf"
    if [ -x /usr/bin/time ] && /usr/bin/time -v -o /dev/null true 2>/dev/null; then
        /usr/bin/time -v -o "$rf.time" "$@"
        r=$?
        sed -n 's/.*Maximum resident set size (kbytes): *//p' "$rf.time" >"$rf"
        return $r
    elif command -v python3 >/dev/null 2>&1; then
        python3 -c '
import resource, subprocess, sys
r = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r if r >= 0 else 128 - r)' "$rf" "$@"
    else
        "$@"
    fi
}

# 1. The corpus.
start_date=$(date -u '+%Y-%m-%d %H:%M UTC')
load_avg=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
corpus_line=$("$b/bench/bench_corpus" "$src" "$dir/corpus" "$n" "$seed") || die "bench_corpus failed"
echo "$corpus_line"
win_frames=$(awk '{ s += $3 } END { print s + 0 }' "$dir/corpus/windows.txt")
n_bvh=0
for c in "$data"/clips/*.bvh; do
    [ -f "$c" ] || continue
    cp "$c" "$dir/corpus/" || die "$c: cannot copy"
    n_bvh=$((n_bvh + 1))
done
set -- "$dir"/corpus/*.csv
[ $n_bvh -gt 0 ] && set -- "$@" "$dir"/corpus/*.bvh
n_clips=$#

# 2. The CLI.
stats=""
if "$b/retarget" solve --help 2>&1 | grep -q -e '--stats'; then stats=$dir/cli_stats.json; fi
echo "e2e: cli: retarget solve $n_clips clips --batch --backend $backend${stats:+ --stats}"
# With --stats the CLI runs alone between the two clock readings and
# reports its own peak RSS (peak_rss_kb); without it, inside run_rss
# (/usr/bin/time, else a Python interpreter), whose own start then counts
# in the wall.
: >"$dir/cli_rss"
t0=$(now)
# shellcheck disable=SC2086 # E2E_CLI_ARGS is a list of words
if [ -n "$stats" ]; then
    "$b/retarget" solve "$@" --source-robot g1 --robot g1 --batch --backend "$backend" --quiet -o "$dir/cli" \
        --stats "$stats" $cli_args 2>"$dir/cli.log"
else
    run_rss "$dir/cli_rss" "$b/retarget" solve "$@" --source-robot g1 --robot g1 --batch \
        --backend "$backend" --quiet -o "$dir/cli" $cli_args 2>"$dir/cli.log"
fi || fail "retarget solve failed: $(tail -n 3 "$dir/cli.log" | tr '\n' ' ')"
t1=$(now)
cli_wall=$(calc "$t1 - $t0")
cli_frames=$(awk '!/^[A-Za-z]/ { n++ } END { print n + 0 }' "$dir"/cli/*.csv 2>/dev/null)
cli_backend=$(sed -n 's/.*"backend":[^"]*"\([a-z]*\)".*/\1/p' "$dir"/cli/*.report.json 2>/dev/null | head -n 1)
st() { # KEY: a number from the CLI's --stats file, or n/a
    v=""
    [ -n "$stats" ] && [ -s "$stats" ] &&
        v=$(tr -d ' \t\r\n' <"$stats" | grep -o "\"$1\":[-0-9.eE+]*" | head -n 1 | cut -d: -f2)
    orna "$v"
}
if [ -n "$stats" ]; then cli_rss=$(st peak_rss_kb); else cli_rss=$(orna "$(cat "$dir/cli_rss")"); fi
cli_st_read=$(st read); cli_st_plan=$(st plan); cli_st_targets=$(st targets); cli_st_solve=$(st solve)
cli_st_quality=$(st quality); cli_st_format=$(st format); cli_st_write=$(st write)

# 3. The daemon.
db=$dir/daemon.db
rm -f "$db" "$db-wal" "$db-shm"
log=$dir/daemon.log
# shellcheck disable=SC2086 # E2E_DAEMON_ARGS is a list of words
"$b/retargetd" --no-auth --listen "127.0.0.1:${E2E_PORT:-0}" --db "$db" --backend "$backend" \
    $daemon_args >"$log" 2>&1 &
pid=$!
port=""
i=0
while [ -z "$port" ]; do
    port=$(sed -n 's/.*listening on port \([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
    [ -n "$port" ] && break
    if ! kill -0 "$pid" 2>/dev/null || [ $i -ge 300 ]; then
        echo "e2e: retargetd did not start (log $log):" >&2
        tail -n 5 "$log" >&2
        stop_daemon
        exit 1
    fi
    i=$((i + 1))
    sleep 0.1
done
url=http://127.0.0.1:$port
echo "e2e: daemon: $url, $k clients${daemon_args:+, daemon args: $daemon_args}"
"$b/bench/bench_load" "$url" "$dir/daemon" "$k" "$@" --robot g1 --source-robot g1 \
    --poll-ms "$poll_ms" --inflight "${E2E_INFLIGHT:-8}" --metrics "$dir/metrics.txt" >"$dir/load.txt" 2>"$dir/load.log" ||
    fail "bench_load: $(grep -c . "$dir/load.log") error line(s), first: $(head -n 1 "$dir/load.log")"
d_rss=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
d_rss=$(orna "$d_rss")
stop_daemon
# The database once the daemon has stopped (with its WAL, if one is left):
# the jobs, their sources and results.
db_mb=$(calc "($(stat -c %s "$db" 2>/dev/null || echo n/a) + $(stat -c %s "$db-wal" 2>/dev/null || echo 0)) / 1e6" %.1f)
ld() { orna "$(awk -v k="$1" '$1 == k { print $2; exit }' "$dir/load.txt" 2>/dev/null)"; }
pm() { # SERIES: a value from /v1/metrics, or n/a
    orna "$(awk -v s="$1" '$1 == s { print $2; exit }' "$dir/metrics.txt" 2>/dev/null)"
}
stage() { pm "retargetd_stage_seconds_total{stage=\"$1\"}"; }
worker() { pm "retargetd_worker_seconds_total{part=\"$1\"}"; }
build() { pm "retargetd_build_seconds_total{part=\"$1\"}"; }
first() { for v in "$@"; do [ "$v" != n/a ] && { echo "$v"; return; }; done; echo n/a; }
d_wall=$(ld wall_s); d_frames=$(ld frames); d_fps=$(ld frames_per_s); d_backend=$(ld backend)
d_st_read=$(first "$(stage read)" "$(stage parse)"); d_st_plan=$(stage plan)
d_st_targets=$(stage targets); d_st_solve=$(stage solve); d_st_quality=$(stage quality)
d_st_format=$(stage format); d_st_store=$(first "$(stage store)" "$(stage write)")
d_solve=$(first "$d_st_solve" "$(pm retargetd_solve_seconds_total)")

# 4. The byte check.
same=0; nd=0; bad=""
for f in "$@"; do
    nm=${f##*/}
    nm=${nm%.*}
    if cmp -s "$dir/cli/$nm.csv" "$dir/daemon/$nm.csv"; then
        same=$((same + 1))
    else
        nd=$((nd + 1))
        if [ ! -f "$dir/cli/$nm.csv" ]; then why="no CLI result"
        elif [ ! -f "$dir/daemon/$nm.csv" ]; then why="no daemon result"
        else why="differ"; fi
        [ $nd -le 20 ] && bad="$bad $nm ($why)"
    fi
done
[ $nd -gt 20 ] && bad="$bad and $((nd - 20)) more"
if [ $nd -eq 0 ]; then
    check="$same/$n_clips fetched result.csv equal to the CLI's NAME.csv (cmp)"
else
    check="FAILED: $nd of $n_clips clips:$bad"
    fail "byte check: $nd of $n_clips results differ"
fi

# 5. The solver inside the daemon against bench-gpu at its batch sizes.
gpu_cmp="n/a"
if [ "$d_backend" = cuda ] && [ -x "$b/bench/bench_gpu" ] && [ -f "$log" ]; then
    gmin=${E2E_GPU_MIN_FRAMES:-5000}
    sizes=$(awk -v m="$gmin" '/ clip\(s\) \(csv\), [0-9]+ frames solved in / {
            for (i = 1; i <= NF; i++) if ($i == "frames") f = $(i - 1)
            if (f >= m) { if (!lo || f < lo) lo = f; if (f > hi) hi = f }
        } END { if (!lo) exit; s = lo; while (s < hi) { printf "%d ", s; s *= 2 } printf "%d\n", hi }' "$log")
    if [ -n "$sizes" ]; then
        # shellcheck disable=SC2086 # sizes is a list of numbers
        RT_SHARED_DATA=$data "$b/bench/bench_gpu" windows $sizes >"$dir/bench_gpu.txt" 2>&1
        gpu_cmp=$(awk -v m="$gmin" '
            FNR == NR {
                if ($1 == "windows" && $3 == "clips" && $4 == "of" && /frames\/s/) {
                    f = $7; sub(/\(/, "", f); r = $(NF - 1); nb++; bf[nb] = f + 0; br[nb] = r + 0
                }
                next
            }
            / clip\(s\) \(/ && / frames solved in / {
                for (i = 1; i <= NF; i++) { if ($i == "frames") f = $(i - 1) + 0; if ($i == "in") s = $(i + 1) + 0 }
                if ($0 ~ /\(csv\)/ && f >= m) { wf += f; ws += s; nw++; e += f / rate(f) } else { of += f; os += s; no++ }
            }
            function rate(f,   k, t) {
                if (f <= bf[1]) return br[1]
                for (k = 1; k < nb; k++)
                    if (f <= bf[k + 1]) { t = (log(f) - log(bf[k])) / (log(bf[k + 1]) - log(bf[k])); return br[k] + t * (br[k + 1] - br[k]) }
                return br[nb]
            }
            END {
                if (!nw || !nb) { print "n/a"; exit }
                printf "%d calls of csv windows (>= %d frames): %d frames in %.3f s (%.0f frames/s) against bench_gpu windows at the same sizes %.3f s: daemon / bench %.2f (within 20%%: %s); the other %d calls (BVH clips, small) %d frames in %.3f s\n",
                    nw, m, wf, ws, wf / ws, e, ws / e, ws / e <= 1.2 ? "yes" : "no", no, of, os
            }' "$dir/bench_gpu.txt" "$log")
    fi
fi

# 6. The section.
commit=${E2E_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
[ "$commit" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] &&
    commit="$commit (with uncommitted changes)"
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c |
    awk '{ c = $1; $1 = ""; printf "%s%s x%s", s, substr($0, 2), c; s = ", " }')
# The daemon's submit parts (retargetd_submit_seconds): per part its mean
# and the bucket its 99th percentile falls in ("n/a" without the series).
subparts() {
    awk '
    function label(s, k) { sub(".*" k "=\"", "", s); sub(/".*/, "", s); return s }
    /^retargetd_submit_seconds_bucket/ {
        p = label($1, "part"); le = label($1, "le")
        if (!(p in seen)) { seen[p] = 1; order[++np] = p }
        nb[p]++; bl[p, nb[p]] = le; bc[p, nb[p]] = $2
    }
    /^retargetd_submit_seconds_sum/ { sum[label($1, "part")] = $2 }
    /^retargetd_submit_seconds_count/ { cnt[label($1, "part")] = $2 }
    END {
        if (!np) { print "n/a"; exit }
        for (i = 1; i <= np; i++) {
            p = order[i]; n = cnt[p]; q = "-"
            for (k = 1; k <= nb[p] && n > 0; k++) if (bc[p, k] >= 0.99 * n) { q = bl[p, k]; break }
            if (q != "-" && q != "+Inf") q = sprintf("%g", q * 1000)
            printf "%s%s %.1f ms mean, p99 <= %s ms", (i > 1 ? "; " : ""), p, n ? 1000 * sum[p] / n : 0, q
        }
        print ""
    }' "$dir/metrics.txt" 2>/dev/null || echo n/a
}
ms() { # P50 P99
    if [ "$1" = n/a ]; then echo n/a; else echo "$(calc "$1" %.1f)/$(calc "$2" %.1f)"; fi
}
mb() { calc "$1 / 1024" %.0f; }
share() { calc "100 * $1 / $2" %.1f%% ; }
out=$dir/section.md
{
    echo "## End to end (make bench-e2e) $start_date"
    echo
    echo "- commit: $commit"
    echo "- machine: $(nproc) CPUs, ${cpu:-unknown CPU}; ${gpu:-no GPU}; load average at start: $load_avg"
    echo "- command: \`sh bench/e2e.sh $b $n $k\` (backend $backend: CLI ran on $(orna "$cli_backend"), daemon on $d_backend; seed $seed; poll every $poll_ms ms${daemon_args:+; E2E_DAEMON_ARGS=\"$daemon_args\"}${cli_args:+; E2E_CLI_ARGS=\"$cli_args\"})"
    echo "- corpus: $n windows of dance1_subject1.csv ($win_frames frames) + $n_bvh BVH clips = $n_clips clips, $cli_frames frames solved by the CLI"
    echo "- byte check: $check"
    echo
    echo "| path | wall s | frames | frames/s | solver share | submit p50/p99 ms | poll p50/p99 ms | peak RSS MB |"
    echo "|---|---|---|---|---|---|---|---|"
    echo "| CLI \`solve --batch\` | $(calc "$cli_wall" %.2f) | $cli_frames | $(calc "$cli_frames / $cli_wall" %.0f) | $(share "$cli_st_solve" "$cli_wall") | - | - | $(mb "$cli_rss") |"
    echo "| daemon, $k clients | $(calc "$d_wall" %.2f) | $d_frames | $(calc "$d_fps" %.0f) | $(share "$d_solve" "$d_wall") | $(ms "$(ld submit_p50_ms)" "$(ld submit_p99_ms)") | $(ms "$(ld poll_p50_ms)" "$(ld poll_p99_ms)") | $(mb "$d_rss") |"
    echo
    echo "| host s per stage | read/parse | plan | targets | solve | quality | format | write/store |"
    echo "|---|---|---|---|---|---|---|---|"
    echo "| CLI | $cli_st_read | $cli_st_plan | $cli_st_targets | $cli_st_solve | $cli_st_quality | $cli_st_format | $cli_st_write |"
    echo "| daemon | $d_st_read | $d_st_plan | $d_st_targets | $d_st_solve | $d_st_quality | $d_st_format | $d_st_store |"
    echo
    echo "Wall: the CLI process from start to exit; the daemon from the first submit to the last result fetched (start-up excluded)."
    echo "Solver share: solve seconds / wall (the CLI's --stats \"solve\", summed over its lanes with --lanes 2; the daemon's stage \"solve\", else retargetd_solve_seconds_total)."
    echo "Daemon: $(pm retargetd_batches_total) solver batches, $(pm retargetd_frames_solved_total) frames solved; $(ld poll_n) polls, fetch p50/p99 $(ms "$(ld fetch_p50_ms)" "$(ld fetch_p99_ms)") ms, clip (submit to result) p50/p99 $(ms "$(ld clip_p50_s)" "$(ld clip_p99_s)") s; submissions accepted by $(ld submitted_at_p50_s) / $(ld submitted_at_p99_s) s (p50/p99 of the clips, from the start), results fetched by $(ld fetched_at_p50_s) / $(ld fetched_at_p99_s) s."
    echo "Daemon worker (wall s, from its start): idle $(worker idle), build wait $(worker build), finishing wait $(worker finish), claim $(worker claim), solve $(worker solve), marked solved $(worker mark)."
    echo "Daemon builds (wall s, summed over batches): rows $(build rows), targets $(build targets), claim $(build claim), pack $(build pack); jobs built from their submission's parsed plan $(pm 'retargetd_builds_total{from="submission"}'), from the store $(pm 'retargetd_builds_total{from="store"}')."
    echo "Daemon submit parts: $(subparts)."
    echo "Daemon solver against bench-gpu at its batch sizes: $gpu_cmp."
    echo "Daemon database after the run: $db_mb MB ($(calc "$db_mb * 1e6 / $d_frames" %.0f) bytes a frame; sources, results, reports)."
    [ -n "$failed" ] && echo "Failures: ${failed#; }"
} >"$out"
echo
cat "$out"
if [ "${E2E_RECORD:-0}" = 1 ]; then
    { echo; cat "$out"; } >>bench/RESULTS.md
    echo "e2e: appended to bench/RESULTS.md"
fi
if [ -n "$failed" ]; then
    echo "e2e: failed; the work folder is kept: $dir" >&2
    exit 1
fi
if [ $keep = 0 ]; then rm -rf "$dir"; else echo "e2e: work folder: $dir"; fi
exit 0
