#!/bin/sh
# test_layers.sh BUILD -- the include graph keeps the floors of DESIGN.md
# "Layout". It reads every `#include "..."` line of the project's sources
# (tests/, bench/ and build/ are not looked at) and draws the graph of
# modules: a module is a file stem within its folder, its .c/.cu and its
# .h/.cuh together (server/reply.c + server/reply.h is server/reply). It
# fails, naming the edge or the cycle, when
#   (a) modules include each other in a circle, in any folder;
#   (b) a folder includes a folder that is not below it, the floors being
#       base < kinematics, solver, storage < retarget < server, clients
#       (solver/cpu/ and solver/cuda/ are part of solver/; folders on one
#       floor do not include each other);
#   (c) base/ includes any other project folder.
# An include that names no file of those folders is a failure too: the
# graph would miss an edge. BUILD is unused; the test reads only the
# sources. With FOLDER... after BUILD it also prints those folders'
# modules, each with the modules it includes:
#   sh tests/test_layers.sh build server
cd "$(dirname "$0")/.." || exit 1
[ -x /usr/bin/python3 ] || { echo "test_layers: skipped: no /usr/bin/python3"; exit 77; }
[ $# -gt 0 ] && shift
exec /usr/bin/python3 - "$@" <<'EOF'
import os, re, sys

FLOOR = {"base": 0, "kinematics": 1, "solver": 1, "storage": 1,
         "retarget": 2, "server": 3, "clients": 3}
EXTS = (".c", ".h", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

def module(path):
    """'solver/cuda/reduce.cuh' -> 'solver/cuda/reduce'."""
    return os.path.splitext(path)[0]

def folder(path):
    return path.split("/", 1)[0]

files = []
for top in sorted(FLOOR):
    for d, subdirs, names in os.walk(top):
        subdirs.sort()
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith(EXTS)]
known = set(files)

edges = {}      # (from module, to module) -> first "file:line" that makes it
problems = []
for f in files:
    with open(f, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
            where = "%s:%d" % (f, n)
            if target not in known:
                problems.append('%s: #include "%s" names no file in %s' %
                                (where, m.group(1), ", ".join(t + "/" for t in sorted(FLOOR))))
                continue
            a, b = module(f), module(target)
            if a != b:
                edges.setdefault((a, b), where)

# (b), (c): every edge between folders goes down a floor.
for (a, b), where in sorted(edges.items()):
    fa, fb = folder(a), folder(b)
    if fa == fb:
        continue
    if fa == "base":
        problems.append("%s: base/ includes %s/ (%s -> %s): base/ includes no other project folder"
                        % (where, fb, a, b))
    elif FLOOR[fb] >= FLOOR[fa]:
        problems.append("%s: %s/ includes %s/ (%s -> %s), which is not below it"
                        % (where, fa, fb, a, b))

# (a): strongly connected components (Tarjan's algorithm, iterative); each
# one of more than one module holds a cycle, printed as one closed path.
succ = {}
for a, b in edges:
    succ.setdefault(a, []).append(b)
    succ.setdefault(b, [])
for a in succ:
    succ[a].sort()
index, low, on_stack, stack, sccs = {}, {}, set(), [], []
for root in sorted(succ):
    if root in index:
        continue
    work = [(root, 0)]
    while work:
        v, i = work.pop()
        if i == 0:
            index[v] = low[v] = len(index)
            stack.append(v)
            on_stack.add(v)
        if i < len(succ[v]):
            work.append((v, i + 1))
            w = succ[v][i]
            if w not in index:
                work.append((w, 0))
            elif w in on_stack:
                low[v] = min(low[v], index[w])
            continue
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))
        if work:
            u = work[-1][0]
            low[u] = min(low[u], low[v])

def cycle_in(comp):
    """A shortest closed path through comp's first module, inside comp."""
    inside, start = set(comp), comp[0]
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in succ[v]:
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path[::-1] + [start]
                if w in inside and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp + [start]

for comp in sorted(sccs):
    path = cycle_in(comp)
    steps = ", ".join("%s -> %s (%s)" % (a, b, edges[(a, b)]) for a, b in zip(path, path[1:]))
    extra = "" if len(comp) == len(path) - 1 else " (the circle holds %s)" % ", ".join(comp)
    problems.append("cycle: %s%s: %s" % (" -> ".join(path), extra, steps))

mods = sorted(set(module(f) for f in files))
print("test_layers: %d files, %d modules, %d include edges between modules"
      % (len(files), len(mods), len(edges)))
for m in mods:
    if folder(m) in sys.argv[1:]:
        print("  %s -> %s" % (m, ", ".join(sorted(succ.get(m, []))) or "-"))
for p in problems:
    print("test_layers: " + p)
if problems:
    print("test_layers: %d problem(s)" % len(problems))
    sys.exit(1)
print("test_layers: no cycle; every include goes down a floor "
      "(base < kinematics, solver, storage < retarget < server, clients)")
EOF
