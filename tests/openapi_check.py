"""openapi_check.py URL ADMIN_TOKEN USER_TOKEN DATA -- checks the daemon at
URL against its own OpenAPI description (GET /v1/openapi.json): the
description is OpenAPI 3.1 whose every $ref resolves; then real requests
(every path and method of the description, success and error replies) each
get a status the description lists for that operation, with its content
type, and a JSON body that validates against the listed schema; every
operation of the description is exercised. A small JSON Schema validator
(the keywords the description uses) does the checking. Standard library
only. Prints one line per check, then "openapi: N passed, N failed"."""
import json
import sys
import time
import urllib.error
import urllib.request

url, admin, user, data = sys.argv[1:5]
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + what)
    else:
        failed += 1
        print("FAIL " + what + (": " + detail if detail else ""))
    return ok


def request(method, path, token=None, body=None, headers=None):
    h = dict(headers or {})
    if token:
        h["Authorization"] = "Bearer " + token
    if isinstance(body, str):
        body = body.encode()
    req = urllib.request.Request(url + path, data=body, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


status, ctype, raw = request("GET", "/v1/openapi.json")
check(status == 200 and ctype == "application/json", "GET /v1/openapi.json is JSON", f"{status} {ctype}")
spec = json.loads(raw)
check(spec.get("openapi", "").startswith("3.1."), "it is OpenAPI 3.1", str(spec.get("openapi")))
check(spec.get("servers") == [{"url": "/v1"}] and "paths" in spec and "info" in spec, "servers /v1, info and paths")


def resolve(ref):
    assert ref.startswith("#/"), ref
    node = spec
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def refs(node, out):
    if isinstance(node, dict):
        if "$ref" in node:
            out.append(node["$ref"])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)
    return out


bad = []
for r in refs(spec, []):
    try:
        resolve(r)
    except (KeyError, AssertionError):
        bad.append(r)
check(not bad, "every $ref resolves", ", ".join(bad))

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def is_type(v, t):
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool) or (isinstance(v, float) and v.is_integer())
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, TYPES[t])


def validate(v, s, where="$"):
    """The first error of value v against schema s, or None."""
    if "$ref" in s:
        return validate(v, resolve(s["$ref"]), where)
    if "oneOf" in s:
        ok = [x for x in s["oneOf"] if validate(v, x, where) is None]
        if len(ok) != 1:
            return f"{where}: matches {len(ok)} of oneOf"
    t = s.get("type")
    if t is not None:
        ts = t if isinstance(t, list) else [t]
        if not any(is_type(v, x) for x in ts):
            return f"{where}: {json.dumps(v)[:60]} is not {t}"
    if "enum" in s and v not in s["enum"]:
        return f"{where}: {v!r} not in {s['enum']}"
    if is_type(v, "number"):
        if "minimum" in s and v < s["minimum"]:
            return f"{where}: {v} < {s['minimum']}"
        if "maximum" in s and v > s["maximum"]:
            return f"{where}: {v} > {s['maximum']}"
    if isinstance(v, dict):
        for k in s.get("required", []):
            if k not in v:
                return f"{where}: missing {k}"
        props = s.get("properties", {})
        for k, x in v.items():
            if k in props:
                e = validate(x, props[k], f"{where}.{k}")
                if e:
                    return e
            elif s.get("additionalProperties") is False:
                return f"{where}: unexpected field {k}"
    if isinstance(v, list):
        if "minItems" in s and len(v) < s["minItems"] or "maxItems" in s and len(v) > s["maxItems"]:
            return f"{where}: {len(v)} items"
        if "items" in s:
            for i, x in enumerate(v):
                e = validate(x, s["items"], f"{where}[{i}]")
                if e:
                    return e
    return None


def operation(path):
    """The description's path template that matches path (no query)."""
    parts = path.split("?")[0][len("/v1"):].split("/")
    for tmpl in spec["paths"]:
        tp = tmpl.split("/")
        if len(tp) == len(parts) and all(a == b or (a.startswith("{") and b) for a, b in zip(tp, parts)):
            return tmpl
    return None


seen = set()


