#!/bin/sh
# The library alone, as an embedder builds it (Meson -Dtools=false
# -Dsystemc=disabled -Dpython=disabled; dav1d's enable_tools): libnpusim and
# the tests that need nothing else (the C API's runs and errors, every public
# header on its own, the exports), built and run. No SystemC, no CLI. BUILD
# picks the folder (default ./build-lib). The whole suite: tools/test.sh.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-lib}
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" "$ROOT" -Dtools=false -Dsystemc=disabled -Dpython=disabled >/dev/null
fi
# The tests of the library alone, and the files they run.
tests=$(meson introspect --tests "$BUILD" | /usr/bin/python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["name"] in ("embed", "embed_run", "embed_threads", "exports") or t["name"].startswith("header_"):
        print(t["name"])')
targets=$(meson introspect --targets "$BUILD" | /usr/bin/python3 -c '
import json, os, sys
build = sys.argv[1]
for t in json.load(sys.stdin):
    if t["name"] == "npusim" and t["type"] == "shared library" or t["name"] in ("embed", "embed_run", "embed_threads") \
            or t["name"].startswith("header_"):
        for f in t["filename"]:
            print(os.path.relpath(f, build))' "$BUILD")
ninja -C "$BUILD" $targets
meson test -C "$BUILD" --no-rebuild --print-errorlogs $tests
