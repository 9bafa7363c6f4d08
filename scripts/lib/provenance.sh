# shellcheck shell=bash
# Sourced by the scripts that write a results file: the '#' lines that go after its data
# (the CSV's header stays on line 1, as tools/figures reads it), saying what made it.
#
#   provenance "scripts/loads_sweep.sh docs/results" >>FILE
provenance() {
    echo "# command: $1"
    echo "# commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}$(git diff --quiet HEAD 2>/dev/null || echo ' (tree with changes)')"
    echo "# GPU: $(nvidia-smi --query-gpu=name,serial,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>/dev/null | head -1)"
    echo "# CUDA: $(nvcc --version 2>/dev/null | tail -1)"
    echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
}
