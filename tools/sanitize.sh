#!/bin/sh
# Builds the whole project with AddressSanitizer + UndefinedBehaviorSanitizer
# in build-asan/ and runs the default test suite there, then prints one line
# "N passed, N failed" (tools/test_summary.py). Sanitizer reports of every
# process (tests and the npusim runs they spawn) also land in
# build-asan/sanitizer-logs/, and any such report fails the script.
#
# Run time on 2 cores: about 7 minutes of tests once built (the kernel
# library's 395 s; the build itself, about 30 minutes, is the long part).
# One peak-RSS test is always skipped (below); NPUSIM_SANITIZE_QUICK=1 also
# skips the exhaustive accuracy sweeps. Extra arguments go to `meson test`
# (e.g. a test name).
# See docs/reliability.md.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD="$ROOT/build-asan"

if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "$ROOT" -Db_sanitize=address,undefined -Db_lundef=false
fi
ninja -C "$BUILD"

LOGS="$BUILD/sanitizer-logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"

# SystemC's library is not instrumented and keeps its simulation context
# (and each thread's coroutine stack) until exit by design: suppress leaks
# whose allocation stack is inside libsystemc only, never ours.
cat > "$BUILD/lsan.supp" <<'SUPP'
leak:libsystemc
SUPP
# SystemC tells ASan about its coroutine switches except two, which
# sim/systemc covers: a returning SC_THREAD's last switch (our threads never
# return, clock.h end_thread) and the size of sc_start's caller's stack (the
# engine restores it after sc_start). Without them LSan's exit scan crashed
# ("Tracer caught signal 11") and a throw after sc_start made ASan report
# inside its own sigaltstack interceptor.

# A distinct exit code, so a test that expects `npusim` to exit 1 (a guest
# trap) fails when the child died of a sanitizer report instead.
# detect_stack_use_after_return stays off: SystemC 2.3.4 gives ASan no fake
# stack with its coroutine switches, which that mode needs.
export ASAN_OPTIONS="exitcode=86:abort_on_error=0:halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=0:strict_string_checks=1:check_initialization_order=1:log_path=$LOGS/asan"
export UBSAN_OPTIONS="exitcode=86:halt_on_error=1:print_stacktrace=1:log_path=$LOGS/ubsan"
export LSAN_OPTIONS="suppressions=$BUILD/lsan.supp:print_suppressions=0"

# Always skipped: Vcd.TracesStreamWithoutHoldingTheRun measures peak RSS,
# which ASan's shadow memory and free quarantine inflate by hundreds of MB.
# NPUSIM_SANITIZE_QUICK=1 also skips the exhaustive accuracy sweeps (every
# fp16 input, a million fp32 inputs per kernel): about 60 s of the run here.
NPUSIM_SANITIZE_NEVER='Vcd.TracesStreamWithoutHoldingTheRun'
NPUSIM_SANITIZE_SLOW='*EveryHalfInput*:*AMillionInputs*:*EverySignificand*'
if [ "${NPUSIM_SANITIZE_QUICK:-0}" = 1 ]; then
    export GTEST_FILTER="-$NPUSIM_SANITIZE_NEVER:$NPUSIM_SANITIZE_SLOW"
    echo "sanitize.sh: skipping $NPUSIM_SANITIZE_SLOW (NPUSIM_SANITIZE_QUICK=1)"
else
    export GTEST_FILTER="-$NPUSIM_SANITIZE_NEVER"
fi
echo "sanitize.sh: skipping $NPUSIM_SANITIZE_NEVER (peak-RSS test, meaningless under ASan)"

status=0
meson test -C "$BUILD" --print-errorlogs --timeout-multiplier 4 "$@" || status=$?

# Reports fail the run.
reports=$(grep -l "ERROR: \|runtime error" "$LOGS"/* 2>/dev/null || true)
if [ -n "$reports" ]; then
    echo "sanitize.sh: sanitizer reports in $LOGS:"
    for f in $reports; do
        grep -h -m1 "ERROR: \|runtime error" "$f" | sed "s|^|  $(basename "$f"): |"
    done
    status=1
fi
/usr/bin/python3 "$ROOT/tools/test_summary.py" "$BUILD" || status=1
exit $status
