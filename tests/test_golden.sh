#!/bin/sh
# test_golden.sh BUILD -- every output file of tests/golden.sh (the shared
# clips onto the G1 and the H1, the round trips, the daemon's results) has
# the bytes recorded in tests/golden/SUMS. A change that is meant to change
# results (a new residual, a new default) records new sums with
#   sh tests/golden.sh build /tmp/golden && cp /tmp/golden/SUMS tests/golden/SUMS
# and says why in its commit; any other change must leave them alone.
# Skips (77) without ../shared/data.
b=$1
data=${RT_SHARED_DATA:-../shared/data}
[ -d "$data/clips" ] || { echo "test_golden: skipped: no $data"; exit 77; }
out="$b/tests/golden"
sh tests/golden.sh "$b" "$out" || { echo "test_golden: golden.sh failed"; exit 1; }
if diff tests/golden/SUMS "$out/SUMS" >"$out.diff"; then
    echo "test_golden: $(wc -l <"$out/SUMS") output files identical"
    exit 0
fi
echo "test_golden: outputs differ from tests/golden/SUMS:"
cat "$out.diff"
exit 1
