#!/bin/sh
# Builds npusim and runs the simulation-speed benchmark (tests/bench): cycles
# and instructions per second of the SystemC and C engines on gelu_tanh fp16
# 1x64x56x56, against an empty clocked SystemC loop. BUILD picks the build
# folder (default ./build).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "$ROOT" >/dev/null
fi
ninja -C "$BUILD" tests/bench/npusim_bench >/dev/null
exec "$BUILD/tests/bench/npusim_bench" "$@"
