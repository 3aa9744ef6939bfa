#!/bin/bash
# Stand-in for npusim (passed to the Slurm jobs as NPUSIM by slurm_test.sh)
# that makes one array task stop half-way, so the test can kill it mid-run.
#
# The first `sweep ... --shard I/N` call (the one that claims the pause) runs only
# half of its shard's points (shard I of 2N: its points whose index % 2N == I),
# then writes its task id into PAUSE_MARKER and sleeps until it is killed.
# Every other call (the resubmitted task, the merges) is the real npusim,
# REAL_NPUSIM. npusim runs each point as a child of itself (/proc/self/exe),
# so this wrapper never sees the per-point runs.
set -euo pipefail
: "${REAL_NPUSIM:?}" "${PAUSE_MARKER:?}"
n=$#
# mkdir claims the pause atomically: one task pauses even if two run at once.
if [ "${1:-}" = sweep ] && [ "${*:n-1:1}" = --shard ] && mkdir "$PAUSE_MARKER.claimed" 2>/dev/null; then
    shard=${*:n:1}                         # I/N, always the last argument
    i=${shard%/*} k=${shard#*/}
    "$REAL_NPUSIM" "${@:1:n-1}" "$i/$((2 * k))"
    echo "${SLURM_ARRAY_TASK_ID:-?}" > "$PAUSE_MARKER.tmp" && mv "$PAUSE_MARKER.tmp" "$PAUSE_MARKER"
    echo "pausing_npusim: ran half of shard $shard; sleeping until killed" >&2
    sleep 600
    echo "pausing_npusim: not killed within 600 s" >&2
    exit 1
fi
exec "$REAL_NPUSIM" "$@"
