#!/usr/bin/env bash
# Issue 31, call Z1: int at 2^26 back to back, where reduce7's packed default trails the probe's
# one-shot-512x4 in the front (y1, y5) by ~0.3% and its kernel lasted 0.15 us longer under ncu (y4).
# Three changes to reduce7's kernel, each as a patch, beside the committed build and the probe:
#   block0  only block 0 enters the head/tail code (a block-uniform branch): the other blocks
#           reach their first 16-byte load sooner, with no wait on the predicated scalar loads
#   vecrem  the last tile's loads as 16-byte vectors (the committed code loads each lane apart)
#   all     block0 + vecrem + the last tile's code skipped by a block whose tiles were all whole
# Four alternating rounds, int 2^26 and 2^28, float 2^26, then ncu durations at int 2^26.
export PATH=/usr/local/cuda/bin:$PATH CUDAARCHS=90
TAR=$OUT/z1.tgz ROUNDS=${ROUNDS:-4} CUTOFF=${CUTOFF:-300} scripts/alternate_rounds.sh $OUT/z1 \
  --build block0=devrun/z1_v_block0.patch --build vecrem=devrun/z1_v_vecrem.patch --build all=devrun/z1_v_all.patch \
  --row '--type int --n 2^26' --row '--type int --n 2^28' --row '--type float --n 2^26' \
  --probe '--type int --n 2^26 --n 2^28 --only one-shot-512x4+packed,one-shot-512x4' \
  --ncu '--type int --n 2^26' '--type int --n 2^26 --only one-shot-512x4+packed'
