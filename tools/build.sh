#!/bin/sh
# Configures (once) and builds npusim in ./build. Installs missing Debian
# packages first, so it works on a bare machine.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/tools/install-deps.sh"
if [ ! -f "$ROOT/build/build.ninja" ]; then
    meson setup "$ROOT/build" "$ROOT" >/dev/null
fi
ninja -C "$ROOT/build" >/dev/null
