#!/bin/sh
# test_render_worst.sh BUILD -- `retarget render --worst REPORT.json`: the
# frames a solve's report names as the worst (the deepest self-penetration,
# the fastest sliding foot) drawn and captioned with the pair, the depth and
# the speed; a JSON that is not a report and --worst with --frames refused.
# The solve runs with the collision term off, so that the robot's elbow
# goes through its torso and the report has a self-penetration to show
# (with the term on, the G1 on milad.bvh keeps every pair apart).
# Skips (77) without ../shared/data.
b=$1
data=${RT_SHARED_DATA:-../shared/data}
clip=$data/clips/edge/milad.bvh
[ -f "$clip" ] || { echo "test_render_worst: skipped: no $clip"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
pass=0
check() { # check NAME STATUS
    if [ "$2" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "test_render_worst: $1: failed"; fi
}
"$b/retarget" solve "$clip" --robot g1 --collide-weight 0 --threads 2 --quiet -o "$dir" 2>/dev/null
check "solve" $?
rep=$dir/milad.report.json
# The report's worst frames, read with the shell's tools: the numbers after the keys.
sf=$(tr -d ' \t\n' <"$rep" | sed -n 's/.*"self_penetration_worst_frame":\([0-9]*\).*/\1/p')
lf=$(tr -d ' \t\n' <"$rep" | sed -n 's/.*"foot_slide_worst_frame":\([0-9]*\).*/\1/p')
[ -n "$sf" ] && [ -n "$lf" ]
check "the report names both worst frames (self $sf, slide $lf)" $?
"$b/retarget" render "$clip" "$dir/milad.csv" --robot g1 --worst "$rep" -o "$dir/w.svg"
check "render --worst exit" $?
grep -q "frame $sf: [0-9.]* cm: [a-z_]* / [a-z_]*<" "$dir/w.svg"
check "self-penetration frame $sf drawn and captioned" $?
grep -q "frame $lf: foot slides [0-9.]* m/s<" "$dir/w.svg"
check "foot-slide frame $lf drawn and captioned" $?
[ "$(grep -c '<text[^>]*>frame ' "$dir/w.svg")" = 2 ]
check "two frames drawn" $?
echo '{"frames":3}' >"$dir/not.json"
msg=$("$b/retarget" render "$clip" "$dir/milad.csv" --robot g1 --worst "$dir/not.json" -o "$dir/x.svg" 2>&1)
[ $? != 0 ] && echo "$msg" | grep -q "not.json: not a retarget report"
check "a JSON that is not a report: refused, naming the file" $?
"$b/retarget" render "$clip" "$dir/milad.csv" --robot g1 --worst "$rep" --frames 1 -o "$dir/x.svg" 2>/dev/null
[ $? = 2 ]
check "--worst with --frames: usage (exit 2)" $?
echo "test_render_worst: $pass passed, $fail failed"
[ $fail = 0 ]
