#!/bin/sh
# test_crash_alone.sh BUILD -- a clip that crashes the daemon in a batch
# fails alone after its attempts; its batch mates succeed.
#
# Four jobs of one real clip (cmu_12_01_walk, 524 frames) submitted within
# the 2 s batch window, so they run as one batch, with options that make
# its solve last about 1.5 s on 2 cores (200 CG iterations an LM step:
# every kill, 50..250 ms after "bad" is seen running, lands in its solve,
# not in the storing of its result, which counts apart); one of them, "bad",
# stands for a clip that brings the daemon down: whenever it is running
# the daemon is killed with SIGKILL (after 50..250 ms) and started again on
# the same database. Then:
#   - the first kill takes the whole batch down (all four running, attempts 1);
#   - after it every job runs alone (its own class key): each sibling's
#     report says solver.batch_clips 1 (the later kills come while "bad"
#     is the only job running: a sibling solved just before it may still
#     be being stored while "bad" is solved);
#   - "bad" is killed STORE_MAX_ATTEMPTS (3) times and then fails for good
#     ("interrupted 3 times"); the three others succeed with 2 attempts,
#     their result.csv byte for byte what `retarget solve` writes.
# About 15-30 s on 2 cores. Skips (77) without ../shared/data.
cd "$(dirname "$0")/.." || exit 1
[ -x /usr/bin/python3 ] || { echo "test_crash_alone: skipped: no /usr/bin/python3"; exit 77; }
exec /usr/bin/python3 - "$@" <<'EOF'
import json, os, random, shutil, signal, subprocess, sys, time
sys.path.insert(0, "tests")
import daemon_util as du

b, clip_path, tmp, checks = du.begin("test_crash_alone", "clips", "cmu_12_01_walk.bvh")
clip = open(clip_path, "rb").read()
db = os.path.join(tmp, "c.db")
check, failed = checks.check, checks.failed
port = [0]

def request(method, path, body=None):
    return du.request(port[0], method, path, body)

log_path = os.path.join(tmp, "daemon.log")
def start():
    p, port[0] = du.start("test_crash_alone", b, log_path, ["--db", db, "--no-auth", "--backend", "cpu",
                                                            "--solver-threads", "2", "--batch-wait-ms", "2000"])
    return p

def jobs():
    return du.jobs(port[0], 100)

ref_dir = os.path.join(tmp, "ref")
OPTIONS = {"max_cg_iters": 200, "cg_tol": 1e-9}
subprocess.run([os.path.join(b, "retarget"), "solve", clip_path, "--robot", "g1", "--threads", "2",
                "--max-cg", "200", "--cg-tol", "1e-9", "--quiet", "-o", ref_dir], check=True)
ref = open(os.path.join(ref_dir, "cmu_12_01_walk.csv"), "rb").read()

random.seed(os.getpid())
t0 = time.time()
daemon = start()
names = ["good_a", "bad", "good_b", "good_c"]
for n in names:
    st, body = request("POST", "/v1/jobs", json.dumps({"robot": "g1", "name": n, "clip": clip.decode(),
                                                      "options": OPTIONS}).encode())
    check(st == 201, "submit %s: HTTP %d %s" % (n, st, body[:200]))
kills, first_batch, t_run = 0, None, None
while time.time() - t0 < 150:
    js = jobs()
    if js is None:
        time.sleep(0.05)
        continue
    running = [j for j in js if j["state"] == "running"]
    bad = [j for j in js if j["name"] == "bad"][0]
    if bad["state"] == "running" and t_run is None:
        t_run = time.time()
    if bad["state"] == "running":
        if kills == 0:
            # The batch's jobs are claimed one after another: wait for all.
            if len(running) < len(names) and time.time() - t_run < 2:
                time.sleep(0.01)
                continue
            first_batch = sorted(j["name"] for j in running)
        elif len(running) > 1:
            # A sibling solved just before bad is still being finished
            # (stored) while bad is solved: the crash comes once bad is
            # the only job running.
            time.sleep(0.01)
            continue
        time.sleep(random.uniform(0.05, 0.25))
        daemon.send_signal(signal.SIGKILL)
        daemon.wait()
        kills += 1
        daemon = start()
        continue
    if all(j["state"] not in ("queued", "running") for j in js):
        break
    time.sleep(0.02)
js = {j["name"]: j for j in (jobs() or [])}
check(first_batch == sorted(names), "the first kill's batch: %s, want all four" % first_batch)
check(kills == 3, "%d kills while bad ran, want 3 (STORE_MAX_ATTEMPTS)" % kills)
bj = js.get("bad", {})
check(bj.get("state") == "failed" and bj.get("attempts") == 3, "bad: %s, attempts %s, want failed after 3" %
      (bj.get("state"), bj.get("attempts")))
check("interrupted 3 times" in json.dumps(bj.get("error")), "bad's error: %s" % bj.get("error"))
for n in names:
    if n == "bad":
        continue
    j = js.get(n, {})
    check(j.get("state") == "succeeded" and j.get("attempts") == 2,
          "%s: %s, attempts %s, want succeeded on its 2nd" % (n, j.get("state"), j.get("attempts")))
    st, csv = request("GET", "/v1/jobs/%d/result.csv" % j.get("id", 0))
    check(st == 200 and csv == ref, "%s: result.csv (HTTP %d) differs from retarget solve's" % (n, st))
    st, res = request("GET", "/v1/jobs/%d/result?trajectory=0" % j.get("id", 0))
    clips = json.loads(res).get("report", {}).get("solver", {}).get("batch_clips") if st == 200 else None
    check(clips == 1, "%s: solved in a batch of %s clips, want 1 (alone)" % (n, clips))
daemon.send_signal(signal.SIGTERM)
daemon.wait()
print("test_crash_alone: %d kills in %.0f s; bad %s after %s attempts; %s" %
      (kills, time.time() - t0, bj.get("state"), bj.get("attempts"),
       ", ".join("%s %s (%s attempts)" % (n, js.get(n, {}).get("state"), js.get(n, {}).get("attempts"))
                 for n in names if n != "bad")))
if failed:
    print("test_crash_alone: kept %s" % tmp)
    sys.exit(1)
shutil.rmtree(tmp)
print("test_crash_alone: ok")
EOF
