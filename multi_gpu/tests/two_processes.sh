#!/usr/bin/env bash
# One process per GPU on one machine: two ranks of reduce_multi_gpu, bootstrapped through an
# NCCL id file in a fresh folder, must both exit 0 and report exact results.
#   by-hand (the default): twice, with the ranks given as --rank/--ranks, then as Open MPI's
#            mpirun gives them (its variables, set here);
#   mpirun:  started by `mpirun -np 2`, as NCCL's own tests run (Open MPI or MPICH).
# It prints "SKIPPED: ..." (CTest reports the test skipped) on a machine with fewer than 2
# GPUs, and in mpirun mode where there is no mpirun on the PATH.
#
#   usage: two_processes.sh path/to/reduce_multi_gpu [by-hand | mpirun]
set -uo pipefail
exe=$1
mode=${2:-by-hand}
gpus=$("$exe" --count-gpus 2>/dev/null) || gpus=0
if ! [[ $gpus =~ ^[0-9]+$ ]] || ((gpus < 2)); then
    echo "SKIPPED: needs 2 GPUs, this machine has ${gpus:-0}"
    exit 0
fi
if [[ $mode == mpirun ]] && ! command -v mpirun >/dev/null; then
    echo "SKIPPED: no mpirun on the PATH"
    exit 0
fi
folder=$(mktemp -d)
trap 'rm -rf "$folder"' EXIT
common=(--n 1000001 --type float --iters 3 --warmup 1 --vector 2^20 --id-file "$folder/nccl.id" --timeout 120)
failures=0

# check LAUNCH STATUS0 STATUS1: both ranks exited 0, rank 0's table and rank 1's line say
# exact, and rank 0 removed the id file once both had joined.
check() {
    local launch=$1 status0=$2 status1=$3
    echo "== $launch: rank 0 (exit $status0)"
    cat "$folder/rank0.txt"
    echo "== $launch: rank 1 (exit $status1)"
    cat "$folder/rank1.txt"
    local problems=()
    ((status0 == 0)) || problems+=("rank 0 exited $status0")
    ((status1 == 0)) || problems+=("rank 1 exited $status1")
    grep -Eq "^check +exact: the sum" "$folder/rank0.txt" || problems+=("rank 0's reduction is not exact")
    grep -Eq "^  check +exact: after one all-reduce" "$folder/rank0.txt" || problems+=("rank 0's all-reduce is not exact")
    grep -Eq "^rank 1 of 2 .*check: exact" "$folder/rank1.txt" || problems+=("rank 1's shard is not exact")
    [[ ! -e $folder/nccl.id ]] || problems+=("the id file was left behind")
    ! compgen -G "$folder/nccl.id.*" >/dev/null || problems+=("a request or temporary file was left behind")
    if ((${#problems[@]})); then
        printf 'FAILED (%s): %s\n' "$launch" "${problems[*]}"
        failures=$((failures + 1))
    else
        echo "ok ($launch): both ranks exact"
    fi
}

if [[ $mode == mpirun ]]; then
    # What this mpirun needs to start anything here (as root, Open MPI needs to be told).
    source "$(dirname "${BASH_SOURCE[0]}")/mpirun_probe.sh"
    if ! mpirun_probe; then
        echo "FAILED (mpirun): it starts no process on this machine"
        exit 1
    fi
    # Each rank writes its own file, named by the rank its launcher gave it.
    timeout 300 env "${mpirun_env[@]}" mpirun -np 2 bash -c \
        'exec "$0" "${@}" >"'"$folder"'/rank${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-unknown}}.txt" 2>&1' \
        "$exe" "${common[@]}" >"$folder/mpirun.txt" 2>&1
    status=$?
    cat "$folder/mpirun.txt"
    check "mpirun -np 2 ($(mpirun --version 2>&1 | head -1))" $status $status
    ((failures == 0))
    exit
fi

# Rank 1 starts first, so it must wait for the id file that rank 0 writes.
timeout 300 "$exe" --rank 1 --ranks 2 "${common[@]}" >"$folder/rank1.txt" 2>&1 &
rank1=$!
timeout 300 "$exe" --rank 0 --ranks 2 "${common[@]}" >"$folder/rank0.txt" 2>&1
status0=$?
wait $rank1
check "--rank/--ranks" $status0 $?

mpi() { env OMPI_COMM_WORLD_RANK=$1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=$1 "${@:2}"; }
mpi 1 timeout 300 "$exe" "${common[@]}" >"$folder/rank1.txt" 2>&1 &
rank1=$!
mpi 0 timeout 300 "$exe" "${common[@]}" >"$folder/rank0.txt" 2>&1
status0=$?
wait $rank1
check "Open MPI variables" $status0 $?

((failures == 0))
