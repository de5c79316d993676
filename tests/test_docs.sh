#!/bin/sh
# test_docs.sh BUILD -- docs/api.md's table of job options is the option
# table's (`retarget options` prints it from retarget/options.c), so the
# documented ranges and defaults are the ones the CLI, the daemon and the
# solver check; and every verb's --help is generated (exit 0, lists --help).
b=$1
want=$("$b/retarget" options) || { echo "test_docs: retarget options failed"; exit 1; }
got=$(sed -n '/^<!-- options: generated/,/^<!-- options end -->/p' docs/api.md | sed '1d;$d')
if [ "$want" != "$got" ]; then
    echo "test_docs: docs/api.md's options table differs from 'retarget options':"
    printf '%s\n' "$want" >"$b/tests/docs_want.md"
    printf '%s\n' "$got" | diff - "$b/tests/docs_want.md"
    exit 1
fi
fail=0
for v in solve render batch submit status wait fetch cancel list inspect; do
    "$b/retarget" "$v" --help >"$b/tests/help_$v.txt" 2>&1 || { echo "test_docs: retarget $v --help failed"; fail=1; }
    grep -q "^usage: retarget $v" "$b/tests/help_$v.txt" || { echo "test_docs: retarget $v --help has no usage line"; fail=1; }
done
"$b/retargetd" --help | grep -q -- "--batch-frames N" || { echo "test_docs: retargetd --help lacks --batch-frames"; fail=1; }
[ $fail -eq 0 ] && echo "test_docs: options table and every --help generated"
exit $fail
