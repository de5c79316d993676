#!/bin/sh
# test_kill9.sh BUILD -- the daemon killed with SIGKILL again and again
# while it solves: nothing lost, nothing duplicated.
#
# Sixteen jobs of one real clip (cmu_12_01_walk, 524 frames), with options
# that make its solve last about 1.4 s on 2 cores (200 CG iterations an LM
# step, as test_crash_alone: with the defaults `retarget solve` takes 0.25 s
# and kills 50..300 ms after a job was seen running could miss it), each submitted
# with its own Idempotency-Key by a client that retries until it gets an
# answer (so some submissions are cut off by a
# kill and sent again). One job per batch (--batch-frames 1). Whenever a
# job is running for the first time (attempts 1), the daemon is killed with
# SIGKILL after a random 50..300 ms and started again on the same
# database, at least eight times. (A kill may take two jobs' first runs:
# the next batch is claimed by its build while the one before solves, so
# both come back, each alone.) Then, once every job is final:
#   - there are exactly sixteen jobs, one per key (no duplicate);
#   - every one succeeded (none lost; an interrupted job ran again: at
#     least seven jobs have 2 attempts or more, and no job's solve was
#     interrupted more than once -- a kill may also catch the job before
#     while its result is stored, which costs it a run but not a solve);
#   - every result.csv is byte for byte what `retarget solve` writes for the
#     clip with the same options (a rerun after a crash gives the same bits).
# Runs in about 30 s on 2 cores (about 130 s under ASan+UBSan). Skips (77) without ../shared/data.
cd "$(dirname "$0")/.." || exit 1
[ -x /usr/bin/python3 ] || { echo "test_kill9: skipped: no /usr/bin/python3"; exit 77; }
exec /usr/bin/python3 - "$@" <<'EOF'
import json, os, random, shutil, signal, sqlite3, subprocess, sys, threading, time
import http.client
sys.path.insert(0, "tests")
import daemon_util as du

b, clip_path, tmp, checks = du.begin("test_kill9", "clips", "cmu_12_01_walk.bvh")
clip = open(clip_path, "rb").read()
db = os.path.join(tmp, "k.db")
port = 23000 + os.getpid() % 20000
N, KILLS = 16, 8
check, failed = checks.check, checks.failed

def request(method, path, body=None, headers=None, timeout=30):
    return du.request(port, method, path, body, headers, timeout)

log_path = os.path.join(tmp, "daemon.log")
def start():
    # The same port each time: the submitter retries across restarts.
    return du.start("test_kill9", b, log_path, ["--db", db, "--no-auth", "--backend", "cpu", "--solver-threads", "2",
                                                "--batch-wait-ms", "0", "--batch-frames", "1"], port)[0]

# The reference: the clip solved offline with the jobs' options.
OPTIONS = {"max_cg_iters": 200, "cg_tol": 1e-9}
ref_dir = os.path.join(tmp, "ref")
subprocess.run([os.path.join(b, "retarget"), "solve", clip_path, "--robot", "g1", "--threads", "2",
                "--max-cg", "200", "--cg-tol", "1e-9", "--quiet", "-o", ref_dir], check=True)
ref = open(os.path.join(ref_dir, "cmu_12_01_walk.csv"), "rb").read()

ids, lock, stop = {}, threading.Lock(), [False]
def submitter():
    # Submits job i with key k-i until it has an answer, one at a time.
    for i in range(N):
        while not stop[0]:
            try:
                st, body = request("POST", "/v1/jobs", json.dumps({"robot": "g1", "name": "kill_%d" % i,
                                                                  "clip": clip.decode(), "options": OPTIONS}).encode(),
                                   {"Idempotency-Key": "k-%d" % i}, timeout=10)
                if st in (200, 201):
                    with lock:
                        ids[i] = json.loads(body)["id"]
                    break
                time.sleep(0.05)   # 503 while stopping: retry
            except (OSError, http.client.HTTPException):
                time.sleep(0.05)   # killed meanwhile: retry with the same key
        time.sleep(random.uniform(0, 0.3))

def jobs():
    return du.jobs(port)

random.seed(os.getpid())
t0 = time.time()
daemon = start()
th = threading.Thread(target=submitter)
th.start()
kills, killed_ids = 0, []
while time.time() - t0 < 450:  # about 30 s, 126-149 s under ASan+UBSan
    js = jobs()
    if js is None:
        time.sleep(0.05)
        continue
    running = [j for j in js if j["state"] == "running" and j["attempts"] == 1]
    if kills < KILLS and running:
        time.sleep(random.uniform(0.05, 0.3))
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
        kills += 1
        killed_ids.append(running[0]["id"])
        daemon = start()
        continue
    with lock:
        all_in = len(ids) == N
    if all_in and js and len(js) >= N and all(j["state"] not in ("queued", "running") for j in js):
        break
    time.sleep(0.02)
stop[0] = True
th.join()
js = jobs() or []
check(kills >= KILLS, "%d kills during solves, want >= %d" % (kills, KILLS))
check(len(ids) == N, "%d of %d submissions answered" % (len(ids), N))
check(len(js) == N, "%d jobs in the database, want %d (one per key)" % (len(js), N))
names = sorted(j["name"] for j in js)
check(names == sorted("kill_%d" % i for i in range(N)), "job names: %s" % names)
keys = sorted(j.get("idempotency_key", "") for j in js)
check(keys == sorted("k-%d" % i for i in range(N)), "keys: %s" % keys)
states = [j["state"] for j in js]
check(all(s == "succeeded" for s in states), "states: %s" % states)
attempts = [j["attempts"] for j in js]
check(sum(1 for a in attempts if a >= 2) >= KILLS - 1, "attempts: %s (killed %s)" % (attempts, killed_ids))
same = 0
for j in js:
    st, csv = request("GET", "/v1/jobs/%d/result.csv" % j["id"])
    same += st == 200 and csv == ref
check(same == N, "%d of %d results equal to retarget solve's bytes" % (same, N))
daemon.send_signal(signal.SIGTERM)
daemon.wait()
requeued = open(log_path, errors="replace").read().count("left running by a crash queued again")
check(requeued >= KILLS - 1, "%d restarts queued a job again" % requeued)
# A kill can also catch the job before, solved and having its result
# stored: that run is taken again (attempts 3) but is not an interrupted
# solve. Each job's solve was interrupted at most once.
con = sqlite3.connect(db)
solves = dict(con.execute("SELECT id, attempts - finish_interrupts FROM jobs").fetchall())
con.close()
check(len(solves) == N and max(solves.values()) <= 2,
      "interrupted solves + 1 per job: %s (killed %s)" % (solves, killed_ids))
print("test_kill9: %d kills in %.0f s, %d jobs, attempts %s, %d results identical, %s" %
      (kills, time.time() - t0, len(js), attempts, same, "FAILED" if failed else "ok"))
if not failed:
    shutil.rmtree(tmp)
else:
    print("test_kill9: kept %s" % tmp)
sys.exit(1 if failed else 0)
EOF
