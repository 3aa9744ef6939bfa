#!/bin/sh
# The library alone under ThreadSanitizer (-Db_sanitize=thread, as
# tools/build-lib.sh builds it: no CLI, no SystemC, no Python), then the
# tests that run kernels through the C API: embed_threads runs kernels in
# three threads at once (docs/reliability.md, "Threads"). A data race is a
# TSan report, which fails its test (halt_on_error). About two minutes on
# two cores. BUILD picks the folder (default ./build-tsan).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-tsan}
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "$ROOT" -Db_sanitize=thread -Dtools=false -Dsystemc=disabled -Dpython=disabled >/dev/null
fi
ninja -C "$BUILD" tests/embed_threads tests/embed_run
# Without address-space randomisation (setarch -R), where the kernel's
# mmap randomisation is wider than TSan's shadow layout allows.
norand=""
if command -v setarch >/dev/null 2>&1 && setarch "$(uname -m)" -R true 2>/dev/null; then
    norand="setarch $(uname -m) -R"
fi
TSAN_OPTIONS="halt_on_error=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
    $norand meson test -C "$BUILD" --no-rebuild --print-errorlogs --timeout-multiplier 4 embed_threads embed_run
