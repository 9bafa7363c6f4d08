#!/usr/bin/env bash
# Issue 31: why reduce7's resident grid reads slower than the same loop body in a one-shot
# grid. Runs tools/grid_layout_probe, then Nsight Compute on one launch of each main layout,
# then the per-block trace.
#
#   scripts/grid_probe.sh [OUTDIR [PART ...]]      # default docs/results/grid_layout, all parts
#
# PARTs and what they write into OUTDIR:
#   probe   grid_layout.csv      the probe, int and float, n = 2^26, 2^28, 2^30 (PROBE_ARGS adds options)
#   ncu     grid_layout_ncu.csv  one launch each of resident-stride, -contiguous, -dynamic, one-shot,
#                                one-shot-512x3, bulk-resident and bulk-one-shot, int, n = 2^28 and 2^30: the metrics below
#           ncu_dram_metrics.txt the dram__ and fbpa__ metric names this GPU and ncu offer
#                                (ncu --query-metrics), from which the row/page and turnaround
#                                counters are picked
#   trace   block_trace_resident-stride.csv, block_trace_one-shot.csv: each block's SM and
#                                start/end (globaltimer) in one run at 2^30 int
# Each file ends with provenance lines (scripts/lib/provenance.sh).
# Environment: BUILD (default build/release).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 3
# shellcheck source=scripts/lib/provenance.sh
source scripts/lib/provenance.sh
# shellcheck source=scripts/lib/ncu_metrics.sh
source scripts/lib/ncu_metrics.sh
out=${1:-docs/results/grid_layout}
shift || true
parts=${*:-probe ncu trace}
build=${BUILD:-build/release}
probe=$build/bin/grid_layout_probe
[[ -x $probe ]] || { echo "grid_probe.sh: $probe not found: cmake --build $build --target grid_layout_probe" >&2; exit 3; }
mkdir -p "$out"
# shellcheck source=scripts/lib/measure.sh
source scripts/lib/measure.sh  # wanted
status=0

if wanted probe; then
    csv=$out/grid_layout.csv
    # shellcheck disable=SC2086 # PROBE_ARGS is a list of options
    if $probe ${PROBE_ARGS:-} >"$csv" 2>"$out/grid_layout.log"; then
        provenance "scripts/grid_probe.sh $out probe ($probe ${PROBE_ARGS:-})" >>"$csv"
        echo "grid_probe.sh: probe: $(grep -vc '^#' "$csv") lines in $csv" >&2
    else
        echo "grid_probe.sh: probe failed: $(tail -1 "$out/grid_layout.log")" >&2
        status=1
    fi
fi

if wanted ncu; then
    if ! command -v ncu >/dev/null; then
        echo "grid_probe.sh: ncu (Nsight Compute) not found: no counters" >&2
        status=1
    else
        # Names the DRAM side offers on this GPU: on Hopper the dram__ group (bytes,
        # sectors, cycles active, throughput) and, where exposed, fbpa__ (the frame
        # buffer partitions: DRAM commands, row activates/precharges, read/write
        # turnarounds). Not all are documented; the list is kept so the choice is visible.
        ncu --query-metrics 2>/dev/null | awk '$1 ~ /^(dram__|fbpa__)/ { print }' >"$out/ncu_dram_metrics.txt"
        extra=$(awk '{ print $1 }' "$out/ncu_dram_metrics.txt" |
            grep -E '^(dram__|fbpa__).*(activ|precharge|row|page|turn|rd2wr|wr2rd|bank|_read_|_write_|cmd|sectors)' |
            grep -vE '^dram__bytes_read$' | head -40)
        base=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,lts__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,sm__cycles_active.avg,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,dram__cycles_active.avg.pct_of_peak_sustained_elapsed,dram__sectors_read.sum
        # --query-metrics lists base names: collect each as .sum (counters) where it has no suffix.
        more=""
        for m in $extra; do
            case $m in *.*) more+=",$m" ;; *) more+=",$m.sum" ;; esac
        done
        echo "grid_probe.sh: ncu: $(( $(tr -cd , <<<"$base$more" | wc -c) + 1 )) metrics (extra DRAM-side: ${extra//$'\n'/ })" >&2
        csv=$out/grid_layout_ncu.csv
        tmp=$(mktemp -d)
        trap 'rm -rf "$tmp"' EXIT
        echo "layout,type,n,metric,unit,value" >"$csv"
        declare -A kernel=([resident-stride]='^strided_tiles($|<)' [resident-contiguous]='^contiguous_tiles' [resident-dynamic]='^dynamic_tiles' [one-shot]='^strided_tiles($|<)' [one-shot-512x3]='^consecutive_vectors' [bulk-resident]='^bulk_copied_tiles' [bulk-one-shot]='^bulk_copied_tiles')
        for k in 28 30; do
            for layout in resident-stride resident-contiguous resident-dynamic one-shot one-shot-512x3 bulk-resident bulk-one-shot; do
                metrics=$base$more
                ok=0
                # A metric this ncu does not know fails the whole profile: then retry with
                # the confirmed base list alone.
                for _ in 1 2; do
                    if ncu_first_launch "$tmp/raw.csv" "$tmp/log" "$metrics" "${kernel[$layout]}" \
                            "$probe" --type int --n "2^$k" --only "$layout" --runs 1 --warmup 0 --batches 0; then
                        ok=1; break
                    fi
                    metrics=$base
                done
                if (( !ok )); then
                    echo "grid_probe.sh: ncu failed on $layout 2^$k: $(tail -2 "$tmp/log" | tr '\n' ' ')" >&2
                    status=1
                    continue
                fi
                IFS=, read -ra names <<<"$metrics"
                for m in "${names[@]}"; do
                    echo "$layout,int,$((1 << k)),$m,$(ncu_unit "$tmp/raw.csv" "$m"),\"$(ncu_value "$tmp/raw.csv" "$m")\""
                done >>"$csv"
                echo "grid_probe.sh: ncu $layout 2^$k: $(ncu_value "$tmp/raw.csv" gpu__time_duration.sum) $(ncu_unit "$tmp/raw.csv" gpu__time_duration.sum), dram $(ncu_value "$tmp/raw.csv" dram__throughput.avg.pct_of_peak_sustained_elapsed)% of peak" >&2
            done
        done
        provenance "scripts/grid_probe.sh $out ncu ($(ncu --version | tail -1); --clock-control none)" >>"$csv"
    fi
fi

if wanted trace; then
    if $probe --trace-blocks "$out" >"$out/block_trace.log" 2>&1; then
        for f in "$out"/block_trace_*.csv; do provenance "scripts/grid_probe.sh $out trace" >>"$f"; done
        grep '^# trace' "$out/block_trace.log" | sed 's/^# /grid_probe.sh: /' >&2
    else
        echo "grid_probe.sh: trace failed: $(tail -1 "$out/block_trace.log")" >&2
        status=1
    fi
fi
echo "grid_probe.sh: done ($parts), results in $out, status $status" >&2
exit $status
