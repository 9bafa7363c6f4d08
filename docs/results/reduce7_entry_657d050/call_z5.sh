#!/usr/bin/env bash
# Issue 31, call Z5 (branch issue31-entry, 657d050), on z3/z4's machine while still held: the
# front's blocks and probe steps again (no public step: the session's device time), as one
# command line of the device tool:
export PATH=/usr/local/cuda/bin:$PATH; mkdir -p $OUT/z5; { date -u; nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader; echo "commit 657d050"; } > $OUT/z5/gpu.txt; STEPS="blocks probe" timeout 270 scripts/issue31_gpu.sh $OUT/z5/front 2>&1 | tail -5; tar -C $OUT -czf $OUT/z5.tgz z5
