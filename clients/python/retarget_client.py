#!/usr/bin/env python3
"""retarget_client -- a Python client for the retargetd HTTP API (standard library only).

As a library:

    from retarget_client import Client
    c = Client("http://127.0.0.1:8080", token="...")
    job = c.submit_bvh(open("clip.bvh").read(), robot="g1")
    # or joint positions: .npz / .npy bytes (an .npy with its names) or CSV text
    job = c.submit_joints(open("walk.npz", "rb").read(), "npz", robot="g1")
    c.wait(job["id"])
    csv_text = c.result_csv(job["id"])
    report = c.result(job["id"], trajectory=False)["report"]

As a command:

    retarget_client.py submit SOURCE --robot g1 [--profile P] [--idempotency-key K]
                       [--joint-names FILE] [--units m|cm|mm|in|cmu] [--up y|z] [--fps F]

SOURCE is a BVH clip, joint positions (.npz, .npy with its names one a line
in --joint-names FILE or NAME.txt beside it, a CSV of NAME_x,NAME_y,NAME_z
columns; docs/sources.md), or with --source-robot a robot trajectory CSV.
    retarget_client.py status ID | wait ID | cancel ID | list
    retarget_client.py fetch ID -o DIR [--format csv|npz] [--fps F]

Installed as a package (pip install clients/python, see pyproject.toml) the
command is `retarget-client` with the same verbs.

The server comes from --server or $RETARGET_SERVER (default
http://127.0.0.1:8080), the token from --token or $RETARGET_TOKEN. Errors from
the server raise RetargetError carrying its HTTP status and the JSON error
({"code", "where", "message"}); the command prints them as one line.
"""
import argparse
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.request


class RetargetError(Exception):
    """An error reply from retargetd (or a transport failure, status 0)."""

    def __init__(self, status, code, where, message):
        super().__init__(f"{status} {code}: {where}: {message}" if where else f"{status} {code}: {message}")
        self.status, self.code, self.where, self.message = status, code, where, message


