#!/usr/bin/env bash
# Measures the multi-GPU figures: reduce_multi_gpu on two of this machine's GPUs, with the
# release build (build it first: README.md; it needs NCCL, see multi_gpu/CMakeLists.txt).
# Every text file starts with the GPUs, date, commit and the command that produced it; the
# CSV files come with multi_gpu_environment.txt, which says the same and lists each command.
#
#   scripts/multi_gpu.sh [--build DIR] [OUTDIR [PART ...]]   # default: build/release, docs/results, every part
#
# PARTs and what they write into OUTDIR:
#   topology     multi_gpu_topology.txt   nvidia-smi topo -m and nvidia-smi nvlink -s
#   each         multi_gpu_each_gpu.csv   reduce7 alone on each GPU over 2^32 floats (a shard of 2^33 on 2),
#                                         with nvidia-smi's clocks and temperatures: is one GPU slower alone?
#   table        multi_gpu.txt, multi_gpu.csv
#                                         n = 2^33 float and int over 2 GPUs, with ncclAllReduce and
#                                         with ncclReduce: the table, and --csv (one row per measurement)
#   skew         multi_gpu_skew.csv       the start-skew A/B: n = 2^24, 2^28 (three times each) and 2^33
#                                         float on 2 GPUs, the gate opened at once (--gate-at-once) and
#                                         after every L2 flush (--gate-after-flush, the default), alternating
#   scaling      multi_gpu_scaling.csv    the reduction at n = 2^24, 2^26 ... 2^32 and 2^33 float on 1 and
#                                         2 GPUs
#   processes    multi_gpu_processes.txt  n = 2^33 float with one process per GPU (--rank, --id-file), as
#                                         mpirun or srun would start it across machines: rank 0's table
#   protocols    multi_gpu_protocols.csv  each NCCL protocol forced (NCCL_PROTO=LL, LL128, Simple): the
#                                         all-reduce of 1 float and of 2^10, 2^12 ... 2^28 floats, and the
#                                         one-value collective inside the sum of 2^24 floats
#                multi_gpu_nccl.txt       what NCCL_DEBUG=INFO says: how it connected the GPUs, its own
#                                         model of each algorithm's and protocol's latency and bandwidth,
#                                         and the algorithm and protocol it chose for each size
#   allreduce    allreduce.csv            the element-wise all-reduce of 1 float and of 2^10, 2^12 ...
#                                         2^30 floats on 2 GPUs with NCCL's own choice of protocol
#
# MULTI_GPU_GPUS=N measures on N GPUs instead of 2 (the scaling part: 1 and N).
set -euo pipefail
cd "$(dirname "$0")/.."

# NVLink multicast (NVLS) stays off: on the shared lent machines a program that uses it can
# put the host's GPUs out of service. reduce_multi_gpu sets these itself too.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

build=build/release
if [[ ${1:-} == --build ]]; then
    build=${2:?--build needs a folder}
    shift 2
fi
out=${1:-docs/results}
shift || true
parts=${*:-topology each table skew scaling processes protocols allreduce}
gpus=${MULTI_GPU_GPUS:-2}
exe=$build/bin/reduce_multi_gpu
[[ -x $exe ]] || { echo "multi_gpu.sh: $exe not found: build first (README.md; NCCL_ROOT if NCCL is not found)" >&2; exit 3; }
present=$($exe --count-gpus)
((present >= gpus)) || { echo "multi_gpu.sh: needs $gpus GPUs, this machine has $present" >&2; exit 3; }
mkdir -p "$out"

# shellcheck source=scripts/lib/measure.sh
source scripts/lib/measure.sh  # wanted, run, csv_into (which logs each command here:)
CSV_LOG=$out/multi_gpu_environment.txt

environment() {
    date -u '+%Y-%m-%d %H:%M UTC'
    nvidia-smi --query-gpu=index,name,serial,driver_version,memory.total --format=csv,noheader 2>/dev/null ||
        echo "nvidia-smi not found"
    echo "commit ${REDUCTION_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    echo "NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
}
{
    environment
    echo "parts: $parts"
    echo "commands, per CSV file:"
} >"$out/multi_gpu_environment.txt"
cat "$out/multi_gpu_environment.txt"

