#!/bin/sh
# Run every test binary given, then print one summary line over all of them.
# Each binary is a cmocka runner; its own summary lines are printed too.
pass=0
fail=0
failed=""
for t in "$@"; do
    echo "== $t"
    # A test that hangs (a lost wake-up, say) fails instead of stalling
    # the suite: every binary gets MMP_TEST_TIMEOUT seconds (1200 unless
    # set), where coreutils' timeout is there.
    if command -v timeout >/dev/null 2>&1; then
        out=$(timeout "${MMP_TEST_TIMEOUT:-1200}" "$t" 2>&1)
    else
        out=$("$t" 2>&1)
    fi
    rc=$?
    echo "$out"
    [ $rc -eq 124 ] && echo "$(basename "$t"): timed out after ${MMP_TEST_TIMEOUT:-1200} s"
    p=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -1)
    f=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -1)
    pass=$((pass + ${p:-0}))
    fail=$((fail + ${f:-0}))
    if [ $rc -ne 0 ]; then
        [ -z "$f" ] && fail=$((fail + 1))
        failed="$failed $(basename "$t")"
    fi
done
echo "[==========] all test programs: $pass passed, $fail failed"
echo "$pass passed, $fail failed"
if [ -n "$failed" ]; then
    echo "failing:$failed"
    exit 1
fi
