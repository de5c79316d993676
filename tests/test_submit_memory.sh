#!/bin/sh
# test_submit_memory.sh BUILD -- what a large submission costs the daemon in
# memory: at most twice its body.
#
# The body: {"source_robot":"g1","robot":"g1","trajectory":...} with the
# real G1 reference trajectory ten times over (39,450 frames, 13.5 MB).
# BUILD/retargetd runs with a batch window of an hour, so nothing is solved:
# what is measured is the submission alone (read, strict JSON, the plan,
# the insert). After a small warm-up submission the peak RSS is reset
# (`echo 5 > /proc/PID/clear_refs`; where that is refused the RSS before
# is the base, which only overstates), then the big body is posted (201),
# and the growth of VmHWM over the RSS before is the submission's peak.
# Three such submissions in turn (the later ones find the allocator's
# state the first left): each must cost at most 2.0 times its body, and so
# must the raw BVH form with the largest shared clip (01_03.bvh), measured
# before them (bench/RESULTS.md "Submission memory"). Skips (77) without ../shared/data or /proc, and for a
# sanitizer build (make test SANITIZE=1), whose allocator keeps freed
# memory.
cd "$(dirname "$0")/.." || exit 1
[ -x /usr/bin/python3 ] || { echo "test_submit_memory: skipped: no /usr/bin/python3"; exit 77; }
exec /usr/bin/python3 - "$@" <<'EOF'
import json, os, shutil, sys, tempfile, time
sys.path.insert(0, "tests")
import daemon_util as du

b = du.build_dir()
ref_path = du.shared_file("test_submit_memory", "reference", "g1", "dance1_subject1.csv")
bvh_path = os.path.join(os.environ.get("RT_SHARED_DATA", "../shared/data"), "clips", "01_03.bvh")
if not os.path.exists("/proc/self/status"):
    print("test_submit_memory: skipped: no /proc")
    sys.exit(77)
if b"__asan_init" in open(os.path.join(b, "retargetd"), "rb").read():
    print("test_submit_memory: skipped: an AddressSanitizer build (its quarantine keeps freed memory resident)")
    sys.exit(77)
LIMIT = 2.0
tmp = tempfile.mkdtemp(prefix="test_submit_memory.")
p, port = du.start("test_submit_memory", b, os.path.join(tmp, "daemon.log"),
                   ["--db", os.path.join(tmp, "m.db"), "--no-auth", "--backend", "cpu", "--batch-wait-ms", "3600000",
                    "--batch-frames", "10000000"])

def status():
    d = {}
    for line in open("/proc/%d/status" % p.pid):
        k, _, v = line.partition(":")
        d[k] = v.strip()
    return int(d["VmHWM"].split()[0]) * 1024, int(d["VmRSS"].split()[0]) * 1024

def post(path, body):
    return du.request(port, "POST", path, body, {"Content-Type": "application/json"}, timeout=120)

def measure(what, path, body):
    reset = True
    try:
        with open("/proc/%d/clear_refs" % p.pid, "w") as f:
            f.write("5")
    except OSError:
        reset = False
    _, rss0 = status()
    t0 = time.time()
    st, reply = post(path, body)
    dt = time.time() - t0
    time.sleep(0.2)   # the RSS counters of the daemon's threads settle
    hwm, _ = status()
    growth = hwm - rss0
    ratio = growth / len(body)
    print("test_submit_memory: %s: body %.2f MB, HTTP %d in %.2f s, peak RSS growth %.2f MB = %.2fx the body%s" %
          (what, len(body) / 1e6, st, dt, growth / 1e6, ratio, "" if reset else " (no clear_refs: an upper bound)"))
    return st, ratio, reply

ref = open(ref_path).read()
fail = []
try:
    warm = json.dumps({"source_robot": "g1", "robot": "g1", "name": "warm", "trajectory": ref[:20000]}).encode()
    for _ in range(2):
        st, _ = post("/v1/jobs", warm)
        if st != 201:
            fail.append("warm-up submission: HTTP %d" % st)
    if os.path.exists(bvh_path):
        st, ratio, reply = measure("01_03.bvh (raw form)", "/v1/jobs?robot=g1&name=bvh", open(bvh_path, "rb").read())
        if st != 201:
            fail.append("01_03.bvh: HTTP %d %s" % (st, reply[:300]))
        elif ratio > LIMIT:
            fail.append("01_03.bvh cost %.2fx its body, want at most %.1fx" % (ratio, LIMIT))
    for i in range(3):
        big = json.dumps({"source_robot": "g1", "robot": "g1", "name": "big%d" % i, "trajectory": ref * 10}).encode()
        st, ratio, reply = measure("trajectory (JSON) #%d" % (i + 1), "/v1/jobs", big)
        if st != 201:
            fail.append("the 13.5 MB trajectory #%d: HTTP %d %s" % (i + 1, st, reply[:300]))
        elif ratio > LIMIT:
            fail.append("the 13.5 MB trajectory #%d cost %.2fx its body, want at most %.1fx" % (i + 1, ratio, LIMIT))
finally:
    p.terminate()
    p.wait()
for f in fail:
    print("test_submit_memory: FAILED: " + f)
if fail:
    print("test_submit_memory: kept %s" % tmp)
    sys.exit(1)
shutil.rmtree(tmp)
print("test_submit_memory: ok")
EOF
