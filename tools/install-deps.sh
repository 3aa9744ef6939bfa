#!/bin/sh
# Installs the Debian packages npusim needs to build and test, and only the
# missing ones, so a second run costs one dpkg query. Packages named as
# arguments are wanted too (tools/fuzz.sh: clang).
set -eu

PACKAGES="meson ninja-build pkg-config gcc g++ libsystemc-dev libyaml-cpp-dev \
libgtest-dev libcli11-dev nlohmann-json3-dev parallel python3-matplotlib \
pybind11-dev python3-dev python3-numpy python3-pandas $*"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    exit 0
fi

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2
