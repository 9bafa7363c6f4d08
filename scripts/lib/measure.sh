# shellcheck shell=bash
# Sourced by the measuring scripts (reproduce_results.sh, multi_gpu.sh, loads_sweep.sh,
# grid_probe.sh, issue31_gpu.sh, lessons19_gpu.sh, small_inputs_gpu.sh; grading_gpu.sh for
# its build): the helpers each of them needs, written once, and their one build step.
#
#   wanted PART            true when PART is one of "$parts", the parts asked for
#   run CMD ...            prints "$ CMD ..." first, so that every file says how it was made
#   csv_into FILE CMD ...  appends CMD's CSV to FILE, keeping only the first header; with
#                          CSV_LOG set, also logs "FILE: $ CMD ..." there
#   labelled_rows CSV NAMES VALUES FILE
#                          FILE's CSV rows appended to CSV behind first columns (NAMES in
#                          the header, VALUES in every row, both comma-separated); the
#                          header only into an empty CSV
#   build_targets DIR TARGET ...
#                          configures DIR as the release preset does where it is not yet
#                          configured (DIR other than build/release: for this machine's GPU
#                          only, CMAKE_CUDA_ARCHITECTURES from nvidia-smi), then builds the
#                          targets with every core

wanted() { [[ " $parts " == *" $1 "* ]]; }

run() { echo "\$ $*"; "$@"; }

csv_into() {
    local file=$1
    shift
    [[ -n ${CSV_LOG:-} ]] && echo "$(basename "$file"): \$ $*" >>"$CSV_LOG"
    if [[ -s $file ]]; then "$@" | tail -n +2 >>"$file"; else "$@" >"$file"; fi
}

labelled_rows() {
    local csv=$1 names=$2 values=$3 file=$4
    if [[ ! -s $csv ]]; then sed "1s/^/$names,/;2,\$s/^/$values,/" "$file"; else tail -n +2 "$file" | sed "s/^/$values,/"; fi >>"$csv"
}

build_targets() {
    local dir=$1 arch
    shift
    if [[ ! -f $dir/CMakeCache.txt ]]; then
        if [[ $dir == build/release ]]; then
            cmake --preset release || return
        else
            arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
            cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" || return
        fi
    fi
    cmake --build "$dir" --target "$@" -j "$(nproc)"
}
