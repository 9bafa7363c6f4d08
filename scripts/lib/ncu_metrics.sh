# shellcheck shell=bash
# Sourced by the scripts that read Nsight Compute counters (profile.sh, loads_sweep.sh):
# one profile of one kernel launch into ncu's CSV, and the value or unit of one metric in it.
#
#   ncu_first_launch RAW_CSV LOG METRICS KERNEL_REGEX EXECUTABLE OPTIONS ...
#   ncu_value RAW_CSV METRIC      ncu_unit RAW_CSV METRIC
#
# KERNEL_REGEX picks the kernel (ncu's -k regex:...); the first launch of it is profiled,
# so run the executable with --iters 1 --warmup 0 and the first launch is the first pass.
# Clocks are left as they are (--clock-control none): counts do not depend on them,
# durations do, and the device may be shared. Returns ncu's exit status; LOG gets the
# program's and ncu's own output.
ncu_first_launch() {
    local raw=$1 log=$2 metrics=$3 kernel=$4
    shift 4
    ncu --clock-control none --csv --log-file "$raw" --metrics "$metrics" \
        -k "regex:$kernel" --launch-count 1 "$@" >"$log" 2>&1
}
# ncu's CSV: "ID",...,"Metric Name","Metric Unit","Metric Value" (fields 13, 14, 15).
ncu_value() { awk -F'","' -v m="$2" '$13 == m { gsub(/"/, "", $15); print $15 }' "$1"; }
ncu_unit() { awk -F'","' -v m="$2" '$13 == m { print $14 }' "$1"; }
