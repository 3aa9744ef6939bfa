#!/bin/sh
# README command 1: set everything up and run a real kernel with its report.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/tools/build.sh"
echo "\$ npusim run gelu_tanh --dtype fp16 --shape 1,64,56,56"
exec "$ROOT/build/npusim" run gelu_tanh --dtype fp16 --shape 1,64,56,56 "$@"
