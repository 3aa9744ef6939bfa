#!/bin/sh
# Builds npusim and runs the speed benchmark (tests/bench, docs/performance.md):
# on gelu_tanh fp16 1x64x56x56 with every element checked, (a) the whole
# `npusim run` over the engine-only time of the same run (goal <= 1.3) and
# (b) the engine's cycles/s over an empty clocked SC_METHOD's (goal >= 3).
# BUILD picks the build folder (default ./build).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "$ROOT" >/dev/null
fi
ninja -C "$BUILD" npusim sim/systemc/npusim-systemc-engine.so tests/bench/npusim_bench >/dev/null
exec "$BUILD/tests/bench/npusim_bench" "$@"
