#!/bin/sh
# Submits a sweep as a Slurm job array of SHARDS tasks plus a dependent merge job.
#   tools/slurm/submit.sh SPEC OUT SHARDS
# Run it from the folder where the job logs should go (npusim-sweep-*.log,
# npusim-merge-*.log). It passes NPUSIM (default: build/npusim of this
# checkout) to both jobs, checked here so a missing build fails now rather
# than in every task. Prints one line: the array job's id and the merge job's.
set -eu
if [ $# -ne 3 ]; then
    echo "usage: $0 SPEC OUT SHARDS" >&2
    exit 2
fi
SPEC=$(realpath "$1"); OUT=$(realpath -m "$2"); SHARDS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
NPUSIM=${NPUSIM:-$HERE/../../build/npusim}
if ! command -v -- "$NPUSIM" >/dev/null; then
    echo "submit.sh: no npusim at $NPUSIM; build it (meson setup build && ninja -C build) or set NPUSIM" >&2
    exit 1
fi
export NPUSIM
array=$(sbatch --parsable --array=0-$((SHARDS - 1)) --export=ALL,SPEC="$SPEC",OUT="$OUT",SHARDS="$SHARDS" "$HERE/sweep.sbatch")
array=${array%%;*}    # --parsable prints "id" or "id;cluster"
merge=$(sbatch --parsable --dependency=afterany:"$array" --export=ALL,OUT="$OUT" "$HERE/merge.sbatch")
merge=${merge%%;*}
echo "submitted sweep array job $array ($SHARDS tasks) and merge job $merge (afterany:$array)"
