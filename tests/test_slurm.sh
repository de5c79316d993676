#!/bin/sh
# test_slurm.sh BUILD -- deploy/slurm/retarget_corpus.sbatch on a real
# single-node Slurm cluster: Debian's slurm-wlm (slurmctld, slurmd) and
# munge, started here as root on loopback with their configuration, state,
# sockets and logs in a temporary folder, and stopped (jobs cancelled,
# daemons killed, the folder removed) by a trap on every exit.
#
# The corpus: 16 windows (400..1000 frames) of the real G1 reference
# trajectory and two real BVH clips, onto the G1.
#   1. `retarget batch` of the corpus locally: the reference;
#   2. the recipe as a 4-task array (--array=0-3, each task one
#      `retarget batch --shard I/4` into one shared OUT_DIR): every task
#      completes, the shared manifest has one "done" line per clip, and
#      every clip's CSV is byte-identical (cmp) to the reference's, its
#      report too once the host's figures (its "seconds" and "threads":
#      the local batch runs 2 threads, each task 1; "batch_clips": the
#      clips solved with it, which differ with the shard) are taken out;
#   3. the array again into a fresh OUT_DIR; once one task has finished
#      some but not all of its clips it is cancelled (scancel) mid-way; the
#      others complete. That task alone is resubmitted
#      (RETARGET_SHARDS=4 sbatch --array=K): it reports the clips done
#      before the kill as already done and solves only the rest; the files
#      of the clips done before the kill keep their inode and mtime (not
#      rewritten); the final set equals the reference as in 2.
# Skips (77) with the reason where the cluster cannot run here: not root,
# slurm-wlm or munge not installed (`make test` installs them as root
# through deploy/deps.sh --optional), or a daemon that does not start.
# Once the cluster is up, anything wrong is a failure. About 30-60 s on
# 2 cores. RT_KEEP=1 keeps the temporary folder (logs, outputs).
b=${1:-build}
data=${RT_SHARED_DATA:-../shared/data}
ref_csv="$data/reference/g1/dance1_subject1.csv"
skip() { echo "test_slurm: skipped: $1"; exit 77; }
fail() { echo "test_slurm: FAILED: $1"; exit 1; }
[ "$(id -u)" = 0 ] || skip "not root (slurmctld, slurmd and munged are started as root)"
for c in slurmctld slurmd munged sbatch squeue scancel sinfo; do
    command -v $c >/dev/null 2>&1 ||
        skip "no $c (slurm-wlm and munge are not installed: deploy/deps.sh --optional slurm-wlm munge, as root)"
done
command -v python3 >/dev/null 2>&1 || skip "no python3"
[ -f "$ref_csv" ] || skip "no $ref_csv"
[ -x "$b/retarget" ] || fail "no $b/retarget"
repo=$(pwd)
bin=$(cd "$b" && pwd)/retarget
sbatch_file=$repo/deploy/slurm/retarget_corpus.sbatch