if wanted topology; then
    {
        environment
        if command -v nvidia-smi >/dev/null; then
            run nvidia-smi topo -m || true
            echo
            run nvidia-smi nvlink -s || true
        else
            echo "nvidia-smi not found: no topology"
        fi
    } >"$out/multi_gpu_topology.txt" 2>&1
    cat "$out/multi_gpu_topology.txt"
fi

if wanted each; then
    rm -f "$out/multi_gpu_each_gpu.csv"
    for ((g = 0; g < gpus; g++)); do
        csv_into "$out/multi_gpu_each_gpu.csv" $build/bin/reduce7 --device $g --n 2^32 --type float --no-baseline --csv
    done
    cat "$out/multi_gpu_each_gpu.csv"
    nvidia-smi --query-gpu=index,clocks.mem,clocks.max.mem,clocks.sm,temperature.gpu,temperature.memory,power.draw \
        --format=csv >>"$out/multi_gpu_environment.txt" 2>&1 || true
fi

if wanted table; then
    rm -f "$out/multi_gpu.csv"
    {
        environment
        for type in float int; do
            for collective in allreduce reduce; do
                # The element-wise all-reduce once, with the first table; then the reduction only.
                measure=reduction
                [[ $type == float && $collective == allreduce ]] && measure=both
                echo
                run $exe --gpus "$gpus" --n 2^33 --type $type --collective $collective --measure $measure
                csv_into "$out/multi_gpu.csv" $exe --gpus "$gpus" --n 2^33 --type $type --collective $collective \
                    --measure $measure --csv
            done
        done
    } | tee "$out/multi_gpu.txt"
fi

if wanted skew; then
    # Does GPU 1 start late because its L2 flush is still running when the gate opens? The
    # same sums with the gate opened at once (A) and only after every flush has ended (B, the
    # default since this A/B), alternating, so that a drift of the machine shows as a spread,
    # not as an effect.
    rm -f "$out/multi_gpu_skew.csv"
    for k in 24 28 24 28 24 28 33; do
        for gate in --gate-at-once --gate-after-flush; do
            csv_into "$out/multi_gpu_skew.csv" $exe --gpus "$gpus" --n 2^$k --type float --measure reduction \
                --no-baseline --iters 50 $gate --csv
        done
    done
    cat "$out/multi_gpu_skew.csv"
fi

if wanted scaling; then
    rm -f "$out/multi_gpu_scaling.csv"
    for g in 1 "$gpus"; do
        for k in 24 26 28 30 32 33; do
            csv_into "$out/multi_gpu_scaling.csv" $exe --gpus "$g" --n 2^$k --type float --measure reduction \
                --iters 50 --csv
        done
    done
    cat "$out/multi_gpu_scaling.csv"
fi

if wanted processes; then
    # One process per GPU, bootstrapped through an id file as across machines (there the
    # file sits on a shared filesystem and mpirun or srun starts the ranks).
    id_file=$(mktemp -u)
    {
        environment
        echo "\$ (for r in 1 ... $((gpus - 1)): $exe --rank r --ranks $gpus --id-file ID --n 2^33 --type float --measure reduction --no-baseline &)"
        echo "\$ $exe --rank 0 --ranks $gpus --id-file ID --n 2^33 --type float --measure reduction --no-baseline"
        for ((r = 1; r < gpus; r++)); do
            $exe --rank $r --ranks "$gpus" --id-file "$id_file" --n 2^33 --type float --measure reduction \
                --no-baseline >/dev/null &
        done
        $exe --rank 0 --ranks "$gpus" --id-file "$id_file" --n 2^33 --type float --measure reduction --no-baseline
        wait
    } 2>&1 | tee "$out/multi_gpu_processes.txt"
fi