def call(method, path, token=None, body=None, want=None, headers=None):
    """One real request, checked against the description; returns (status, JSON body or None)."""
    status, ctype, raw = request(method, path, token, body, headers)
    tmpl = operation(path)
    op = spec["paths"].get(tmpl, {}).get(method.lower()) if tmpl else None
    what = f"{method} {path} -> {status}"
    if op is None and tmpl and status == 405:
        # A method the path does not take: an error body, and no such operation.
        e = validate(json.loads(raw), {"$ref": "#/components/schemas/Error"})
        check(e is None, what + ": not described, and the error body validates", e or "")
        return status, None
    if not check(op is not None, what + ": described", "no such operation in openapi.json"):
        return status, None
    seen.add((tmpl, method.lower()))
    if want is not None and not check(status == want, what + f": the status wanted ({want})"):
        return status, None
    resp = op["responses"].get(str(status))
    if not check(resp is not None, what + ": the status is listed", ", ".join(op["responses"])):
        return status, None
    content = resp.get("content", {})
    base = ctype.split(";")[0].strip()
    if not check(base in content, what + f": content type {base} is listed", ", ".join(content)):
        return status, None
    if base != "application/json":
        return status, raw
    body_json = json.loads(raw)
    err = validate(body_json, content[base]["schema"])
    check(err is None, what + ": the body validates", err or "")
    return status, body_json


with open(f"{data}/clips/run_forward.bvh", encoding="utf-8") as f:
    clip = f.read()
with open(f"{data}/robots/h1.urdf", encoding="utf-8") as f:
    h1 = f.read()

call("GET", "/v1/health", want=200)
call("GET", "/v1/metrics", want=401)
call("GET", "/v1/metrics", user, want=200)
call("GET", "/v1/openapi.json", want=200)
call("GET", "/v1/token", user, want=200)
call("GET", "/v1/token", want=401)
call("GET", "/v1/robots", user, want=200)
call("GET", "/v1/robots/g1", user, want=200)
call("GET", "/v1/robots/nosuch", user, want=404)
call("GET", "/v1/robots/a.urdf", user, want=400)
call("GET", "/v1/robots/g1/urdf", user, want=200)
call("GET", "/v1/robots/nosuch/urdf", user, want=404)
call("PUT", "/v1/robots/lab_h1", admin, h1, want=201)
call("PUT", "/v1/robots/lab_h1", user, h1, want=403)
call("PUT", "/v1/robots/g1", admin, h1, want=409)
call("PUT", "/v1/robots/bad", admin, "<robot", want=400)
call("POST", "/v1/robots", user, "", want=405)
call("GET", "/v1/profiles", user, want=200)
status, prof = call("GET", "/v1/profiles/cmu_g1", user, want=200)
call("GET", "/v1/profiles/nosuch", user, want=404)
call("PUT", "/v1/profiles/studio_g1", admin, json.dumps(prof), want=201)
call("PUT", "/v1/profiles/studio_bad", admin, '{"name":', want=400)
call("PUT", "/v1/profiles/cmu_g1", admin, json.dumps(prof), want=409)
status, job = call("POST", "/v1/jobs", user, json.dumps({"robot": "g1", "name": "rf", "clip": clip}), want=201,
                   headers={"Idempotency-Key": "oa-1"})
jid = job["id"] if job else 0
call("POST", "/v1/jobs", user, json.dumps({"robot": "g1", "name": "rf", "clip": clip}), want=200,
     headers={"Idempotency-Key": "oa-1"})
call("POST", "/v1/jobs?robot=g1&name=raw", user, clip, want=201)
call("POST", "/v1/jobs", user, '{"robot":"g1",', want=400)


def rest_csv(bvh, frames=3):
    """The rest pose of a BVH clip's joints (their offsets summed) as joint
    positions: a NAME_x,NAME_y,NAME_z CSV of `frames` equal rows."""
    names, pos, stack, pending = [], [], [], None
    for line in bvh.split("MOTION")[0].splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] in ("ROOT", "JOINT"):
            pending = w[1]
        elif w[0] == "End":
            pending = ""
        elif w[0] == "{":
            stack.append([pending, None])
        elif w[0] == "}":
            stack.pop()
        elif w[0] == "OFFSET":
            base = stack[-2][1] if len(stack) > 1 else [0.0, 0.0, 0.0]
            stack[-1][1] = [base[i] + float(w[1 + i]) for i in range(3)]
            if stack[-1][0]:
                names.append(stack[-1][0])
                pos.append(stack[-1][1])
    head = ",".join(f"{n}_x,{n}_y,{n}_z" for n in names)
    row = ",".join(f"{x:.6f}" for p in pos for x in p)
    return head + "\n" + "\n".join([row] * frames) + "\n"


