#!/bin/sh
# test_inspect_roles.sh BUILD -- `retarget inspect ROBOT --roles`: the roles
# JSON of Booster T1 (URDF and MJCF) and H1 (no hands), the refusal of a
# robot arm (exit 1 after the JSON, naming the missing roles), and a clip
# refused. Skips (77) without ../shared/data.
b=$1
data=${RT_SHARED_DATA:-../shared/data}
[ -d "$data/robots" ] || { echo "test_inspect_roles: skipped: no $data"; exit 77; }
fail=0
pass=0
check() { # check NAME COND
    if [ "$2" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "test_inspect_roles: $1: failed"; fi
}
t1='{"robot":"T1","roles":{"pelvis":"Waist","torso":"Trunk","head":"H1","left_hip":"Hip_Roll_Left","left_knee":"Shank_Left","left_foot":"left_foot_link","left_shoulder":"AL2","left_elbow":"AL3","left_hand":"left_hand_link","right_hip":"Hip_Roll_Right","right_knee":"Shank_Right","right_foot":"right_foot_link","right_shoulder":"AR2","right_elbow":"AR3","right_hand":"right_hand_link"},"missing":[]}'
for f in T1_serial.urdf T1_serial.xml; do
    got=$("$b/retarget" inspect "$data/robots/$f" --roles); rc=$?
    check "$f exit" "$rc"
    [ "$got" = "$t1" ]; check "$f roles" $?
done
got=$("$b/retarget" inspect --roles "$data/robots/h1.urdf"); rc=$?
check "h1 exit" "$rc"
case $got in *'"left_elbow":"left_elbow_link"'*'"missing":["head","left_hand","right_hand"]}') r=0 ;; *) r=1 ;; esac
check "h1 roles" $r
got=$("$b/retarget" inspect "$data/robots/panda.urdf" --roles 2>"$b/tests/inspect_roles.err"); rc=$?
[ "$rc" = 1 ]; check "panda exit" $?
case $got in *'"missing":["pelvis",'*) r=0 ;; *) r=1 ;; esac
check "panda json" $r
grep -q "cannot map robot 'panda': no pelvis, no left leg, no right leg, no torso, no left arm, no right arm" "$b/tests/inspect_roles.err"
check "panda message" $?
"$b/retarget" inspect "$data/clips/run_forward.bvh" --roles >/dev/null 2>&1
[ $? != 0 ]; check "clip refused" $?
echo "test_inspect_roles: $pass passed, $fail failed"
[ "$fail" = 0 ]
