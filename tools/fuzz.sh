#!/bin/sh
# Builds the libFuzzer targets (clang, ASan + UBSan, coverage on the library
# and the front end) in build-fuzz/ and runs each for FUZZ_SECONDS (default
# 60) as the `fuzz` test suite. New corpus entries accumulate in
# build-fuzz/fuzz/corpus/<target>/; crashes are written as
# build-fuzz/fuzz/crash-<target>-* (libFuzzer's -artifact_prefix). Long
# campaigns: see docs/reliability.md.
#
#   tools/fuzz.sh                 every target, 60 s each
#   FUZZ_SECONDS=3600 tools/fuzz.sh fuzz_asm    one target for an hour
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD="$ROOT/build-fuzz"
SECONDS_EACH="${FUZZ_SECONDS:-60}"

"$ROOT/tools/install-deps.sh" clang  # and libFuzzer, its compiler-rt
if [ ! -f "$BUILD/build.ninja" ]; then
    CC=clang CXX=clang++ meson setup "$BUILD" "$ROOT" -Dfuzz=true \
        -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args=-fsanitize=fuzzer-no-link -Dcpp_args=-fsanitize=fuzzer-no-link
fi
meson configure "$BUILD" -Dfuzz_seconds="$SECONDS_EACH"
ninja -C "$BUILD" fuzz/fuzz_asm fuzz/fuzz_binary fuzz/fuzz_config fuzz/fuzz_sweep fuzz/fuzz_graph fuzz/fuzz_npy fuzz/fuzz_din fuzz/fuzz_exec

export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
meson test -C "$BUILD" --no-rebuild --suite fuzz --print-errorlogs "$@"