joints_csv = rest_csv(clip)
status, jj = call("POST", "/v1/jobs", user, json.dumps({"robot": "g1", "name": "jp", "joints": {
    "format": "csv", "text": joints_csv}}), want=201)
check(bool(jj) and jj.get("source") == "joints", "a joint-position job says source joints", str(jj)[:80])
call("POST", "/v1/jobs?robot=g1&name=jp_raw&fps=30", user, joints_csv, want=201, headers={"Content-Type": "text/csv"})
call("POST", "/v1/jobs", user, json.dumps({"robot": "g1", "joints": {"format": "npz", "data_base64": "UEs~"}}),
     want=400)
call("POST", "/v1/jobs?robot=g1&joint_names=a", user, joints_csv, want=400, headers={"Content-Type": "text/csv"})
if jj:
    call("GET", f"/v1/jobs/{jj['id']}/source", user, want=200)
call("POST", "/v1/jobs", user, json.dumps({"robot": "g2", "clip": clip}), want=404)
call("POST", "/v1/jobs", user, json.dumps({"robot": "g1", "clip": clip}), want=409, headers={"Idempotency-Key": "oa-1"})
call("GET", f"/v1/jobs/{jid}/result", user, want=None)  # queued or done: 409 or 200, both listed
for _ in range(600):
    status, j = call("GET", f"/v1/jobs/{jid}", user, want=200)
    if not j or j["state"] not in ("queued", "running"):
        break
    time.sleep(0.05)
check(j is not None and j["state"] == "succeeded", f"job {jid} succeeded")
call("GET", "/v1/jobs", user, want=200)
call("GET", "/v1/jobs?limit=1", user, want=200)
call("GET", "/v1/jobs?limit=0", user, want=400)
call("GET", f"/v1/jobs/{jid}/result", user, want=200)
call("GET", f"/v1/jobs/{jid}/result?trajectory=0&series=1", user, want=200)
call("GET", f"/v1/jobs/{jid}/result?series=2", user, want=400)
call("GET", f"/v1/jobs/{jid}/result.csv", user, want=200)
call("GET", f"/v1/jobs/{jid}/result.csv?header=x", user, want=400)
status, npz = call("GET", f"/v1/jobs/{jid}/result.npz", user, want=200)
check(npz is not None and npz[:4] == b"PK\x03\x04", "result.npz is a zip")
call("GET", f"/v1/jobs/{jid}/result.npz?fps=50", user, want=200)
call("GET", f"/v1/jobs/{jid}/result.npz?fps=-1", user, want=400)
call("GET", "/v1/jobs/99999/result.npz", user, want=404)
call("GET", f"/v1/jobs/{jid}/source", user, want=200)
call("GET", f"/v1/jobs/{jid}/source", admin, want=404)
call("GET", "/v1/jobs/99999", user, want=404)
call("DELETE", f"/v1/jobs/{jid}", user, want=409)
call("GET", "/v1/jobs/99999/result", user, want=404)
call("GET", "/v1/jobs/99999/result.csv", user, want=404)
# A job to cancel while it waits (a long clip behind the other).
status, long_job = call("POST", "/v1/jobs?robot=g1&name=long", user, open(f"{data}/clips/01_03.bvh").read(), want=201)
if long_job:
    status, c = call("DELETE", f"/v1/jobs/{long_job['id']}", user, want=200)
    check(c is not None and c["state"] == "cancelled", "the cancelled job says so")
    call("GET", f"/v1/jobs/{long_job['id']}/result", user, want=409)
    call("GET", f"/v1/jobs/{long_job['id']}/result.csv", user, want=409)
    call("GET", f"/v1/jobs/{long_job['id']}/result.npz", user, want=409)
    call("DELETE", "/v1/jobs/99999", user, want=404)

missing = [f"{m.upper()} {p}" for p, item in spec["paths"].items() for m in item if m != "parameters"
           and (p, m) not in seen]
check(not missing, f"every operation of the description was exercised ({len(seen)})", ", ".join(missing))
print(f"openapi: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
