#!/usr/bin/env bash
# Issue 31, call Y4: int at 2^26 back to back, where reduce7's packed default trailed the probe's
# same tile (y1). Is it the kernel's entry (the pdl check and the head/tail arithmetic)? `nohead`
# (y4_v_nohead.patch, an experiment: assumes an aligned input) against the committed build and
# the probe's one-shot-512x4 and +packed, three alternating rounds, 2^26 and 2^28; then each
# kernel's duration one launch at a time at 2^26.
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
TAR=$OUT/y4.tgz CUTOFF=${CUTOFF:-200} scripts/alternate_rounds.sh $OUT/y4 \
  --build nohead=devrun/y4_v_nohead.patch \
  --row '--type int --n 2^26' --row '--type int --n 2^28' \
  --probe '--type int --n 2^26 --n 2^28 --only one-shot-512x4+packed,one-shot-512x4' \
  --ncu '--type int --n 2^26' '--type int --n 2^26 --only one-shot-512x4+packed'
