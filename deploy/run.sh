#!/bin/sh
# run.sh BUILD -- `make run`: the most complete main job that exists.
# 1. inspect the bundled robot and the bundled clip;
# 2. retarget the clip offline onto the G1 (out/), and, when the shared data
#    folder is beside the checkout, round-trip the real G1 reference trajectory;
# 3. start the daemon when it has been built.
set -eu
b=${1:-build}
out=out
mkdir -p "$out"
echo "== retarget inspect g1"
"$b/retarget" inspect g1 | cut -c1-300; echo "..."
echo "== retarget inspect examples/jumping_jacks.bvh"
"$b/retarget" inspect examples/jumping_jacks.bvh | cut -c1-300; echo "..."
echo "== retarget solve examples/jumping_jacks.bvh --robot g1 -o $out"
if "$b/retarget" solve examples/jumping_jacks.bvh --robot g1 -o "$out"; then
    echo "wrote $out/jumping_jacks.csv and $out/jumping_jacks.report.json"
fi
ref=../shared/data/reference/g1/dance1_subject1.csv
if [ -f "$ref" ]; then
    echo "== retarget solve $ref --source-robot g1 --robot g1 -o $out"
    "$b/retarget" solve "$ref" --source-robot g1 --robot g1 -o "$out"
    python3 -c "import json;r=json.load(open('$out/dance1_subject1.report.json'));print('quality:',json.dumps(r['quality'].get('position_error_m')),'solver:',json.dumps(r['solver']))"
fi
if [ -x "$b/retargetd" ]; then
    echo "== retargetd on 127.0.0.1:8080 (Ctrl-C stops it)"
    mkdir -p var
    exec "$b/retargetd" --listen 127.0.0.1:8080 --db var/retargetd.db
fi
