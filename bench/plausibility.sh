#!/bin/sh
# plausibility.sh BUILD [ROBOTS...] -- `make bench-plausibility`: every human
# clip of DATA/clips and DATA/clips/edge retargeted with the defaults onto
# each robot, one table row per clip and robot from the report's "quality",
# then a summary of the clips that miss a bound of issue 13.
#  ROBOTS: any of g1 h1 t1 t1mjcf (default all four); t1 is
#  DATA/robots/T1_serial.urdf, t1mjcf DATA/robots/T1_serial.xml.
#  Skipped: the edge clips that are not human skeletons
#  (full_precision_frame_time, rotation_first_root, sinusoidal).
#  Row: self-penetration (cm), ground-penetration frames, foot-slide speed
#  in contact p95/max (m/s), contacts kept, joint-limit violations, the
#  failed ProtoMotions filters, mean position error (cm), LM iterations and
#  the solver's seconds (the report's solver.seconds).
#  Bounds: self- and ground penetration <= 1 cm, slide p95 <= 0.05 m/s,
#  contacts kept >= 90%, no limit violation, no filter failed, mean
#  position error < 3 cm unless the report warns that the robot cannot
#  follow ("warn" in the row's last column).
# Environment: RT_SHARED_DATA (default ../shared/data), PLAUS_THREADS (2),
# PLAUS_RETARGET (the retarget program, default BUILD/retarget),
# PLAUS_ARGS (more `retarget solve` options, e.g. --collide-weight 40),
# PLAUS_DIR (the work folder, kept; default a temporary folder, removed).
# Exit status 0 when every solve ran (whether or not a bound is missed), 1
# when a solve failed, 2 for a bad command line or missing programs.
set -u
b=${1:-build}
rt=${PLAUS_RETARGET:-$b/retarget}
[ $# -gt 0 ] && shift
data=${RT_SHARED_DATA:-../shared/data}
threads=${PLAUS_THREADS:-2}
args=${PLAUS_ARGS:-}
py=/usr/bin/python3

die() { echo "plausibility: $*" >&2; exit 2; }
[ -x "$rt" ] || die "$rt: not built (make all)"
[ -x "$py" ] || die "$py: not found"
[ -d "$data/clips" ] || die "$data/clips: no such folder (set RT_SHARED_DATA)"
robots=${*:-g1 h1 t1 t1mjcf}
for r in $robots; do
    case $r in g1 | h1 | t1 | t1mjcf) ;; *) die "robot '$r': expected g1, h1, t1 or t1mjcf" ;; esac
done

if [ -n "${PLAUS_DIR:-}" ]; then
    dir=$PLAUS_DIR
    mkdir -p "$dir" || die "$dir: cannot create"
    keep=1
else
    dir=$(mktemp -d "${TMPDIR:-/tmp}/plaus.XXXXXX") || die "cannot make a temporary folder"
    keep=0
fi

clips=
for f in "$data"/clips/*.bvh "$data"/clips/edge/*.bvh; do
    [ -f "$f" ] || continue
    case $(basename "$f" .bvh) in full_precision_frame_time | rotation_first_root | sinusoidal) continue ;; esac
    clips="$clips $f"
done

failed=0
for r in $robots; do
    case $r in
    g1 | h1) spec=$r ;;
    t1) spec=$data/robots/T1_serial.urdf ;;
    t1mjcf) spec=$data/robots/T1_serial.xml ;;
    esac
    mkdir -p "$dir/$r"
    for f in $clips; do
        name=$(basename "$f" .bvh)
        # shellcheck disable=SC2086
        if ! "$rt" solve "$f" --robot "$spec" --threads "$threads" --quiet $args \
            -o "$dir/$r/" >"$dir/$r/$name.log" 2>&1; then
            echo "plausibility: $r $name: solve failed: $(tail -1 "$dir/$r/$name.log")" >&2
            failed=1
        fi
    done
done

echo "## Plausibility ($(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
echo
echo "command: \`sh bench/plausibility.sh $b $robots\`${args:+ with PLAUS_ARGS='$args'}, --threads $threads"
echo
"$py" - "$dir" $robots <<'EOF'
import json, os, sys

d, robots = sys.argv[1], sys.argv[2:]
B_PEN, B_SLIDE, B_KEPT, B_POS = 0.01, 0.05, 0.90, 0.03

def num(x, *keys):
    for k in keys:
        x = x.get(k) if isinstance(x, dict) else None
    return x if isinstance(x, (int, float)) else None

print("| robot | clip | self-pen cm | ground-pen frames | slide p95/max m/s | contacts kept | limit viol. "
      "| filters failed | mean pos cm | LM | solve s |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
misses = []
for r in robots:
    rd = os.path.join(d, r)
    for fn in sorted(os.listdir(rd)):
        if not fn.endswith(".report.json"):
            continue
        clip = fn[: -len(".report.json")]
        with open(os.path.join(rd, fn)) as fh:
            rep = json.load(fh)
        q = rep.get("quality", {})
        s = rep.get("solver", {})
        pen = num(q, "self_penetration_m") or 0.0
        gpf = num(q, "ground_penetration_frames") or 0
        p95 = num(q, "foot_slide_speed_m_s", "p95") or 0.0
        smax = num(q, "foot_slide_speed_m_s", "max") or 0.0
        kept = num(q, "contacts_kept")
        viol = num(q, "joint_limit_violations") or 0
        filt = q.get("filters") or []
        pos = num(q, "position_error_m", "mean") or 0.0
        warns = rep.get("warnings") or []
        cannot = any(w.startswith("mean position error") for w in warns)
        print("| %s | %s | %.2f | %d | %.3f/%.3f | %s | %d | %s | %.2f%s | %s | %.2f |" % (
            r, clip, 100 * pen, gpf, p95, smax, "-" if kept is None else "%.0f%%" % (100 * kept), viol,
            ", ".join(filt) or "-", 100 * pos, " warn" if cannot else "",
            s.get("lm_iterations", "?"), s.get("seconds", 0.0)))
        m = []
        if pen > B_PEN: m.append("self-pen %.2f cm" % (100 * pen))
        gp = num(q, "ground_penetration_m") or 0.0
        if gp > B_PEN: m.append("ground-pen %.2f cm" % (100 * gp))
        if p95 > B_SLIDE: m.append("slide p95 %.3f" % p95)
        if kept is not None and kept < B_KEPT: m.append("kept %.0f%%" % (100 * kept))
        if viol: m.append("%d limit violations" % viol)
        if filt: m.append("filters: " + ", ".join(filt))
        if pos >= B_POS and not cannot: m.append("pos %.2f cm without a warning" % (100 * pos))
        if m: misses.append("- %s %s: %s" % (r, clip, "; ".join(m)))
print()
print("Missed bounds (self/ground pen <= 1 cm, slide p95 <= 0.05 m/s, kept >= 90%%, no violation, "
      "no filter, pos < 3 cm or warned): %d" % len(misses))
for m in misses:
    print(m)
EOF
rc=$?
[ $rc -ne 0 ] && failed=1
[ $keep -eq 0 ] && [ $failed -eq 0 ] && rm -rf "$dir"
[ $failed -eq 0 ] || exit 1
exit 0