if wanted protocols; then
    sizes="1 2^10 2^12 2^14 2^16 2^18 2^20 2^22 2^24 2^26 2^28"
    # NCCL's own account: INIT and GRAPH say how it connected the GPUs; TUNING prints, at
    # init, its model of each algorithm's and protocol's latency and bandwidth, and for each
    # call the algorithm and protocol it chose: one short run per size (--iters 1 --warmup 0:
    # a checked call and a timed one, each logged).
    # nccl_lines FILE...: their NCCL INFO lines, less the prefix (host, pid, device).
    nccl_lines() { grep -hE "NCCL INFO" "$@" | sed -E 's/^.*NCCL INFO //'; }
    {
        environment
        log=$(mktemp -d)
        echo "\$ NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING NCCL_DEBUG_FILE=LOG $exe --gpus $gpus --measure allreduce --vector 2^28 --iters 3 --warmup 1"
        echo "(the lines about transports, channels, algorithms and protocols, each with how often it appeared)"
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING NCCL_DEBUG_FILE="$log/init.%p.log" $exe --gpus "$gpus" \
            --measure allreduce --vector 2^28 --iters 3 --warmup 1 >/dev/null 2>&1 || true
        nccl_lines "$log"/init.*.log | grep -vE "\|" | grep -iE "via |channel|ring|tree|algo|proto|nvls|p2p|connected" |
            grep -vE "^Tree [0-9]+ :" | sort | uniq -c | sort -rn | sed -n 1,80p || true  # sed reads all: head would end the pipe early (SIGPIPE under pipefail)
        echo
        echo "NCCL's model of each algorithm and protocol, as its TUNING lines print it at init (latency in us / bandwidth in GB/s), from one log:"
        first=$(ls "$log"/init.*.log 2>/dev/null | head -1 || true)
        [[ -n $first ]] && nccl_lines "$first" | grep -E "\|" | sed -n 1,40p || true
        for v in $sizes; do
            echo
            echo "\$ NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE=LOG $exe --gpus $gpus --measure allreduce --vector $v --iters 1 --warmup 0"
            NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE="$log/size.%p.log" $exe --gpus "$gpus" \
                --measure allreduce --vector "$v" --iters 1 --warmup 0 >/dev/null 2>&1 || true
            nccl_lines "$log"/size.*.log | grep -vE "\|" | grep -E "Bytes|[Aa]lgo|proto" |
                sed -E 's/(opCount|sendbuff|recvbuff|comm|stream) [0-9a-fx]+ ?//g' |
                sort | uniq -c | sort -rn | sed -n 1,8p || true
            rm -f "$log"/size.*.log
        done
        rm -rf "$log"
    } 2>&1 | tee "$out/multi_gpu_nccl.txt"
    # The timed table: each protocol forced, the same sizes, and the one-value collective as
    # the reduction issues it (the collective column: there the launch is hidden behind the sums).
    rm -f "$out/multi_gpu_protocols.csv"
    for proto in LL LL128 Simple; do
        for v in $sizes; do
            csv_into "$out/multi_gpu_protocols.csv" env NCCL_PROTO=$proto $exe --gpus "$gpus" --measure allreduce \
                --vector "$v" --iters 50 --csv
        done
        csv_into "$out/multi_gpu_protocols.csv" env NCCL_PROTO=$proto $exe --gpus "$gpus" --n 2^24 --type float \
            --measure reduction --no-baseline --iters 50 --csv
    done
    cat "$out/multi_gpu_protocols.csv"
fi

if wanted allreduce; then
    rm -f "$out/allreduce.csv"
    for v in 1 2^10 2^12 2^14 2^16 2^18 2^20 2^22 2^24 2^26 2^28 2^30; do
        csv_into "$out/allreduce.csv" env -u NCCL_PROTO $exe --gpus "$gpus" --measure allreduce --vector "$v" --iters 50 --csv
    done
    cat "$out/allreduce.csv"
fi
echo "multi_gpu.sh: done ($parts), results in $out"
