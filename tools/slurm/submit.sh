#!/bin/sh
# Submits a sweep as a Slurm job array of SHARDS tasks plus a dependent merge job.
#   tools/slurm/submit.sh SPEC OUT SHARDS
set -eu
SPEC=$(realpath "$1"); OUT=$(realpath -m "$2"); SHARDS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
export NPUSIM=${NPUSIM:-$HERE/../../build/npusim}
array=$(sbatch --parsable --array=0-$((SHARDS - 1)) --export=ALL,SPEC="$SPEC",OUT="$OUT" "$HERE/sweep.sbatch")
sbatch --dependency=afterany:"$array" --export=ALL,OUT="$OUT" "$HERE/merge.sbatch"