class Client:
    def __init__(self, server=None, token=None, timeout=60.0):
        self.server = (server or os.environ.get("RETARGET_SERVER") or "http://127.0.0.1:8080").rstrip("/")
        self.token = token if token is not None else os.environ.get("RETARGET_TOKEN")
        self.timeout = timeout

    def _request(self, method, path, body=None, headers=None, raw=False):
        req = urllib.request.Request(self.server + path, data=body, method=method)
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                data = r.read()
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            try:
                err = json.loads(text)["error"]
                raise RetargetError(e.code, err.get("code", ""), err.get("where", ""), err.get("message", ""))
            except (ValueError, KeyError, TypeError):
                raise RetargetError(e.code, "", "", text.strip()[:200])
        except urllib.error.URLError as e:
            raise RetargetError(0, "transport", self.server, str(e.reason))
        if raw == "bytes":
            return data
        return data.decode("utf-8") if raw else json.loads(data.decode("utf-8"))

    def health(self):
        return self._request("GET", "/v1/health")

    def submit_bvh(self, bvh_text, robot, profile=None, options=None, idempotency_key=None, name=None):
        return self._submit({"robot": robot, "clip": bvh_text}, idempotency_key, name, profile, options)

    def submit_trajectory(self, csv_text, source_robot, robot, profile=None, options=None, idempotency_key=None,
                          name=None):
        return self._submit({"robot": robot, "source_robot": source_robot, "trajectory": csv_text},
                            idempotency_key, name, profile, options)

    def submit_joints(self, data, fmt, robot, joint_names=None, units=None, up=None, profile=None, options=None,
                      idempotency_key=None, name=None):
        """Submits joint positions: `data` is the bytes of an .npz or .npy
        (sent as base64) or CSV text (str or bytes) of NAME_x,NAME_y,NAME_z
        columns; `fmt` is "npz", "npy" or "csv". An .npy needs `joint_names`
        (a list). `units` (m, cm, mm, in, cmu) and `up` (y, z) replace the
        detected ones; a frame rate goes in options={"fps": F}."""
        joints = {"format": fmt}
        if fmt == "csv":
            joints["text"] = data.decode("utf-8") if isinstance(data, bytes) else data
        else:
            joints["data_base64"] = base64.b64encode(data).decode("ascii")
        if joint_names is not None:
            joints["joint_names"] = list(joint_names)
        if units:
            joints["units"] = units
        if up:
            joints["up"] = up
        return self._submit({"robot": robot, "joints": joints}, idempotency_key, name, profile, options)

    def _submit(self, body, key, name, profile, options):
        """POSTs `body` with the optional name, profile and options appended
        (in that order, each only when set) as a new job."""
        if name:
            body["name"] = name
        if profile:
            body["profile"] = profile
        if options:
            body["options"] = options
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Idempotency-Key"] = key
        return self._request("POST", "/v1/jobs", json.dumps(body).encode("utf-8"), headers)

    def status(self, job_id):
        return self._request("GET", f"/v1/jobs/{int(job_id)}")

    def cancel(self, job_id):
        return self._request("DELETE", f"/v1/jobs/{int(job_id)}")

    def list(self, limit=50, before=None):
        q = f"?limit={int(limit)}" + (f"&before={int(before)}" if before else "")
        return self._request("GET", "/v1/jobs" + q)

    def result(self, job_id, trajectory=True):
        return self._request("GET", f"/v1/jobs/{int(job_id)}/result" + ("" if trajectory else "?trajectory=0"))

    def result_csv(self, job_id, header=True):
        return self._request("GET", f"/v1/jobs/{int(job_id)}/result.csv" + ("" if header else "?header=0"), raw=True)

    def result_npz(self, job_id, fps=None):
        """The trajectory as NPZ bytes (BeyondMimic/mjlab layout; np.load(io.BytesIO(b))),
        resampled to `fps` frames per second when given."""
        q = "" if fps is None else f"?fps={float(fps):g}"
        return self._request("GET", f"/v1/jobs/{int(job_id)}/result.npz" + q, raw="bytes")

    def wait(self, job_id, poll=0.2, timeout=None, progress=None):
        """Polls until the job leaves queued/running; returns its final status.
        Raises RetargetError when it failed or was cancelled."""
        start = time.monotonic()
        while True:
            st = self.status(job_id)
            if progress:
                progress(st)
            if st["state"] == "succeeded":
                return st
            if st["state"] in ("failed", "cancelled"):
                err = st.get("error") or {}
                raise RetargetError(200, err.get("code", st["state"]), err.get("where", ""),
                                    err.get("message", "job " + st["state"]))
            if timeout is not None and time.monotonic() - start > timeout:
                raise RetargetError(0, "timeout", f"job {job_id}", f"still {st['state']} after {timeout} s")
            time.sleep(poll)


def joints_format(path, text):
    """The joint-position format of a source file, as `retarget solve` tells
    them apart: "npz" or "npy" by extension, "csv" for a file whose first
    line is NAME_x,NAME_y,NAME_z column triples (after an optional frame or
    time column), None for any other source."""
    ext = os.path.splitext(path)[1].lower()
    if ext in (".npz", ".npy"):
        return ext[1:]
    if ext == ".bvh":
        return None
    cols = [c.strip() for c in text.lstrip("\ufeff").split("\n", 1)[0].strip().split(",")]
    if cols and cols[0] in ("frame", "time", "t"):
        cols = cols[1:]
    if not cols or len(cols) % 3:
        return None
    for i in range(0, len(cols), 3):
        stem = cols[i][:-2]
        if not stem or [cols[i], cols[i + 1], cols[i + 2]] != [stem + "_x", stem + "_y", stem + "_z"]:
            return None
    return "csv"


