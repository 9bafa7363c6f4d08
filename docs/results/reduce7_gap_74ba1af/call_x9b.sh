#!/usr/bin/env bash
# Issue 31, experiment X9b: run on x9's machine while it was still held (so x9's builds were
# there: build/release from x9, /tmp/skip_g18 from x8's patch). Each kernel's duration one
# launch at a time under Nsight Compute (--cache-control none: no flush; --clock-control none),
# 40 launches of the float 2^28 back-to-back run: is the gap in the kernel or between launches?
ls /opt/nvidia 2>&1 | head; ls -d /usr/local/cuda*/nsight* 2>&1 | head -3; export PATH=/usr/local/cuda/bin:$PATH; P=build/release/bin/grid_layout_probe; mkdir -p $OUT; M=gpu__time_duration.sum; for k in 28; do ncu --clock-control none --cache-control none --csv --metrics $M -k "regex:strided_tiles" --launch-skip 120 --launch-count 40 $P --type float --n 2^$k --only one-shot-512x4+grouped --runs 1 --warmup 0 --batches 2 > $OUT/ncu_probe_$k.csv 2>&1; for b in committed skip_g18; do B=build/release/bin/reduce7; [[ $b != committed ]] && B=/tmp/$b/build/release/bin/reduce7; ncu --clock-control none --cache-control none --csv --metrics $M -k "regex:shuffle_vector" --launch-skip 30 --launch-count 40 $B --no-baseline --type float --n 2^$k --timing back-to-back --iters 2 --warmup 2 > $OUT/ncu_${b}_$k.csv 2>&1; done; done; for f in $OUT/ncu_*.csv; do python3 -c "
import csv,sys,statistics
v=[float(r[-1].replace(',','')) for r in csv.reader(open('$f')) if len(r)>14 and r[12]=='$M']
print('$f'.split('/')[-1], len(v), 'median ns', statistics.median(v) if v else None, 'min', min(v) if v else None)
"; done