tmp=$(mktemp -d /tmp/test_slurm.XXXXXX)
chmod 700 "$tmp"
pids=""
jobs_submitted=""
cleanup() {
    if [ -n "$jobs_submitted" ]; then
        scancel $jobs_submitted 2>/dev/null
        i=0
        while [ $i -lt 50 ] && [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do sleep 0.2; i=$((i + 1)); done
    fi
    for p in $pids; do kill "$p" 2>/dev/null; done
    for p in $pids; do wait "$p" 2>/dev/null; done
    [ -n "${RT_KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Two free loopback ports for slurmctld and slurmd.
ports=$(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
ctl_port=${ports% *}
node_port=${ports#* }
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log"
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=rttest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmdPort=$node_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=2
InactiveLimit=0
MinJobAge=600
NodeName=rtnode NodeAddr=127.0.0.1 NodeHostname=$host CPUs=4 RealMemory=4000 State=UNKNOWN
PartitionName=rt Nodes=rtnode Default=YES MaxTime=INFINITE State=UP
EOF

# munge: a fresh key, its own socket.
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$tmp/munge.key"
munged -F -f --socket="$tmp/munge.sock" --key-file="$tmp/munge.key" --log-file="$tmp/log/munged.log" \
    --pid-file="$tmp/munged.pid" --seed-file="$tmp/munged.seed" >"$tmp/log/munged.out" 2>&1 &
pids="$pids $!"
i=0
until [ -S "$tmp/munge.sock" ]; do
    i=$((i + 1))
    [ $i -gt 50 ] && skip "munged did not start: $(tail -n 1 "$tmp/log/munged.out")"
    sleep 0.1
done
slurmctld -D -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -f "$SLURM_CONF" -N rtnode >"$tmp/log/slurmd.out" 2>&1 &
pids="$pids $!"
i=0
until [ "$(sinfo -h -n rtnode -o %T 2>/dev/null)" = idle ]; do
    i=$((i + 1))
    if [ $i -gt 100 ]; then
        tail -n 5 "$tmp/log/slurmctld.out" "$tmp/log/slurmd.out"
        skip "the node did not come up (sinfo: '$(sinfo -h -o %T 2>&1 | head -n 1)')"
    fi
    sleep 0.2
done
echo "test_slurm: cluster up: slurmctld on 127.0.0.1:$ctl_port, slurmd rtnode on :$node_port ($(slurmctld -V))"

# The corpus: sorted as retarget batch sorts it (strcmp).
corpus=$tmp/corpus
mkdir -p "$corpus"
for k in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do
    n=$((400 + (k % 4) * 200))
    s=$((k * 200 + 1))
    sed -n "${s},$((s + n - 1))p" "$ref_csv" >"$corpus/w$(printf %02d $k).csv"
done
for c in run_forward jumping_jacks; do
    [ -f "$data/clips/$c.bvh" ] && cp "$data/clips/$c.bvh" "$corpus/"
done
clips=$(cd "$corpus" && LC_ALL=C ls)
n_clips=$(echo "$clips" | wc -l)
# shard_of K: the clips of shard K/4.
shard_of() { echo "$clips" | awk -v k="$1" '(NR - 1) % 4 == k'; }
out_of() { echo "${1%.*}"; }

t0=$(date +%s)
"$bin" batch "$corpus" --robot g1 --source-robot g1 --out "$tmp/ref" --jobs 1 --threads 2 --quiet \
    >"$tmp/log/ref.log" 2>&1 || { cat "$tmp/log/ref.log"; fail "the local retarget batch failed"; }
echo "test_slurm: local retarget batch: $n_clips clips in $(($(date +%s) - t0)) s"

# submit OUT ARRAY [VAR=VALUE...]: the recipe as an array; prints the job id.
submit() {
    o=$1; a=$2; shift 2
    env RETARGET_BIN="$bin" RETARGET_ARGS="--source-robot g1" "$@" \
        sbatch --parsable --array="$a" --chdir="$repo" --cpus-per-task=1 --mem=500M --time=10 \
        --output="$tmp/log/task-%A_%a.out" "$sbatch_file" "$corpus" "$o" g1
}
# wait_job ID: until none of the job's tasks is pending or running (90 s at most).
wait_job() {
    i=0
    while [ -n "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; do
        i=$((i + 1))
        [ $i -gt 450 ] && fail "job $1 still queued or running after 90 s: $(squeue -h -j "$1" 2>&1 | head -n 4)"
        sleep 0.2
    done
}
# task_state ID K: the final state of task ID_K (the controller keeps it MinJobAge s).
task_state() { scontrol -o show job "$1_$2" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1; }
# done_count OUT K: how many of shard K's clips OUT's manifest says done.
done_count() {
    shard_of "$2" | while read -r c; do
        grep -F "\"clip\":\"$c\"" "$1/manifest.jsonl" 2>/dev/null | grep -q '"status":"done"' && echo "$c"
    done | wc -l
}
# same_as_ref OUT: every clip's CSV is cmp-identical to the reference's, its
# report identical once the host's figures ("seconds", "threads", and "batch_clips": local runs solve their clips in
# groups that differ with the shard) are removed; the manifest has one done line per clip.
same_as_ref() {
    for c in $clips; do
        nm=$(out_of "$c")
        cmp "$tmp/ref/$nm.csv" "$1/$nm.csv" || fail "$1/$nm.csv differs from the local retarget batch"
    done
    python3 - "$tmp/ref" "$1" $clips <<'PY' || fail "reports or manifest of $1 differ"
import json, os, sys
ref, out, clips = sys.argv[1], sys.argv[2], sys.argv[3:]
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("seconds", "threads", "batch_clips")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
bad = 0
for c in clips:
    n = os.path.splitext(c)[0] + ".report.json"
    if strip(json.load(open(os.path.join(ref, n)))) != strip(json.load(open(os.path.join(out, n)))):
        print("test_slurm: %s differs beyond its timings" % n); bad += 1
done = {}
for line in open(os.path.join(out, "manifest.jsonl")):
    j = json.loads(line)
    if j["status"] == "done":
        done[j["clip"]] = done.get(j["clip"], 0) + 1
if sorted(done) != sorted(clips) or any(v != 1 for v in done.values()):
    print("test_slurm: manifest done lines: %s" % done); bad += 1
sys.exit(1 if bad else 0)
PY
}

# 2. The corpus over four array tasks.
t0=$(date +%s)
jid=$(submit "$tmp/out" 0-3) || fail "sbatch refused the recipe"
jobs_submitted="$jobs_submitted $jid"
wait_job "$jid"
for k in 0 1 2 3; do
    st=$(task_state "$jid" $k)
    [ "$st" = COMPLETED ] || { cat "$tmp/log/task-${jid}_$k.out"; fail "task ${jid}_$k ended $st"; }
    grep -q "in shard $k/4, 0 already done" "$tmp/log/task-${jid}_$k.out" ||
        { cat "$tmp/log/task-${jid}_$k.out"; fail "task $k did not run shard $k/4"; }
done
same_as_ref "$tmp/out"
echo "test_slurm: array $jid: 4 tasks COMPLETED in $(($(date +%s) - t0)) s; $n_clips clips byte-identical to the local batch"

# 3. A task cancelled mid-way, then resubmitted alone. K=1: the shard of
# run_forward.bvh (short, first) and the longest windows, w03 w07 w11 w15.
K=1
n_k=$(shard_of $K | wc -l)
t0=$(date +%s)
jid=$(submit "$tmp/out2" 0-3) || fail "sbatch refused the recipe"
jobs_submitted="$jobs_submitted $jid"
i=0
while [ "$(done_count "$tmp/out2" $K)" -lt 1 ]; do
    i=$((i + 1))
    [ $i -gt 1800 ] && fail "task ${jid}_$K finished no clip in 90 s"
    sleep 0.05
done
scancel "${jid}_$K"
wait_job "$jid"
d=$(done_count "$tmp/out2" $K)
st=$(task_state "$jid" $K)
[ "$st" = CANCELLED ] || fail "task ${jid}_$K ended $st, want CANCELLED (it had $d of $n_k clips done)"
[ "$d" -lt "$n_k" ] || fail "task $K finished all $n_k clips before it was cancelled"
for k in 0 1 2 3; do
    [ $k = $K ] && continue
    [ "$(task_state "$jid" $k)" = COMPLETED ] || fail "task ${jid}_$k ended $(task_state "$jid" $k)"
done
echo "test_slurm: array $jid: task $K cancelled after $d of its $n_k clips; the others COMPLETED"
# The stamps (inode, mtime to the nanosecond) of every clip done before the kill.
shard_done() {
    for c in $clips; do
        grep -F "\"clip\":\"$c\"" "$tmp/out2/manifest.jsonl" | grep -q '"status":"done"' && echo "$c"
    done
}
stamps() {
    for c in $(shard_done); do
        nm=$(out_of "$c")
        stat -c '%n %i %.9Y' "$tmp/out2/$nm.csv" "$tmp/out2/$nm.report.json"
    done
}
n_before=$(shard_done | wc -l)
stamps >"$tmp/stamps.before"
sleep 0.05
jid2=$(submit "$tmp/out2" $K RETARGET_SHARDS=4) || fail "sbatch refused the resubmission"
jobs_submitted="$jobs_submitted $jid2"
wait_job "$jid2"
st=$(task_state "$jid2" $K)
[ "$st" = COMPLETED ] || { cat "$tmp/log/task-${jid2}_$K.out"; fail "the resubmitted task ended $st"; }
want="$n_k clip(s) in shard $K/4, $d already done, $((n_k - d)) to do"
grep -qF "$want" "$tmp/log/task-${jid2}_$K.out" ||
    { cat "$tmp/log/task-${jid2}_$K.out"; fail "the resubmitted task did not say '$want'"; }
while read -r f ino mt; do
    now=$(stat -c '%i %.9Y' "$f")
    [ "$now" = "$ino $mt" ] || fail "$f was rewritten by the resubmission ($ino $mt -> $now)"
done <"$tmp/stamps.before"
same_as_ref "$tmp/out2"
echo "test_slurm: resubmitted ${jid2}_$K: $want; the $n_before clips done before the kill not rewritten;" \
    "the final $n_clips clips byte-identical to the local batch ($(($(date +%s) - t0)) s)"
echo "test_slurm: ok"