def main(argv=None):
    """The command line; returns the exit status (the `retarget-client` entry point)."""
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "retarget_client.py"
    ap = argparse.ArgumentParser(prog=prog, description="retargetd HTTP client")
    ap.add_argument("--server")
    ap.add_argument("--token")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("submit")
    s.add_argument("source")
    s.add_argument("--robot", required=True)
    s.add_argument("--profile")
    s.add_argument("--source-robot")
    s.add_argument("--idempotency-key", help="resubmitting with the same key returns the same job")
    s.add_argument("--joint-names", help="an .npy's joint names, one a line (default: NAME.txt beside it)")
    s.add_argument("--units", choices=["m", "cm", "mm", "in", "cmu"], help="length unit of joint positions")
    s.add_argument("--up", choices=["y", "z"], help="up axis of joint positions")
    s.add_argument("--fps", type=float, help="frame rate of joint positions or a trajectory")
    for name in ("status", "wait", "cancel"):
        sub.add_parser(name).add_argument("id", type=int)
    f = sub.add_parser("fetch")
    f.add_argument("id", type=int)
    f.add_argument("-o", "--out", default=".")
    f.add_argument("--format", choices=["csv", "npz"], default="csv")
    f.add_argument("--fps", type=float, default=None)
    sub.add_parser("list")
    sub.add_parser("health")
    a = ap.parse_args(argv)
    c = Client(a.server, a.token)
    try:
        if a.cmd == "submit":
            with open(a.source, "rb") as fh:
                raw = fh.read()
            text = raw.decode("utf-8", "replace")
            name = os.path.splitext(os.path.basename(a.source))[0]
            fmt = joints_format(a.source, text)
            options = {"fps": a.fps} if a.fps else None
            if fmt:
                names = None
                if fmt == "npy":
                    path = a.joint_names or os.path.splitext(a.source)[0] + ".txt"
                    with open(path, encoding="utf-8") as fh:
                        names = [n.strip() for n in fh if n.strip()]
                job = c.submit_joints(text if fmt == "csv" else raw, fmt, a.robot, names, a.units, a.up, a.profile,
                                      options, a.idempotency_key, name)
            elif a.source_robot:
                job = c.submit_trajectory(text, a.source_robot, a.robot, a.profile, options=options, name=name,
                                          idempotency_key=a.idempotency_key)
            else:
                job = c.submit_bvh(text, a.robot, a.profile, name=name, idempotency_key=a.idempotency_key)
            print(job["id"])
        elif a.cmd == "status":
            print(json.dumps(c.status(a.id)))
        elif a.cmd == "wait":
            def bar(st):
                if sys.stderr.isatty():
                    p = st.get("progress") or {}
                    sys.stderr.write(f"\rjob {a.id}: {st['state']}, LM iteration {p.get('lm_iteration', 0)}   ")
            print(json.dumps(c.wait(a.id, progress=bar)))
        elif a.cmd == "cancel":
            print(json.dumps(c.cancel(a.id)))
        elif a.cmd == "list":
            print(json.dumps(c.list()))
        elif a.cmd == "health":
            print(json.dumps(c.health()))
        elif a.cmd == "fetch":
            st = c.status(a.id)
            res = c.result(a.id, trajectory=False)
            os.makedirs(a.out, exist_ok=True)
            if a.format == "npz":
                with open(os.path.join(a.out, st["name"] + ".npz"), "wb") as fh:
                    fh.write(c.result_npz(a.id, a.fps))
            else:
                with open(os.path.join(a.out, st["name"] + ".csv"), "w", encoding="utf-8", newline="") as fh:
                    fh.write(c.result_csv(a.id))
            with open(os.path.join(a.out, st["name"] + ".report.json"), "w", encoding="utf-8") as fh:
                json.dump(res.get("report", res), fh, indent=1)
                fh.write("\n")
    except (RetargetError, OSError) as e:
        print(f"retarget_client: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
