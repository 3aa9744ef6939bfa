#!/bin/sh
# README command 2: build and run the whole default test suite, then print
# one line "N passed, N failed" counting every GoogleTest case and every
# plain Meson test.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/tools/build.sh"

status=0
meson test -C "$ROOT/build" --print-errorlogs "$@" || status=$?
/usr/bin/python3 "$ROOT/tools/test_summary.py" "$ROOT/build" || status=1
exit $status
