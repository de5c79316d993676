# daemon_util.py -- imported by the shell tests that drive the daemon from
# Python (test_kill9.sh, test_crash_alone.sh, test_submit_memory.sh; they
# run from the repository root with tests/ on sys.path): the build folder
# and the shared data, a failure list, one HTTP request, retargetd started
# and waited for, the job list. The sh tests have daemon_util.sh.
import http.client, json, os, subprocess, sys, tempfile, time


def build_dir():
    """The build folder, the test's first argument (default build)."""
    return sys.argv[1] if len(sys.argv) > 1 else "build"


def shared_file(test, *rel):
    """The path of a file below the shared data folder ($RT_SHARED_DATA or
    ../shared/data); a missing one skips the test (exit 77)."""
    path = os.path.join(os.environ.get("RT_SHARED_DATA", "../shared/data"), *rel)
    if not os.path.exists(path):
        print("%s: skipped: no %s" % (test, path))
        sys.exit(77)
    return path


def begin(test, *rel):
    """The start of a test: (build folder, the path of shared file rel
    (skipping without it), a new temporary folder named after the test,
    a Checks)."""
    path = shared_file(test, *rel)
    return build_dir(), path, tempfile.mkdtemp(prefix=test + "."), Checks(test)


class Checks:
    """check(cond, what) prints and records each failure; failed lists them."""

    def __init__(self, test):
        self.test, self.failed = test, []

    def check(self, cond, what):
        if not cond:
            self.failed.append(what)
            print("%s: FAILED: %s" % (self.test, what), flush=True)


def request(port, method, path, body=None, headers=None, timeout=30):
    """One request on a fresh connection to 127.0.0.1:port: (status, body bytes)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def start(test, b, log_path, args, port=0):
    """Starts b/retargetd --listen 127.0.0.1:PORT ARGS with its output
    appended to log_path and returns (process, port) once /v1/health
    answers; port 0 takes the port the daemon logs. A daemon that does not
    come up within 10 s fails the test (exit 1, the log's tail printed)."""
    with open(log_path, "ab") as log:
        at = log.tell()
        p = subprocess.Popen([os.path.join(b, "retargetd"), "--listen", "127.0.0.1:%d" % port] + args,
                             stdout=log, stderr=log)
    got = port
    for _ in range(200):
        if not got:
            text = open(log_path, errors="replace").read()[at:]
            i = text.find("listening on port ")
            if i >= 0:
                got = int(text[i + 18:].split()[0].rstrip(":,)"))
        if got:
            try:
                if request(got, "GET", "/v1/health", timeout=2)[0] == 200:
                    return p, got
            except OSError:
                pass
        if p.poll() is not None:
            break
        time.sleep(0.05)
    print("%s: the daemon did not start (exit %s)" % (test, p.poll()))
    sys.stdout.write(open(log_path, errors="replace").read()[-3000:])
    p.kill()
    sys.exit(1)


def jobs(port, limit=1000):
    """GET /v1/jobs (no token): the list, or None when the daemon does not answer."""
    try:
        st, body = request(port, "GET", "/v1/jobs?limit=%d" % limit, timeout=5)
        return json.loads(body)["jobs"] if st == 200 else None
    except (OSError, http.client.HTTPException, ValueError):
        return None
