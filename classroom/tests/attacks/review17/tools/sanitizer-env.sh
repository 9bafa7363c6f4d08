#!/bin/bash
# sanitizer-env.sh: the environment a worker starts with (0) when the judge starts it itself (judge --exec-as alone,
# which passes worker_environment() on as the judge does) and (1) behind compute-sanitizer 2025.3.1 as judge.cu runs
# it for racecheck. Review 16's chain (review16/tools/sanitizer-chain.sh: the PyPI wheel unpacked in /tmp/r16/whl/x,
# its TreeLauncherSubreaper stand-in, an empty libsanitizer-collection.so), in front of the judge built from f2dbad7.
set -e
T=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/r17/probe/out; chmod 777 /tmp/r17/probe/out; chmod 755 /tmp/r17 /tmp/r17/probe; rm -f /tmp/r17/probe/out/env.*
gcc -static -O2 -o /tmp/r17/probe/envdump $T/envdump.c; gcc -static -O2 -o /tmp/r17/exact-env $T/exact-env.c
chmod 755 /tmp/r17/probe/envdump /tmp/r17/exact-env
J=/tmp/r17/trusted/judge-build/judge; S=/tmp/r16/whl/x/nvidia/cu13/bin/compute-sanitizer
E="env -i HOME=/tmp LC_ALL=C PATH=/usr/bin:/bin LD_LIBRARY_PATH=/tmp/cudastub"
$E $J --exec-as nobody /tmp/r17/probe/envdump --socket 3
$E timeout 60 $S --tool racecheck --error-exitcode 86 --log-file /tmp/r17/probe/san.log --target-processes all \
   --racecheck-report analysis $J --exec-as nobody /tmp/r17/probe/envdump --socket 3 || true
for f in /tmp/r17/probe/out/env.*; do echo "$f: $(tr '\0' '\n' < $f | grep -c '^[A-Za-z_-]*=') variables"; done
